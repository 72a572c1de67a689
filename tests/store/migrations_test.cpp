// The database file: migrations to the latest version with private modes, page sizes and
// vacuum, a newer or half-migrated file, the migrations' own checks, and SQLite's memory
// statistics.

#include <catch2/catch.hpp>

#include "support/store_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::store_fixture;

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
