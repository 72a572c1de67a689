// The full-text index's watermark: batches, updates and deletes keep it exact, it is caught
// up when the queue runs dry, and never inside the acknowledging transaction.

#include <catch2/catch.hpp>

#include "support/store_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::store_fixture;

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
