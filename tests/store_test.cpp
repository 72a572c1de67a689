// The store: migrations, idempotent inserts, the full-text index and the group-committing writer.

#include <sqlite3.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <regex>
#include <thread>

#include "bus/event_decoder.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "store/sqlite_library.hpp"
#include "store/vacuum.hpp"
#include "store/write_gate.hpp"
#include "store/writer.hpp"
#include "support/earlier_database.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;

namespace {

store::EventRecord event(const std::string& uid, const std::string& content) {
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  auto message = decoder.decode(
      R"({"kind":"task","id":")" + uid + R"(","content":")" + content + R"(","tags":["t"]})",
      1 << 20);
  return *message.events.at(0).event;
}

store::EventEntry entry(const std::string& uid, const std::string& content, std::size_t index = 0) {
  store::EventEntry e;
  e.index = index;
  e.id = uid;
  e.event = event(uid, content);
  return e;
}

// Submits `entries` as one request and returns the writer's answer, which comes after the
// COMMIT of the group that stored them.
store::WriteResult submit_and_wait(store::Writer& writer, std::vector<store::EventEntry> entries) {
  std::promise<store::WriteResult> done;
  store::WriteRequest request;
  request.entries = std::move(entries);
  request.on_done = [&done](store::WriteResult&& result) { done.set_value(std::move(result)); };
  const bool accepted = writer.submit(std::move(request));
  REQUIRE(accepted);
  return done.get_future().get();
}

}  // namespace

TEST_CASE("a new database is migrated to the latest version with private file modes") {
  test::TempDir dir;
  const std::string path = dir.file("events.db");
  {
    auto db = store::open_database({path, "full", 1000}, store::Access::kWriter);
    CHECK(db.execAndGet("PRAGMA user_version").getInt() == store::latest_schema_version());
    CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
    CHECK(db.execAndGet("PRAGMA synchronous").getInt() == 2);  // FULL
    for (const char* table : {"events", "events_fts", "dead_letters"}) {
      INFO(table);
      CHECK(db.execAndGet(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + table +
                          "'")
                .getInt() == 1);
    }
  }
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // Re-opening migrates nothing and keeps the version.
  auto db = store::open_database({path, "normal", 1000}, store::Access::kWriter);
  CHECK(db.execAndGet("PRAGMA user_version").getInt() == store::latest_schema_version());
  CHECK(db.execAndGet("PRAGMA synchronous").getInt() == 1);  // NORMAL
}

TEST_CASE("a new database gets kPageSizeBytes pages; an existing file keeps its page size") {
  static_assert(store::kPageSizeBytes != 4096, "the second half below needs another size");
  test::TempDir dir;
  const std::string created = dir.file("new.db");
  {
    auto db = store::open_database({created, "full", 1000}, store::Access::kWriter);
    CHECK(db.execAndGet("PRAGMA page_size").getInt() == store::kPageSizeBytes);
  }
  // A file written with SQLite's default 4 KiB pages (as reflectd created them before it chose
  // 8 KiB ones) is opened, migrated and written as it is: in WAL mode the pragma cannot change
  // it.
  const std::string existing = dir.file("old.db");
  test::create_4k_page_database(existing);
  auto db = store::open_database({existing, "full", 1000}, store::Access::kWriter);
  CHECK(db.execAndGet("PRAGMA page_size").getInt() == 4096);
  CHECK(db.execAndGet("PRAGMA user_version").getInt() == store::latest_schema_version());
  store::EventStore events(db);
  const store::EventRecord e = event("page-1", "stored in a 4 KiB-page file");
  CHECK(events.insert(e, store::resolve_lifecycle(e, store::DecayProfiles{})).seq == 1);
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
}

TEST_CASE("vacuum_database: a 4 KiB-page file gets kPageSizeBytes pages and keeps every row") {
  test::TempDir dir;
  const std::string missing = dir.file("missing.db");
  CHECK_THROWS_WITH(store::vacuum_database(missing), "no database file at " + missing);
  CHECK_FALSE(std::filesystem::exists(missing));

  const std::string path = dir.file("old.db");
  test::create_4k_page_database(path);
  {
    auto db = store::open_database({path, "full", 1000}, store::Access::kWriter);
    store::EventStore events(db);
    for (int k = 0; k < 50; ++k) {
      const store::EventRecord e = event("vacuum-" + std::to_string(k), std::string(3000, 'v'));
      events.insert(e, store::resolve_lifecycle(e, store::DecayProfiles{}));
    }
    // Another connection, as a running daemon would hold: refused at once, nothing changed.
    CHECK_THROWS_WITH(store::vacuum_database(path),
                      Catch::Contains(path + " is in use by another process"));
    CHECK(db.execAndGet("PRAGMA page_size").getInt() == 4096);
    CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
  }
  const store::VacuumReport report = store::vacuum_database(path);
  CHECK(report.page_size_before == 4096);
  CHECK(report.page_size_after == store::kPageSizeBytes);
  CHECK(report.file_bytes_after == static_cast<std::int64_t>(std::filesystem::file_size(path)));
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("PRAGMA page_size").getInt() == store::kPageSizeBytes);
  CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
  CHECK(db.execAndGet("PRAGMA user_version").getInt() == store::latest_schema_version());
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 50);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE length(content) = 3000").getInt() == 50);
}

TEST_CASE("a database from a newer reflectd is refused") {
  test::TempDir dir;
  const std::string path = dir.file("events.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA user_version = 99");
  }
  CHECK_THROWS_WITH(store::open_database({path, "full", 1000}, store::Access::kWriter),
                    Catch::Contains("schema version 99 is newer than this reflectd"));
}

TEST_CASE("a failed migration leaves the version untouched") {
  test::TempDir dir;
  const std::string path = dir.file("events.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("CREATE TABLE events (x)");  // Collides with migration 1.
  }
  CHECK_THROWS(store::open_database({path, "full", 1000}, store::Access::kWriter));
  SQLite::Database raw(path, SQLite::OPEN_READONLY);
  CHECK(raw.execAndGet("PRAGMA user_version").getInt() == 0);
  CHECK(raw.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'dead_letters'").getInt() ==
        0);
}

TEST_CASE(
    "the newest event time per namespace: converted from the previous schema, then kept exact") {
  test::TempDir dir;
  SQLite::Database db(dir.file("old.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  // Migration 11 (store/migrations_6_to_19.cpp) replaced events_namespace_ts by event_namespaces.
  constexpr int kBefore = 10;
  REQUIRE(store::migrate(db, kBefore) == kBefore);
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  const store::DecayProfiles profiles;
  bool migrated = false;  // before migration 11 there is no event_namespaces to keep
  auto insert = [&](const std::string& id, const std::string& ns, std::int64_t ms) {
    const auto message =
        decoder.decode(R"({"kind":"task","id":")" + id + R"(","namespace":")" + ns +
                           R"(","timestamp":)" + std::to_string(ms) + R"(,"content":"c"})",
                       1 << 20);
    const store::EventRecord& e = *message.events.at(0).event;
    store::EventStore events(
        db, migrated ? store::NamespaceTimes::kPerEvent : store::NamespaceTimes::kPerTransaction);
    return events.insert(e, store::resolve_lifecycle(e, profiles));
  };
  // Out of time order, as a replayed history arrives.
  insert("a1", "alpha", 5000);
  insert("a2", "alpha", 9000);
  insert("a3", "alpha", 7000);
  insert("b1", "beta", 3000);
  auto table = [&] {
    std::vector<std::pair<std::string, std::int64_t>> rows;
    SQLite::Statement q(db, "SELECT namespace, max_ts_us FROM event_namespaces ORDER BY namespace");
    while (q.executeStep())
      rows.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    return rows;
  };
  auto truth = [&] {
    std::vector<std::pair<std::string, std::int64_t>> rows;
    SQLite::Statement q(
        db, "SELECT namespace, max(ts_us) FROM events GROUP BY namespace ORDER BY namespace");
    while (q.executeStep())
      rows.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    return rows;
  };
  CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'events_namespace_ts'")
            .getInt() == 1);

  REQUIRE(store::migrate(db) == store::latest_schema_version());
  migrated = true;
  using Rows = std::vector<std::pair<std::string, std::int64_t>>;
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 3'000'000}});
  for (const char* index : {"events_namespace_ts", "events_episode"}) {
    INFO(index);
    CHECK(db.execAndGet(std::string("SELECT count(*) FROM sqlite_master WHERE name = '") + index +
                        "'")
              .getInt() == 0);
  }
  // Inserts (older, newer, a duplicate, a new namespace), deletes and updates keep it equal to
  // max(ts_us) per namespace.
  insert("a4", "alpha", 8000);
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 3'000'000}});
  insert("b2", "beta", 4000);
  CHECK(insert("b2", "beta", 99000).duplicate);
  insert("g1", "gamma", 1000);
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 4'000'000}, {"gamma", 1'000'000}});
  db.exec("DELETE FROM events WHERE uid = 'a2'");
  CHECK(table() == Rows{{"alpha", 8'000'000}, {"beta", 4'000'000}, {"gamma", 1'000'000}});
  db.exec("DELETE FROM events WHERE uid = 'g1'");
  CHECK(table() == Rows{{"alpha", 8'000'000}, {"beta", 4'000'000}});
  db.exec("UPDATE events SET namespace = 'beta' WHERE uid = 'a4'");
  CHECK(table() == Rows{{"alpha", 7'000'000}, {"beta", 8'000'000}});
  db.exec("UPDATE events SET ts_us = 500 WHERE uid = 'a4'");
  CHECK(table() == truth());
  CHECK(table() == Rows{{"alpha", 7'000'000}, {"beta", 4'000'000}});
  // The importance job's query for it is a primary-key lookup.
  SQLite::Statement explain(
      db, "EXPLAIN QUERY PLAN SELECT max_ts_us FROM event_namespaces WHERE namespace = ?1");
  REQUIRE(explain.executeStep());
  CHECK_THAT(explain.getColumn(3).getString(), Catch::Contains("USING PRIMARY KEY (namespace=?)"));
}

TEST_CASE(
    "migration 16: the cluster job's foreign keys are deferred to COMMIT and still enforced") {
  test::TempDir dir;
  SQLite::Database db(dir.file("old.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  REQUIRE(store::migrate(db, 15) == 15);
  db.exec("PRAGMA foreign_keys = ON");
  const std::array<std::string, 7> kTables{
      "event_entities", "entity_relationships", "entity_aliases",  "clusters",
      "event_clusters", "cluster_entities",     "cluster_postings"};
  auto definition = [&](const std::string& table) {
    return db.execAndGet("SELECT sql FROM sqlite_master WHERE name = '" + table + "'").getString();
  };
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  std::map<std::string, std::string> before;
  for (const std::string& table : kTables) {
    before[table] = definition(table);
    REQUIRE(count(before[table], "REFERENCES") > 0);
  }
  const std::string events_before = definition("events");
  // Before: an immediate foreign key fails the statement itself.
  db.exec("BEGIN");
  CHECK_THROWS_WITH(db.exec("INSERT INTO event_entities (seq, entity_id, is_primary, source) "
                            "VALUES (999, 999, 0, 'text')"),
                    Catch::Contains("FOREIGN KEY constraint failed"));
  db.exec("ROLLBACK");

  REQUIRE(store::migrate(db, 16) == 16);
  for (const std::string& table : kTables) {
    INFO(table);
    const std::string after = definition(table);
    CHECK(count(after, "REFERENCES") == count(before[table], "REFERENCES"));
    CHECK(count(after, "REFERENCES") == count(after, "DEFERRABLE INITIALLY DEFERRED"));
  }
  CHECK(definition("events") == events_before);
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
  // After (this connection parsed the edited schema again): the statement succeeds and the
  // COMMIT fails; the rollback leaves nothing.
  db.exec("BEGIN");
  db.exec(
      "INSERT INTO event_entities (seq, entity_id, is_primary, source) VALUES (999, 999, 0, "
      "'text')");
  CHECK_THROWS_WITH(db.exec("COMMIT"), Catch::Contains("FOREIGN KEY constraint failed"));
  db.exec("ROLLBACK");
  CHECK(db.execAndGet("SELECT count(*) FROM event_entities").getInt() == 0);

  // Running it again (a database taken back to 15) changes nothing.
  std::map<std::string, std::string> migrated;
  for (const std::string& table : kTables) migrated[table] = definition(table);
  db.exec("PRAGMA user_version = 15");
  REQUIRE(store::migrate(db, 16) == 16);
  for (const std::string& table : kTables) CHECK(definition(table) == migrated[table]);
}

TEST_CASE("migration 20: CHECK lists of allowed values need no temporary B-tree per row") {
  test::TempDir dir;
  SQLite::Database db(dir.file("old.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  REQUIRE(store::migrate(db, 19) == 19);
  // Every column whose CHECK lists three or more values, and the table it is in.
  const std::array<std::pair<const char*, const char*>, 13> kChecked{{
      {"events", "sensitivity"},
      {"knowledge", "kind"},
      {"knowledge", "scope"},
      {"knowledge", "status"},
      {"knowledge", "phase"},
      {"knowledge", "vitality"},
      {"knowledge", "sensitivity"},
      {"observations", "observation_type"},
      {"job_runs", "trigger"},
      {"job_runs", "status"},
      {"audit_log", "action"},
      {"entities", "sensitivity"},
      {"clusters", "sensitivity"},
  }};
  // SQLite's program for a write of the column: OpenEphemeral is the temporary B-tree.
  auto temporary_btrees = [&](const char* table, const char* column) {
    SQLite::Statement explain(
        db, std::string("EXPLAIN UPDATE ") + table + " SET " + column + " = ?1 WHERE rowid = ?2");
    int n = 0;
    while (explain.executeStep()) n += explain.getColumn(1).getString() == "OpenEphemeral";
    return n;
  };
  for (const auto& [table, column] : kChecked) {
    INFO(table << "." << column);
    CHECK(temporary_btrees(table, column) == 1);
  }
  auto definitions = [&] {
    std::map<std::string, std::string> sql;
    SQLite::Statement q(db, "SELECT name, sql FROM sqlite_master WHERE type = 'table'");
    while (q.executeStep()) sql[q.getColumn(0).getString()] = q.getColumn(1).getString();
    return sql;
  };
  const auto before = definitions();

  REQUIRE(store::migrate(db, 20) == 20);
  for (const auto& [table, column] : kChecked) {
    INFO(table << "." << column);
    CHECK(temporary_btrees(table, column) == 0);
  }
  const auto after = definitions();
  // No list of three or more values is left in any table's CHECK.
  const std::regex three_or_more(R"(IN \('[^)]*,[^)]*,[^)]*\))");
  REQUIRE(std::regex_search(before.at("events"), three_or_more));
  for (const auto& entry : after) {
    const std::string& table = entry.first;
    const std::string& sql = entry.second;
    INFO(table);
    CHECK_FALSE(std::regex_search(sql, three_or_more));
    const bool edited = std::any_of(kChecked.begin(), kChecked.end(),
                                    [&](const auto& c) { return table == c.first; });
    if (!edited) CHECK(sql == before.at(table));
  }
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
  REQUIRE(store::migrate(db) == store::latest_schema_version());
  const auto latest = definitions();

  // The same values are allowed, and no other.
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  const auto message = decoder.decode(R"({"kind":"task","id":"m20","content":"c"})", 1 << 20);
  const store::EventRecord& e = *message.events.at(0).event;
  store::EventStore events(db);
  REQUIRE_FALSE(events.insert(e, store::resolve_lifecycle(e, store::DecayProfiles{})).duplicate);
  for (const char* level : {"public", "low", "medium", "high", "hyper"}) {
    INFO(level);
    SQLite::Statement set(db, "UPDATE events SET sensitivity = ?1 WHERE uid = 'm20'");
    set.bind(1, level);
    CHECK(set.exec() == 1);
  }
  for (const char* level : {"secret", "Public", ""}) {
    INFO(level);
    SQLite::Statement set(db, "UPDATE events SET sensitivity = ?1 WHERE uid = 'm20'");
    set.bind(1, level);
    CHECK_THROWS_WITH(set.exec(), Catch::Contains("CHECK constraint failed"));
  }
  CHECK_THROWS_WITH(db.exec("INSERT INTO job_runs (job, trigger, started_us, status) VALUES "
                            "('decay', 'interval', 1, 'done')"),
                    Catch::Contains("CHECK constraint failed"));
  CHECK(db.exec("INSERT INTO job_runs (job, trigger, started_us, status) VALUES "
                "('decay', 'interval', 1, 'interrupted')") == 1);

  // Running it again (a database taken back to 19) changes nothing.
  db.exec("PRAGMA user_version = 19");
  REQUIRE(store::migrate(db) == store::latest_schema_version());
  CHECK(definitions() == latest);
}

TEST_CASE("inserts are idempotent by uid and indexed for full-text search") {
  test::TempDir dir;
  auto db = store::open_database({dir.file("e.db"), "full", 1000}, store::Access::kWriter);
  store::EventStore events(db);
  SQLite::Transaction transaction(db);
  const store::DecayProfiles profiles;
  auto insert = [&](const store::EventRecord& e) {
    return events.insert(e, store::resolve_lifecycle(e, profiles));
  };
  const auto first = insert(event("a", "socket reconnect fails"));
  const auto second = insert(event("b", "context termination hangs"));
  const auto again = insert(event("a", "a different content, same id"));
  transaction.commit();
  CHECK(first.seq == 1);
  CHECK_FALSE(first.duplicate);
  CHECK(second.seq == 2);
  CHECK(again.duplicate);
  CHECK(again.seq == 1);
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 2);
  CHECK(db.execAndGet("SELECT content FROM events WHERE seq = 1").getString() ==
        "socket reconnect fails");
  // The index trails the inserts until the indexer runs (store/fts_index.hpp).
  CHECK(db.execAndGet("SELECT count(*) FROM events_fts WHERE events_fts MATCH 'termination'")
            .getInt() == 0);
  CHECK(store::read_fts_lag(db).lag_events == 2);
  CHECK(store::index_all_pending(db) == 2);
  CHECK(
      db.execAndGet("SELECT rowid FROM events_fts WHERE events_fts MATCH 'termination'").getInt() ==
      2);
  CHECK(store::read_fts_lag(db).indexed_through_seq == 2);
  CHECK(store::read_fts_lag(db).lag_events == 0);
  CHECK(db.execAndGet("SELECT tags FROM events WHERE seq = 1").getString() == R"(["t"])");
  CHECK(db.execAndGet("SELECT agent_id IS NULL FROM events WHERE seq = 1").getInt() == 1);
}

TEST_CASE("the writer answers every request in order after commit") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("w.db"), "full", 1000};
  store::Writer writer(options, clock);

  std::vector<std::promise<store::WriteResult>> promises(3);
  std::vector<int> order;
  std::mutex order_mutex;
  for (int i = 0; i < 3; ++i) {
    store::WriteRequest request;
    request.entries.push_back(entry("id-" + std::to_string(i % 2), "content " + std::to_string(i)));
    if (i == 2) {
      store::EventEntry bad;
      bad.index = 1;
      bad.id = "bad";
      bad.error = "content: is required";
      request.entries.push_back(bad);
      request.dead_letters.push_back({"{raw}", "push", "[1] content: is required", 7});
    }
    request.on_done = [&, i](store::WriteResult&& result) {
      {
        std::lock_guard lock(order_mutex);
        order.push_back(i);
      }
      promises[static_cast<std::size_t>(i)].set_value(std::move(result));
    };
    const bool accepted = writer.submit(std::move(request));
    REQUIRE(accepted);
  }
  auto r0 = promises[0].get_future().get();
  auto r1 = promises[1].get_future().get();
  auto r2 = promises[2].get_future().get();
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(r0.results.at(0).status == store::EventStatus::kStored);
  CHECK(r0.results[0].seq == 1);
  CHECK(r1.results.at(0).status == store::EventStatus::kStored);
  CHECK(r2.results.at(0).status == store::EventStatus::kDuplicate);
  CHECK(r2.results[0].seq == 1);
  CHECK(r2.results.at(1).status == store::EventStatus::kRejected);
  CHECK(r2.results[1].error == "content: is required");
  writer.stop();
  CHECK(writer.stats().stored == 2);
  CHECK(writer.stats().duplicate == 1);
  CHECK(writer.stats().rejected == 1);
  CHECK(writer.stats().dead_letters == 1);

  auto db = store::open_database({dir.file("w.db"), "full", 1000}, store::Access::kReader);
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 2);
  CHECK(db.execAndGet("SELECT reason FROM dead_letters").getString() == "[1] content: is required");
  CHECK(db.execAndGet("SELECT endpoint FROM dead_letters").getString() == "push");
}

TEST_CASE("the writer keeps each namespace's newest event time, once per group") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("w.db"), "full", 1000};
  store::Writer writer(options, clock);
  bus::EventDecoder decoder(clock);
  auto make = [&](const std::string& id, const std::string& ns, std::int64_t ms) {
    auto message =
        decoder.decode(R"({"kind":"task","id":")" + id + R"(","namespace":")" + ns +
                           R"(","timestamp":)" + std::to_string(ms) + R"(,"content":"c"})",
                       1 << 20);
    store::EventEntry e;
    e.id = id;
    e.event = std::move(*message.events.at(0).event);
    return e;
  };
  auto write = [&](std::vector<store::EventEntry> entries) {
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i].index = i;
    return submit_and_wait(writer, std::move(entries));
  };
  using Rows = std::vector<std::pair<std::string, std::int64_t>>;
  auto rows = [&](const char* sql) {
    auto db = store::open_database({dir.file("w.db"), "full", 1000}, store::Access::kReader);
    Rows out;
    SQLite::Statement q(db, sql);
    while (q.executeStep()) out.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    return out;
  };
  auto table = [&] {
    return rows("SELECT namespace, max_ts_us FROM event_namespaces ORDER BY namespace");
  };
  // Out of time order within one group.
  write({make("a1", "alpha", 5000), make("b1", "beta", 3000), make("a2", "alpha", 9000),
         make("a3", "alpha", 7000)});
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 3'000'000}});
  // A duplicate with a later time stores nothing and raises nothing; an older event neither.
  const auto r = write({make("a1", "alpha", 99000), make("b2", "beta", 1000)});
  CHECK(r.results.at(0).status == store::EventStatus::kDuplicate);
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 3'000'000}});
  write({make("g1", "gamma", 4000), make("b3", "beta", 8000)});
  CHECK(table() == Rows{{"alpha", 9'000'000}, {"beta", 8'000'000}, {"gamma", 4'000'000}});
  CHECK(table() ==
        rows("SELECT namespace, max(ts_us) FROM events GROUP BY namespace ORDER BY namespace"));
  // Migration 21 removed the per-row trigger that kept it before.
  CHECK(rows("SELECT name, 0 FROM sqlite_master WHERE name = 'events_namespace_inserted'").empty());
  writer.stop();
}

TEST_CASE("content-hash deduplication: off, per namespace, per agent (store.dedup)") {
  test::TempDir dir;
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  auto make = [&](const std::string& id, const std::string& ns, const std::string& agent,
                  const std::string& content) {
    auto message =
        decoder.decode(R"({"kind":"observation","id":")" + id + R"(","namespace":")" + ns +
                           R"(","agent_id":")" + agent + R"(","content":")" + content + R"("})",
                       1 << 20);
    store::EventEntry e;
    e.id = id;
    e.event = std::move(*message.events.at(0).event);
    return e;
  };
  auto statuses = [](const store::WriteResult& result) {
    std::vector<std::string> out;
    for (const auto& r : result.results) {
      out.push_back(std::string(store::to_string(r.status)) +
                    (r.duplicate_of.empty() ? "" : " of " + r.duplicate_of));
    }
    return out;
  };
  auto run = [&](store::ContentDedup mode, const std::string& file) {
    store::WriterOptions options;
    options.database = {dir.file(file), "full", 1000};
    options.content_dedup = mode;
    store::Writer writer(options, clock);
    std::vector<store::EventEntry> entries;
    entries.push_back(make("e1", "a", "ann", "same words"));
    entries.push_back(make("e2", "a", "bob", "same words"));  // another agent
    entries.push_back(make("e3", "b", "ann", "same words"));  // another namespace
    entries.push_back(make("e4", "a", "ann", "same words"));  // same agent and namespace
    entries.push_back(make("e1", "a", "ann", "same words"));  // same id: a duplicate always
    for (std::size_t i = 0; i < entries.size(); ++i) entries[i].index = i;
    auto result = statuses(submit_and_wait(writer, std::move(entries)));
    writer.stop();
    return result;
  };
  using V = std::vector<std::string>;
  CHECK(run(store::ContentDedup::kOff, "off.db") ==
        V{"stored", "stored", "stored", "stored", "duplicate"});
  CHECK(run(store::ContentDedup::kNamespace, "ns.db") ==
        V{"stored", "duplicate of e1", "stored", "duplicate of e1", "duplicate"});
  CHECK(run(store::ContentDedup::kAgent, "agent.db") ==
        V{"stored", "stored", "stored", "duplicate of e1", "duplicate"});
  // Only a store with dedup on carries the index it needs.
  auto index_count = [&](const std::string& file) {
    auto db = store::open_database({dir.file(file), "full", 1000}, store::Access::kReader);
    return db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'events_content_hash'")
        .getInt();
  };
  CHECK(index_count("off.db") == 0);
  CHECK(index_count("ns.db") == 1);
  CHECK(store::parse_content_dedup("agent") == store::ContentDedup::kAgent);
  CHECK_FALSE(store::parse_content_dedup("on"));
}

TEST_CASE("a full writer queue refuses, then announces space; stop drains everything") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("q.db"), "full", 1000};
  options.queue_capacity_events = 1000;
  std::atomic<int> space_signals{0};
  // Block the writer inside the first callback so the queue fills deterministically.
  std::promise<void> release;
  auto released = release.get_future().share();
  std::promise<void> entered;
  store::Writer writer(options, clock, [&] { ++space_signals; });

  store::WriteRequest blocker;
  blocker.entries.push_back(entry("block", "x"));
  blocker.on_done = [&, released](store::WriteResult&&) {
    entered.set_value();
    released.wait();
  };
  const bool accepted = writer.submit(std::move(blocker));
  REQUIRE(accepted);
  entered.get_future().wait();

  auto make = [&](int n, int base) {
    store::WriteRequest request;
    for (int i = 0; i < n; ++i)
      request.entries.push_back(entry("e" + std::to_string(base + i), "x"));
    return request;
  };
  REQUIRE(writer.submit(make(600, 0)));
  auto refused = make(600, 1000);
  // submit() moves from its argument only when it takes the request (store/writer.hpp).
  const bool taken = writer.submit(std::move(refused));
  CHECK_FALSE(taken);
  // NOLINTNEXTLINE(bugprone-use-after-move): not taken, so the caller still has it.
  CHECK(refused.entries.size() == 600);
  // NOLINTNEXTLINE(bugprone-use-after-move): the same request, now past the capacity check.
  const bool forced = writer.submit(std::move(refused), /*ignore_capacity=*/true);
  CHECK(forced);
  release.set_value();
  writer.stop();
  CHECK(space_signals.load() >= 1);
  CHECK(writer.stats().stored == 1201);
  CHECK_FALSE(writer.submit(make(1, 5000)));  // Stopped.
}

namespace {

// Submits one message's worth of payloads through a writer and returns its results.
std::vector<store::EventResult> write(store::Writer& writer,
                                      const std::vector<std::string>& payloads, FakeClock& clock) {
  bus::EventDecoder decoder(clock);
  std::vector<store::EventEntry> entries;
  std::size_t index = 0;
  for (const auto& payload : payloads) {
    auto decoded = decoder.decode(payload, 1 << 20);
    REQUIRE(decoded.error.empty());
    decoded.events.at(0).index = index++;
    entries.push_back(std::move(decoded.events[0]));
  }
  return submit_and_wait(writer, std::move(entries)).results;
}

std::string decision(const std::string& id, const std::string& target,
                     const std::string& resolution = "") {
  return R"({"id":")" + id +
         R"(","kind":"decision","content":"decide","agent_id":"ana","context":{"title":"Use )" +
         id + R"(","target":")" + target + R"(","rationale":"because it is long enough"})" +
         (resolution.empty() ? "" : ",\"resolution\":" + resolution) + "}";
}

}  // namespace

TEST_CASE("decisions at write time: conflicts are refused unless resolved (seed 000)") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("k.db"), "full", 1000};
  store::Writer writer(options, clock);

  auto r = write(writer, {decision("d1", "storage")}, clock);
  REQUIRE(r.at(0).status == store::EventStatus::kStored);
  CHECK(r[0].semantic);
  CHECK(r[0].decision_id == "d1");

  // Same target, no resolution: refused with the seed's reason; nothing stored.
  r = write(writer, {decision("d2", "storage")}, clock);
  CHECK(r.at(0).status == store::EventStatus::kRejected);
  CHECK(r[0].error == "CONFLICT: Active decision exists. ResolutionIntent required.");
  CHECK(r[0].conflicting_ids == std::vector<std::string>{"d1"});

  // A resolution that does not name every conflicting decision is still a conflict.
  r = write(
      writer,
      {decision("d2", "storage",
                R"({"resolution_type":"supersede","rationale":"r","target_decision_ids":["x"]})")},
      clock);
  CHECK(r.at(0).status == store::EventStatus::kRejected);

  // Abort changes nothing.
  r = write(writer,
            {decision("d2", "storage",
                      R"({"resolution_type":"abort","rationale":"r","target_decision_ids":[]})")},
            clock);
  CHECK(r.at(0).error == "ABORTED: ResolutionIntent abort: no changes made.");

  // Supersede: stored, and d1 becomes superseded_by d2 in the same transaction.
  r = write(
      writer,
      {decision(
          "d2", "storage",
          R"({"resolution_type":"supersede","rationale":"faster","target_decision_ids":["d1"]})")},
      clock);
  REQUIRE(r.at(0).status == store::EventStatus::kStored);
  CHECK(r[0].resolved_ids == std::vector<std::string>{"d1"});

  // Deprecate, and a duplicate resend of a decision is a duplicate, not a conflict.
  r = write(
      writer,
      {decision("d3", "storage",
                R"({"resolution_type":"deprecate","rationale":"r","target_decision_ids":["d2"]})"),
       decision("d3", "storage"), decision("d4", "network")},
      clock);
  CHECK(r.at(0).status == store::EventStatus::kStored);
  CHECK(r.at(1).status == store::EventStatus::kDuplicate);
  CHECK(r.at(2).status == store::EventStatus::kStored);
  // MemoryDecision.priority (store::semantic_priority): decision 7, +1 for resolving d2.
  CHECK(r[0].priority == 8);
  CHECK(r[1].priority == 0);
  CHECK(r[2].priority == 7);

  // Every semantic kind may carry a ResolutionIntent: an infra constraint deprecates d4.
  r = write(writer,
            {R"({"id":"c1","kind":"constraint","content":"no network calls","agent_id":"ana",
                 "context":{"title":"Offline","target":"network","rationale":"air-gapped hosts",
                            "scope":"infra"},
                 "resolution":{"resolution_type":"deprecate","rationale":"offline now",
                               "target_decision_ids":["d4"]}})"},
            clock);
  REQUIRE(r.at(0).status == store::EventStatus::kStored);
  CHECK(r[0].resolved_ids == std::vector<std::string>{"d4"});
  CHECK(r[0].priority == 10);  // constraint 8 + infra 2 + resolving 1, clamped
  writer.stop();

  auto db = store::open_database({dir.file("k.db"), "full", 1000}, store::Access::kReader);
  auto status = [&](const std::string& id) {
    return db
        .execAndGet(
            "SELECT status || '/' || coalesce(superseded_by, '-') FROM knowledge WHERE decision_id "
            "= '" +
            id + "'")
        .getString();
  };
  CHECK(status("d1") == "superseded/d2");
  CHECK(status("d2") == "deprecated/-");
  CHECK(status("d3") == "active/-");
  CHECK(status("d4") == "deprecated/-");  // by the constraint c1
  CHECK(status("c1") == "active/-");
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE kind = 'decision'").getInt() == 4);
  CHECK(db.execAndGet("SELECT provenance || '/' || phase || '/' || vitality || '/' || target FROM "
                      "knowledge WHERE decision_id = 'd1'")
            .getString() == "external/pattern/active/storage");
  // Every change has its audit row, with the previous state.
  CHECK(db.execAndGet("SELECT group_concat(record_id || ':' || action, ',') FROM (SELECT * FROM "
                      "audit_log ORDER BY audit_id)")
            .getString() ==
        "d1:create,d2:create,d1:supersede,d3:create,d2:deprecate,d4:create,c1:create,d4:deprecate");
  CHECK(db.execAndGet("SELECT json_extract(previous, '$.status') FROM audit_log WHERE record_id = "
                      "'d1' AND action = 'supersede'")
            .getString() == "active");
  CHECK(db.execAndGet("SELECT actor FROM audit_log WHERE record_id = 'd1' AND action = 'supersede'")
            .getString() == "ana");
  CHECK_THROWS(
      SQLite::Database(dir.file("k.db"), SQLite::OPEN_READWRITE).exec("DELETE FROM audit_log"));
}

TEST_CASE("each event stores its resolved decay profile and archive time") {
  test::TempDir dir;
  FakeClock clock(1'000'000'000'000'000);
  store::WriterOptions options;
  options.database = {dir.file("l.db"), "full", 1000};
  options.profiles.episodic.half_life_s = 3600;
  options.profiles.episodic.min_salience = 0.25;
  options.profiles.episodic.max_age_s = 60;
  {
    store::Writer writer(options, clock);
    write(
        writer,
        {R"({"id":"e1","kind":"task","content":"x"})",
         R"({"id":"e2","kind":"task","content":"x","salience":0.5,"lifecycle":{"decay":{"curve":"linear","half_life_seconds":10},"deletion_policy":"never"}})"},
        clock);
  }
  auto db = store::open_database({dir.file("l.db"), "full", 1000}, store::Access::kReader);
  SQLite::Statement row(db,
                        "SELECT salience_base, salience_ref_us, decay_curve, half_life_s, "
                        "min_salience, deletion_policy, archive_at_us FROM events ORDER BY seq");
  REQUIRE(row.executeStep());
  CHECK(row.getColumn(0).getDouble() == 1.0);
  CHECK(row.getColumn(1).getInt64() == clock.now_us());
  CHECK(row.getColumn(2).getString() == "exponential");
  CHECK(row.getColumn(3).getInt64() == 3600);
  CHECK(row.getColumn(4).getDouble() == 0.25);
  CHECK(row.getColumn(5).getString() == "auto_prune");
  CHECK(row.getColumn(6).getInt64() == clock.now_us() + 2LL * 3600 * 1'000'000);  // 1 -> 0.25: 2 h
  REQUIRE(row.executeStep());
  CHECK(row.getColumn(0).getDouble() == 0.5);
  CHECK(row.getColumn(2).getString() == "linear");
  CHECK(row.getColumn(3).getInt64() == 10);
  CHECK(row.getColumn(5).getString() == "never");
  CHECK(row.getColumn(6).isNull());
}

namespace {

std::vector<std::int64_t> matches(SQLite::Database& db, const std::string& word) {
  SQLite::Statement query(db,
                          "SELECT rowid FROM events_fts WHERE events_fts MATCH ?1 ORDER BY rowid");
  query.bind(1, word);
  std::vector<std::int64_t> out;
  while (query.executeStep()) out.push_back(query.getColumn(0).getInt64());
  return out;
}

void fts_integrity_check(SQLite::Database& db) {
  db.exec("INSERT INTO events_fts(events_fts) VALUES('integrity-check')");
}

}  // namespace

TEST_CASE("the full-text watermark: batches, updates and deletes keep the index exact") {
  test::TempDir dir;
  auto db = store::open_database({dir.file("f.db"), "full", 1000}, store::Access::kWriter);
  store::EventStore events(db);
  store::FtsIndex index(db);
  const store::DecayProfiles profiles;
  auto insert = [&](const std::string& uid, const std::string& content) {
    const auto e = event(uid, content);
    return events.insert(e, store::resolve_lifecycle(e, profiles)).seq;
  };
  {
    SQLite::Transaction transaction(db);
    for (int i = 1; i <= 5; ++i)
      REQUIRE(insert("e" + std::to_string(i), "alpha w" + std::to_string(i)) == i);
    CHECK(index.index_pending(3) == 3);
    transaction.commit();
  }
  CHECK(index.indexed_seq() == 3);
  CHECK(store::read_fts_lag(db).lag_events == 2);
  CHECK(matches(db, "alpha") == std::vector<std::int64_t>{1, 2, 3});

  // An indexed row's new content replaces its entry; an unindexed row's waits for the indexer.
  db.exec("UPDATE events SET content = 'beta changed' WHERE seq IN (2, 5)");
  CHECK(matches(db, "alpha") == std::vector<std::int64_t>{1, 3});
  CHECK(matches(db, "beta") == std::vector<std::int64_t>{2});
  fts_integrity_check(db);  // throws on a stale entry

  // Deleting unindexed rows touches nothing; deleting the watermark row lowers it, so the
  // seq SQLite hands out again (max + 1) is indexed again instead of being skipped.
  db.exec("DELETE FROM events WHERE seq IN (4, 5)");
  CHECK(index.indexed_seq() == 3);
  db.exec("DELETE FROM events WHERE seq = 3");
  CHECK(index.indexed_seq() == 2);
  CHECK(matches(db, "alpha") == std::vector<std::int64_t>{1});
  {
    SQLite::Transaction transaction(db);
    CHECK(insert("e6", "gamma reused") == 3);
    transaction.commit();
  }
  CHECK(store::read_fts_lag(db).lag_events == 1);
  CHECK(matches(db, "gamma").empty());
  CHECK(store::index_all_pending(db, 1) == 1);
  CHECK(matches(db, "gamma") == std::vector<std::int64_t>{3});
  CHECK(store::read_fts_lag(db).indexed_through_seq == 3);
  CHECK(store::index_all_pending(db) == 0);
  fts_integrity_check(db);
}

TEST_CASE("the writer indexes when its queue runs dry and catches up in batches") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("w.db"), "full", 1000};
  options.fts_batch_events = 2;
  store::Writer writer(options, clock);
  auto write = [&](std::vector<store::EventEntry> entries) {
    return submit_and_wait(writer, std::move(entries));
  };
  // Alone in the queue: indexed in the transaction that stores it, before the reply.
  write({entry("one", "searchable delta")});
  CHECK(writer.stats().fts_indexed_seq == 1);
  auto reader = store::open_database({dir.file("w.db"), "full", 1000}, store::Access::kReader);
  CHECK(matches(reader, "delta") == std::vector<std::int64_t>{1});

  // Five at once with batches of 2: two with the events, the rest in index-only transactions.
  std::vector<store::EventEntry> five;
  five.reserve(5);
  for (int i = 0; i < 5; ++i)
    five.push_back(entry("m" + std::to_string(i), "epsilon", static_cast<std::size_t>(i)));
  write(std::move(five));
  CHECK(writer.stats().last_seq == 6);
  CHECK(writer.stats().fts_indexed_seq >= 3);
  // The catch-up has no event to await: poll the writer's counter (bounded).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (writer.stats().fts_indexed_seq < 6 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(writer.stats().fts_indexed_seq == 6);
  CHECK(writer.stats().fts_indexed == 6);
  CHECK(matches(reader, "epsilon").size() == 5);
  CHECK(store::read_fts_lag(reader).lag_events == 0);
}

TEST_CASE("a search-index backlog is not indexed inside the transaction that acknowledges") {
  test::TempDir dir;
  const store::DatabaseOptions database{dir.file("b.db"), "full", 1000};
  constexpr int kBacklog = 3000;
  {
    // Stored but never indexed, as after a burst the indexer has not caught up with.
    auto db = store::open_database(database, store::Access::kWriter);
    store::EventStore events(db);
    const store::DecayProfiles profiles;
    SQLite::Transaction transaction(db);
    for (int i = 1; i <= kBacklog; ++i) {
      const auto e = event("old" + std::to_string(i), "backlog zeta");
      REQUIRE(events.insert(e, store::resolve_lifecycle(e, profiles)).seq == i);
    }
    transaction.commit();
  }
  // A job holds the write lock, so the writer's first transaction (it would have been an
  // index-only one) waits until the request below is queued and then carries it.
  store::WriteGate gate(1, 1000);
  REQUIRE(gate.job_enter([] { return false; }));
  FakeClock clock;
  store::WriterOptions options;
  options.database = database;
  options.fts_batch_events = 10000;
  options.commit_pipelining = false;  // completions run on the writer thread, right after COMMIT
  options.gate = &gate;
  store::Writer writer(options, clock);
  // What the writer had indexed when it answered, and its storage error (checked here: Catch2
  // assertions belong on the test's thread).
  std::promise<std::pair<std::int64_t, std::string>> at_ack;
  store::WriteRequest request;
  request.entries.push_back(entry("new", "fresh zeta"));
  request.on_done = [&](store::WriteResult&& result) {
    at_ack.set_value({writer.stats().fts_indexed_seq.load(), result.storage_error});
  };
  const bool accepted = writer.submit(std::move(request));
  REQUIRE(accepted);
  gate.job_exit(false);
  const auto [indexed, storage_error] = at_ack.get_future().get();
  CHECK(storage_error.empty());
  // One event stored, so one event indexed: the oldest of the backlog, not 3,000 of them.
  CHECK(indexed == 1);
  // The backlog and the new event are indexed afterwards by index-only transactions.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (writer.stats().fts_indexed_seq < kBacklog + 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(writer.stats().fts_indexed_seq == kBacklog + 1);
  auto reader = store::open_database(database, store::Access::kReader);
  CHECK(matches(reader, "zeta").size() == kBacklog + 1);
}

TEST_CASE("SQLite's memory statistics: off before the first connection, refused after") {
  // Every connection of the earlier cases is closed here, so SQLite can be shut down and set
  // up again as a fresh process would find it; the case restores SQLite's default at the end.
  test::TempDir dir;
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  REQUIRE(store::disable_sqlite_memory_statistics());
  {
    auto db = store::open_database({dir.file("m.db"), "full", 1000}, store::Access::kWriter);
    const store::EventRecord e = event("m1", "counted nowhere");
    SQLite::Transaction tx(db);
    store::EventStore events(db);
    CHECK(events.insert(e, store::resolve_lifecycle(e, store::DecayProfiles{})).seq == 1);
    tx.commit();
    // What the setting gives up: SQLite no longer counts its heap.
    CHECK(sqlite3_memory_used() == 0);
    // Refused once SQLite is initialised (the first open did that): the setting stays.
    CHECK_FALSE(store::disable_sqlite_memory_statistics());
  }
  REQUIRE(sqlite3_shutdown() == SQLITE_OK);
  REQUIRE(sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1) == SQLITE_OK);
  {
    auto db = store::open_database({dir.file("m.db"), "full", 1000}, store::Access::kWriter);
    CHECK(sqlite3_memory_used() > 0);  // the default counts, as the check above would fail
  }
}
