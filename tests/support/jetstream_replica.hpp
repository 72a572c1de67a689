#pragma once
// One reflectd node of a JetStream shard for the cluster tests: a child daemon with its own
// directory, database and durable consumer, and publishing through JetStream with a PubAck.
//
// Error policy: Catch2 REQUIREs (start() fails the test when the node is not ready in 15 s).
// Thread-safety: one thread.

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <zmq.hpp>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "bus/nats_client.hpp"
#include "config/config.hpp"
#include "support/child_daemon.hpp"
#include "support/nats_cluster.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {

// One reflectd node: its own directory, database and durable consumer of the shard. With
// `forward`, acknowledged ingest is forwarded to JetStream (bus.forward: jetstream, no push
// endpoint); with an empty `consumer` too it is a gateway that consumes nothing.
class Replica {
 public:
  // With `jobs_on_demand`, the node's jobs run when the test asks ({"cmd":"run"}); else none.
  Replica(const std::string& consumer, const std::vector<std::string>& servers,
          bool forward = false, const std::string& extra_yaml = "", bool jobs_on_demand = false) {
    std::string urls;
    for (const auto& url : servers) urls += (urls.empty() ? "\"" : ", \"") + url + "\"";
    ChildOptions options;
    options.bus_extra = "  jetstream:\n    servers: [" + urls +
                        "]\n    stream: SHARD\n    consumer: \"" + consumer +
                        "\"\n    ack_wait_s: 2\n    batch: 20\n    forward_timeout_ms: 1000\n";
    if (forward) options.bus_extra += "  forward: jetstream\n";
    options.extra = std::string(jobs_on_demand ? kJobsOnDemandYaml : kNoJobsYaml) + extra_yaml;
    options.log_level = "info";  // the inlet logs where it resumes
    config_ = dir_.file("reflectd.yaml");
    std::string yaml = child_config(dir_, db(), options);
    if (forward) {
      const std::string push = "  push: [\"" + ipc_endpoint(dir_, "p") + "\"]\n";
      yaml.replace(yaml.find(push), push.size(), "  push: []\n");
    }
    write_text_file(config_, yaml);
  }

  std::string db() const { return dir_.file("events.db"); }
  std::string control() const { return ipc_endpoint(dir_, "c"); }
  std::string ingest() const { return ipc_endpoint(dir_, "i"); }
  std::string config() const { return config_; }
  std::string file(const std::string& name) const { return dir_.file(name); }

  void start(zmq::context_t& context) {
    process_ =
        std::make_unique<ChildProcess>(std::vector<std::string>{REFLECTD_BIN, "--config", config_},
                                       SpawnOptions{"", "", dir_.file("stderr.log")});
    REQUIRE(wait_ready(context, control(), std::chrono::seconds(15)));
  }
  void signal(int number) { process_->send_signal(number); }
  void kill() {
    process_->send_signal(SIGKILL);
    process_->wait_for(std::chrono::seconds(10));
  }
  // SIGTERM, and true for a clean exit; otherwise the test output shows the node's log.
  bool stopped_cleanly() {
    const int status = stop();
    if (status != 0) UNSCOPED_INFO("exit status " << status << ", log:\n" << log());
    return status == 0;
  }

  // SIGTERM and the exit status (0 = clean).
  int stop() {
    process_->send_signal(SIGTERM);
    const auto status = process_->wait_for(std::chrono::seconds(30));
    return status ? status->code : -1;
  }

  std::int64_t count(const std::string& sql) const {
    try {
      SQLite::Database database(db(), SQLite::OPEN_READONLY);
      database.setBusyTimeout(1000);
      return database.execAndGet(sql).getInt64();
    } catch (const SQLite::Exception&) {
      return -1;  // not created yet
    }
  }
  std::int64_t events() const { return count("SELECT count(*) FROM events"); }
  std::string log() const { return read_text_file(dir_.file("stderr.log")); }

 private:
  TempDir dir_;
  std::string config_;
  std::unique_ptr<ChildProcess> process_;
};

// Publishes `payload` on `subject` through JetStream and waits for its PubAck.
inline void publish_raw(const NatsCluster& cluster, const std::string& subject,
                        const std::string& payload, const std::string& id) {
  config::JetStreamConfig config;
  config.servers = cluster.urls();
  const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 2000);
  const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 5000);
  jsPubOptions options;
  jsPubOptions_Init(&options);
  options.MsgId = id.c_str();
  jsPubAck* ack = nullptr;
  REQUIRE(js_Publish(&ack, js.get(), subject.c_str(), payload.data(),
                     static_cast<int>(payload.size()), &options, nullptr) == NATS_OK);
  jsPubAck_Destroy(ack);
}

}  // namespace reflectd::test
