// forget on real SQLite files with the jobs run directly (a fake clock): a hard delete leaves
// the forgotten text in no table, no full-text shadow table and no byte of the database or WAL
// file; what the jobs rebuild equals what they derive from a store that never had the events;
// facts unwind their supersession; policies and the audit log's guard hold.

#include <catch2/catch.hpp>

#include "support/memory_ops_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::memory_ops_fixture;
using nlohmann::json;

TEST_CASE("forget delete: the text is in no table, no index and no byte of the files") {
  test::TempDir dir;
  const std::string path = dir.file("reflectd.db");
  FakeClock clock(kNow);
  auto lines = test::corpus_lines("libzmq-commits.jsonl");
  lines.resize(1500);
  // In the middle of the history: later events and runs build on what it gave.
  const auto marked = marked_events("2012-06-01T12:00:00Z");
  lines.insert(lines.begin() + 750, marked.begin(), marked.end());
  REQUIRE(test::load_lines(path, lines, clock) == lines.size());
  auto db = test::open_writer(path);
  run_every_job(db, kNow);

  const auto before = test::places_of(db, kMarker);
  INFO("before: " << json(before).dump());
  // It reached the events, the index, the entities, the clusters, the knowledge (the agent's
  // decision and the decision found in the commit) and the audit log.
  for (const char* place :
       {"events.content", "events_fts_vocab", "entities.canonical_key", "cluster_terms.term",
        "knowledge.title", "knowledge.rationale", "event_targets.target", "audit_log.rationale"}) {
    CHECK(before.count(place) == 1);
  }

  const auto events = select_marked(db);
  REQUIRE(events.size() == 2);
  const auto outcome = hard_delete(db, events);
  CHECK(outcome.events_deleted == 2);
  CHECK(outcome.agent_decisions_deleted == 1);
  CHECK(outcome.audit_rows_redacted >= 1);
  CHECK(outcome.namespaces == std::set<std::string>{"libzmq"});

  CHECK(test::places_of(db, kMarker).empty());
  CHECK(test::file_occurrences(path, kMarker) == 0);
  CHECK(test::file_occurrences(path + "-wal", kMarker) == 0);
  // One delete row per event, without the content.
  CHECK(test::dump(db,
                   "SELECT record_id, action, actor, rationale, previous FROM audit_log WHERE "
                   "action = 'delete' ORDER BY record_id") ==
        "marked-commit|delete|test|test forget|{\"kind\":\"commit_change\",\"namespace\":"
        "\"libzmq\",\"seq\":751,\"status\":\"active\"}|\n"
        "marked-decision|delete|test|test forget|{\"kind\":\"decision\",\"namespace\":"
        "\"libzmq\",\"seq\":752,\"status\":\"active\"}|\n");

  // The rebuild derives everything again from the events left, and finds no trace either.
  run_every_job(db, kNow);
  CHECK(test::places_of(db, kMarker).empty());
  CHECK(db.execAndGet("SELECT count(*) FROM entities WHERE namespace = 'libzmq'").getInt() > 100);
  CHECK(db.execAndGet("SELECT count(*) FROM medallions WHERE id = 'med:libzmq'").getInt() == 1);
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 1500);
}

TEST_CASE("forget delete: the rebuild equals the jobs' work on a store that never had them") {
  test::TempDir dir;
  FakeClock clock(kNow);
  auto lines = test::corpus_lines("libzmq-commits.jsonl");
  lines.resize(1200);
  // An agent's decision on `src`, which the marked commit is evidence of: the rebuild
  // evaluates it again without that commit.
  lines.insert(lines.begin() + 600, json{{"id", "agent-src-decision"},
                                         {"kind", "decision"},
                                         {"namespace", "libzmq"},
                                         {"agent_id", "planner"},
                                         {"timestamp", json::parse(lines[600]).at("timestamp")},
                                         {"content", "Keep the sources under src/"},
                                         {"context",
                                          {{"title", "Sources under src/"},
                                           {"target", "src"},
                                           {"rationale", "one tree for every build system"}}}}
                                        .dump());
  const auto marked = marked_events("2013-01-01T12:00:00Z");
  auto with_marked = lines;
  with_marked.insert(with_marked.end(), marked.begin(), marked.end());

  const std::string never_path = dir.file("never.db");
  REQUIRE(test::load_lines(never_path, lines, clock) == lines.size());
  auto never = test::open_writer(never_path);
  run_every_job(never, kNow);
  const std::string agent_evidence =
      "SELECT frequency, (SELECT count(*) FROM knowledge_evidence x WHERE x.decision_id = "
      "k.decision_id) FROM knowledge k WHERE decision_id = 'agent-src-decision'";
  const std::string never_evidence = test::dump(never, agent_evidence);
  INFO(never_evidence);
  CHECK(never
            .execAndGet("SELECT frequency > 100 FROM knowledge WHERE decision_id = "
                        "'agent-src-decision'")
            .getInt() == 1);

  const std::string forgot_path = dir.file("forgot.db");
  REQUIRE(test::load_lines(forgot_path, with_marked, clock) == with_marked.size());
  auto forgot = test::open_writer(forgot_path);
  run_every_job(forgot, kNow);
  REQUIRE(derived_dump(forgot) != derived_dump(never));
  CHECK(test::dump(forgot, agent_evidence) != never_evidence);
  hard_delete(forgot, select_marked(forgot));
  run_every_job(forgot, kNow);
  // The facts job's one watermark (job_state facts / "" / seq) is past the deleted seqs in
  // one store and not in the other; every derived row is the same.
  const std::regex facts_watermark("facts\\|\\|seq\\|[0-9]+\\|\n");
  CHECK(std::regex_replace(derived_dump(forgot), facts_watermark, "") ==
        std::regex_replace(derived_dump(never), facts_watermark, ""));
}

// The clear of a namespace's derived state runs in chunks that end when the writer waits, and
// a clear cut short (a crash, a cancellation) leaves its mark and is finished by the next one.
TEST_CASE("forget delete: a chunked clear gives way to the writer and a cut-short one resumes") {
  test::TempDir dir;
  FakeClock clock(kNow);
  auto lines = test::corpus_lines("libzmq-commits.jsonl");
  lines.resize(1500);
  const auto marked = marked_events("2012-06-01T12:00:00Z");
  lines.insert(lines.begin() + 750, marked.begin(), marked.end());
  const std::string undisturbed_path = dir.file("undisturbed.db");
  REQUIRE(test::load_lines(undisturbed_path, lines, clock) == lines.size());
  {
    auto db = test::open_writer(undisturbed_path);
    run_every_job(db, kNow);
  }
  const std::string yielding_path = dir.file("yielding.db");
  std::filesystem::copy_file(undisturbed_path, yielding_path);

  auto undisturbed = test::open_writer(undisturbed_path);
  hard_delete(undisturbed, select_marked(undisturbed));
  run_every_job(undisturbed, kNow);

  auto yielding = test::open_writer(yielding_path);
  const auto derived_rows = [&] {
    return yielding
        .execAndGet(
            "SELECT (SELECT count(*) FROM event_entities) + (SELECT count(*) FROM "
            "event_clusters) + (SELECT count(*) FROM knowledge_evidence)")
        .getInt64();
  };
  const std::int64_t rows_before = derived_rows();
  REQUIRE(rows_before > 5 * memory_ops::kClearChunkRows);
  // A writer that always waits (every job transaction ends after its 2 ms slice); it stops the
  // run once the clear has given way to it twice.
  store::WriteGate gate(1, 2);
  std::atomic<bool> stopping{false};
  std::atomic<bool> stop_writer{false};
  bool stopped_once = false;  // the writer thread's
  std::thread writer([&] {
    while (!stop_writer) {
      if (gate.writer_enter(60'000)) {
        if (!stopped_once && gate.stats().job_yields.load() >= 2) stopping = stopped_once = true;
        gate.writer_exit();
      }
      std::this_thread::yield();
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Join() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  } join_writer{stop_writer, writer};
  const auto run_with_gate = [&](const std::function<void(jobs::JobContext&)>& run) {
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{yielding, clock, cancel, "", "demand", 0, {}, &gate};
    run(ctx);
  };
  {
    SQLite::Transaction transaction(yielding);
    memory_ops::mark_for_clear(yielding, "libzmq", kNow);
    transaction.commit();
  }
  yielding.exec("PRAGMA foreign_keys = OFF");
  std::set<std::string> cleared;
  CHECK_THROWS_AS(
      run_with_gate([&](jobs::JobContext& ctx) { memory_ops::run_pending_clears(ctx, cleared); }),
      jobs::JobCancelled);
  yielding.exec("PRAGMA foreign_keys = ON");
  CHECK(cleared.empty());
  CHECK(memory_ops::pending_clears(yielding) == std::vector<std::string>{"libzmq"});
  const std::int64_t rows_cut_short = derived_rows();
  CHECK(rows_cut_short < rows_before);
  CHECK(rows_cut_short > 0);
  CHECK(gate.stats().job_yields.load() >= 2);

  // The forget finishes the clear it finds, under the same writer.
  stopping = false;
  const std::uint64_t turns_before = gate.stats().job_turns.load();
  run_with_gate([&](jobs::JobContext& ctx) {
    const auto outcome =
        memory_ops::forget_events(ctx, select_marked(yielding), "test", "test forget");
    CHECK(outcome.events_deleted == 2);
    CHECK(outcome.namespaces == std::set<std::string>{"libzmq"});
  });
  stop_writer = true;
  writer.join();
  CHECK(gate.stats().job_turns.load() - turns_before > 3);
  CHECK(memory_ops::pending_clears(yielding).empty());
  CHECK(derived_rows() == 0);
  CHECK(yielding.execAndGet("SELECT count(*) FROM forget_in_progress").getInt() == 0);
  CHECK_FALSE(SQLite::Statement(yielding, "PRAGMA foreign_key_check").executeStep());
  run_every_job(yielding, kNow);
  CHECK(derived_dump(yielding) == derived_dump(undisturbed));
  CHECK(test::places_of(yielding, kMarker).empty());
}

// A crash between a forget's mark and the end of its clear: the next start finishes the clear
// before any job runs and the jobs rebuild the namespace (its events were not deleted).
TEST_CASE("forget delete: a clear a crash cut short is finished at the next start") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  jobs_on_demand(config);
  FakeClock clock(kNow);
  auto lines = test::corpus_lines("libzmq-commits.jsonl");
  lines.resize(800);
  REQUIRE(test::load_lines(config.store.path, lines, clock) == lines.size());
  {
    auto db = test::open_writer(config.store.path);
    run_every_job(db, kNow);
    SQLite::Transaction transaction(db);
    memory_ops::mark_for_clear(db, "libzmq", kNow);
    // What the first transactions of the clear did before the crash.
    db.exec("INSERT INTO forget_in_progress (id) VALUES (1)");
    db.exec(
        "DELETE FROM audit_log WHERE actor LIKE 'job:%' AND record_type = 'knowledge' AND "
        "record_id IN (SELECT decision_id FROM knowledge WHERE namespace = 'libzmq')");
    db.exec("DELETE FROM forget_in_progress");
    transaction.commit();
  }
  test::RunningDaemon running(config);
  Clients clients(running);
  auto ask = [&](const json& request) { return test::control(clients.control, request); };
  // The resumed clear, then its five rebuild runs, each to its end.
  json runs;
  std::vector<std::string> order;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(20))) {
    runs = ask({{"cmd", "jobs"}, {"limit", 20}});
    order.clear();
    for (const auto& run : runs["runs"]) {
      order.insert(order.begin(), run["job"].get<std::string>() + " " +
                                      run["namespace"].get<std::string>() + " " +
                                      run["status"].get<std::string>());
    }
    if (order.size() == 6 && order.back() != "medallion libzmq running") break;
  }
  INFO(runs.dump());
  CHECK(order == std::vector<std::string>{"forget  ok", "cluster libzmq ok",
                                          "consolidate libzmq ok", "decay libzmq ok",
                                          "importance libzmq ok", "medallion libzmq ok"});
  const json& resumed = runs["runs"].back();
  CHECK(resumed["result"] ==
        json::parse(R"({"resumed":true,"namespaces":["libzmq"],"rebuild_runs":5})"));
  running.stop();
  auto db = test::open_writer(config.store.path);
  CHECK(memory_ops::pending_clears(db).empty());
  CHECK(db.execAndGet("SELECT count(*) FROM entities WHERE namespace = 'libzmq'").getInt() > 100);
  CHECK(db.execAndGet("SELECT count(*) FROM knowledge WHERE namespace = 'libzmq'").getInt() > 10);
  CHECK(db.execAndGet("SELECT count(*) FROM medallions WHERE id = 'med:libzmq'").getInt() == 1);
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 800);
}

TEST_CASE("forget delete: a forgotten fact hands its place back in the supersession chain") {
  test::TempDir dir;
  const std::string path = dir.file("reflectd.db");
  FakeClock clock(kNow);
  auto said = [](const std::string& id, const std::string& ts, const std::string& text) {
    return json{{"id", id},          {"kind", "prompt"}, {"namespace", "talk"},
                {"agent_id", "Ana"}, {"timestamp", ts},  {"content", "Ana: " + text}}
        .dump();
  };
  REQUIRE(test::load_lines(path,
                           {said("t1", "2024-01-01T10:00:00Z", "I live in Boston."),
                            said("t2", "2024-02-01T10:00:00Z", "I live in Zorblatt7781ville."),
                            said("t3", "2024-03-01T10:00:00Z", "I live in Denver."),
                            said("t4", "2024-04-01T10:00:00Z", "I live in Zorblatt7781burg.")},
                           clock) == 4);
  auto db = test::open_writer(path);
  run_every_job(db, kNow);
  const std::string chain =
      "SELECT fact_text, is_stale, coalesce(valid_to_us, 'open'), "
      "coalesce((SELECT fact_text FROM facts p WHERE p.fact_id = f.supersedes_fact_id), '-') "
      "FROM facts f WHERE attribute_key = 'residence' ORDER BY fact_id";
  INFO(test::dump(db, chain));
  REQUIRE(db.execAndGet("SELECT count(*) FROM facts WHERE attribute_key = 'residence'").getInt() ==
          4);
  memory_ops::EventSelection selection;
  selection.ids = {"t2", "t4"};
  std::string error;
  auto events = memory_ops::resolve_event_selection(db, selection, {}, "forget", error);
  REQUIRE(events);
  const auto outcome = hard_delete(db, *events);
  CHECK(outcome.facts_deleted == 2);
  const std::string march = std::to_string(*parse_rfc3339_us("2024-03-01T10:00:00Z"));
  // Denver now supersedes Boston (which ends when Denver begins) and holds again.
  CHECK(test::dump(db, chain) == "Ana lives in Boston.|1|" + march +
                                     "|-|\nAna lives in Denver.|0|open|Ana lives in Boston.|\n");
}

TEST_CASE("forget: deletion policies, pins, ids and filters") {
  test::TempDir dir;
  const std::string path = dir.file("reflectd.db");
  FakeClock clock(kNow);
  auto event = [](const std::string& id, const std::string& ns, const json& lifecycle) {
    json e = {{"id", id},
              {"kind", "observation"},
              {"namespace", ns},
              {"agent_id", "a"},
              {"timestamp", "2024-01-01T10:00:00Z"},
              {"content", "note " + id}};
    if (!lifecycle.is_null()) e["lifecycle"] = lifecycle;
    return e.dump();
  };
  REQUIRE(test::load_lines(path,
                           {event("keep", "ns1", {{"deletion_policy", "never"}}),
                            event("pinned", "ns1", {{"pinned", true}}),
                            event("plain", "ns1", nullptr), event("other", "ns2", nullptr)},
                           clock) == 4);
  auto db = test::open_writer(path);
  std::string error;
  json kept = json::array();

  memory_ops::EventSelection by_ids;
  by_ids.ids = {"plain", "keep"};
  auto events = memory_ops::resolve_event_selection(db, by_ids, {}, "forget", error);
  REQUIRE(events);
  CHECK_FALSE(memory_ops::forgettable(*events, true, "forget", kept, error));
  CHECK(error == "forget: event 'keep': deletion_policy never: it cannot be forgotten");

  memory_ops::EventSelection filter;
  filter.filter = memory_ops::EventFilter{};
  filter.filter->ns = "ns1";
  events = memory_ops::resolve_event_selection(db, filter, {}, "forget", error);
  REQUIRE(events);
  auto allowed = memory_ops::forgettable(*events, false, "forget", kept, error);
  REQUIRE(allowed);
  REQUIRE(allowed->size() == 1);
  CHECK(allowed->front().id == "plain");
  CHECK(kept == json::parse(R"([{"id":"keep","reason":"deletion_policy never: it cannot be )"
                            R"(forgotten"},{"id":"pinned","reason":"pinned: unpin it first"}])"));

  // A writer of ns1 only: ns2's event reads as unknown; a filter across namespaces needs admin.
  const memory_ops::WriteScope writer{"w", false, {"ns1"}, false};
  by_ids.ids = {"other"};
  CHECK_FALSE(memory_ops::resolve_event_selection(db, by_ids, writer, "forget", error));
  CHECK(error == "forget: ids: no event 'other' in the namespaces you may write ([\"ns1\"])");
  filter.filter->ns.clear();
  filter.filter->kind = "observation";
  CHECK_FALSE(memory_ops::resolve_event_selection(db, filter, writer, "forget", error));
  CHECK(error == "forget: filter.namespace: required (a filter across namespaces needs admin)");
  filter.filter->ns = "ns2";
  CHECK_FALSE(memory_ops::resolve_event_selection(db, filter, writer, "forget", error));
  CHECK(error == "forget: filter.namespace: 'ns2' is not one of your namespaces");
  filter.filter->ns = "ns1";
  filter.filter->text = "nothing like this";
  CHECK_FALSE(memory_ops::resolve_event_selection(db, filter, writer, "forget", error));
  CHECK(error == "forget: filter: matches no event");

  // Request parsing names the field.
  auto parse = [&](const std::string& request) {
    error.clear();
    return memory_ops::parse_event_selection(json::parse(request), "forget", error);
  };
  CHECK_FALSE(parse(R"({"cmd":"forget"})"));
  CHECK(error == "forget: give either \"ids\" (an array of event ids) or \"filter\" (an object)");
  CHECK_FALSE(parse(R"({"ids":[]})"));
  CHECK(error == "forget: ids: must be an array of 1 to 1000 event ids");
  CHECK_FALSE(parse(R"({"filter":{"before":"yesterday"}})"));
  CHECK(error ==
        "forget: filter.before: must be an RFC 3339 date-time with an offset (e.g. "
        "2024-05-01T00:00:00Z)");
  CHECK_FALSE(parse(R"({"filter":{"namespce":"ns1"}})"));
  CHECK(error ==
        "forget: filter.namespce: unknown field; known: namespace, agent_id, kind, before, "
        "after, text");
  CHECK(parse(R"({"filter":{"text":"50%_off"}})"));
}

TEST_CASE("the audit log stays append-only outside a forget") {
  test::TempDir dir;
  auto db = test::open_writer(dir.file("reflectd.db"));
  db.exec(
      "INSERT INTO audit_log (record_type, record_id, action, actor, at_us, rationale) VALUES "
      "('knowledge', 'k1', 'create', 'job:consolidate', 1, 'quoted text')");
  CHECK_THROWS_WITH(db.exec("UPDATE audit_log SET rationale = '[forgotten]'"),
                    Catch::Contains("append-only"));
  CHECK_THROWS_WITH(db.exec("DELETE FROM audit_log"), Catch::Contains("append-only"));
  SQLite::Transaction transaction(db);
  db.exec("INSERT INTO forget_in_progress (id) VALUES (1)");
  CHECK_THROWS_WITH(db.exec("UPDATE audit_log SET rationale = 'rewritten'"),
                    Catch::Contains("append-only"));
  CHECK(db.exec("UPDATE audit_log SET rationale = '[forgotten]', previous = NULL") == 1);
  CHECK(db.exec("DELETE FROM audit_log") == 1);
}

TEST_CASE("derived state: every table of the schema is cleared, edited or kept") {
  test::TempDir dir;
  auto db = test::open_writer(dir.file("reflectd.db"));
  std::set<std::string> listed;
  for (auto t : memory_ops::kDerivedTables) listed.emplace(t);
  for (auto t : memory_ops::kForgetEditedTables) listed.emplace(t);
  for (auto t : memory_ops::kKeptTables) listed.emplace(t);
  SQLite::Statement tables(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                           "LIKE 'events_fts%' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (tables.executeStep()) {
    const std::string name = tables.getColumn(0).getString();
    INFO(name << " is new: clear it in memory_ops/derived_state.cpp or list it as kept");
    CHECK(listed.count(name) == 1);
  }
}
