#pragma once
// A real NATS JetStream cluster for tests: `servers` nats-server processes (Debian's
// nats-server) clustered over loopback routes (one server: standalone JetStream), each with
// JetStream on file storage in a directory of its own, started, killed and restarted as child
// processes.
//
// Error policy: construction throws std::runtime_error when nats-server cannot be started or
// the cluster has no JetStream leader within 30 s; wait_* return false on timeout.
// Thread-safety: one thread.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bus/nats_client.hpp"
#include "common/free_tcp_port.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {

using reflectd::free_tcp_port;

/// The nats-server executable (Debian installs it in /usr/sbin, outside a user's PATH).
inline std::string nats_server_binary() {
  for (const char* path : {"/usr/sbin/nats-server", "/usr/bin/nats-server"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  throw std::runtime_error("nats-server not found: install Debian's nats-server package");
}

class NatsCluster {
 public:
  /// `authorization`: a nats-server `authorization { ... }` block written into every server's
  /// configuration (empty: none), and `credentials` ("user:password") the user url() and
  /// urls() connect as (empty: no user).
  explicit NatsCluster(const TempDir& dir, int servers = 3, const std::string& authorization = "",
                       std::string credentials = "")
      : dir_(dir), credentials_(std::move(credentials)) {
    for (int i = 0; i < servers; ++i) {
      client_ports_.push_back(free_tcp_port());
      route_ports_.push_back(free_tcp_port());
    }
    std::string routes;
    for (const int port : route_ports_) {
      routes += (routes.empty() ? "" : ", ") + ("nats-route://127.0.0.1:" + std::to_string(port));
    }
    for (int i = 0; i < servers; ++i) {
      const std::string name = "n" + std::to_string(i + 1);
      // One server runs JetStream standalone: a cluster of one never elects a meta leader.
      const std::string cluster =
          servers == 1 ? ""
                       : "cluster {\n  name: reflectd-test\n  listen: 127.0.0.1:" +
                             std::to_string(route_ports_[i]) + "\n  routes: [" + routes + "]\n}\n";
      write_text_file(dir_.file(name + ".conf"),
                      "server_name: " + name + "\nlisten: 127.0.0.1:" +
                          std::to_string(client_ports_[i]) + "\njetstream {\n  store_dir: \"" +
                          dir_.file(name + "-store") + "\"\n}\n" + cluster + authorization);
      processes_.emplace_back();
    }
    for (int i = 0; i < servers; ++i) start(i);
    if (!wait_jetstream(std::chrono::seconds(30))) {
      throw std::runtime_error("the NATS cluster elected no JetStream leader within 30 s");
    }
  }

  int size() const { return static_cast<int>(client_ports_.size()); }
  std::string url(int i) const { return url_as(i, credentials_); }
  std::vector<std::string> urls() const { return urls_as(credentials_); }
  /// The URL of server `i` for the user `credentials` ("user:password"; empty: no user).
  std::string url_as(int i, const std::string& credentials) const {
    return "nats://" + (credentials.empty() ? "" : credentials + "@") +
           "127.0.0.1:" + std::to_string(client_ports_[i]);
  }
  std::vector<std::string> urls_as(const std::string& credentials) const {
    std::vector<std::string> out;
    for (int i = 0; i < size(); ++i) out.push_back(url_as(i, credentials));
    return out;
  }

  /// Starts (or restarts) server `i`, its log in <dir>/n<i+1>.log.
  void start(int i) {
    const std::string name = "n" + std::to_string(i + 1);
    processes_[i] = std::make_unique<ChildProcess>(
        std::vector<std::string>{nats_server_binary(), "-c", dir_.file(name + ".conf")},
        SpawnOptions{"", dir_.file(name + ".log"), dir_.file(name + ".log")});
  }

  /// SIGKILL server `i` and reap it.
  void kill(int i) {
    processes_[i]->send_signal(SIGKILL);
    processes_[i]->wait_for(std::chrono::seconds(10));
  }

  /// Sends `number` (SIGSTOP, SIGCONT) to server `i`.
  void signal(int i, int number) { processes_[i]->send_signal(number); }

  /// The index of server `name` ("n1" is 0).
  static int index_of(const std::string& name) { return std::stoi(name.substr(1)) - 1; }

  /// True once a JetStream API request through every running server is answered (the
  /// cluster has a meta leader and each server routes to it).
  bool wait_jetstream(std::chrono::milliseconds timeout) {
    return wait_until(
        [&] {
          for (int i = 0; i < size(); ++i) {
            if (!processes_[i] || !processes_[i]->running()) continue;
            if (!answers(i)) return false;
          }
          return true;
        },
        timeout, std::chrono::milliseconds(100));
  }

  /// True once stream `name` answers a stream-info request through server `i` (after a
  /// restart of the whole cluster the stream elects its own Raft leader after the cluster's).
  bool wait_stream(int i, const std::string& name, std::chrono::milliseconds timeout) const {
    return wait_until(
        [&] {
          return answers(i, [&](jsCtx* js) {
            jsStreamInfo* info = nullptr;
            const natsStatus status = js_GetStreamInfo(&info, js, name.c_str(), nullptr, nullptr);
            jsStreamInfo_Destroy(info);
            return status;
          });
        },
        timeout, std::chrono::milliseconds(100));
  }

 private:
  // True when `request` (a JetStream API call through server `i`) returns NATS_OK.
  bool answers(int i, const std::function<natsStatus(jsCtx*)>& request) const {
    config::JetStreamConfig config;
    config.servers = {url(i)};
    try {
      const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 500);
      const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 1000);
      return request(js.get()) == NATS_OK;
    } catch (const bus::NatsError&) {
      return false;
    }
  }

  // The cluster has a meta leader reachable through server `i`.
  bool answers(int i) const {
    return answers(i, [](jsCtx* js) {
      jsAccountInfo* info = nullptr;
      const natsStatus status = js_GetAccountInfo(&info, js, nullptr, nullptr);
      jsAccountInfo_Destroy(info);
      return status;
    });
  }

  const TempDir& dir_;
  std::string credentials_;
  std::vector<int> client_ports_;
  std::vector<int> route_ports_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
};

}  // namespace reflectd::test
