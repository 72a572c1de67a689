// bus.subscribe over CURVE: publishers with the expected server key feed the daemon, others
// (another key, no CURVE) feed nothing; bus.subscribe_server_keys is validated at startup.

#include <catch2/catch.hpp>

#include "support/secure_daemon.hpp"

using reflectd::CurveCert;
using json = nlohmann::json;
namespace test = reflectd::test;
using namespace reflectd::test::secure_daemon;

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
