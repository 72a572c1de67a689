// Access control with real sockets on tcp 127.0.0.1 ephemeral ports, a real
// database and the real reflectctl binary: CURVE handshakes admitted or refused by the ZAP
// handler, agent_id stamping, namespace and sensitivity write checks, clearance and namespace
// scope of reads (in the SQL), admin-only commands, the non-loopback bind rule, keygen files.
//
// No fixed sleeps: handshake outcomes are awaited on socket monitors, everything else on
// replies. Needs REFLECTD_BIN and REFLECTCTL_BIN.

#include <SQLiteCpp/SQLiteCpp.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bus/security.hpp"
#include "common/zcert.hpp"
#include "config/config.hpp"
#include "support/child_daemon.hpp"
#include "support/daemon_fixture.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

using reflectd::CurveCert;
using json = nlohmann::json;
namespace test = reflectd::test;

// A daemon with CURVE on every tcp endpoint and three identities:
//   planner: namespaces [alpha], max_sensitivity medium, not admin
//   ops:     every namespace, hyper, admin
//   stranger: a valid key that is not listed.
struct SecureDaemon {
  test::TempDir dir;
  CurveCert server = reflectd::generate_cert();
  CurveCert planner = reflectd::generate_cert();
  CurveCert ops = reflectd::generate_cert();
  CurveCert stranger = reflectd::generate_cert();
  std::string keys_file = dir.file("authorized_keys.yaml");
  std::string config_file = dir.file("reflectd.yaml");
  reflectd::SystemClock clock;
  std::unique_ptr<reflectd::daemon::Daemon> daemon;
  std::thread thread;
  zmq::context_t context{1};
  std::string bus_extra;   // more lines under "bus:" (subscribe endpoints)
  std::string keys_extra;  // more authorized-keys entries (subscribe publishers)

  std::string keys_yaml(bool with_planner, bool with_extra = true) const {
    std::string yaml = "keys:\n" + (with_extra ? keys_extra : std::string{});
    if (with_planner) {
      yaml += "  - public_key: \"" + planner.public_key +
              "\"\n    agent_id: planner\n"
              "    namespaces: [alpha]\n    max_sensitivity: medium\n";
    }
    yaml += "  - public_key: \"" + ops.public_key +
            "\"\n    agent_id: ops\n"
            "    namespaces: [\"*\"]\n    max_sensitivity: hyper\n    admin: true\n";
    return yaml;
  }

  // A real configuration file, so that a reload (SIGHUP semantics) re-reads it.
  std::string config_yaml() const {
    return "log: {level: warn}\n"
           "daemon: {stats_interval_ms: 100, metrics_listen: \"127.0.0.1:0\"}\n"
           "bus:\n  ingest: [\"tcp://127.0.0.1:*\"]\n  push: [\"tcp://127.0.0.1:*\"]\n"
           "  notify: [\"tcp://127.0.0.1:*\"]\n  control: [\"tcp://127.0.0.1:*\", \"ipc://" +
           dir.file("c") + "\"]\n" + bus_extra + "store: {path: \"" + dir.file("reflectd.db") +
           "\"}\n"
           "security: {curve_secret_key_file: \"" +
           dir.file("server.key") + "\", authorized_keys_file: \"" + keys_file + "\"}\n" +
           (jobs_on_demand ? test::kJobsOnDemandYaml : test::kNoJobsYaml);
  }

  bool jobs_on_demand = false;  // jobs enabled, run only when a test asks (test::kJobsOnDemandYaml)

  SecureDaemon() : SecureDaemon(std::string{}, std::string{}) {}
  SecureDaemon(std::string bus_lines, std::string key_entries, bool with_jobs_on_demand = false)
      : bus_extra(std::move(bus_lines)),
        keys_extra(std::move(key_entries)),
        jobs_on_demand(with_jobs_on_demand) {
    reflectd::write_cert_pair(dir.file("server.key"), server, false);
    test::write_text_file(keys_file, keys_yaml(true));
    test::write_text_file(config_file, config_yaml());
    daemon = std::make_unique<reflectd::daemon::Daemon>(
        reflectd::config::load_file(config_file), reflectd::daemon::DaemonOptions{config_file},
        clock);
    daemon->start();
    thread = std::thread([this] { daemon->run(); });
  }
  ~SecureDaemon() {
    daemon->request_stop();
    thread.join();
  }
  SecureDaemon(const SecureDaemon&) = delete;
  SecureDaemon& operator=(const SecureDaemon&) = delete;

  const std::string& ingest() const { return daemon->endpoints().ingest.at(0); }
  const std::string& push() const { return daemon->endpoints().push.at(0); }
  const std::string& control() const { return daemon->endpoints().control.at(0); }
  std::string local_control() const { return daemon->endpoints().control.at(1); }

  zmq::socket_t client(zmq::socket_type type, const std::string& endpoint, const CurveCert* as) {
    zmq::socket_t socket(context, type);
    socket.set(zmq::sockopt::rcvtimeo, test::kReplyTimeoutMs);
    socket.set(zmq::sockopt::linger, 0);
    if (as != nullptr) {
      socket.set(zmq::sockopt::curve_serverkey, server.public_key);
      socket.set(zmq::sockopt::curve_publickey, as->public_key);
      socket.set(zmq::sockopt::curve_secretkey, as->secret_key);
    }
    socket.connect(endpoint);
    return socket;
  }

  json control_as(const CurveCert* as, const json& request) {
    zmq::socket_t socket = client(zmq::socket_type::dealer, control(), as);
    return test::control(socket, request);
  }

  json ingest_as(const CurveCert& as, const json& payload) {
    zmq::socket_t socket = client(zmq::socket_type::dealer, ingest(), &as);
    return test::ingest(socket, payload.dump());
  }
};

// Waits on a socket monitor for one of `wanted`; returns the event (0 on timeout) and its value.
std::pair<int, int> await_event(zmq::socket_t& monitor, std::initializer_list<int> wanted) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(monitor, std::back_inserter(frames))) break;
    if (frames.size() != 2 || frames[0].size() < 6) continue;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, frames[0].data(), 2);
    std::memcpy(&value, static_cast<const char*>(frames[0].data()) + 2, 4);
    for (int w : wanted) {
      if (event == w) return {event, static_cast<int>(value)};
    }
  }
  return {0, 0};
}

zmq::socket_t monitor_of(zmq::context_t& context, zmq::socket_t& socket, const std::string& name) {
  const std::string endpoint = "inproc://monitor-" + name;
  REQUIRE(zmq_socket_monitor(socket.handle(), endpoint.c_str(), ZMQ_EVENT_ALL) == 0);
  zmq::socket_t monitor(context, zmq::socket_type::pair);
  monitor.set(zmq::sockopt::rcvtimeo, 10000);
  monitor.connect(endpoint);
  return monitor;
}

std::int64_t stored_count(const std::string& db_path) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  return db.execAndGet("SELECT count(*) FROM events").getInt64();
}

json event(const std::string& ns, const std::string& sensitivity, const std::string& content) {
  return {{"kind", "task"}, {"content", content}, {"namespace", ns}, {"sensitivity", sensitivity}};
}

}  // namespace

TEST_CASE("an unlisted CURVE key is refused at the handshake and nothing it sends is stored") {
  SecureDaemon d;
  zmq::socket_t stranger(d.context, zmq::socket_type::dealer);
  stranger.set(zmq::sockopt::linger, 0);
  stranger.set(zmq::sockopt::curve_serverkey, d.server.public_key);
  stranger.set(zmq::sockopt::curve_publickey, d.stranger.public_key);
  stranger.set(zmq::sockopt::curve_secretkey, d.stranger.secret_key);
  zmq::socket_t monitor = monitor_of(d.context, stranger, "stranger");
  stranger.connect(d.ingest());
  // Queued before the handshake; must never reach the daemon.
  stranger.send(zmq::buffer(event("alpha", "low", "from a stranger").dump()),
                zmq::send_flags::dontwait);
  const auto [ev, value] =
      await_event(monitor, {ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, ZMQ_EVENT_HANDSHAKE_SUCCEEDED});
  CHECK(ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
  CHECK(value == 400);

  const json status = d.control_as(&d.ops, {{"cmd", "status"}});
  REQUIRE(status.value("ok", false));
  CHECK(status["security"]["curve"] == true);
  CHECK(status["security"]["authorized_keys"] == 2);
  CHECK(status["security"]["handshakes_refused"].get<int>() >= 1);
  CHECK(status["messages"] == 0);
  CHECK(stored_count(d.daemon->store_path()) == 0);
  std::printf(
      "[figures] unlisted key: handshake event 0x%x status %d; refused %d, accepted %d, messages "
      "read %d\n",
      ev, value, status["security"]["handshakes_refused"].get<int>(),
      status["security"]["handshakes_accepted"].get<int>(), status["messages"].get<int>());
}

TEST_CASE("a client without CURVE cannot complete a handshake on a tcp endpoint") {
  SecureDaemon d;
  zmq::socket_t plain(d.context, zmq::socket_type::dealer);
  plain.set(zmq::sockopt::linger, 0);
  zmq::socket_t monitor = monitor_of(d.context, plain, "plain");
  plain.connect(d.control());
  plain.send(zmq::str_buffer(R"({"cmd":"status"})"), zmq::send_flags::dontwait);
  const auto [ev, value] = await_event(
      monitor, {ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, ZMQ_EVENT_HANDSHAKE_SUCCEEDED});
  // The client offers NULL, the server CURVE: whichever side reads the other's greeting first
  // ends the connection, so the client sees the mechanism mismatch or the server's close.
  const bool mismatch = ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                        value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH;
  const bool closed_by_server = ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
  CHECK((mismatch || closed_by_server));
  const json status = d.control_as(&d.ops, {{"cmd", "status"}});
  CHECK(status["messages"] == 0);
  std::printf("[figures] NULL client on a CURVE endpoint: monitor event 0x%x value %d\n", ev,
              value);
}

TEST_CASE("events of an authorised key carry its agent_id; namespace and sensitivity are checked") {
  SecureDaemon d;
  zmq::socket_t planner = d.client(zmq::socket_type::dealer, d.ingest(), &d.planner);
  const json batch = json::array({
      {{"kind", "task"},
       {"content", "claims to be ops"},
       {"namespace", "alpha"},
       {"agent_id", "ops"},
       {"id", "e1"}},
      {{"kind", "task"}, {"content", "no claim"}, {"namespace", "alpha"}, {"id", "e2"}},
      {{"kind", "task"}, {"content", "elsewhere"}, {"namespace", "beta"}, {"id", "e3"}},
      {{"kind", "task"},
       {"content", "too secret"},
       {"namespace", "alpha"},
       {"sensitivity", "high"},
       {"id", "e4"}},
      {{"kind", "task"},
       {"content", "at the limit"},
       {"namespace", "alpha"},
       {"sensitivity", "medium"},
       {"id", "e5"}},
  });
  const json reply = test::ingest(planner, batch.dump());
  REQUIRE(reply.is_object());
  CHECK(reply["ok"] == false);
  const auto& r = reply["results"];
  REQUIRE(r.size() == 5);
  CHECK(r[0]["status"] == "stored");
  CHECK(r[1]["status"] == "stored");
  CHECK(r[2]["status"] == "rejected");
  CHECK(r[2]["error"] ==
        "namespace: agent 'planner' may not write to namespace 'beta' (authorized: alpha)");
  CHECK(r[3]["status"] == "rejected");
  CHECK(r[3]["error"] ==
        "sensitivity: 'high' is above the max_sensitivity 'medium' of agent 'planner'");
  CHECK(r[4]["status"] == "stored");

  SQLite::Database db(d.daemon->store_path(), SQLite::OPEN_READONLY);
  SQLite::Statement q(
      db,
      "SELECT uid, agent_id, coalesce(json_extract(metadata, '$._claimed_agent_id'), '') "
      "FROM events ORDER BY seq");
  std::vector<std::string> rows;
  while (q.executeStep()) {
    rows.push_back(q.getColumn(0).getString() + "|" + q.getColumn(1).getString() + "|" +
                   q.getColumn(2).getString());
  }
  CHECK(rows == std::vector<std::string>{"e1|planner|ops", "e2|planner|", "e5|planner|"});

  // Push: the same checks, rejections kept as dead letters with the reason.
  zmq::socket_t push = d.client(zmq::socket_type::push, d.push(), &d.planner);
  push.send(zmq::buffer(event("beta", "low", "pushed elsewhere").dump()));
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["dead_letters"] == 1;
      },
      std::chrono::seconds(10)));
  CHECK(db.execAndGet("SELECT reason FROM dead_letters").getString() ==
        "namespace: agent 'planner' may not write to namespace 'beta' (authorized: alpha)");
}

TEST_CASE("reads apply clearance and namespace scope: one level above redacted, further hidden") {
  SecureDaemon d;
  json batch = json::array();
  const std::vector<std::string> levels{"public", "low", "medium", "high", "hyper"};
  for (const auto& level : levels) {
    json e = event("alpha", level, "alpha note at level " + level);
    e["id"] = "a-" + level;
    batch.push_back(e);
  }
  json other = event("beta", "public", "beta note at level public");
  other["id"] = "b-public";
  batch.push_back(other);
  const json stored = d.ingest_as(d.ops, batch);
  REQUIRE(stored["ok"] == true);

  const auto summarise = [](const json& items) {
    std::vector<std::string> out;
    for (const auto& row : items) {
      out.push_back(row["id"].get<std::string>() + "|" + row["sensitivity"].get<std::string>() +
                    "|" + std::to_string(row["redacted"].get<int>()) + "|" +
                    row["preview"].get<std::string>());
    }
    return out;
  };
  const json events = d.control_as(&d.planner, {{"cmd", "events"}, {"limit", 100}});
  REQUIRE(events["ok"] == true);
  CHECK(summarise(events["events"]) == std::vector<std::string>{
                                           "a-public|public|0|alpha note at level public",
                                           "a-low|low|0|alpha note at level low",
                                           "a-medium|medium|0|alpha note at level medium",
                                           "a-high|high|1|[redacted: above your clearance]",
                                       });
  // The namespace filter cannot widen the scope.
  const json beta = d.control_as(&d.planner, {{"cmd", "events"}, {"namespace", "beta"}});
  CHECK(beta["events"].empty());

  const json search =
      d.control_as(&d.planner, {{"cmd", "search"}, {"text", "note"}, {"limit", 100}});
  REQUIRE(search["ok"] == true);
  std::vector<std::string> found;
  for (const auto& row : search["results"]) {
    found.push_back(row["id"].get<std::string>() + "|" +
                    std::to_string(row["redacted"].get<int>()) + "|" +
                    (row["redacted"] == 1 ? row["preview"].get<std::string>() : std::string("-")));
  }
  std::sort(found.begin(), found.end());
  CHECK(found == std::vector<std::string>{"a-high|1|[redacted: above your clearance]", "a-low|0|-",
                                          "a-medium|0|-", "a-public|0|-"});

  // The admin sees all six; the local operator (ipc) too.
  CHECK(d.control_as(&d.ops, {{"cmd", "events"}, {"limit", 100}})["events"].size() == 6);
  zmq::socket_t local = test::make_client(d.context, zmq::socket_type::dealer, d.local_control());
  const json local_events = test::control(local, {{"cmd", "events"}, {"limit", 100}});
  CHECK(local_events["events"].size() == 6);
  const json local_status = test::control(local, {{"cmd", "status"}});
  CHECK(local_status["caller"]["local_operator"] == true);
  std::printf(
      "[figures] planner (alpha, medium) reads: events %zu rows (1 redacted), search %zu; ops %zu; "
      "local operator %zu of 6 stored\n",
      events["events"].size(), search["results"].size(),
      d.control_as(&d.ops, {{"cmd", "events"}, {"limit", 100}})["events"].size(),
      local_events["events"].size());
}

TEST_CASE(
    "derived records carry the highest sensitivity of their events and are read under clearance") {
  SecureDaemon d({}, {}, true);
  const auto note = [](const std::string& id, const std::string& kind, const std::string& level,
                       const std::string& content) {
    json e = event("alpha", level, content);
    e["id"] = id;
    e["kind"] = kind;
    return e;
  };
  json batch = json::array({
      note("d-public", "task", "public", "Fixed the reconnect logic in src/session_base.cpp"),
      note("d-low", "task", "low", "Refactored src/session_base.cpp and src/socket_base.cpp"),
      note("d-high", "task", "high", "Moved the token cache to src/vault_high.cpp"),
      note("d-hyper", "task", "hyper", "Rotated the signing keys in src/hyper_secret.cpp"),
      note("d-decision", "decision", "high", "Decision: keep tokens in src/vault_high.cpp only"),
  });
  batch[4]["context"] = {{"title", "Token storage"},
                         {"target", "vault"},
                         {"rationale", "one audited place for tokens"}};
  const json stored = d.ingest_as(d.ops, batch);
  INFO(stored.dump());
  REQUIRE(stored["ok"] == true);
  for (const char* job : {"consolidate", "cluster", "medallion"}) {
    const json run = d.control_as(&d.ops, {{"cmd", "run"}, {"job", job}, {"wait", true}});
    INFO(job << ": " << run.dump());
    REQUIRE(run["ok"] == true);
  }

  // Stored: each derived row holds the highest level of the events it came from (exact).
  SQLite::Database db(d.dir.file("reflectd.db"), SQLite::OPEN_READONLY);
  const auto level_of = [&](const std::string& sql) { return db.execAndGet(sql).getString(); };
  CHECK(level_of(
            "SELECT sensitivity FROM entities WHERE canonical_key = 'file:src/session_base.cpp'") ==
        "low");
  CHECK(level_of(
            "SELECT sensitivity FROM entities WHERE canonical_key = 'file:src/vault_high.cpp'") ==
        "high");
  CHECK(level_of(
            "SELECT sensitivity FROM entities WHERE canonical_key = 'file:src/hyper_secret.cpp'") ==
        "hyper");
  CHECK(
      level_of("SELECT k.sensitivity FROM knowledge k JOIN events e ON e.seq = k.source_event_seq "
               "WHERE e.uid = 'd-decision'") == "high");
  const std::string rank =
      "(CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 "
      "WHEN 'high' THEN 3 ELSE 4 END)";
  const std::string level = "(CASE max(" + rank +
                            ") WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' "
                            "WHEN 3 THEN 'high' ELSE 'hyper' END)";
  CHECK(db.execAndGet("SELECT count(*) FROM clusters c WHERE c.sensitivity <> (SELECT " + level +
                      " FROM event_clusters ec JOIN events e ON e.seq = ec.seq WHERE ec.cluster_id "
                      "= c.cluster_id)")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT count(*) FROM entities n WHERE n.sensitivity <> (SELECT " + level +
                      " FROM event_entities ee JOIN events e ON e.seq = ee.seq WHERE ee.entity_id "
                      "= n.entity_id)")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT count(*) FROM clusters WHERE sensitivity = 'hyper'").getInt() >= 1);
  // Knowledge: its evidence rows and its source event (the triggers of migration 19).
  const std::string level_or_public =
      "(CASE coalesce(max(" + rank +
      "), 0) WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' "
      "ELSE 'hyper' END)";
  CHECK(db.execAndGet("SELECT count(*) FROM knowledge k WHERE k.sensitivity <> (SELECT " +
                      level_or_public +
                      " FROM (SELECT event_seq AS seq FROM knowledge_evidence WHERE decision_id = "
                      "k.decision_id UNION ALL SELECT k.source_event_seq) x JOIN events e ON "
                      "e.seq = x.seq)")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT count(DISTINCT k.decision_id) FROM knowledge k JOIN "
                      "knowledge_evidence v USING (decision_id) WHERE k.sensitivity <> 'public'")
            .getInt() >= 1);

  // Read as planner (clearance medium): high comes back redacted, hyper not at all.
  const std::string redacted = "[redacted: above your clearance]";
  const json entities = d.control_as(&d.planner, {{"cmd", "entities"}, {"top", 100}});
  REQUIRE(entities["ok"] == true);
  std::set<std::string> visible;
  int entities_redacted = 0;
  for (const auto& row : entities["entities"]) {
    const std::string key = row["canonical_key"].get<std::string>();
    visible.insert(key);
    CHECK(row["sensitivity"] != "hyper");
    CHECK((row["redacted"] == 1) == (row["sensitivity"] == "high"));
    if (row["redacted"] == 1) {
      ++entities_redacted;
      CHECK(key == redacted);
      CHECK(row["summary_text"] == redacted);
    }
  }
  CHECK(visible.contains("file:src/session_base.cpp"));
  CHECK_FALSE(visible.contains("file:src/vault_high.cpp"));
  CHECK_FALSE(visible.contains("file:src/hyper_secret.cpp"));
  CHECK(entities_redacted >= 1);

  const auto check_rows = [&](const json& rows, const char* text_field) {
    int hidden_high = 0;
    for (const auto& row : rows) {
      CHECK(row["sensitivity"] != "hyper");
      CHECK((row["redacted"] == 1) == (row["sensitivity"] == "high"));
      if (row["redacted"] == 1) {
        ++hidden_high;
        CHECK(row[text_field] == redacted);
      }
    }
    return hidden_high;
  };
  const json knowledge = d.control_as(&d.planner, {{"cmd", "knowledge"}});
  REQUIRE(knowledge["ok"] == true);
  CHECK(check_rows(knowledge["knowledge"], "title") >= 1);
  for (const auto& row : knowledge["knowledge"]) {
    if (row["redacted"] == 1) CHECK(row["rationale"] == redacted);
  }
  const json clusters = d.control_as(&d.planner, {{"cmd", "clusters"}, {"limit", 100}});
  REQUIRE(clusters["ok"] == true);
  check_rows(clusters["clusters"], "summary_text");
  const json observations = d.control_as(&d.planner, {{"cmd", "observations"}, {"limit", 100}});
  REQUIRE(observations["ok"] == true);
  check_rows(observations["observations"], "text");
  const json medallions = d.control_as(&d.planner, {{"cmd", "medallion"}, {"action", "list"}});
  REQUIRE(medallions["ok"] == true);
  check_rows(medallions["medallions"], "high_level");

  // Full clearance reads every row as stored.
  const json all = d.control_as(&d.ops, {{"cmd", "entities"}, {"top", 100}});
  std::set<std::string> all_keys;
  for (const auto& row : all["entities"]) {
    CHECK(row["redacted"] == 0);
    all_keys.insert(row["canonical_key"].get<std::string>());
  }
  CHECK(all_keys.contains("file:src/hyper_secret.cpp"));
  const json hyper_clusters = d.control_as(&d.ops, {{"cmd", "clusters"}, {"limit", 100}});
  CHECK(hyper_clusters["clusters"].size() > clusters["clusters"].size());
  std::printf(
      "[figures] derived reads as planner (medium): entities %zu (%d redacted) of %zu, knowledge "
      "%zu, "
      "clusters %zu of %zu, observations %zu, medallions %zu\n",
      entities["entities"].size(), entities_redacted, all["entities"].size(),
      knowledge["knowledge"].size(), clusters["clusters"].size(), hyper_clusters["clusters"].size(),
      observations["observations"].size(), medallions["medallions"].size());
}

TEST_CASE("admin control commands need admin: true") {
  SecureDaemon d;
  const json refused = d.control_as(&d.planner, {{"cmd", "run"}, {"job", "decay"}});
  CHECK(refused["ok"] == false);
  CHECK(refused["error"] ==
        "run: not allowed for agent 'planner': admin commands (run, reinforce) need admin: true in "
        "the authorized keys");
  const json reinforce = d.control_as(&d.planner, {{"cmd", "reinforce"}, {"id", "x"}});
  CHECK(reinforce["ok"] == false);
  const json allowed = d.control_as(&d.ops, {{"cmd", "run"}, {"job", "decay"}});
  CHECK(allowed["ok"] == true);
  CHECK(allowed["queued"] == "decay");
  const json status = d.control_as(&d.planner, {{"cmd", "status"}});
  CHECK(status["caller"] == json{{"agent_id", "planner"},
                                 {"local_operator", false},
                                 {"namespaces", {"alpha"}},
                                 {"max_sensitivity", "medium"},
                                 {"admin", false}});
}

TEST_CASE("a reload re-reads the authorized keys: a removed key is refused") {
  SecureDaemon d;
  zmq::socket_t planner = d.client(zmq::socket_type::dealer, d.ingest(), &d.planner);
  CHECK(test::ingest(planner, event("alpha", "low", "before").dump())["ok"] == true);
  test::write_text_file(d.keys_file, d.keys_yaml(false));
  d.daemon->request_reload();
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["security"]["authorized_keys"] == 1;
      },
      std::chrono::seconds(10)));
  // The open connection: every message refused.
  const json late = test::ingest(planner, event("alpha", "low", "after").dump());
  CHECK(late["ok"] == false);
  CHECK(late["error"] == "authorization: CURVE key " + d.planner.public_key +
                             " is no longer in the authorized keys");
  // A new connection: refused at the handshake.
  zmq::socket_t again(d.context, zmq::socket_type::dealer);
  again.set(zmq::sockopt::linger, 0);
  again.set(zmq::sockopt::curve_serverkey, d.server.public_key);
  again.set(zmq::sockopt::curve_publickey, d.planner.public_key);
  again.set(zmq::sockopt::curve_secretkey, d.planner.secret_key);
  zmq::socket_t monitor = monitor_of(d.context, again, "again");
  again.connect(d.control());
  CHECK(await_event(monitor, {ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, ZMQ_EVENT_HANDSHAKE_SUCCEEDED})
            .first == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
  // A broken file keeps the running list.
  test::write_text_file(d.keys_file, "keys:\n  - agent_id: x\n");
  d.daemon->request_reload();
  REQUIRE(test::wait_until(
      [&] {
        const json s = d.control_as(&d.ops, {{"cmd", "status"}});
        return s["last_reload"]["ok"] == false;
      },
      std::chrono::seconds(10)));
  const json s = d.control_as(&d.ops, {{"cmd", "status"}});
  CHECK(s["security"]["authorized_keys"] == 1);
  CHECK(s["last_reload"]["message"].get<std::string>().find("keys[0]: public_key is required") !=
        std::string::npos);
}

TEST_CASE("non-loopback tcp binds need CURVE or security.insecure") {
  test::TempDir dir;
  auto config = test::loopback_config(dir);
  config.bus.push = {"tcp://0.0.0.0:*"};
  test::disable_background_jobs(config);
  {
    reflectd::SystemClock clock;
    reflectd::daemon::Daemon daemon(config, {}, clock);
    CHECK_THROWS_WITH(
        daemon.start(),
        "bus.push: endpoint tcp://0.0.0.0:* binds a non-loopback address without CURVE; set "
        "security.curve_secret_key_file and security.authorized_keys_file, or "
        "security.insecure: true to accept unauthenticated clients");
  }
  config.security.insecure = true;
  {
    test::RunningDaemon daemon(config);
    CHECK(daemon.endpoints().push.at(0).starts_with("tcp://0.0.0.0:"));
  }
  config.security.insecure = false;
  const CurveCert server = reflectd::generate_cert();
  reflectd::write_cert_pair(dir.file("s.key"), server, false);
  test::write_text_file(dir.file("keys.yaml"), "keys: []\n");
  config.security.curve_secret_key_file = dir.file("s.key");
  config.security.authorized_keys_file = dir.file("keys.yaml");
  test::RunningDaemon daemon(config);
  CHECK(daemon.endpoints().push.at(0).starts_with("tcp://0.0.0.0:"));

  // reflectd --check-config applies the same rule.
  test::write_text_file(dir.file("open.yaml"), "bus:\n  control: [\"tcp://0.0.0.0:7704\"]\n");
  const auto check =
      test::run_process({REFLECTD_BIN, "--check-config", "--config", dir.file("open.yaml")},
                        std::chrono::seconds(30));
  CHECK(check.status.code == 1);
  CHECK(
      check.err.find(
          "bus.control: endpoint tcp://0.0.0.0:7704 binds a non-loopback address without CURVE") !=
      std::string::npos);

  CHECK(reflectd::bus::is_loopback_tcp("tcp://127.0.0.1:1"));
  CHECK(reflectd::bus::is_loopback_tcp("tcp://[::1]:1"));
  CHECK(reflectd::bus::is_loopback_tcp("tcp://localhost:*"));
  CHECK_FALSE(reflectd::bus::is_loopback_tcp("tcp://*:1"));
  CHECK_FALSE(reflectd::bus::is_loopback_tcp("tcp://10.0.0.5:1"));
  CHECK_FALSE(reflectd::bus::is_loopback_tcp("tcp://eth0:1"));
}

TEST_CASE("authorized-keys files are validated strictly") {
  using reflectd::bus::AuthorizedKeys;
  const std::string key = reflectd::generate_cert().public_key;
  const auto error_of = [](const std::string& yaml) {
    try {
      AuthorizedKeys::load_string(yaml, "k.yaml");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string entry = "keys:\n  - public_key: \"" + key + "\"\n    agent_id: a\n";
  CHECK(error_of(entry + "    namespaces: [x]\n    max_sensitivity: secret\n") ==
        "k.yaml:5:22: keys[0].max_sensitivity: must be one of public|low|medium|high|hyper (seed "
        "002)");
  CHECK(error_of(entry + "    namespaces: [x, \"*\"]\n    max_sensitivity: low\n") ==
        "k.yaml:4:21: keys[0].namespaces: \"*\" (every namespace) must be the only entry");
  CHECK(error_of(entry + "    namespaces: [\"a b\"]\n    max_sensitivity: low\n") ==
        "k.yaml:4:18: keys[0].namespaces: 'a b' is not a namespace (1-64 characters of "
        "[A-Za-z0-9._:-])");
  CHECK(error_of(entry + "    namespaces: [x]\n") ==
        "k.yaml:2:5: keys[0]: max_sensitivity is required");
  CHECK(error_of(entry + "    namespaces: [x]\n    max_sensitivity: low\n    role: admin\n") ==
        "k.yaml:6:5: keys[0].role: unknown field (known: public_key, agent_id, namespaces, "
        "max_sensitivity, admin)");
  CHECK(error_of("keys:\n  - public_key: short\n") ==
        "k.yaml:2:17: keys[0].public_key: must be a CURVE public key, 40 Z85 characters");
  const std::string full = entry + "    namespaces: [x]\n    max_sensitivity: low\n";
  CHECK(error_of(full + full.substr(6)) == "k.yaml:6:5: keys[1].public_key: listed twice");
  const auto keys = AuthorizedKeys::load_string(full, "k.yaml");
  REQUIRE(keys.find(key) != nullptr);
  CHECK(keys.find(key)->clearance == 1);
  CHECK_FALSE(keys.find(key)->admin);
}

TEST_CASE(
    "reflectctl keygen writes zcert files with modes 0600/0644; the keys work with reflectctl") {
  test::TempDir dir;
  const auto keygen = [&](const std::string& path, bool force) {
    std::vector<std::string> argv{REFLECTCTL_BIN, "keygen", path};
    if (force) argv.emplace_back("--force");
    return test::run_process(argv, std::chrono::seconds(30));
  };
  const auto server = keygen(dir.file("server.key"), false);
  REQUIRE(server.status.code == 0);
  const auto client = keygen(dir.file("agent.key"), false);
  REQUIRE(client.status.code == 0);
  struct stat st {};
  REQUIRE(::stat(dir.file("agent.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(dir.file("agent.key.pub").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  const CurveCert agent = reflectd::read_cert(dir.file("agent.key"), true);
  CHECK(reflectd::read_cert(dir.file("agent.key.pub"), false).public_key == agent.public_key);
  CHECK(reflectd::read_cert(dir.file("agent.key.pub"), false).secret_key.empty());
  CHECK(client.out.find("public_key: \"" + agent.public_key + "\"") != std::string::npos);
  CHECK(test::read_text_file(dir.file("agent.key.pub"))
            .find("curve\n    public-key = \"" + agent.public_key + "\"") != std::string::npos);

  const auto again = keygen(dir.file("agent.key"), false);
  CHECK(again.status.code == 2);
  CHECK(again.err.find("exists; not overwriting a key (use --force)") != std::string::npos);
  CHECK(reflectd::read_cert(dir.file("agent.key"), true).secret_key == agent.secret_key);
  CHECK(keygen(dir.file("agent.key"), true).status.code == 0);
  const CurveCert replaced = reflectd::read_cert(dir.file("agent.key"), true);
  CHECK(replaced.public_key != agent.public_key);

  test::write_text_file(dir.file("keys.yaml"),
                        "keys:\n  - public_key: \"" + replaced.public_key +
                            "\"\n    agent_id: cli\n    namespaces: [\"*\"]\n"
                            "    max_sensitivity: hyper\n    admin: true\n");
  auto config = test::loopback_config(dir);
  config.security.curve_secret_key_file = dir.file("server.key");
  config.security.authorized_keys_file = dir.file("keys.yaml");
  test::disable_background_jobs(config);
  test::RunningDaemon daemon(config);
  const std::string control = daemon.endpoints().control.at(0);
  const auto status =
      test::run_process({REFLECTCTL_BIN, "--control", control, "--curve-key", dir.file("agent.key"),
                         "--server-key", dir.file("server.key.pub"), "status", "--json"},
                        std::chrono::seconds(30));
  CHECK(status.status.code == 0);
  REQUIRE(!status.out.empty());
  CHECK(json::parse(status.out)["caller"]["agent_id"] == "cli");
  // Without keys the handshake never completes: unreachable (exit 3).
  const auto plain =
      test::run_process({REFLECTCTL_BIN, "--control", control, "status", "--timeout-ms", "1500"},
                        std::chrono::seconds(30));
  CHECK(plain.status.code == 3);
  std::printf(
      "[figures] keygen: secret 0%o, public 0644; reflectctl status with keys exit %d, without "
      "keys exit %d\n",
      0600, status.status.code, plain.status.code);
}

namespace {

// An agent's PUB endpoint for the daemon's bus.subscribe: an XPUB (a PUB that also reads the
// subscriptions, so the test can await the daemon's before publishing instead of losing
// messages to the slow joiner), a CURVE server with `as`'s keypair, or without CURVE.
struct Publisher {
  zmq::socket_t socket;
  std::string endpoint;

  Publisher(zmq::context_t& context, const CurveCert* as,
            const std::string& bind = "tcp://127.0.0.1:*")
      : socket(context, zmq::socket_type::xpub) {
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, test::kReplyTimeoutMs);
    if (as != nullptr) {
      socket.set(zmq::sockopt::curve_server, true);
      socket.set(zmq::sockopt::curve_secretkey, as->secret_key);
    }
    socket.bind(bind);
    endpoint = socket.get(zmq::sockopt::last_endpoint);
  }

  // The daemon subscribes to everything (bus.subscribe_topics [""]): one "\x01" message.
  bool await_subscriber() {
    zmq::message_t message;
    return socket.recv(message).has_value() && message.size() == 1 && message.data<char>()[0] == 1;
  }

  void publish(const json& payload) {
    socket.send(zmq::str_buffer("agent.events"), zmq::send_flags::sndmore);
    socket.send(zmq::buffer(payload.dump()));
  }
};

std::string key_entry(const CurveCert& cert, const std::string& agent, const std::string& ns,
                      const std::string& level) {
  return "  - public_key: \"" + cert.public_key + "\"\n    agent_id: " + agent +
         "\n    namespaces: [" + ns + "]\n    max_sensitivity: " + level + "\n";
}

json event_with_id(const std::string& id, const std::string& ns, const std::string& sensitivity,
                   const std::string& content) {
  json e = event(ns, sensitivity, content);
  e["id"] = id;
  return e;
}

std::vector<std::string> query_rows(const std::string& db_path, const std::string& sql) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, sql);
  std::vector<std::string> rows;
  while (q.executeStep()) {
    std::string row;
    for (int i = 0; i < q.getColumnCount(); ++i) row += (i ? "|" : "") + q.getColumn(i).getString();
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE(
    "subscribe over CURVE: a tcp publisher's events carry its key's agent_id; its scope is "
    "enforced") {
  zmq::context_t agents;
  test::TempDir pub_dir;
  const CurveCert sensor = reflectd::generate_cert();
  // The publisher's key given as its certificate file, as `reflectctl keygen` writes it.
  reflectd::write_cert_pair(pub_dir.file("sensor.key"), sensor, false);
  Publisher curve_pub(agents, &sensor);
  Publisher local_pub(agents, nullptr, "ipc://" + pub_dir.file("agent.ipc"));
  SecureDaemon d("  subscribe: [\"" + curve_pub.endpoint + "\", \"" + local_pub.endpoint +
                     "\"]\n"
                     "  subscribe_server_keys: [\"" +
                     pub_dir.file("sensor.key.pub") + "\", \"\"]\n",
                 key_entry(sensor, "sensor", "alpha", "low"));
  REQUIRE(curve_pub.await_subscriber());
  REQUIRE(local_pub.await_subscriber());

  json spoofed = event_with_id("s1", "alpha", "low", "sensor reading, claims to be ops");
  spoofed["agent_id"] = "ops";
  curve_pub.publish(spoofed);
  curve_pub.publish(event_with_id("s2", "beta", "low", "outside the sensor's namespaces"));
  curve_pub.publish(event_with_id("s3", "alpha", "medium", "above the sensor's clearance"));
  curve_pub.publish(event_with_id("s4", "alpha", "public", "plain sensor reading"));
  // ipc stays the local operator: its agent_id claim is kept as sent.
  json local = event_with_id("l1", "beta", "hyper", "local agent note");
  local["agent_id"] = "local-agent";
  local_pub.publish(local);

  REQUIRE(test::wait_until(
      [&] {
        const json s = d.control_as(&d.ops, {{"cmd", "status"}});
        return s["events"]["stored"] == 3 && s["dead_letters"] == 2;
      },
      std::chrono::seconds(10)));
  const std::string db = d.daemon->store_path();
  CHECK(query_rows(
            db,
            "SELECT uid, agent_id, coalesce(json_extract(metadata, '$._claimed_agent_id'), '') "
            "FROM events ORDER BY uid") ==
        std::vector<std::string>{"l1|local-agent|", "s1|sensor|ops", "s4|sensor|"});
  CHECK(query_rows(db,
                   "SELECT endpoint, reason, json_extract(payload, '$.id') FROM dead_letters ORDER "
                   "BY reason") ==
        std::vector<std::string>{"subscribe|namespace: agent 'sensor' may not write to namespace "
                                 "'beta' (authorized: alpha)|s2",
                                 "subscribe|sensitivity: 'medium' is above the max_sensitivity "
                                 "'low' of agent 'sensor'|s3"});

  const json status = d.control_as(&d.ops, {{"cmd", "status"}});
  // Only the CURVE endpoint is listed: the ipc one is the local operator's.
  CHECK(status["security"]["subscribe_publishers"] ==
        json::array({{{"endpoint", curve_pub.endpoint},
                      {"public_key", sensor.public_key},
                      {"agent_id", "sensor"},
                      {"connected", true},
                      {"handshakes_succeeded", 1},
                      {"handshakes_failed", 0},
                      {"last_failure", ""}}}));
  std::printf(
      "[figures] CURVE subscribe: stored %d (agent_id sensor x2, local operator x1), dead letters "
      "%d, "
      "messages read %d\n",
      status["events"]["stored"].get<int>(), status["dead_letters"].get<int>(),
      status["messages"].get<int>());
}

TEST_CASE("subscribe over CURVE: a publisher with another key, or without CURVE, feeds nothing") {
  zmq::context_t agents;
  const CurveCert sensor = reflectd::generate_cert();
  const CurveCert expected = reflectd::generate_cert();  // listed and configured, never used
  const CurveCert impostor = reflectd::generate_cert();  // what the endpoint really holds
  Publisher genuine(agents, &sensor);
  Publisher wrong_key(agents, &impostor);
  Publisher no_curve(agents, nullptr);
  zmq::socket_t wrong_key_monitor = monitor_of(agents, wrong_key.socket, "wrong-key");
  zmq::socket_t no_curve_monitor = monitor_of(agents, no_curve.socket, "no-curve");
  SecureDaemon d("  subscribe: [\"" + wrong_key.endpoint + "\", \"" + no_curve.endpoint + "\", \"" +
                     genuine.endpoint +
                     "\"]\n"
                     "  subscribe_server_keys: [\"" +
                     expected.public_key + "\", \"" + expected.public_key + "\", \"" +
                     sensor.public_key + "\"]\n",
                 key_entry(sensor, "sensor", "\"*\"", "hyper") +
                     key_entry(expected, "expected", "\"*\"", "hyper"));

  // The daemon's CURVE client cannot complete a handshake with either (it retries every
  // reconnect interval, failing each time).
  const auto [wrong_ev, wrong_value] = await_event(
      wrong_key_monitor, {ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                          ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, ZMQ_EVENT_HANDSHAKE_SUCCEEDED});
  // The impostor cannot open the client's HELLO, sealed to the expected key.
  CHECK(wrong_ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
  CHECK(wrong_value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
  const auto [plain_ev, plain_value] = await_event(
      no_curve_monitor, {ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                         ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, ZMQ_EVENT_HANDSHAKE_SUCCEEDED});
  // As for a NULL client of a CURVE server: the mismatch, or the other side's close first.
  CHECK(((plain_ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
          plain_value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) ||
         plain_ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL));
  wrong_key.publish(event_with_id("w1", "alpha", "public", "from the impostor"));
  no_curve.publish(event_with_id("n1", "alpha", "public", "from a publisher without CURVE"));

  // A marker from the genuine publisher, published after them, is stored alone.
  REQUIRE(genuine.await_subscriber());
  genuine.publish(event_with_id("marker", "alpha", "public", "from the genuine publisher"));
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["events"]["stored"] == 1;
      },
      std::chrono::seconds(10)));
  CHECK(query_rows(d.daemon->store_path(), "SELECT uid, agent_id FROM events") ==
        std::vector<std::string>{"marker|sensor"});
  const json status = d.control_as(&d.ops, {{"cmd", "status"}});
  CHECK(status["messages"] == 1);
  CHECK(status["dead_letters"] == 0);
  // The daemon's own view, from the monitors on its SUB sockets (bus.subscribe order).
  const json& links = status["security"]["subscribe_publishers"];
  REQUIRE(links.size() == 3);
  CHECK(links[0]["endpoint"] == wrong_key.endpoint);
  CHECK(links[0]["agent_id"] == "expected");
  CHECK(links[0]["handshakes_succeeded"] == 0);
  CHECK(links[0]["connected"] == false);
  CHECK(links[1]["handshakes_succeeded"] == 0);
  CHECK(links[1]["connected"] == false);
  CHECK(links[2]["endpoint"] == genuine.endpoint);
  CHECK(links[2]["handshakes_succeeded"] == 1);
  CHECK(links[2]["handshakes_failed"] == 0);
  CHECK(links[2]["connected"] == true);
  // The failures are counted once the client side has seen them (it may trail the server's).
  REQUIRE(test::wait_until(
      [&] {
        const json l =
            d.control_as(&d.ops, {{"cmd", "status"}})["security"]["subscribe_publishers"];
        return l[0]["handshakes_failed"].get<int>() >= 1 &&
               l[1]["handshakes_failed"].get<int>() >= 1;
      },
      std::chrono::seconds(10)));
  const json later = d.control_as(&d.ops, {{"cmd", "status"}})["security"]["subscribe_publishers"];
  CHECK(later[0]["last_failure"].get<std::string>().starts_with(
      "the publisher closed the connection during the handshake"));
  const std::string plain_failure = later[1]["last_failure"].get<std::string>();
  CHECK((plain_failure == "mechanism mismatch: the publisher is not a CURVE server" ||
         plain_failure.starts_with("the publisher closed the connection during the handshake")));
  std::printf(
      "[figures] daemon side: another key: %d failed handshakes, \"%s\"; without CURVE: %d, "
      "\"%s\"\n",
      later[0]["handshakes_failed"].get<int>(), later[0]["last_failure"].get<std::string>().c_str(),
      later[1]["handshakes_failed"].get<int>(), plain_failure.c_str());
  std::printf(
      "[figures] subscribe publisher with another key: monitor event 0x%x value %d; without CURVE: "
      "0x%x value %d; messages read %d (the marker)\n",
      wrong_ev, wrong_value, plain_ev, plain_value, status["messages"].get<int>());
}

TEST_CASE(
    "subscribe over CURVE: a reload that removes the publisher's key turns its events into dead "
    "letters") {
  zmq::context_t agents;
  const CurveCert sensor = reflectd::generate_cert();
  Publisher pub(agents, &sensor);
  SecureDaemon d("  subscribe: [\"" + pub.endpoint + "\"]\n  subscribe_server_keys: [\"" +
                     sensor.public_key + "\"]\n",
                 key_entry(sensor, "sensor", "alpha", "low"));
  REQUIRE(pub.await_subscriber());
  pub.publish(event_with_id("before", "alpha", "low", "before the reload"));
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["events"]["stored"] == 1;
      },
      std::chrono::seconds(10)));

  test::write_text_file(d.keys_file, d.keys_yaml(true, false));
  d.daemon->request_reload();
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["security"]["authorized_keys"] == 2;
      },
      std::chrono::seconds(10)));
  pub.publish(event_with_id("after", "alpha", "low", "after the reload"));
  REQUIRE(test::wait_until(
      [&] {
        return d.control_as(&d.ops, {{"cmd", "status"}})["dead_letters"] == 1;
      },
      std::chrono::seconds(10)));
  CHECK(query_rows(d.daemon->store_path(), "SELECT uid FROM events") ==
        std::vector<std::string>{"before"});
  CHECK(query_rows(d.daemon->store_path(),
                   "SELECT endpoint, reason, json_extract(payload, '$.id') FROM dead_letters") ==
        std::vector<std::string>{"subscribe|authorization: CURVE key " + sensor.public_key +
                                 " is no longer in the authorized keys|after"});
  const json status = d.control_as(&d.ops, {{"cmd", "status"}});
  CHECK(status["last_reload"]["message"] == "applied");
  CHECK(status["security"]["subscribe_publishers"][0]["agent_id"].is_null());
}

TEST_CASE("bus.subscribe_server_keys is validated at startup") {
  using reflectd::bus::load_security;
  test::TempDir dir;
  const CurveCert server = reflectd::generate_cert();
  const CurveCert listed = reflectd::generate_cert();
  const CurveCert unlisted = reflectd::generate_cert();
  reflectd::write_cert_pair(dir.file("s.key"), server, false);
  reflectd::write_cert_pair(dir.file("listed.key"), listed, false);
  test::write_text_file(dir.file("keys.yaml"),
                        "keys:\n" + key_entry(listed, "sensor", "alpha", "low"));
  auto config = test::loopback_config(dir);
  const auto error_of = [&](const std::vector<std::string>& subscribe,
                            const std::vector<std::string>& keys) {
    auto c = config;
    c.bus.subscribe = subscribe;
    c.bus.subscribe_server_keys = keys;
    try {
      load_security(c);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string tcp = "tcp://10.0.0.5:7800";
  const std::string ipc = "ipc://" + dir.file("agent.ipc");
  // Without CURVE a key has nothing to work with.
  CHECK(error_of({tcp}, {listed.public_key}) ==
        "bus.subscribe_server_keys: publisher keys need CURVE; set security.curve_secret_key_file "
        "(the daemon's "
        "keypair, used as the client key) and security.authorized_keys_file");
  CHECK(error_of({tcp}, {}) == "no error");

  config.security.curve_secret_key_file = dir.file("s.key");
  config.security.authorized_keys_file = dir.file("keys.yaml");
  CHECK(error_of({tcp}, {}) ==
        "bus.subscribe: endpoint " + tcp +
            ": with CURVE the daemon connects to a tcp publisher as a CURVE client "
            "and needs the publisher's public key: set bus.subscribe_server_keys[0] (40 Z85 "
            "characters or its "
            "certificate file), or security.insecure: true to read it without CURVE as the local "
            "operator");
  CHECK(error_of({tcp, ipc}, {listed.public_key}) ==
        "bus.subscribe_server_keys: has 1 entries but bus.subscribe has 2 endpoints; give one per "
        "endpoint, in the "
        "same order (\"\" for ipc/inproc)");
  CHECK(error_of({ipc}, {listed.public_key}) ==
        "bus.subscribe_server_keys[0]: endpoint " + ipc +
            " is not tcp: CURVE applies to tcp endpoints only (ipc/inproc publishers are the local "
            "operator); use \"\"");
  CHECK(error_of({tcp}, {unlisted.public_key}) ==
        "bus.subscribe_server_keys[0]: the publisher key " + unlisted.public_key + " of endpoint " +
            tcp + " is not in the authorized keys (" + dir.file("keys.yaml") +
            "); add an entry for it: its agent_id, namespaces and max_sensitivity apply to the "
            "events read from "
            "that endpoint");
  CHECK(error_of({tcp}, {"not-a-key"})
            .starts_with("bus.subscribe_server_keys[0]: 'not-a-key' is neither a CURVE public key "
                         "(40 Z85 characters) nor a readable "
                         "certificate file: "));
  CHECK(error_of({ipc, tcp}, {"", listed.public_key}) == "no error");
  CHECK(error_of({ipc, tcp}, {"", dir.file("listed.key.pub")}) == "no error");
  auto good = config;
  good.bus.subscribe = {ipc, tcp};
  good.bus.subscribe_server_keys = {"", dir.file("listed.key.pub")};
  CHECK(load_security(good).subscribe_server_keys ==
        std::vector<std::string>{"", listed.public_key});
  // security.insecure keeps the old escape: a tcp publisher without a key is read without
  // CURVE, as the local operator.
  config.security.insecure = true;
  CHECK(error_of({tcp}, {}) == "no error");

  // reflectd --check-config applies the same checks.
  test::write_text_file(dir.file("sub.yaml"),
                        "bus:\n  subscribe: [\"" + tcp + "\"]\n  subscribe_server_keys: [\"" +
                            unlisted.public_key + "\"]\nsecurity: {curve_secret_key_file: \"" +
                            dir.file("s.key") + "\", authorized_keys_file: \"" +
                            dir.file("keys.yaml") + "\"}\n");
  const auto check = test::run_process(
      {REFLECTD_BIN, "--check-config", "--config", dir.file("sub.yaml")}, std::chrono::seconds(30));
  CHECK(check.status.code == 1);
  CHECK(check.err.find("bus.subscribe_server_keys[0]: the publisher key " + unlisted.public_key) !=
        std::string::npos);
}

TEST_CASE("recall, context, get and episode apply clearance and namespace scope") {
  SecureDaemon d;
  json batch = json::array();
  const std::vector<std::string> levels{"public", "low", "medium", "high", "hyper"};
  std::int64_t turn = 0;
  for (const auto& level : levels) {
    json e = event("alpha", level, "the harbour lighthouse note at level " + level);
    e["id"] = "r-" + level;
    e["episode_id"] = "ep-1";
    e["sequence_number"] = ++turn;
    batch.push_back(e);
  }
  json other = event("beta", "public", "the harbour lighthouse note in beta");
  other["id"] = "rb-public";
  other["episode_id"] = "ep-1";
  other["sequence_number"] = 1;
  batch.push_back(other);
  REQUIRE(d.ingest_as(d.ops, batch)["ok"] == true);

  // The planner reads alpha up to medium: high comes back redacted, hyper and beta never.
  const json recalled =
      d.control_as(&d.planner, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"limit", 100}});
  REQUIRE(recalled["ok"] == true);
  std::vector<std::string> found;
  for (const auto& row : recalled["results"]) {
    found.push_back(row["id"].get<std::string>() + "|" + (row["redacted"] ? "1" : "0") + "|" +
                    row["content"].get<std::string>());
  }
  std::sort(found.begin(), found.end());
  CHECK(found ==
        std::vector<std::string>{"r-high|1|[redacted: above your clearance]",
                                 "r-low|0|the harbour lighthouse note at level low",
                                 "r-medium|0|the harbour lighthouse note at level medium",
                                 "r-public|0|the harbour lighthouse note at level public"});
  const json beta = d.control_as(
      &d.planner, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"namespace", "beta"}});
  CHECK(beta["ok"] == false);
  CHECK(beta["error"] == "recall: namespace: unknown namespace 'beta'");

  const json context = d.control_as(
      &d.planner, {{"cmd", "context"}, {"text", "harbour lighthouse"}, {"max_tokens", 2000}});
  REQUIRE(context["ok"] == true);
  const std::string text = context["context_text"];
  CHECK(text.find("level hyper") == std::string::npos);
  CHECK(text.find("level high") == std::string::npos);
  CHECK(text.find("[r-high]") != std::string::npos);
  CHECK(text.find("in beta") == std::string::npos);
  std::vector<std::string> sources = context["sources"].get<std::vector<std::string>>();
  std::sort(sources.begin(), sources.end());
  CHECK(sources == std::vector<std::string>{"r-high", "r-low", "r-medium", "r-public"});

  const json got = d.control_as(
      &d.planner, {{"cmd", "get"}, {"ids", {"r-public", "r-high", "r-hyper", "rb-public"}}});
  REQUIRE(got["ok"] == true);
  REQUIRE(got["events"].size() == 2);
  CHECK(got["events"][0]["content"] == "the harbour lighthouse note at level public");
  CHECK(got["events"][1]["redacted"] == true);
  CHECK(got["events"][1]["content"] == "[redacted: above your clearance]");
  CHECK(got["events"][1]["context"].is_null());
  CHECK(got["missing"] == json({"r-hyper", "rb-public"}));

  const json episode = d.control_as(&d.planner, {{"cmd", "episode"}, {"episode_id", "ep-1"}});
  REQUIRE(episode["ok"] == true);
  std::vector<std::string> order;
  for (const auto& row : episode["events"]) order.push_back(row["id"]);
  CHECK(order == std::vector<std::string>{"r-public", "r-low", "r-medium", "r-high"});

  // The admin reads all of alpha and beta.
  const json all =
      d.control_as(&d.ops, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"limit", 100}});
  CHECK(all["results"].size() == 6);
}

TEST_CASE("forget, pin and audit obey namespaces and clearance; the actor is the key's agent") {
  SecureDaemon d;
  const auto event = [](const std::string& id, const std::string& ns,
                        const std::string& sensitivity) {
    return json{{"kind", "task"},
                {"content", "work " + id},
                {"namespace", ns},
                {"sensitivity", sensitivity},
                {"id", id}};
  };
  REQUIRE(d.ingest_as(d.ops, json::array({event("a1", "alpha", "low"), event("b1", "beta", "low"),
                                          event("a2", "alpha", "hyper")}))["ok"] == true);

  // Another namespace's event and one two levels above the clearance read as unknown.
  for (const char* id : {"b1", "a2"}) {
    CHECK(d.control_as(&d.planner, {{"cmd", "forget"}, {"ids", {id}}})["error"] ==
          std::string("forget: ids: no event '") + id +
              "' in the namespaces you may write ([\"alpha\"])");
  }
  CHECK(d.control_as(&d.planner, {{"cmd", "forget"}, {"filter", {{"kind", "task"}}}})["error"] ==
        "forget: filter.namespace: required (a filter across namespaces needs admin)");
  // A filter matches only what the key may see: a1, not a2.
  const json dry = d.control_as(
      &d.planner, {{"cmd", "forget"}, {"filter", {{"namespace", "alpha"}}}, {"dry_run", true}});
  REQUIRE(dry["ok"] == true);
  CHECK(dry["forgotten"]["events"].size() == 1);
  CHECK(dry["forgotten"]["events"][0]["id"] == "a1");

  // The audit row names the key's agent, whatever the request claims.
  CHECK(d.control_as(&d.planner, {{"cmd", "forget"},
                                  {"ids", {"a1"}},
                                  {"agent_id", "ops"}})["forgotten"]["events_archived"] == 1);
  CHECK(d.control_as(&d.ops, {{"cmd", "pin"}, {"ids", {"b1", "a2"}}})["result"]["changed"] ==
        json::array({"b1", "a2"}));

  const auto audited = [&](const CurveCert& as) {
    std::vector<std::string> rows;
    const json reply = d.control_as(&as, {{"cmd", "audit"}});
    INFO(reply.dump());
    for (const auto& row : reply["audit"]) {
      rows.push_back(row["record_id"].get<std::string>() + " " + row["action"].get<std::string>() +
                     " " + row["actor"].get<std::string>());
    }
    return rows;
  };
  CHECK(audited(d.planner) == std::vector<std::string>{"a1 archive planner"});
  CHECK(audited(d.ops) ==
        std::vector<std::string>{"a2 revise ops", "b1 revise ops", "a1 archive planner"});
}
