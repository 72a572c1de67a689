#pragma once
// The real reflectd binary as a child process on ipc:// endpoints in a temp dir (fixed across
// restarts, unlike tcp wildcard ports), with helpers to wait for readiness and to talk to it.
// For tests that kill, signal or measure the process (crash campaign, storage faults, RSS,
// watchdog). Error policy: helpers return empty/false on timeouts; setup failures throw.

#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <chrono>
#include <string>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {

/// ipc:// endpoint named `name` inside `dir`.
inline std::string ipc_endpoint(const TempDir& dir, const std::string& name) {
  return "ipc://" + dir.path().string() + "/" + name;
}

/// YAML turning off every background job (the child-process form of disable_background_jobs).
inline constexpr const char* kNoJobsYaml =
    "jobs:\n  consolidate:\n    enabled: false\n  decay:\n    enabled: false\n  cluster:\n    "
    "enabled: false\n"
    "  importance:\n    enabled: false\n  medallion:\n    enabled: false\n  facts:\n    "
    "enabled: false\n";

/// YAML keeping every background job enabled but never due by itself (a week's interval, no
/// event or idle trigger): jobs run when a test asks with {"cmd":"run"}.
inline constexpr const char* kJobsOnDemandYaml =
    "jobs:\n"
    "  consolidate: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
    "  decay: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
    "  cluster: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
    "  importance: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
    "  medallion: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
    "  facts: {interval_s: 604800, after_events: 0, idle_s: 0}\n";

/// What a child daemon's config holds besides its endpoints and database.
struct ChildOptions {
  std::string extra{};             ///< top-level YAML sections other than bus/store/log
  std::string store_extra{};       ///< keys appended to `store:`, each indented two spaces
  std::string bus_extra{};         ///< keys appended to `bus:`, each indented two spaces
  std::string log_level = "warn";  ///< `log.level`: what the child writes to its stderr
};

/// YAML for a daemon with ingest "i", push "p", notify "n", control "c" in `dir`, the
/// database at `db`, and what `options` adds.
inline std::string child_config(const TempDir& dir, const std::string& db,
                                const ChildOptions& options = {}) {
  return "log:\n  level: " + options.log_level +
         "\n"
         "bus:\n  ingest: [\"" +
         ipc_endpoint(dir, "i") + "\"]\n  push: [\"" + ipc_endpoint(dir, "p") +
         "\"]\n  notify: [\"" + ipc_endpoint(dir, "n") + "\"]\n  control: [\"" +
         ipc_endpoint(dir, "c") + "\"]\n" + options.bus_extra + "store:\n  path: \"" + db + "\"\n" +
         options.store_extra +
         // A free port for GET /metrics: tests run side by side.
         "daemon:\n  metrics_listen: \"127.0.0.1:0\"\nhttp:\n  listen: \"127.0.0.1:0\"\n" +
         options.extra;
}

/// Waits until the daemon answers {"cmd":"status"} on `control`.
inline bool wait_ready(zmq::context_t& context, const std::string& control,
                       std::chrono::milliseconds timeout) {
  return wait_until(
      [&] {
        zmq::socket_t socket(context, zmq::socket_type::dealer);
        socket.set(zmq::sockopt::linger, 0);
        socket.set(zmq::sockopt::rcvtimeo, 200);
        socket.connect(control);
        socket.send(zmq::str_buffer(R"({"cmd":"status"})"));
        zmq::message_t reply;
        return socket.recv(reply).has_value() &&
               nlohmann::json::parse(reply.to_string()).value("ok", false);
      },
      timeout, std::chrono::milliseconds(50));
}

/// One control request on a fresh DEALER; null JSON on timeout.
inline nlohmann::json control_request(zmq::context_t& context, const std::string& control,
                                      const nlohmann::json& request, int timeout_ms = 120000) {
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, timeout_ms);
  socket.connect(control);
  socket.send(zmq::buffer(request.dump()));
  zmq::message_t reply;
  if (!socket.recv(reply)) return nlohmann::json();
  return nlohmann::json::parse(reply.to_string());
}

/// A "VmXxx:" field of /proc/<pid>/status in KiB (0 when unreadable).
inline long proc_status_kib(int pid, const std::string& field) {
  const std::string status = read_text_file("/proc/" + std::to_string(pid) + "/status");
  const auto at = status.find(field + ":");
  return at == std::string::npos ? 0
                                 : std::strtol(status.c_str() + at + field.size() + 1, nullptr, 10);
}

/// VmRSS of `pid` in KiB (0 when unreadable).
inline long rss_kib(int pid) { return proc_status_kib(pid, "VmRSS"); }

/// VmHWM (peak resident set since start) of `pid` in KiB (0 when unreadable).
inline long peak_rss_kib(int pid) { return proc_status_kib(pid, "VmHWM"); }

}  // namespace reflectd::test
