// reflectd on a NATS JetStream cluster. A real three-server cluster (nats-server
// child processes on loopback), two reflectd replicas of one shard as child processes, and
// the real `reflectctl jetstream` commands. Needs REFLECTD_BIN, REFLECTCTL_BIN and
// REFLECTD_DATA_DIR.

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bus/nats_client.hpp"
#include "common/clock.hpp"
#include "common/zcert.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/job.hpp"
#include "store/database.hpp"
#include "support/child_daemon.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/jetstream_replica.hpp"
#include "support/nats_cluster.hpp"
#include "support/process.hpp"
#include "support/replica_tables.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {
namespace {

using namespace std::chrono_literals;

// Columns that hold the wall-clock time at which a replica stored a row, and its own reads'
// bookkeeping (a read over NATS is answered by one replica and counted there, seed 004): they
// differ between replicas by design, and the job cycle derives nothing from them.
const std::map<std::string, std::vector<std::string>> kStorageTimeColumns = {
    {"events",
     {"received_us", "salience_ref_us", "archive_at_us", "access_count", "last_accessed_us"}},
    {"dead_letters", {"received_us"}},
};

// The full-text index's segments (b-tree pages of FTS5) depend on how the writer grouped
// events into index steps, which follows each replica's own timing; their content is compared
// instead, as every (term, event, column, offset) instance.
const std::vector<std::string> kSegmentTables = {"events_fts_data", "events_fts_idx"};

// Every table of `path` except the storage-time columns and the per-replica ones
// (support/replica_tables.hpp: when and why each replica's jobs ran), rows sorted, one string
// per table.
std::map<std::string, std::string> table_dumps(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  std::map<std::string, std::string> out;
  db.exec("CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, events_fts, instance)");
  out["events_fts (instances)"] =
      dump(db, "SELECT term, doc, col, offset FROM temp.fts_instances ORDER BY 1, 2, 3, 4");
  SQLite::Statement tables(
      db,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
      "ORDER BY name");
  while (tables.executeStep()) {
    const std::string table = tables.getColumn(0).getString();
    if (std::count(kSegmentTables.begin(), kSegmentTables.end(), table) > 0 ||
        kPerReplicaColumns.count({table, "*"}) > 0) {
      continue;
    }
    std::string columns;
    SQLite::Statement info(db, "SELECT name FROM pragma_table_info('" + table + "')");
    while (info.executeStep()) {
      const std::string column = info.getColumn(0).getString();
      const auto skip = kStorageTimeColumns.find(table);
      if ((skip != kStorageTimeColumns.end() &&
           std::count(skip->second.begin(), skip->second.end(), column) > 0) ||
          kPerReplicaColumns.count({table, column}) > 0) {
        continue;
      }
      const auto as = kComparedAs.find({table, column});
      columns += (columns.empty() ? "" : ", ") +
                 (as != kComparedAs.end() ? as->second : "\"" + column + "\"");
    }
    if (columns.empty()) continue;  // a virtual table's own columns come through its shadows
    const std::string rows = dump(db, "SELECT " + columns + " FROM \"" + table + "\"");
    std::vector<std::string> lines;
    std::string::size_type start = 0;
    while (start < rows.size()) {
      const auto end = rows.find('\n', start);
      lines.push_back(rows.substr(start, end - start));
      start = end + 1;
    }
    std::sort(lines.begin(), lines.end());
    std::string sorted;
    for (const auto& line : lines) sorted += line + '\n';
    out[table] = sorted;
  }
  return out;
}

// One full job cycle over `path` at the fixed time `now_us`, in the order that leaves every
// job's inputs settled (as replica_agreement_test's): a replica whose own runs came before has
// derived what a later job of a cycle in another order would read stale.
void run_job_cycle(const std::string& path, std::int64_t now_us) {
  SQLite::Database db = open_writer(path);
  const FakeClock clock(now_us);
  std::atomic<bool> stopping{false};
  const jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  std::vector<jobs::Job> jobs = daemon::build_jobs(config::defaults());
  for (const char* name : {"facts", "cluster", "consolidate", "decay", "importance", "medallion"}) {
    for (auto& job : jobs) {
      if (job.name != name) continue;
      jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
      job.run(ctx);
    }
  }
}

}  // namespace

TEST_CASE(
    "jetstream: two replicas of a shard store every event once, in the same order, "
    "through a server's and a replica's SIGKILL during a publish, a stall and a restart of "
    "the whole cluster, and hold the same tables after a full cycle whatever their schedules",
    "[cluster]") {
  const TempDir dir;
  NatsCluster cluster(dir);
  zmq::context_t context(1);

  std::vector<std::string> init = {REFLECTCTL_BIN, "jetstream",  "init", "--stream",
                                   "SHARD",        "--replicas", "3"};
  for (const auto& arg : nats_args(cluster)) init.push_back(arg);
  const RunResult created = run_process(init, 30s);
  INFO(created.out << created.err);
  REQUIRE(created.status.code == 0);
  CHECK(created.out ==
        "stream SHARD created: subjects reflectd.events.>, reflectd.agents.>, 3 replicas, file "
        "storage\n");

  // Two messages no replica may store: not JSON, and an event whose namespace is not its
  // subject's. Each must become a dead letter on both replicas and be terminated.
  publish_raw(cluster, "reflectd.events.locomo-conv-26", "{not json", "bad-1");
  publish_raw(cluster, "reflectd.events.locomo-conv-26",
              R"({"id":"bad-2","kind":"prompt","namespace":"elsewhere","agent_id":"x",)"
              R"("content":"wrong shard","timestamp":"2023-05-08T13:56:00Z"})",
              "bad-2");

  // The replicas' schedules differ: A also runs every job once at the halfway point.
  Replica a("replica-a", cluster.urls(), false, "", true);
  Replica b("replica-b", cluster.urls());
  a.start(context);
  b.start(context);

  // The LoCoMo turns in two halves.
  const std::vector<std::string> lines = corpus_lines("locomo-dev/events.jsonl");
  const std::size_t half = lines.size() / 2;
  auto write_half = [&](const std::string& name, std::size_t from, std::size_t to) {
    std::ofstream out(dir.file(name));
    for (std::size_t i = from; i < to; ++i) out << lines[i] << '\n';
    return dir.file(name);
  };
  std::vector<std::string> publish = {REFLECTCTL_BIN, "jetstream", "publish", "--json"};
  for (const auto& arg : nats_args(cluster)) publish.push_back(arg);
  std::vector<std::string> first = publish;
  first.push_back(write_half("first.jsonl", 0, half));
  const RunResult published = run_process(first, 60s);
  INFO(published.out << published.err);
  REQUIRE(published.status.code == 0);
  const auto summary = nlohmann::json::parse(published.out);
  CHECK(summary["stored"] == half);
  CHECK(summary["failed"] == 0);

  const auto n_half = static_cast<std::int64_t>(half);
  REQUIRE(wait_until([&] { return a.events() == n_half && b.events() == n_half; }, 60s));
  CHECK(a.count("SELECT count(*) FROM dead_letters") == 2);
  CHECK(b.count("SELECT count(*) FROM dead_letters WHERE endpoint = "
                "'jetstream:reflectd.events.locomo-conv-26' AND reason LIKE "
                "'%namespace: must be the namespace of the subject%'") == 1);
  for (const char* job : {"cluster", "facts", "medallion", "consolidate", "importance", "decay"}) {
    const nlohmann::json ran =
        control_request(context, a.control(), {{"cmd", "run"}, {"job", job}, {"wait", true}});
    INFO(job << ": " << ran.dump());
    CHECK(ran.value("ok", false));
  }
  REQUIRE(a.count("SELECT count(*) FROM facts") > 0);

  // Replica B stalls and the second part is published; while it is being published and
  // stored, the server that the publisher and both replicas use (the first URL: no
  // randomizing) is SIGKILLed, then replica A. The last 10 turns wait for the end.
  const std::size_t last = lines.size() - 10;
  b.signal(SIGSTOP);
  std::vector<std::string> second = publish;
  second.push_back(write_half("second.jsonl", half, last));
  ChildProcess publisher(second, SpawnOptions{"", dir.file("second.out"), dir.file("second.err")});
  // Small batches (20) make the kills land while A has messages in flight.
  wait_until([&] { return a.events() > n_half || !publisher.running(); }, 60s, 5ms);
  cluster.kill(0);
  const std::int64_t a_at_server_kill = a.events();
  wait_until([&] { return a.events() > a_at_server_kill + 100 || !publisher.running(); }, 30s, 5ms);
  a.kill();
  const std::int64_t a_at_kill = a.events();
  INFO("replica A had " << a_at_server_kill << " events when the server died, " << a_at_kill
                        << " when killed");
  const auto publisher_status = publisher.wait_for(120s);
  INFO(read_text_file(dir.file("second.out")) << read_text_file(dir.file("second.err")));
  REQUIRE(publisher_status);
  REQUIRE(publisher_status->code == 0);

  b.signal(SIGCONT);
  cluster.start(0);
  a.start(context);
  const auto before_restart = static_cast<std::int64_t>(last);
  const bool caught_up = wait_until(
      [&] { return a.events() == before_restart && b.events() == before_restart; }, 120s);
  INFO("replica A: " << a.events() << " events\n" << a.log());
  INFO("replica B: " << b.events() << " events\n" << b.log());
  if (!caught_up) {
    // The inlets' own account (pulls, in flight, last error) tells a stalled pull from a
    // consumer that delivers nothing.
    for (const Replica* replica : {&a, &b}) {
      UNSCOPED_INFO(control_request(context, replica->control(), {{"cmd", "status"}}).dump());
    }
    UNSCOPED_INFO(stream_account(cluster, "SHARD", before_restart + 2));
  }
  REQUIRE(caught_up);

  // The whole cluster restarts (every server SIGKILLed): the stream, its positions and the
  // consumers survive on file storage, and the last turns reach both replicas.
  for (int i = 0; i < cluster.size(); ++i) cluster.kill(i);
  for (int i = 0; i < cluster.size(); ++i) cluster.start(i);
  REQUIRE(cluster.wait_jetstream(60s));
  REQUIRE(cluster.wait_stream(0, "SHARD", 60s));
  std::vector<std::string> third = publish;
  third.push_back(write_half("third.jsonl", last, lines.size()));
  const RunResult last_published = run_process(third, 120s);
  INFO(last_published.out << last_published.err);
  REQUIRE(last_published.status.code == 0);
  const auto all = static_cast<std::int64_t>(lines.size());
  const bool complete = wait_until([&] { return a.events() == all && b.events() == all; }, 120s);
  INFO("replica A: " << a.events() << " events\n" << a.log());
  INFO("replica B: " << b.events() << " events\n" << b.log());
  if (!complete) UNSCOPED_INFO(stream_account(cluster, "SHARD", all + 2));
  REQUIRE(complete);
  // Nothing left unacknowledged: each replica's status after the stream is drained.
  // Redeliveries that B took while stalled may still be in flight (duplicates): await them.
  nlohmann::json status_b;
  wait_until(
      [&] {
        status_b = control_request(context, b.control(), {{"cmd", "status"}});
        return status_b.is_object() && status_b["jetstream"]["in_flight"] == 0;
      },
      30s);
  CHECK(status_b["jetstream"]["terminated"] == 2);
  CHECK(status_b["jetstream"]["in_flight"] == 0);

  // Reads over NATS: any live replica of the shard answers on reflectd.control.<namespace>,
  // for that namespace only, and only reads.
  const std::string subject = "reflectd.control.locomo-conv-26";
  const nlohmann::json question = {{"cmd", "recall"},
                                   {"text", "When did Caroline go to the LGBTQ support group?"},
                                   {"namespace", "locomo-conv-26"},
                                   {"limit", 3}};
  const nlohmann::json answer = nats_request(cluster, subject, question);
  INFO(answer.dump());
  REQUIRE(answer.value("ok", false));
  REQUIRE(!answer["results"].empty());
  CHECK(answer["results"][0]["id"] == "locomo:conv-26:D1:3");
  const nlohmann::json other =
      nats_request(cluster, subject,
                   {{"cmd", "recall"}, {"text", "support group"}, {"namespace", "locomo-conv-30"}});
  CHECK(other.value("ok", true) == false);
  const nlohmann::json forget = nats_request(
      cluster, subject, {{"cmd", "forget"}, {"ids", {"locomo:conv-26:D1:3"}}, {"reason", "test"}});
  CHECK(forget.value("ok", true) == false);
  CHECK_THAT(forget.value("error", ""), Catch::Contains("not answered over NATS"));
  const nlohmann::json no_cmd = nats_request(cluster, subject, {{"cmd", 5}});
  CHECK(no_cmd.value("ok", true) == false);
  CHECK_THAT(no_cmd.value("error", ""), Catch::Contains("\"cmd\" (string) is required"));
  CHECK(a.stopped_cleanly());
  const nlohmann::json from_b = nats_request(cluster, subject, question);
  CHECK(from_b.value("ok", false));
  CHECK(b.stopped_cleanly());

  // A resumed from its committed position (the refused pair and at least the first half are
  // behind it), not from the stream's start.
  const std::string restarted = a.log();
  const auto from = restarted.find("from sequence ");
  REQUIRE(from != std::string::npos);
  CHECK(std::stoll(restarted.substr(from + 14)) >= n_half + 3);
  for (const Replica* replica : {&a, &b}) {
    CHECK(replica->count("SELECT count(DISTINCT uid) FROM events") == all);
    CHECK(replica->count("SELECT count(*) FROM dead_letters") == 2);
    // The position covers the whole stream: the 2 refused messages and every turn.
    CHECK(replica->count("SELECT stream_seq FROM jetstream_positions WHERE stream = 'SHARD'") ==
          all + 2);
  }
  // The same events in the same order (seq) on both, and the same derived tables after one
  // full job cycle at the same fixed time, though A also ran every job halfway (with the
  // clock of that moment) and was SIGKILLed after.
  SQLite::Database db_a(a.db(), SQLite::OPEN_READONLY);
  SQLite::Database db_b(b.db(), SQLite::OPEN_READONLY);
  const std::string order = "SELECT seq, uid FROM events ORDER BY seq";
  CHECK(dump(db_a, order) == dump(db_b, order));
  constexpr std::int64_t kNowUs = 1'800'000'000'000'000;  // 2027-01-15
  run_job_cycle(a.db(), kNowUs);
  run_job_cycle(b.db(), kNowUs);
  const auto tables_a = table_dumps(a.db());
  const auto tables_b = table_dumps(b.db());
  REQUIRE(tables_a.size() == tables_b.size());
  std::size_t derived_rows = 0;
  for (const auto& [table, rows] : tables_a) {
    INFO("table " << table);
    CHECK(rows == tables_b.at(table));
    if (table == "knowledge" || table == "entities" || table == "facts") {
      derived_rows += static_cast<std::size_t>(std::count(rows.begin(), rows.end(), '\n'));
    }
  }
  CHECK(derived_rows > 100);  // the cycle derived something to compare
}

TEST_CASE(
    "jetstream: a gateway forwards acknowledged ingest and answers after the PubAck; a "
    "replica stores each event once",
    "[cluster]") {
  const TempDir dir;
  NatsCluster cluster(dir, 1);
  zmq::context_t context(1);
  std::vector<std::string> init = {REFLECTCTL_BIN, "jetstream", "init",        "--stream", "SHARD",
                                   "--replicas",   "1",         "--namespace", "team-a"};
  for (const auto& arg : nats_args(cluster)) init.push_back(arg);
  REQUIRE(run_process(init, 30s).status.code == 0);

  // Forwarding needs a cluster, and no fire-and-forget input beside it.
  {
    Replica refused("", cluster.urls());
    std::string yaml = read_text_file(refused.config());
    yaml.replace(yaml.find("  jetstream:"), 0, "  forward: jetstream\n");
    write_text_file(refused.config(), yaml);
    const RunResult run = run_process({REFLECTD_BIN, "--config", refused.config()}, 30s);
    CHECK(run.status.code != 0);
    CHECK_THAT(run.err, Catch::Contains("set bus.push and bus.subscribe to []"));
  }

  Replica gateway("", cluster.urls(), true);
  Replica replica("replica", cluster.urls());
  gateway.start(context);
  replica.start(context);
  const auto event = [](const std::string& id, const std::string& content) {
    return nlohmann::json{
        {"id", id},          {"kind", "conversation"}, {"namespace", "team-a"},
        {"agent_id", "ana"}, {"content", content},     {"timestamp", "2026-11-20T10:00:00Z"}};
  };
  // A batch with one invalid event: the valid ones are in the stream when the reply comes,
  // numbered by the stream; the invalid one is answered as on a node that stores.
  const nlohmann::json batch = {event("f-1", "the socket leaks memory on reconnect"),
                                {{"id", "f-bad"}, {"kind", "conversation"}},
                                event("f-2", "fixed by closing the monitor socket")};
  const nlohmann::json reply = control_request(context, gateway.ingest(), batch, 10000);
  INFO(reply.dump());
  CHECK(reply["ok"] == false);
  REQUIRE(reply["results"].size() == 3);
  CHECK(reply["results"][0] ==
        nlohmann::json({{"index", 0}, {"id", "f-1"}, {"status", "stored"}, {"stream_seq", 1}}));
  CHECK(reply["results"][1]["status"] == "rejected");
  CHECK_THAT(reply["results"][1].value("error", ""), Catch::Contains("content"));
  CHECK(reply["results"][2] ==
        nlohmann::json({{"index", 2}, {"id", "f-2"}, {"status", "stored"}, {"stream_seq", 2}}));
  // A resend within the stream's duplicate window: JetStream says duplicate.
  const nlohmann::json again = control_request(context, gateway.ingest(), batch[0], 10000);
  CHECK(again["results"][0] ==
        nlohmann::json({{"id", "f-1"}, {"status", "duplicate"}, {"stream_seq", 1}}));

  REQUIRE(wait_until([&] { return replica.events() == 2; }, 30s));
  CHECK(replica.count("SELECT count(*) FROM events WHERE uid IN ('f-1', 'f-2') AND "
                      "agent_id = 'ana' AND namespace = 'team-a'") == 2);

  // NATS down: the reply says the event was not stored, within forward_timeout_ms.
  cluster.kill(0);
  const nlohmann::json down =
      control_request(context, gateway.ingest(), event("f-3", "retried after the outage"), 10000);
  INFO(down.dump());
  CHECK(down["ok"] == false);
  CHECK(down["results"][0]["status"] == "rejected");
  CHECK_THAT(down["results"][0].value("error", ""),
             Catch::StartsWith("jetstream: ") && Catch::EndsWith("resend with the same id)"));
  // Back up: the publisher's resend is stored (or found a duplicate, when the buffered first
  // attempt reached the server after all), and the replica holds it once.
  cluster.start(0);
  REQUIRE(cluster.wait_jetstream(30s));
  std::string status;
  REQUIRE(wait_until(
      [&] {
        const nlohmann::json r = control_request(context, gateway.ingest(),
                                                 event("f-3", "retried after the outage"), 10000);
        status = r["results"][0].value("status", "");
        return status != "rejected";
      },
      60s, 250ms));
  CHECK((status == "stored" || status == "duplicate"));
  REQUIRE(wait_until([&] { return replica.events() == 3; }, 30s));

  const nlohmann::json gateway_status =
      control_request(context, gateway.control(), {{"cmd", "status"}});
  INFO(gateway_status.dump());
  CHECK(gateway_status["forward"]["connected"] == true);
  CHECK(gateway_status["forward"]["pending_events"] == 0);
  CHECK(gateway_status["forward"]["failed"].get<int>() >= 1);
  CHECK(gateway_status["jetstream"].is_null());  // a gateway consumes nothing
  CHECK(gateway_status["events"]["stored"] == 0);
  CHECK(gateway.events() == 0);

  // A request without a namespace is gathered from every shard: SHARD answers (through its
  // replica), the shard OTHER has no node and is named as missing.
  std::vector<std::string> other = {REFLECTCTL_BIN, "jetstream", "init",        "--stream", "OTHER",
                                    "--replicas",   "1",         "--namespace", "team-b"};
  for (const auto& arg : nats_args(cluster)) other.push_back(arg);
  REQUIRE(run_process(other, 30s).status.code == 0);
  std::vector<std::string> gather_argv = {REFLECTCTL_BIN};
  for (const auto& arg : nats_args(cluster)) gather_argv.push_back(arg);
  gather_argv.insert(gather_argv.end(), {"status", "--json", "--timeout-ms", "1500"});
  const RunResult gathered = run_process(gather_argv, 30s);
  INFO(gathered.out << gathered.err);
  CHECK(gathered.status.code == 3);
  CHECK_THAT(gathered.err, Catch::Contains("no answer within 1500 ms from shard(s): OTHER"));
  const auto summary = nlohmann::json::parse(gathered.out, nullptr, false);
  REQUIRE(summary.is_object());
  CHECK(summary["ok"] == false);
  CHECK(summary["missing"] == nlohmann::json::array({"OTHER"}));
  CHECK(summary["shards"]["SHARD"]["ok"] == true);
  CHECK(summary["shards"]["SHARD"]["events"]["stored"] == 3);

  CHECK(gateway.stopped_cleanly());
  CHECK(replica.stopped_cleanly());
  CHECK(replica.count("SELECT count(DISTINCT uid) FROM events") == 3);
}

TEST_CASE(
    "jetstream: messages a consumer does not deliver are read from the stream's leader, after "
    "the last sequence found equal to the leader's, and the recreated consumer delivers what "
    "follows",
    "[cluster]") {
  const TempDir dir;
  NatsCluster cluster(dir, 1);
  zmq::context_t context(1);
  init_shard(cluster, 1);
  Replica replica("replica", cluster.urls());
  replica.start(context);
  const auto publish = [&](int n) { publish_turn(cluster, "s", n, "the harbour plan"); };
  publish(0);
  REQUIRE(wait_until([&] { return replica.events() == 1; }, 30s));

  // A consumer whose server sees nothing to deliver, while it agrees with what the node
  // received (as a consumer on a server with a stale copy of the stream does): its filter is
  // moved, in place, to a subject nobody publishes on.
  {
    config::JetStreamConfig config;
    config.servers = cluster.urls();
    const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 2000);
    const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 5000);
    jsConsumerInfo* info = nullptr;
    REQUIRE(js_GetConsumerInfo(&info, js.get(), "SHARD", "replica", nullptr, nullptr) == NATS_OK);
    jsConsumerConfig moved = *info->Config;
    moved.FilterSubject = "reflectd.events.nobody";
    jsConsumerInfo* updated = nullptr;
    const natsStatus status =
        js_UpdateConsumer(&updated, js.get(), "SHARD", &moved, nullptr, nullptr);
    jsConsumerInfo_Destroy(updated);
    jsConsumerInfo_Destroy(info);
    REQUIRE(status == NATS_OK);
  }
  // Stream sequences 2-31; the node's batch is 20, and the read from the leader is not bound
  // to it.
  for (int n = 1; n <= 30; ++n) publish(n);

  nlohmann::json status;
  // Until the replica stores `events` with nothing in flight and `settled` holds for its
  // JetStream status.
  auto await_status = [&](std::int64_t events, auto settled) {
    return wait_until(
        [&] {
          status = control_request(context, replica.control(), {{"cmd", "status"}});
          return replica.events() == events && status.is_object() &&
                 status["jetstream"]["in_flight"] == 0 && settled(status["jetstream"]);
        },
        30s);
  };
  const bool drained =
      await_status(31, [](const nlohmann::json& js) { return js["from_leader"] == 30; });
  INFO(status.dump() << "\n" << replica.log());
  REQUIRE(drained);
  // Sequence 1 was found equal to the leader's at the idle checks before the filter moved;
  // sequences 2-31 come from the leader, never acknowledged, and the consumer recreated past
  // them (with its own, empty, filter) delivers the event published after that.
  CHECK(status["jetstream"]["from_leader"] == 30);
  CHECK(status["jetstream"]["duplicate"] == 0);
  CHECK_THAT(replica.log(),
             Catch::Contains("read 30 messages from the leader after sequence 1, recreating"));
  CHECK(replica.count("SELECT count(DISTINCT uid) FROM events") == 31);
  CHECK(replica.count("SELECT stream_seq FROM jetstream_positions WHERE stream = 'SHARD'") == 31);

  publish(31);
  const bool delivered =
      await_status(32, [](const nlohmann::json& js) { return js["acked"] == 2; });
  INFO(status.dump());
  CHECK(delivered);
  CHECK(replica.count("SELECT stream_seq FROM jetstream_positions WHERE stream = 'SHARD'") == 32);
  CHECK(replica.stopped_cleanly());
}

TEST_CASE(
    "jetstream: while the consumer has no leader, what the stream's leader holds is read from "
    "it and stored; the consumer, back, goes on without a loss or a second copy",
    "[cluster]") {
  const TempDir dir;
  NatsCluster cluster(dir);
  zmq::context_t context(1);
  init_shard(cluster, 3);
  Replica replica("replica", cluster.urls());
  replica.start(context);
  const auto publish = [&](int n) { publish_turn(cluster, "b", n, "the ferry timetable"); };
  publish(0);
  REQUIRE(wait_until([&] { return replica.events() == 1; }, 30s));

  // The test's requests go through n1, as the node's and the publisher's do (the first URL).
  config::JetStreamConfig config;
  config.servers = cluster.urls();
  const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 2000);
  const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 5000);
  const auto leader = [&](bool consumer) {
    std::string name;
    if (consumer) {
      jsConsumerInfo* info = nullptr;
      if (js_GetConsumerInfo(&info, js.get(), "SHARD", "replica", nullptr, nullptr) == NATS_OK &&
          info->Cluster != nullptr && info->Cluster->Leader != nullptr) {
        name = info->Cluster->Leader;
      }
      jsConsumerInfo_Destroy(info);
    } else {
      jsStreamInfo* info = nullptr;
      if (js_GetStreamInfo(&info, js.get(), "SHARD", nullptr, nullptr) == NATS_OK &&
          info->Cluster != nullptr && info->Cluster->Leader != nullptr) {
        name = info->Cluster->Leader;
      }
      jsStreamInfo_Destroy(info);
    }
    return name;
  };
  // Moves a leadership elsewhere and waits until a leader answers again.
  const auto step_down = [&](const std::string& subject, bool consumer) {
    natsMsg* reply = nullptr;
    static_cast<void>(
        natsConnection_Request(&reply, connection.get(), subject.c_str(), "", 0, 5000));
    natsMsg_Destroy(reply);
    REQUIRE(wait_until([&] { return !leader(consumer).empty(); }, 30s));
  };
  // The consumer of one replica, on a server other than n1: stopping that server leaves the
  // stream its quorum and leader, the node and the publisher their connection, and the
  // consumer no leader at all, however long it lasts.
  for (int tries = 0; tries < 20 && leader(true) == "n1"; ++tries) {
    step_down("$JS.API.CONSUMER.LEADER.STEPDOWN.SHARD.replica", true);
  }
  {
    jsConsumerInfo* info = nullptr;
    REQUIRE(js_GetConsumerInfo(&info, js.get(), "SHARD", "replica", nullptr, nullptr) == NATS_OK);
    jsConsumerConfig single = *info->Config;
    single.Replicas = 1;
    jsConsumerInfo* updated = nullptr;
    jsErrCode code{};
    const natsStatus status =
        js_UpdateConsumer(&updated, js.get(), "SHARD", &single, nullptr, &code);
    jsConsumerInfo_Destroy(updated);
    jsConsumerInfo_Destroy(info);
    INFO("JetStream error " << static_cast<int>(code));
    REQUIRE(status == NATS_OK);
  }
  std::string consumer_server;
  REQUIRE(wait_until([&] { return !(consumer_server = leader(true)).empty(); }, 30s));
  INFO("consumer on " << consumer_server);
  REQUIRE(consumer_server != "n1");
  for (int tries = 0; tries < 20 && leader(false) == consumer_server; ++tries) {
    step_down("$JS.API.STREAM.LEADER.STEPDOWN.SHARD", false);
  }
  REQUIRE(leader(false) != consumer_server);
  publish(1);
  REQUIRE(wait_until([&] { return replica.events() == 2; }, 30s));

  const int stopped = NatsCluster::index_of(consumer_server);
  cluster.signal(stopped, SIGSTOP);
  for (int n = 2; n <= 11; ++n) publish(n);
  nlohmann::json status;
  const bool bridged = wait_until(
      [&] {
        status = control_request(context, replica.control(), {{"cmd", "status"}});
        return replica.events() == 12 && status.is_object() &&
               status["jetstream"]["from_leader"] >= 10;
      },
      30s);
  INFO(status.dump() << "\n" << replica.log());
  cluster.signal(stopped, SIGCONT);
  REQUIRE(bridged);
  CHECK_THAT(replica.log(), Catch::Contains("while consumer replica has no leader"));

  // Back, the consumer delivers what was read from the leader again (acknowledged, not stored:
  // already_read) or, recreated meanwhile, from the committed position on; one copy each.
  publish(12);
  REQUIRE(wait_until([&] { return replica.events() == 13; }, 60s));
  CHECK(replica.count("SELECT count(DISTINCT uid) FROM events") == 13);
  CHECK(replica.count("SELECT stream_seq FROM jetstream_positions WHERE stream = 'SHARD'") == 13);
  CHECK(replica.stopped_cleanly());
}

}  // namespace reflectd::test
