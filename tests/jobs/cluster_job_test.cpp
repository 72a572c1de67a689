// The cluster and importance jobs on the real streams: quality, independence from runs,
// chunks and yields, communities, edges read at once.

#include <catch2/catch.hpp>

#include "support/entities_fixture.hpp"

using namespace reflectd;
using nlohmann::json;
using test::dump;
using test::open_writer;
using namespace reflectd::test::entities_fixture;

TEST_CASE("cluster and importance jobs on the real streams") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("e.db");
  REQUIRE(test::load_corpus(path, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                            run.clock) == 9052);
  auto db = open_writer(path);
  const json result = run.cluster(db, default_params());
  std::cout << "cluster: " << result.dump() << "\n";
  CHECK(result["events_processed"] == 9052);
  CHECK(result["clusters_created"].get<int>() > 100);
  CHECK(result["facts_assigned"].get<int>() + result["events_without_terms"].get<int>() == 9052);
  CHECK(result["communities"]["communities_created"].get<int>() > 0);
  const json importance = run.importance(db);
  std::cout << "importance: " << importance["top_entities"].dump() << "\n";
  CHECK(importance["entities_scored"].get<int>() ==
        db.execAndGet("SELECT count(*) FROM entities").getInt());
  print_top(db, "libzmq", 40);
  print_top(db, "swe-agent", 15);

  print_clusters(db, "libzmq", 15);
  if (const char* keep = std::getenv("REFLECTD_KEEP_DB")) db.backup(keep, SQLite::Database::Save);

  // libzmq (4.8k entities): the source tree first, the socket and context sources high.
  CHECK(top_entities(db, "libzmq", 1) == std::vector<std::string>{"module:src"});
  const auto zmq = top_entities(db, "libzmq", 15);
  CHECK(has(zmq, "file:src/socket_base.cpp"));
  CHECK(has(zmq, "file:include/zmq.h"));
  CHECK(has(top_entities(db, "libzmq", 40), "file:src/ctx.cpp"));
  // swe-agent: the files its runs edit.
  const auto swe = top_entities(db, "swe-agent", 15);
  CHECK(has(swe, "file:src/marshmallow/fields.py"));
  CHECK(has(swe, "file:reproduce.py"));
  // Every score is in [0, 1]; the alias from the absolute path resolves to the relative key.
  CHECK(db.execAndGet(
              "SELECT min(importance_score) >= 0 AND max(importance_score) <= 1 FROM entities")
            .getInt() == 1);
  CHECK(db.execAndGet("SELECT canonical_key FROM entity_aliases WHERE alias = "
                      "'file:/marshmallow-code__marshmallow/src/marshmallow/fields.py'")
            .getString() == "file:src/marshmallow/fields.py");

  // Hand-checked: commits about one subsystem share a cluster (GSSAPI security, TIPC and VMCI
  // transports), and the subsystems are told apart.
  auto cluster_of = [&](const std::string& hash) {
    return db
        .execAndGet(
            "SELECT ec.cluster_id FROM event_clusters ec JOIN events e ON e.seq = ec.seq WHERE "
            "e.uid = "
            "'git:libzmq:" +
            hash + "'")
        .getInt64();
  };
  const auto gssapi = cluster_of(
      "1445516c41de0a3942d2c3ed09017564b9a7723e");  // Establishing GSSAPI sec context ...
  CHECK(cluster_of("3c414c4aac45a821645ff8c23bc838b5ac017b30") ==
        gssapi);  // GSSAPI mechanism now fully working ...
  CHECK(cluster_of("27591d2da6a3df7ef5f9a7d0dcec40f25233b4bd") ==
        gssapi);  // ZMQ_GSSAPI_PLAINTEXT option ...
  const auto tipc = cluster_of(
      "eab85b52953bd23076c5b9333ef1c455cdc3666d");  // zmq: add support for TIPC transport
  CHECK(cluster_of("58ac87def1b5349ddfd9d89cde0ca18e5f7cd7cd") ==
        tipc);  // narrow condition to include TIPC ...
  CHECK(cluster_of("bbbccebbe711a991d807bf70132bb4a982bb4e71") == tipc);  // zmq: add TIPC manpage
  const auto vmci =
      cluster_of("68b13fbddb909e6b75a72475f19dad98cc737764");  // Add the VMCI transport.
  CHECK(cluster_of("a556b500daa31de04468a5df1ae66c5c31c9eef5") ==
        vmci);  // Problem: ... vmci include ...
  CHECK(cluster_of("64ce6ca7727fe2c81ebc4682b298fca696385aeb") ==
        vmci);  // Problem: ... vmci enabled by default
  CHECK(gssapi != tipc);
  CHECK(tipc != vmci);
  CHECK(gssapi != vmci);

  // Communities link entities and clusters that exist.
  CHECK(db.execAndGet("SELECT count(*) FROM community_members m LEFT JOIN entities e ON "
                      "e.entity_id = m.member_id "
                      "WHERE m.member_type = 'entity' AND e.entity_id IS NULL")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT count(*) FROM community_members WHERE member_type = 'cluster'")
            .getInt() > 0);

  // A rerun with no new events changes nothing, and so does a second importance run.
  const std::string before = derived_tables(db);
  const json again = run.cluster(db, default_params());
  CHECK(again["skipped"] == true);
  CHECK(again["events_processed"] == 0);
  const json scored_again = run.importance(db);
  CHECK(scored_again["namespaces"]["libzmq"]["updated"] == 0);
  CHECK(scored_again["top_entities"] == importance["top_entities"]);
  CHECK(derived_tables(db) == before);
}

TEST_CASE("the cluster job does not depend on how events were split into runs and chunks") {
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_one = twins.first;
  SQLite::Database& db_many = twins.second;
  run.cluster(db_one, default_params());
  auto small = default_params();
  small.chunk_events = 777;
  run.cluster(db_many, small, "swe-agent");
  run.cluster(db_many, small, "libzmq");
  CHECK(derived_tables(db_many) == derived_tables(db_one));
  run.importance(db_one);
  run.importance(db_many);
  CHECK(derived_tables(db_many) == derived_tables(db_one));
}

TEST_CASE("communities are the same whether Louvain ran beside the last chunk or after it") {
  // A namespace's last chunk that stores fewer events than chunk_events starts Louvain on
  // another thread before its writes (ClusterJob::start_partition); a last chunk that is
  // exactly full leaves the detection to run() after it, on the job's thread, once the next
  // chunk finds nothing. 448 = 2 x 224 events of swe-agent and 8604 = 4 x 2151 of libzmq:
  // every namespace ends on a full chunk, so only the second path runs; the default chunk
  // (20,000) takes the first path in both.
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_beside = twins.first;
  SQLite::Database& db_after = twins.second;
  const json one = run.cluster(db_beside, default_params());
  auto exact = default_params();
  exact.chunk_events = 224;
  const json swe = run.cluster(db_after, exact, "swe-agent");
  // libzmq's history in two chunks or more (four in the release tree).
  exact.chunk_events = test::kSanitized ? static_cast<std::int64_t>(test::kLibzmqEvents / 2) : 2151;
  const json zmq = run.cluster(db_after, exact, "libzmq");
  CHECK(swe["events_processed"] == 448);
  CHECK(zmq["events_processed"] == test::kLibzmqEvents);
  CHECK(one["communities"]["communities_created"].get<int>() > 0);
  CHECK(one["communities"]["communities_created"].get<int>() ==
        swe["communities"]["communities_created"].get<int>() +
            zmq["communities"]["communities_created"].get<int>());
  CHECK(derived_tables(db_after) == derived_tables(db_beside));
  const std::string audit =
      "SELECT record_type, record_id, action, actor, at_us, rationale, previous FROM audit_log "
      "WHERE record_id LIKE 'community:%' ORDER BY record_id, action";
  CHECK(dump(db_after, audit) == dump(db_beside, audit));
}

TEST_CASE("a run cut between its last chunk and community detection leaves the detection owed") {
  // A SIGKILL there leaves every chunk committed (nothing left to cluster) and no communities:
  // the detection commits alone, in its own transaction. The next run must still detect them.
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_whole = twins.first;
  SQLite::Database& db_cut = twins.second;
  run.cluster(db_whole, default_params());
  run.cluster(db_cut, default_params());
  {
    // What the detection's transaction wrote, undone: the state such a kill leaves.
    SQLite::Transaction undo(db_cut);
    db_cut.exec("DELETE FROM community_members");
    // audit_log is append-only by trigger; the test steps around it to rebuild that state.
    db_cut.exec("DROP TRIGGER audit_log_no_delete");
    db_cut.exec("DELETE FROM audit_log WHERE record_id LIKE 'community:%'");
    db_cut.exec(
        "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN "
        "SELECT RAISE(ABORT, 'audit_log is append-only'); END");
    db_cut.exec("DELETE FROM observations WHERE observation_type = 'community'");
    db_cut.exec("DELETE FROM job_state WHERE job = 'cluster' AND key = 'communities_watermark'");
    undo.commit();
  }
  REQUIRE(
      db_cut.execAndGet("SELECT count(*) FROM observations WHERE observation_type = 'community'")
          .getInt() == 0);
  const json rerun = run.cluster(db_cut, default_params());
  CHECK(rerun["events_processed"] == 0);
  CHECK(rerun["communities"]["communities_created"].get<int>() > 0);
  CHECK(derived_tables(db_cut) == derived_tables(db_whole));
  const std::string audit =
      "SELECT record_type, record_id, action, actor, at_us, rationale, previous FROM audit_log "
      "WHERE record_id LIKE "
      "'community:%' ORDER BY record_id, action";
  CHECK(dump(db_cut, audit) == dump(db_whole, audit));
  // Detected once per graph: a further run owes nothing.
  const json again = run.cluster(db_cut, default_params());
  CHECK(again["communities"]["skipped"] == true);
}

namespace {

// Runs the cluster job on `db` under a writer that always wants the lock, so that every job
// transaction ends after its `slice_ms` slice; checks that it stored `events` events and
// yielded more than 10 times.
void cluster_yielding(Runner& run, SQLite::Database& db, std::int64_t slice_ms,
                      std::int64_t events) {
  store::WriteGate gate(1, slice_ms);
  {
    test::GateContender writer(gate);
    const json result = run.cluster(db, default_params(), "", &gate);
    CHECK(result["events_processed"] == events);
  }
  INFO("job transactions " << gate.stats().job_turns.load() << ", yields "
                           << gate.stats().job_yields.load());
  CHECK(gate.stats().job_yields.load() > 10);
}

}  // namespace

TEST_CASE("the cluster job yielding to the writer at arbitrary events gives the same tables",
          "[yield]") {
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_alone = twins.first;
  SQLite::Database& db_yielding = twins.second;
  run.cluster(db_alone, default_params());
  cluster_yielding(run, db_yielding, 2, static_cast<std::int64_t>(test::kHistoryEvents));
  CHECK(derived_tables(db_yielding) == derived_tables(db_alone));
  // Relationship ids follow the events that created the edges, not where chunks ended.
  const std::string ids =
      "SELECT relationship_id, namespace, source_id, target_id, rel_type FROM "
      "entity_relationships ORDER BY relationship_id";
  CHECK(dump(db_yielding, ids) == dump(db_alone, ids));
}

TEST_CASE("a yield that drops events read ahead keeps each episode's working directory",
          "[yield]") {
  // The chunk loop reads the next batch of events while it stores the current one, and a
  // yield drops those read but not stored. Here every other event shows a new working
  // directory and the others name a file in it by its absolute path, which the extraction
  // makes relative to the working directory; given the directory of an event read after
  // it, an event keeps the absolute path, another entity.
  std::vector<std::string> lines;
  for (int i = 0; i < 6000; ++i) {
    const bool shows = i % 2 == 0;
    // Room for any int in each field: GCC's -Og under ASan proves no bound on i and warns.
    std::array<char, 64> timestamp{};
    std::snprintf(timestamp.data(), timestamp.size(), "2025-01-01T%02d:%02d:%02d+00:00", i / 3600,
                  i / 60 % 60, i % 60);
    lines.push_back(json{
        {"schema_version", 1},
        {"id", "cwd:" + std::to_string(i)},
        {"source", "agent"},
        {"kind", shows ? "result" : "call"},
        {"namespace", "cwd-test"},
        {"agent_id", "agent-1"},
        {"episode_id", "episode-" + std::to_string(i / 500)},
        {"timestamp", timestamp.data()},
        {"content", shows ? "ls\n(Current directory: /repo/dir" + std::to_string(i / 2 % 5) + ")"
                          : "edit /repo/dir" + std::to_string(i / 2 % 5) + "/module" +
                                std::to_string(i % 7) + ".py"}}
                        .dump());
  }
  test::TempDir dir;
  Runner run;
  const std::string alone = dir.file("alone.db");
  const std::string yielding = dir.file("yielding.db");
  REQUIRE(test::load_lines(alone, lines, run.clock) == 6000);
  std::filesystem::copy_file(alone, yielding);
  auto db_alone = open_writer(alone);
  auto db_yielding = open_writer(yielding);
  run.cluster(db_alone, default_params());
  // The premise: each file is named relative to the directory shown before it.
  REQUIRE(db_alone.execAndGet("SELECT count(*) FROM entities WHERE canonical_key LIKE 'file:%'")
              .getInt() == 7);
  REQUIRE(db_alone
              .execAndGet("SELECT count(*) FROM entities WHERE canonical_key GLOB "
                          "'file:module[0-6].py'")
              .getInt() == 7);
  cluster_yielding(run, db_yielding, 1, 6000);
  CHECK(derived_tables(db_yielding) == derived_tables(db_alone));
}

TEST_CASE("events arriving in two batches give the tables of one batch") {
  test::TempDir dir;
  Runner run;
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_history_corpus(a, {"swe-agent-trajectories.jsonl", "libzmq-commits.jsonl"},
                                    run.clock) == test::kHistoryEvents);
  REQUIRE(test::load_corpus(b, {"swe-agent-trajectories.jsonl"}, run.clock) == 448);
  auto db_a = open_writer(a);
  run.cluster(db_a, default_params());
  {
    auto db_b = open_writer(b);
    run.cluster(db_b, default_params());  // the first batch is clustered before the rest arrives
  }
  REQUIRE(test::load_history_corpus(b, {"libzmq-commits.jsonl"}, run.clock) == test::kLibzmqEvents);
  auto db_b = open_writer(b);
  run.cluster(db_b, default_params());
  CHECK(derived_tables(db_b) == derived_tables(db_a));
}

// A run with many events after a stored graph reads the namespace's edges at once
// (EntityStore::preload_edges): the tables are those of one run over every event, and an
// edge of another namespace with the same endpoints stays apart.
TEST_CASE("edges read at once before a large run give the tables of one run") {
  test::TempDir dir;
  Runner run;
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::size_t first = lines.size() / 10;
  const std::string whole = dir.file("whole.db");
  const std::string split = dir.file("split.db");
  REQUIRE(test::load_lines(whole, lines, run.clock) == lines.size());
  auto db_whole = open_writer(whole);
  const json one = run.cluster(db_whole, default_params());
  CHECK(one["edges_preloaded"] == 0);  // no edges yet: nothing to read
  REQUIRE(test::load_lines(split, {lines.begin(), lines.begin() + first}, run.clock) == first);
  {
    auto db = open_writer(split);
    run.cluster(db, default_params());
  }
  REQUIRE(test::load_lines(split, {lines.begin() + first, lines.end()}, run.clock) ==
          lines.size() - first);
  auto db_split = open_writer(split);
  const std::int64_t stored_edges =
      db_split.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  REQUIRE(stored_edges > 0);
  const json second = run.cluster(db_split, default_params());
  CHECK(second["edges_preloaded"] == stored_edges);
  CHECK(derived_tables(db_split) == derived_tables(db_whole));
}

// The edge cache is keyed by namespace too: an entity moved to another namespace keeps its
// edges in the old one, and when a run reads the old namespace's edges at once and then
// clusters events of the new one naming the same two entities, their edge there is new, as
// a lookup by (namespace, source, target, type) finds it.
TEST_CASE("edges read at once stay apart from another namespace's edge between the same entities") {
  test::TempDir dir;
  Runner run;
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::size_t first = lines.size() / 10;
  const std::string path = dir.file("moved.db");
  REQUIRE(test::load_lines(path, {lines.begin(), lines.begin() + first}, run.clock) == first);
  auto db = open_writer(path);
  run.cluster(db, default_params());
  SQLite::Statement linked(db,
                           "SELECT r.source_id, r.target_id, s.canonical_key, t.canonical_key, "
                           "r.mention_count FROM entity_relationships r JOIN entities s ON "
                           "s.entity_id = r.source_id JOIN entities t ON t.entity_id = "
                           "r.target_id WHERE r.rel_type = 'co_occurs' AND s.canonical_key LIKE "
                           "'file:%' AND t.canonical_key LIKE 'file:%' ORDER BY "
                           "r.relationship_id LIMIT 1");
  REQUIRE(linked.executeStep());
  const std::int64_t source = linked.getColumn(0).getInt64();
  const std::int64_t target = linked.getColumn(1).getInt64();
  const json names =
      json::array({linked.getColumn(2).getString(), linked.getColumn(3).getString()});
  const std::int64_t mentions = linked.getColumn(4).getInt64();
  linked.reset();
  const std::string pair = std::to_string(source) + ", " + std::to_string(target);
  db.exec("UPDATE entities SET namespace = 'zz-moved' WHERE entity_id IN (" + pair + ")");

  std::vector<std::string> more(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end());
  for (int i = 0; i < 3; ++i) {
    more.push_back(json{
        {"schema_version", 1},
        {"id", "moved:" + std::to_string(i)},
        {"source", "agent"},
        {"kind", "observation"},
        {"namespace", "zz-moved"},
        {"timestamp", "2026-01-01T10:00:0" + std::to_string(i) + "+00:00"},
        {"content", "Both files again."},
        {"entities",
         names}}.dump());
  }
  REQUIRE(test::load_lines(path, more, run.clock) == more.size());
  const json result = run.cluster(db, default_params());
  CHECK(result["edges_preloaded"].get<std::int64_t>() > 0);  // swe-agent's, read at once
  INFO(names.dump());
  CHECK(dump(db, "SELECT namespace, mention_count FROM entity_relationships WHERE source_id IN (" +
                     pair + ") AND target_id IN (" + pair +
                     ") AND rel_type = 'co_occurs' ORDER BY namespace") ==
        "swe-agent|" + std::to_string(mentions) + "|\nzz-moved|3|\n");
}

// Importance and the communities read a namespace's edges whole (for_each_stored_edge): by
// one pass over the table for a namespace with most of the edges, through the index for the
// others; either way exactly the namespace's rows.
TEST_CASE("a namespace's edges read whole are its rows, by the table or by the index") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("edges.db");
  std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::vector<std::string> commits = test::corpus_lines("libzmq-commits.jsonl");
  lines.insert(lines.end(), commits.begin(), commits.begin() + std::ptrdiff_t{300});
  REQUIRE(test::load_lines(path, lines, run.clock) == lines.size());
  auto db = open_writer(path);
  run.cluster(db, default_params());
  const std::int64_t all = db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  using Row = std::tuple<std::int64_t, std::int64_t, std::string, double, std::int64_t>;
  std::set<bool> ways;
  for (const std::string ns : {"swe-agent", "libzmq"}) {
    SQLite::Statement stored(db,
                             "SELECT source_id, target_id, rel_type, strength_base, "
                             "strength_ref_us FROM entity_relationships WHERE namespace = ?1 "
                             "ORDER BY source_id, target_id, rel_type");
    stored.bind(1, ns);
    std::vector<Row> expected;
    while (stored.executeStep()) {
      expected.emplace_back(stored.getColumn(0).getInt64(), stored.getColumn(1).getInt64(),
                            stored.getColumn(2).getString(), stored.getColumn(3).getDouble(),
                            stored.getColumn(4).getInt64());
    }
    REQUIRE(!expected.empty());
    std::vector<Row> read;
    jobs::for_each_stored_edge(db, ns, [&](const jobs::EntityStore::StoredStrength& e) {
      read.emplace_back(e.source_id, e.target_id, std::string(e.rel_type), e.strength_base,
                        e.strength_ref_us);
    });
    std::sort(read.begin(), read.end());
    INFO(ns);
    CHECK(read == expected);
    ways.insert(jobs::read_edges_by_table(static_cast<std::int64_t>(expected.size()), all));
  }
  CHECK(ways == std::set<bool>{false, true});  // one namespace each way
}
