#pragma once
// A daemon with CURVE on every tcp endpoint and three identities, as the access-control tests
// use it (tests/bus/curve_*_test.cpp, tests/recall/read_clearance_test.cpp), with socket
// monitors to await handshakes. Needs REFLECTD_BIN and REFLECTCTL_BIN.

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

namespace reflectd::test::secure_daemon {

using reflectd::CurveCert;
using json = nlohmann::json;

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
           "http: {listen: \"127.0.0.1:0\"}\n"
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
inline std::pair<int, int> await_event(zmq::socket_t& monitor, std::initializer_list<int> wanted) {
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

inline zmq::socket_t monitor_of(zmq::context_t& context, zmq::socket_t& socket,
                                const std::string& name) {
  const std::string endpoint = "inproc://monitor-" + name;
  REQUIRE(zmq_socket_monitor(socket.handle(), endpoint.c_str(), ZMQ_EVENT_ALL) == 0);
  zmq::socket_t monitor(context, zmq::socket_type::pair);
  monitor.set(zmq::sockopt::rcvtimeo, 10000);
  monitor.connect(endpoint);
  return monitor;
}

inline std::int64_t stored_count(const std::string& db_path) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  return db.execAndGet("SELECT count(*) FROM events").getInt64();
}

inline json event(const std::string& ns, const std::string& sensitivity,
                  const std::string& content) {
  return {{"kind", "task"}, {"content", content}, {"namespace", ns}, {"sensitivity", sensitivity}};
}

}  // namespace reflectd::test::secure_daemon
