#pragma once
// Starts a whole reflectd Daemon in-process (the library API main() uses) on ephemeral
// loopback ports and a temp database, and gives tests real ZeroMQ clients for it.

#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/daemon.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {

/// Receive timeout for test sockets: long enough never to fire on a healthy daemon.
inline constexpr int kReplyTimeoutMs = 10000;

/// Config with every endpoint on tcp://127.0.0.1:* and the database in `dir`.
inline config::Config loopback_config(const TempDir& dir) {
  config::Config config = config::defaults();
  config.bus.ingest = {"tcp://127.0.0.1:*"};
  config.bus.push = {"tcp://127.0.0.1:*"};
  config.bus.notify = {"tcp://127.0.0.1:*"};
  config.bus.control = {"tcp://127.0.0.1:*"};
  config.store.path = dir.file("reflectd.db");
  config.daemon.stats_interval_ms = 100;
  config.daemon.metrics_listen = "127.0.0.1:0";  // a free port: tests run side by side
  config.http.listen = "127.0.0.1:0";
  config.log.level = "warn";
  return config;
}

/// Turns off every background job, for tests that only need the bus and the store (a job
/// holding the write lock would make their timings and rejections depend on the machine).
inline void disable_background_jobs(config::Config& config) {
  for (config::JobConfig* job :
       {&config.jobs.consolidate, &config.jobs.decay, &config.jobs.cluster, &config.jobs.importance,
        &config.jobs.medallion, &config.jobs.facts}) {
    job->enabled = false;
  }
}

/// A running in-process daemon; stopped (gracefully) and joined on destruction.
class RunningDaemon {
 public:
  explicit RunningDaemon(config::Config config)
      : daemon_(
            std::make_unique<daemon::Daemon>(std::move(config), daemon::DaemonOptions{}, clock_)) {
    daemon_->start();
    thread_ = std::thread([this] { exit_code_ = daemon_->run(); });
  }
  ~RunningDaemon() { stop(); }
  RunningDaemon(const RunningDaemon&) = delete;
  RunningDaemon& operator=(const RunningDaemon&) = delete;

  /// Graceful stop; returns run()'s exit status.
  int stop() {
    if (thread_.joinable()) {
      daemon_->request_stop();
      thread_.join();
    }
    return exit_code_;
  }
  daemon::Daemon& daemon() { return *daemon_; }
  const bus::BoundEndpoints& endpoints() const { return daemon_->endpoints(); }

 private:
  SystemClock clock_;
  std::unique_ptr<daemon::Daemon> daemon_;
  std::thread thread_;
  int exit_code_ = -1;
};

/// A socket with test-friendly options: bounded receive wait, no linger.
inline zmq::socket_t make_client(zmq::context_t& context, zmq::socket_type type,
                                 const std::string& endpoint) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::rcvtimeo, kReplyTimeoutMs);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  return socket;
}

/// Sends frames and returns the reply frames (empty on timeout).
inline std::vector<std::string> round_trip(zmq::socket_t& socket,
                                           const std::vector<std::string>& frames) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  std::vector<zmq::message_t> reply;
  if (!zmq::recv_multipart(socket, std::back_inserter(reply))) return {};
  std::vector<std::string> out;
  for (auto& frame : reply) out.push_back(frame.to_string());
  return out;
}

/// Sends one payload on a DEALER and parses the JSON reply (last frame).
inline nlohmann::json ingest(zmq::socket_t& dealer, const std::string& payload) {
  const auto reply = round_trip(dealer, {payload});
  if (reply.empty()) return nlohmann::json();
  return nlohmann::json::parse(reply.back());
}

/// Sends a control request and parses the reply.
inline nlohmann::json control(zmq::socket_t& dealer, const nlohmann::json& request) {
  const auto reply = round_trip(dealer, {request.dump()});
  if (reply.empty()) return nlohmann::json();
  return nlohmann::json::parse(reply.back());
}

}  // namespace reflectd::test
