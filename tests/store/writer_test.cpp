// The writer: idempotent inserts, answers in order after commit, namespaces' newest event
// times, content-hash deduplication, a full queue, decisions at write time, decay profiles.

#include <catch2/catch.hpp>

#include "support/store_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::store_fixture;

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

TEST_CASE("a request of several messages keeps a refused event's own message as its dead letter") {
  test::TempDir dir;
  FakeClock clock;
  store::WriterOptions options;
  options.database = {dir.file("m.db"), "full", 1000};
  store::Writer writer(options, clock);
  bus::EventDecoder decoder(clock);

  // Three messages in one request, as a JetStream pull: a decision, a conflicting one, and the
  // same conflict in a message that is a dead letter already (not kept twice).
  const std::vector<std::string> payloads = {decision("d1", "storage"), decision("d2", "storage"),
                                             decision("d3", "storage")};
  const std::vector<std::string> endpoints = {"jetstream:a", "jetstream:b", ""};
  store::WriteRequest request;
  for (std::size_t m = 0; m < payloads.size(); ++m) {
    auto decoded = decoder.decode(payloads[m], 1 << 20);
    REQUIRE(decoded.error.empty());
    request.origins.push_back({endpoints[m], endpoints[m].empty() ? "" : payloads[m]});
    request.entries.push_back(std::move(decoded.events.at(0)));
    request.entry_origins.push_back(static_cast<std::uint32_t>(m));
  }
  // A request's own endpoint is not used when its entries have origins.
  request.dead_letter_endpoint = "push";
  request.raw_payload = "not this";
  std::promise<store::WriteResult> done;
  request.on_done = [&done](store::WriteResult&& result) { done.set_value(std::move(result)); };
  const bool accepted = writer.submit(std::move(request));
  REQUIRE(accepted);
  const store::WriteResult result = done.get_future().get();
  REQUIRE(result.results.size() == 3);
  CHECK(result.results[0].status == store::EventStatus::kStored);
  CHECK(result.results[1].status == store::EventStatus::kRejected);
  CHECK(result.results[2].status == store::EventStatus::kRejected);
  writer.stop();

  auto db = store::open_database({dir.file("m.db"), "full", 1000}, store::Access::kReader);
  CHECK(db.execAndGet("SELECT count(*) FROM dead_letters").getInt() == 1);
  CHECK(db.execAndGet("SELECT endpoint FROM dead_letters").getString() == "jetstream:b");
  CHECK(db.execAndGet("SELECT payload FROM dead_letters").getString() == payloads[1]);
  CHECK(db.execAndGet("SELECT reason FROM dead_letters").getString() ==
        "CONFLICT: Active decision exists. ResolutionIntent required.");
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
