// Access control with real sockets on tcp 127.0.0.1 ephemeral ports, a real database and the
// real reflectctl binary: CURVE handshakes admitted or refused by the ZAP handler, agent_id
// stamping, namespace and sensitivity write checks, clearance of reads, admin-only commands,
// the non-loopback bind rule, authorized-keys files and keygen files. No fixed sleeps:
// handshake outcomes are awaited on socket monitors, everything else on replies.

#include <catch2/catch.hpp>

#include "support/secure_daemon.hpp"

using reflectd::CurveCert;
using json = nlohmann::json;
namespace test = reflectd::test;
using namespace reflectd::test::secure_daemon;

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
