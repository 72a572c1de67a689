// Memory operations: forget, restore, pin, unpin and the audit read.
//  - On real SQLite files with the jobs run directly (a fake clock): a hard delete leaves the
//    forgotten text in no table, no full-text shadow table and no byte of the database or WAL
//    file; what the jobs rebuild equals what they derive from a store that never had the
//    events; facts unwind their supersession; policies and the audit log's guard hold.
//  - On a real daemon over ZeroMQ: every command, its audit rows and its errors.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <regex>
#include <set>
#include <thread>

#include "common/clock.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/facts.hpp"
#include "jobs/importance.hpp"
#include "jobs/medallion.hpp"
#include "jobs/sql_functions.hpp"
#include "memory_ops/derived_state.hpp"
#include "memory_ops/event_selection.hpp"
#include "memory_ops/forget.hpp"
#include "memory_ops/medallions.hpp"
#include "recall/record_reads.hpp"
#include "store/database.hpp"
#include "store/write_gate.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"
#include "support/db_dump.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace reflectd;
using nlohmann::json;

constexpr const char* kMarker = "zorblatt7781";
const std::int64_t kNow = *parse_rfc3339_us("2026-01-01T00:00:00Z");

// Every job a namespace's derived state comes from, in the order the daemon's rebuild runs
// them, plus the facts job.
void run_every_job(SQLite::Database& db, std::int64_t now) {
  FakeClock clock(now);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  const config::Config cfg = config::defaults();
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  const model::VitalityParams vitality = daemon::vitality_params(cfg.decay);
  jobs::register_sql_functions(db, vitality);
  jobs::run_clustering(ctx, daemon::cluster_params(cfg));
  jobs::run_consolidation(ctx, daemon::consolidation_params(cfg));
  jobs::run_decay(ctx, vitality);
  jobs::run_importance(ctx, daemon::importance_params(cfg));
  jobs::run_facts(ctx);
  jobs::run_medallion_refresh(ctx, daemon::medallion_params(cfg));
}

// A Problem/Solution commit and an agent's decision that both carry the marker.
std::vector<std::string> marked_events(const std::string& ts) {
  return {json{{"id", "marked-commit"},
               {"kind", "commit_change"},
               {"namespace", "libzmq"},
               {"agent_id", "dev-zorblatt"},
               {"timestamp", ts},
               {"content",
                "Zorblatt7781 socket fix\n\nProblem: Zorblatt7781 frames were dropped on "
                "reconnect.\n\nSolution: Keep the Zorblatt7781 frames queued until the pipe "
                "is attached again."},
               {"context", {{"files", {"src/zorblatt7781.cpp", "src/socket_base.cpp"}}}}}
              .dump(),
          json{{"id", "marked-decision"},
               {"kind", "decision"},
               {"namespace", "libzmq"},
               {"agent_id", "planner"},
               {"timestamp", ts},
               {"content", "Queue Zorblatt7781 frames across reconnects"},
               {"context",
                {{"title", "Queue Zorblatt7781 frames"},
                 {"target", "src/zorblatt7781.cpp"},
                 {"rationale", "Zorblatt7781 frames must survive a reconnect"}}}}
              .dump()};
}

std::vector<memory_ops::SelectedEvent> select_marked(SQLite::Database& db) {
  memory_ops::EventSelection selection;
  selection.filter = memory_ops::EventFilter{};
  selection.filter->ns = "libzmq";
  selection.filter->text = kMarker;
  std::string error;
  auto events = memory_ops::resolve_event_selection(db, selection, {}, "forget", error);
  INFO(error);
  REQUIRE(events);
  return *events;
}

memory_ops::DeleteOutcome hard_delete(SQLite::Database& db,
                                      const std::vector<memory_ops::SelectedEvent>& events) {
  FakeClock clock(kNow);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  auto outcome = memory_ops::forget_events(ctx, events, "test", "test forget");
  CHECK(outcome.wal_truncated);
  CHECK(db.execAndGet("PRAGMA foreign_keys").getInt() == 1);
  return outcome;
}

// What the jobs derive, without row ids a rebuild renumbers (entity_id, cluster_id).
std::string derived_dump(SQLite::Database& db) {
  return test::consolidation_tables(db) +
         test::dump(db,
                    "SELECT namespace, canonical_key, display_name, entity_type, mention_count, "
                    "importance_score, summary_text, is_active, sensitivity FROM entities "
                    "ORDER BY namespace, canonical_key") +
         test::dump(db,
                    "SELECT s.canonical_key, t.canonical_key, r.rel_type, r.strength_base, "
                    "r.mention_count, r.evidence_seq, r.last_evidence_seq FROM "
                    "entity_relationships r JOIN entities s ON s.entity_id = r.source_id JOIN "
                    "entities t ON t.entity_id = r.target_id ORDER BY 1, 2, 3") +
         test::dump(db,
                    "SELECT namespace, label, summary_text, medoid_seq, member_count, "
                    "duplicate_count, first_seq, last_seq FROM clusters ORDER BY medoid_seq, "
                    "label") +
         test::dump(db, "SELECT * FROM cluster_terms ORDER BY namespace, term") +
         test::dump(db,
                    "SELECT fact_id, namespace, entity_key, attribute_key, fact_text, "
                    "valid_from_us, valid_to_us, source_seq, supersedes_fact_id, is_stale FROM "
                    "facts ORDER BY fact_id") +
         test::dump(db, "SELECT id, content_json, status FROM medallions ORDER BY id");
}

// The jobs of `config` run only when asked (`run`), so a case sees exactly what it ran.
void jobs_on_demand(config::Config& config) {
  for (config::JobConfig* job :
       {&config.jobs.consolidate, &config.jobs.decay, &config.jobs.cluster, &config.jobs.importance,
        &config.jobs.medallion, &config.jobs.facts}) {
    job->interval_s = 604800;
    job->after_events = 0;
    job->idle_s = 0;
  }
}

// An ingest and a control client of a running daemon.
struct Clients {
  explicit Clients(test::RunningDaemon& running)
      : ingest(make(running.endpoints().ingest[0])),
        control(make(running.endpoints().control[0])) {}
  zmq::context_t context;
  zmq::socket_t ingest;
  zmq::socket_t control;

 private:
  zmq::socket_t make(const std::string& endpoint) {
    return test::make_client(context, zmq::socket_type::dealer, endpoint);
  }
};

}  // namespace

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

TEST_CASE("forget, restore, pin, unpin and audit on a running daemon") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto event = [](const std::string& id, const json& lifecycle) {
    json e = {{"id", id},
              {"kind", "observation"},
              {"namespace", "ops"},
              {"agent_id", "a"},
              {"timestamp", "2024-01-01T10:00:00Z"},
              {"content", "content of " + id}};
    if (!lifecycle.is_null()) e["lifecycle"] = lifecycle;
    return e;
  };
  REQUIRE(test::ingest(ingest, json::array({event("a", nullptr), event("b", nullptr),
                                            event("c", {{"deletion_policy", "never"}})})
                                   .dump())["ok"] == true);
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto status_of = [&](const std::string& id) {
    return ask({{"cmd", "get"}, {"ids", {id}}})["events"][0]["status"];
  };

  json reply = ask({{"cmd", "forget"}, {"ids", {"a"}}});
  INFO(reply.dump());
  CHECK(reply["forgotten"] == json::parse(R"({"mode":"archive","events_archived":1,"kept":[]})"));
  CHECK(status_of("a") == "archived");
  // Recall and context leave an archived event out unless asked for it.
  auto recalled = [&](const json& extra) {
    json request = {{"cmd", "recall"}, {"text", "content of a"}, {"namespace", "ops"}};
    request.update(extra);
    const json answer = ask(request);
    INFO(answer.dump());
    std::vector<std::string> ids;
    for (const auto& hit : answer["results"]) {
      ids.push_back(hit["id"].get<std::string>() + " " + hit["status"].get<std::string>());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(recalled(json::object()) == std::vector<std::string>{"b active", "c active"});
  CHECK(recalled({{"include_archived", true}}) ==
        std::vector<std::string>{"a archived", "b active", "c active"});
  CHECK(ask({{"cmd", "recall"}, {"text", "a"}, {"include_archived", "yes"}})["error"] ==
        "recall: include_archived: must be true or false");
  const json context = ask({{"cmd", "context"}, {"text", "content of a"}, {"namespace", "ops"}});
  CHECK(context["sources"].get<std::set<std::string>>() == std::set<std::string>{"b", "c"});
  CHECK(ask({{"cmd", "restore"}, {"ids", {"a", "b"}}})["result"] ==
        json::parse(R"({"changed":["a"],"unchanged":["b"]})"));
  CHECK(status_of("a") == "active");
  CHECK(recalled(json::object()) == std::vector<std::string>{"a active", "b active", "c active"});

  CHECK(ask({{"cmd", "pin"}, {"ids", {"b"}}})["result"]["changed"] == json::array({"b"}));
  CHECK(ask({{"cmd", "forget"}, {"ids", {"b"}}})["error"] ==
        "forget: event 'b': pinned: unpin it first");
  CHECK(ask({{"cmd", "unpin"}, {"ids", {"b"}}})["result"]["changed"] == json::array({"b"}));
  CHECK(ask({{"cmd", "forget"}, {"ids", {"c"}}})["error"] ==
        "forget: event 'c': deletion_policy never: it cannot be forgotten");
  CHECK(ask({{"cmd", "forget"}, {"ids", {"nope"}}})["error"] ==
        "forget: ids: no event 'nope' in the namespaces you may write (*)");
  CHECK(ask({{"cmd", "forget"}, {"ids", {"a"}}, {"mode", "purge"}})["error"] ==
        "forget: mode: must be \"archive\" or \"delete\"");
  reply = ask({{"cmd", "forget"},
               {"filter", {{"namespace", "ops"}, {"text", "OF B"}}},
               {"mode", "delete"},
               {"dry_run", true}});
  CHECK(reply["forgotten"]["events"].size() == 1);
  CHECK(reply["forgotten"]["events"][0]["id"] == "b");
  CHECK(status_of("b") == "active");

  reply = ask({{"cmd", "forget"}, {"ids", {"b"}}, {"mode", "delete"}, {"wait", true}});
  INFO(reply.dump());
  REQUIRE(reply["ok"] == true);
  CHECK(reply["forgotten"]["events_deleted"] == 1);
  CHECK(reply["forgotten"]["rebuild_runs"] == 5);
  CHECK(reply["forgotten"]["namespaces"] == json::array({"ops"}));
  CHECK(ask({{"cmd", "get"}, {"ids", {"b"}}})["missing"] == json::array({"b"}));
  // The rebuild ran: the namespace's medallion is back.
  CHECK(ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "med:ops"}})["ok"] == true);

  const json audit = ask({{"cmd", "audit"}, {"namespace", "ops"}, {"limit", 100}});
  std::vector<std::string> actions;
  for (const auto& row : audit["audit"]) {
    if (row["record_type"] == "event") {
      actions.push_back(row["record_id"].get<std::string>() + " " +
                        row["action"].get<std::string>() + " " +
                        row["rationale"].get<std::string>());
    }
  }
  CHECK(actions == std::vector<std::string>{"b delete forgotten (delete) by control",
                                            "b revise unpinned: salience decays again from now",
                                            "b revise pinned: salience no longer decays",
                                            "a revise restored from the archive",
                                            "a archive forgotten (archive) by control"});
  CHECK(ask({{"cmd", "audit"}, {"since", "yesterday"}})["error"] ==
        "audit: since: must be an RFC 3339 date-time with an offset");
}

TEST_CASE("revise on a running daemon; SHODH objects and content dedup through ingest") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  config.store.dedup = "namespace";
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  const json stored =
      test::ingest(ingest, json::array({
                                           {{"id", "home"},
                                            {"kind", "conversation"},
                                            {"namespace", "ops"},
                                            {"agent_id", "caroline"},
                                            {"tags", {"home"}},
                                            {"timestamp", "2023-05-08T13:56:00Z"},
                                            {"content", "Caroline lives in Denver"}},
                                           {{"id", "copy"},
                                            {"kind", "conversation"},
                                            {"namespace", "ops"},
                                            {"content", "Caroline lives in Denver"}},
                                           // seed 004's shape, no kind
                                           {{"id", "550e8400-e29b-41d4-a716-446655440000"},
                                            {"type", "Decision"},
                                            {"namespace", "ops"},
                                            {"source_type", "ai_generated"},
                                            {"created_at", "2024-12-30T10:00:00Z"},
                                            {"content", "Use JWT tokens with 24h expiry"}},
                                       })
                               .dump());
  INFO(stored.dump());
  CHECK(stored["results"][1]["status"] == "duplicate");
  CHECK(stored["results"][1]["duplicate_of"] == "home");
  CHECK(stored["results"][2]["status"] == "stored");
  CHECK(stored["results"][2]["decision"]["metadata"]["decision_id"] ==
        "550e8400-e29b-41d4-a716-446655440000");

  const json revised = ask({{"cmd", "revise"},
                            {"id", "home"},
                            {"content", "Caroline lives in Boston since June 2023"},
                            {"rationale", "she moved"},
                            {"new_id", "home-2"}});
  INFO(revised.dump());
  REQUIRE(revised["ok"] == true);
  CHECK(revised["revised"]["id"] == "home");
  CHECK(revised["revised"]["revision"]["id"] == "home-2");
  const json both = ask({{"cmd", "get"}, {"ids", {"home", "home-2"}}});
  const json& old = both["events"][0];
  const json& fresh = both["events"][1];
  CHECK(old["status"] == "superseded");
  CHECK(old["superseded_by"] == "home-2");
  CHECK(old["content"] == "Caroline lives in Denver");
  CHECK(fresh["status"] == "active");
  CHECK(fresh["superseded_by"].is_null());
  CHECK(fresh["kind"] == "conversation");
  CHECK(fresh["agent_id"] == "caroline");
  CHECK(fresh["tags"] == json::array({"home"}));
  CHECK(fresh["relations"] == json::parse(R"([{"predicate":"supersedes","target_id":"home"}])"));
  CHECK(fresh["ts"] != old["ts"]);  // the time of the revision
  // recall finds the revision, never the text it replaced.
  auto recalled = [&](const std::string& text) {
    std::vector<std::string> ids;
    const json reply = ask({{"cmd", "recall"}, {"text", text}, {"namespace", "ops"}});
    for (const auto& hit : reply["results"]) ids.push_back(hit["id"].get<std::string>());
    return ids;
  };
  CHECK(recalled("Where does Caroline live?") == std::vector<std::string>{"home-2"});
  CHECK(recalled("Denver") == std::vector<std::string>{});

  CHECK(ask({{"cmd", "revise"}, {"id", "home"}, {"content", "x"}, {"rationale", "r"}})["error"] ==
        "revise: id: home is superseded by home-2; revise that revision");
  CHECK(ask({{"cmd", "revise"}, {"id", "home-2"}, {"content", "x"}})["error"] ==
        "revise: rationale: is required");
  CHECK(ask({{"cmd", "revise"}, {"id", "nope"}, {"content", "x"}, {"rationale", "r"}})["error"] ==
        "revise: ids: no event 'nope' in the namespaces you may write (*)");
  CHECK(ask({{"cmd", "revise"},
             {"id", "550e8400-e29b-41d4-a716-446655440000"},
             {"content", "x"},
             {"rationale", "r"}})["error"] ==
        "revise: id: 550e8400-e29b-41d4-a716-446655440000 is a decision; a decision, "
        "constraint, assumption, intervention or proposal is revised by a new one with "
        "resolution supersede (seed 000 ResolutionIntent)");
  const json audit = ask({{"cmd", "audit"}, {"record_id", "home"}});
  REQUIRE(audit["audit"].size() == 1);
  CHECK(audit["audit"][0]["action"] == "revise");
  CHECK(audit["audit"][0]["rationale"] == "she moved");

  // Deleting the revision makes the old event current again.
  REQUIRE(ask({{"cmd", "forget"}, {"ids", {"home-2"}}, {"mode", "delete"}, {"wait", true}})["ok"] ==
          true);
  const json back = ask({{"cmd", "get"}, {"ids", {"home"}}})["events"][0];
  CHECK(back["status"] == "active");
  CHECK(back["superseded_by"].is_null());
  CHECK(recalled("Denver") == std::vector<std::string>{"home"});
  // A correction of what was said then keeps the event's time.
  const json corrected = ask({{"cmd", "revise"},
                              {"id", "home"},
                              {"content", "Caroline lives in Denver, Colorado"},
                              {"rationale", "transcript completed"},
                              {"keep_timestamp", true}});
  REQUIRE(corrected["ok"] == true);
  const std::string revision_id = corrected["revised"]["revision"]["id"];
  CHECK(revision_id.size() == 64);  // derived: SHA-256 hex
  CHECK(ask({{"cmd", "get"}, {"ids", {revision_id}}})["events"][0]["ts"] ==
        "2023-05-08T13:56:00.000000Z");
  CHECK(ask({{"cmd", "revise"},
             {"id", revision_id},
             {"content", "x"},
             {"rationale", "r"},
             {"keep_timestamp", "yes"}})["error"] ==
        "revise: keep_timestamp: must be true or false");
}

TEST_CASE("proposal verdicts on a running daemon: accept, reject, falsify, with audit rows") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto proposal = [](const std::string& id, const std::string& target) {
    return json{{"id", id},
                {"kind", "proposal"},
                {"namespace", "ops"},
                {"content", "Proposal: " + target},
                {"context",
                 {{"title", "Try " + target},
                  {"target", target},
                  {"rationale", "it may cut the latency tail"}}}};
  };
  REQUIRE(test::ingest(ingest, json::array({proposal("p1", "pool"), proposal("p2", "cache"),
                                            proposal("p3", "batch")})
                                   .dump())["ok"] == true);
  auto verdict = [&](const std::string& action, const std::string& id) {
    return ask(
        {{"cmd", "proposal"}, {"action", action}, {"proposal_id", id}, {"rationale", "measured"}});
  };
  CHECK(verdict("accept", "p1")["proposal"] ==
        json::parse(R"({"proposal_id":"p1","namespace":"ops","status":"accepted",
                        "previous_status":"draft"})"));
  CHECK(verdict("reject", "p2")["proposal"]["status"] == "rejected");
  CHECK(verdict("falsify", "p1")["proposal"]["previous_status"] == "accepted");
  CHECK(verdict("falsify", "p3")["proposal"]["status"] == "falsified");
  CHECK(verdict("accept", "p2")["error"] ==
        "proposal: accept: 'p2' is rejected; accept needs draft");
  CHECK(verdict("falsify", "p2")["error"] ==
        "proposal: falsify: 'p2' is rejected; falsify needs draft or accepted");
  CHECK(verdict("accept", "nope")["error"] ==
        "proposal: proposal_id: no proposal 'nope' in the namespaces you may write");
  CHECK(verdict("adopt", "p1")["error"] ==
        R"(proposal: action: must be "accept", "reject" or "falsify")");
  CHECK(ask({{"cmd", "proposal"}, {"action", "accept"}, {"proposal_id", "p1"}})["error"] ==
        "proposal: rationale: is required");
  const json rows = ask({{"cmd", "knowledge"}, {"namespace", "ops"}});
  std::map<std::string, std::string> status;
  for (const auto& row : rows["knowledge"]) status[row["decision_id"]] = row["status"];
  CHECK(status == std::map<std::string, std::string>{
                      {"p1", "falsified"}, {"p2", "rejected"}, {"p3", "falsified"}});
  const json audit = ask({{"cmd", "audit"}, {"record_id", "p1"}});
  std::vector<std::string> actions;
  for (const auto& row : audit["audit"]) {
    actions.push_back(row["action"].get<std::string>() + " " + row["rationale"].get<std::string>() +
                      " " + row["previous"].dump());
  }
  CHECK(actions == std::vector<std::string>{R"(deprecate falsify: measured {"status":"accepted"})",
                                            R"(accept accept: measured {"status":"draft"})",
                                            "create published as a proposal event (seq 1) null"});
  // A rejected or falsified proposal takes no evidence from events stored after the verdict
  // (the consolidation job's window, knowledge.ended_seq): seqs 1-3 are stored, so 4.
  SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
  CHECK(test::dump(db, "SELECT decision_id, ended_seq FROM knowledge ORDER BY decision_id") ==
        "p1|4|\np2|4|\np3|4|\n");
}

TEST_CASE("retention: events past their rule's age are deleted on schedule, policies hold") {
  CHECK(memory_ops::parse_retention_rule("max_age_days=30;namespace=talk;kind=prompt").ns ==
        "talk");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("namespace=talk"),
                    "max_age_days: is required");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("max_age_days=-1"),
                    "max_age_days: must be a number of days above 0");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("max_age_days=3;size=9"),
                    "'size': unknown key; known: max_age_days, namespace, kind");

  test::TempDir dir;
  const std::string path = dir.file("reflectd.db");
  FakeClock clock(kNow);
  auto event = [](const std::string& id, const std::string& ns, const std::string& ts,
                  const json& lifecycle) {
    json e = {{"id", id},          {"kind", "prompt"}, {"namespace", ns},
              {"agent_id", "Ana"}, {"timestamp", ts},  {"content", "Ana: note " + id}};
    if (!lifecycle.is_null()) e["lifecycle"] = lifecycle;
    return e.dump();
  };
  REQUIRE(test::load_lines(
              path,
              {event("old", "talk", "2020-01-01T10:00:00Z", nullptr),
               event("kept", "talk", "2020-01-01T11:00:00Z", {{"deletion_policy", "never"}}),
               event("pinned", "talk", "2020-01-01T12:00:00Z", {{"pinned", true}}),
               event("recent", "talk", "2025-12-01T10:00:00Z", nullptr),
               event("elsewhere", "other", "2020-01-01T10:00:00Z", nullptr)},
              clock) == 5);
  auto db = test::open_writer(path);
  run_every_job(db, kNow);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "interval", 0, {}};
  const json result = memory_ops::run_retention(
      ctx, {memory_ops::parse_retention_rule("namespace=talk;max_age_days=365")});
  INFO(result.dump());
  CHECK(result["events_deleted"] == 1);
  CHECK(result["namespaces"] == json::array({"talk"}));
  CHECK(test::dump(db, "SELECT uid FROM events ORDER BY seq") ==
        "kept|\npinned|\nrecent|\nelsewhere|\n");
  CHECK(test::dump(db, "SELECT record_id, action, actor FROM audit_log WHERE action = 'delete'") ==
        "old|delete|job:retention|\n");
  CHECK(test::places_of(db, "note old").empty());
  // Nothing more is due: the next run deletes nothing.
  CHECK(memory_ops::run_retention(ctx, {memory_ops::parse_retention_rule(
                                           "namespace=talk;max_age_days=365")})["events_deleted"] ==
        0);
}

TEST_CASE(
    "merge_entities on a running daemon: mentions, edges and audit move, errors are precise") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto observation = [](const std::string& content, const json& entities) {
    return json{{"kind", "observation"},
                {"namespace", "ops"},
                {"content", content},
                {"entities", entities}};
  };
  REQUIRE(
      test::ingest(
          ingest, json::array({observation("ann reviewed the pool", {"person:Ann", "repo:pool"}),
                               observation("annie merged the pool", {"person:Annie", "repo:pool"}),
                               observation("annie and ann paired", {"person:Annie", "person:Ann"})})
                      .dump())["ok"] == true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "cluster"}, {"wait", true}})["ok"] == true);
  auto merge = [&](const std::string& from, const std::string& into) {
    return ask({{"cmd", "merge_entities"},
                {"namespace", "ops"},
                {"from", from},
                {"into", into},
                {"rationale", "same person"}});
  };
  CHECK(merge("person:ann", "Ann")["error"] ==
        "merge_entities: into: 'Ann' is 'person:ann' itself: nothing to merge");
  CHECK(merge("person:bob", "person:ann")["error"] ==
        "merge_entities: from: no entity 'person:bob' in namespace 'ops' (a canonical key such "
        "as person:mel, or a display name exactly one entity has)");
  CHECK(ask({{"cmd", "merge_entities"}, {"namespace", "ops"}, {"from", "person:ann"}})["error"] ==
        "merge_entities: into: is required");
  // By display name; the edge between the two goes, the two edges to the pool become one.
  const json merged = merge("Ann", "person:annie");
  INFO(merged.dump());
  CHECK(merged["merged"] == json::parse(R"({"namespace":"ops","from":"person:ann",
      "into":"person:annie","moved":{"mentions_moved":1,"mentions_joined":1,"edges_moved":0,
      "edges_joined":1,"edges_dropped":1,"facts_moved":0}})"));
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "person:annie|3|\nrepo:pool|2|\n");
    CHECK(test::dump(db, "SELECT alias_key, canonical_key FROM entity_merges") ==
          "person:ann|person:annie|\n");
    CHECK(test::dump(db, "SELECT mention_count FROM entity_relationships") == "2|\n");
  }
  // Later events naming the merged key resolve to the entity it was merged into.
  REQUIRE(
      test::ingest(ingest, json::array({observation("ann again", {"person:Ann"})}).dump())["ok"] ==
      true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "cluster"}, {"wait", true}})["ok"] == true);
  const json decay = ask({{"cmd", "run"}, {"job", "decay"}, {"wait", true}});
  CHECK(decay["run"]["result"]["merges_executed"] == 0);
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "person:annie|4|\nrepo:pool|2|\n");
  }
  const json audit = ask({{"cmd", "audit"}, {"namespace", "ops"}, {"record_id", "person:ann"}});
  REQUIRE(audit["audit"].size() == 1);
  CHECK(audit["audit"][0]["action"] == "merge");
  CHECK(audit["audit"][0]["rationale"] == "same person");
  CHECK(audit["audit"][0]["previous"]["into"] == "person:annie");
}

namespace {

json resume_medallion(const std::string& id, const std::string& high_level) {
  return {{"meta", {{"medallion_id", id}}},
          {"scope", {{"graph_nodes", {"repo:pool"}}, {"tags", {"sprint-1"}}}},
          {"summary", {{"high_level", high_level}}},
          {"decisions",
           {{{"id", "D-001"},
             {"statement", "Use a ring buffer"},
             {"rationale", "bounded memory"},
             {"confidence", 0.8}}}},
          {"affordances",
           {{"recommended_entry_points", {"pool.cpp"}}, {"avoid_repeating", json::array()}}}};
}

json create_request(const json& medallion, const std::string& summary) {
  return {{"cmd", "medallion"},
          {"action", "create"},
          {"namespace", "proj"},
          {"medallion", medallion},
          {"evidence", {{"session_summary", summary}}}};
}

}  // namespace

TEST_CASE("agents' medallions: create, update with evidence, explicit status; jobs keep off") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto ask = [&](const json& request) { return test::control(clients.control, request); };
  auto observation = [](const std::string& id, const std::string& content) {
    return json{{"id", id}, {"kind", "observation"}, {"namespace", "proj"}, {"content", content}};
  };
  REQUIRE(test::ingest(clients.ingest,
                       json::array({observation("p-1", "the pool leaks under load"),
                                    observation("p-2", "the pool now uses a ring buffer")})
                           .dump())["ok"] == true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "medallion"}, {"wait", true}})["ok"] == true);

  json request =
      create_request(resume_medallion("proj-resume", "The pool is done."), "finished the pool");
  request["evidence"]["transcripts"] = {"we chose a ring buffer"};
  const json created = ask(request);
  INFO(created.dump());
  REQUIRE(created["ok"] == true);
  CHECK(created["written"]["id"] == "proj-resume");
  CHECK(created["written"]["status"] == "active");
  CHECK(created["written"]["version"] == 1);
  CHECK(created["written"]["superseded"].is_null());

  // Precise refusals.
  CHECK(ask(request)["error"] ==
        "medallion: medallion.meta.medallion_id: 'proj-resume' exists; update it");
  CHECK(ask(create_request(resume_medallion("med:mine", "x"), "s"))["error"] ==
        "medallion: medallion.meta.medallion_id: ids starting \"med:\" are the medallion job's; "
        "choose another id or leave it out");
  json bad = resume_medallion("bad", "x");
  bad["decisions"][0]["confidence"] = 1.5;
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion: not a valid seed 001 Medallion: decisions[].confidence: must be "
        "between 0.0 and 1.0");
  bad = resume_medallion("bad", "x");
  bad["owner"] = "me";
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion.owner: not a field of a seed 001 Medallion (meta, scope, summary, "
        "decisions, open_questions, affordances)");
  bad = resume_medallion("bad", "x");
  bad["meta"]["status"] = "stale";
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion.meta.status: a new medallion starts active (seed 001); change it "
        "afterwards with action set_status");
  json no_evidence = create_request(resume_medallion("bad", "x"), "s");
  no_evidence.erase("evidence");
  CHECK(ask(no_evidence)["error"] ==
        "medallion: evidence: is required (seed 001 Evidence: session_summary, transcripts?, "
        "artefacts?)");
  no_evidence["evidence"] = {{"session_summary", " "}};
  CHECK(ask(no_evidence)["error"] == "medallion: evidence: session_summary: must not be empty");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "med:proj"},
             {"status", "stale"},
             {"rationale", "r"}})["error"] ==
        "medallion: id: 'med:proj' is the medallion job's: it is rebuilt from the events, which "
        "also mark it stale; agents update and set the status of their own medallions only");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "nope"},
             {"status", "stale"},
             {"rationale", "r"}})["error"] ==
        "medallion: id: no medallion 'nope' in the namespaces you may write");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "proj-resume"},
             {"status", "active"},
             {"superseded_by", "x"},
             {"rationale", "r"}})["error"] ==
        "medallion: superseded_by: only with status superseded");

  // New events mark the job's medallion stale, never the agent's.
  REQUIRE(test::ingest(clients.ingest,
                       json::array({observation("p-3", "the pool passed review")}).dump())["ok"] ==
          true);
  std::string content_before;
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
          "med:proj|stale|\nproj-resume|active|\n");
    content_before = test::dump(db, "SELECT content_json FROM medallions WHERE id = 'proj-resume'");
  }
  // The job rebuilds its own and leaves the agent's as it was.
  REQUIRE(ask({{"cmd", "run"}, {"job", "medallion"}, {"wait", true}})["ok"] == true);
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT content_json FROM medallions WHERE id = 'proj-resume'") ==
          content_before);
    CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
          "med:proj|active|\nproj-resume|active|\n");
  }

  // Update: a new version; the old one goes to history with its evidence.
  const json updated = ask({{"cmd", "medallion"},
                            {"action", "update"},
                            {"id", "proj-resume"},
                            {"medallion", {{"summary", {{"high_level", "The pool is reviewed."}}}}},
                            {"evidence", {{"session_summary", "review passed"}}}});
  INFO(updated.dump());
  REQUIRE(updated["ok"] == true);
  CHECK(updated["written"]["version"] == 2);
  CHECK(updated["written"]["created_at"] == created["written"]["created_at"]);
  CHECK(updated["written"]["updated_at"] > created["written"]["updated_at"]);
  const json got = ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}});
  CHECK(got["medallion"]["summary"]["high_level"] == "The pool is reviewed.");
  CHECK(got["medallion"]["decisions"][0]["statement"] == "Use a ring buffer");
  CHECK(got["medallion"]["meta"]["x_reflectd"]["written_by"] == "control");
  CHECK(got["medallion"]["meta"]["x_reflectd"]["version"] == 2);
  CHECK(got["evidence"] == json{{"session_summary", "review passed"}});
  const json history = ask({{"cmd", "medallion"}, {"action", "history"}, {"id", "proj-resume"}});
  REQUIRE(history["versions"].size() == 1);
  CHECK(history["versions"][0]["version"] == 1);
  CHECK(history["versions"][0]["medallion"]["summary"]["high_level"] == "The pool is done.");
  CHECK(history["versions"][0]["evidence"] == json{{"session_summary", "finished the pool"},
                                                   {"transcripts", {"we chose a ring buffer"}}});
  CHECK(ask({{"cmd", "medallion"},
             {"action", "update"},
             {"id", "proj-resume"},
             {"medallion", {{"meta", {{"status", "stale"}}}}},
             {"evidence", {{"session_summary", "s"}}}})["error"] ==
        "medallion: medallion.meta.status: is 'active': status persists through updates (seed "
        "001); change it with action set_status");

  // A newer medallion on the same scope supersedes it, and the old one says so.
  json second = create_request(resume_medallion("proj-resume-2", "Sprint 2 starts."), "sprint 2");
  second["supersedes"] = "proj-resume";
  const json superseding = ask(second);
  INFO(superseding.dump());
  CHECK(superseding["written"]["superseded"] == "proj-resume");
  const json old = ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}});
  CHECK(old["medallion"]["meta"]["status"] == "superseded");
  CHECK(old["medallion"]["meta"]["x_reflectd"]["superseded_by"] == "proj-resume-2");
  const json listed = ask({{"cmd", "medallion"}, {"action", "list"}});
  CHECK(listed["medallions"][1]["id"] == "proj-resume");
  CHECK(listed["medallions"][1]["superseded_by"] == "proj-resume-2");
  CHECK(listed["medallions"][2]["superseded_by"].is_null());

  // A create whose supersedes is refused stores nothing (one transaction).
  json refused = create_request(resume_medallion("proj-resume-3", "Other."), "s");
  refused["supersedes"] = "med:proj";
  CHECK(ask(refused)["error"] ==
        "medallion: supersedes: 'med:proj' is the medallion job's: it is rebuilt from the events, "
        "which "
        "also mark it stale; agents update and set the status of their own medallions only");
  CHECK(ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume-3"}})["error"] ==
        "no medallion 'proj-resume-3'");

  auto set_status = [&](const std::string& id, const std::string& status, const std::string& by) {
    json r = {{"cmd", "medallion"},
              {"action", "set_status"},
              {"id", id},
              {"status", status},
              {"rationale", "checked"}};
    if (!by.empty()) r["superseded_by"] = by;
    return ask(r);
  };
  CHECK(set_status("proj-resume", "active", "")["written"] ==
        json{{"id", "proj-resume"},
             {"namespace", "proj"},
             {"status", "active"},
             {"previous_status", "superseded"},
             {"superseded_by", nullptr},
             {"changed", true}});
  CHECK(set_status("proj-resume", "superseded", "med:proj")["error"] ==
        "medallion: superseded_by: 'med:proj' covers another scope than 'proj-resume' "
        "(graph_nodes and tags must be the same sets)");
  CHECK(set_status("proj-resume", "superseded", "proj-resume")["error"] ==
        "medallion: superseded_by: a medallion cannot supersede itself");
  CHECK(set_status("proj-resume-2", "superseded", "proj-resume")["error"] ==
        "medallion: superseded_by: 'proj-resume' was not updated after 'proj-resume-2' (a "
        "medallion is superseded by a newer one)");
  CHECK(set_status("proj-resume-2", "stale", "")["written"]["changed"] == true);
  CHECK(set_status("proj-resume-2", "stale", "")["written"]["changed"] == false);

  // A hard forget rebuilds the job's medallion and keeps the agents'.
  REQUIRE(ask({{"cmd", "forget"}, {"ids", {"p-3"}}, {"mode", "delete"}, {"wait", true}})["ok"] ==
          true);
  SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
  CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
        "med:proj|active|\nproj-resume|active|\nproj-resume-2|stale|\n");
  CHECK(test::dump(db,
                   "SELECT medallion_id, namespace, author, version, superseded_by FROM "
                   "agent_medallions ORDER BY 1") ==
        "proj-resume|proj|control|2|NULL|\nproj-resume-2|proj|control|1|NULL|\n");
  CHECK(test::dump(db, "SELECT medallion_id, version FROM medallion_evidence ORDER BY 1, 2") ==
        "proj-resume|1|\nproj-resume|2|\nproj-resume-2|1|\n");
  CHECK(test::dump(db,
                   "SELECT record_id, action, actor, rationale FROM audit_log WHERE record_type "
                   "= 'medallion' AND record_id != 'med:proj' ORDER BY audit_id") ==
        "proj-resume|create|control|evidence: finished the pool|\n"
        "proj-resume|revise|control|evidence: review passed|\n"
        "proj-resume-2|create|control|evidence: sprint 2|\n"
        "proj-resume|supersede|control|superseded by proj-resume-2 (create)|\n"
        "proj-resume|promote|control|checked|\n"
        "proj-resume-2|deprecate|control|checked|\n");
}

TEST_CASE("agents' medallions obey the writer's namespaces") {
  test::TempDir dir;
  auto db = test::open_writer(dir.file("reflectd.db"));
  memory_ops::WriteScope agent{"agent-a", false, {"proj"}, false, 4};
  memory_ops::WriteScope other{"agent-b", false, {"other"}, false, 4};
  std::string error;
  auto create = memory_ops::parse_medallion_write(
      create_request(resume_medallion("proj-resume", "Done."), "s"), error);
  REQUIRE(create);
  CHECK_THROWS_WITH(memory_ops::write_medallion(db, *create, other, kNow),
                    "medallion: namespace: 'proj' is not a namespace you may write");
  CHECK(memory_ops::write_medallion(db, *create, agent, kNow)["id"] == "proj-resume");
  auto stale = memory_ops::parse_medallion_write({{"cmd", "medallion"},
                                                  {"action", "set_status"},
                                                  {"id", "proj-resume"},
                                                  {"status", "stale"},
                                                  {"rationale", "r"}},
                                                 error);
  REQUIRE(stale);
  CHECK_THROWS_WITH(memory_ops::write_medallion(db, *stale, other, kNow + 1),
                    "medallion: id: no medallion 'proj-resume' in the namespaces you may write");
  CHECK(memory_ops::write_medallion(db, *stale, agent, kNow + 1)["status"] == "stale");
  CHECK(test::dump(db,
                   "SELECT author, created_at FROM agent_medallions JOIN medallions ON id = "
                   "medallion_id") == "agent-a|2026-01-01T00:00:00.000000Z|\n");

  // Its own sensitivity (seed 002): a reader one level below gets it redacted, a reader two
  // or more below does not see it at all.
  json secret_request = create_request(resume_medallion("proj-keys", "Keys rotated."), "s");
  secret_request["sensitivity"] = "high";
  auto secret = memory_ops::parse_medallion_write(secret_request, error);
  REQUIRE(secret);
  CHECK(memory_ops::write_medallion(db, *secret, agent, kNow + 2)["id"] == "proj-keys");
  const json get = {{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-keys"}};
  const json full = recall::read_medallion(db, get, recall::ReadScope{4, true, {}});
  CHECK(full["medallion"]["summary"]["high_level"] == "Keys rotated.");
  CHECK(full["medallion"]["meta"]["x_reflectd_sensitivity"] == "high");
  const json redacted = recall::read_medallion(db, get, recall::ReadScope{2, true, {}});
  CHECK(redacted["medallion"]["redacted"] == 1);
  CHECK(redacted["medallion"]["summary"]["high_level"] == recall::kRedacted);
  CHECK(recall::read_medallion(db, get, recall::ReadScope{1, true, {}})["error"] ==
        "no medallion 'proj-keys'");
  CHECK(recall::read_medallion(
            db, {{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}},
            recall::ReadScope{0, true, {}})["medallion"]["meta"]["x_reflectd_sensitivity"] ==
        "public");
  secret_request["sensitivity"] = "secret";
  CHECK_FALSE(memory_ops::parse_medallion_write(secret_request, error));
  CHECK(
      error ==
      R"(medallion: sensitivity: must be "public", "low", "medium", "high" or "hyper" (seed 002))");
}
