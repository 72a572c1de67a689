#pragma once
// One reflectd node of a JetStream shard for the cluster tests: a child daemon with its own
// directory, database and durable consumer, and publishing through JetStream with a PubAck.
//
// Error policy: Catch2 REQUIREs (start() fails the test when the node is not ready in 15 s).
// Thread-safety: one thread.

#include <SQLiteCpp/SQLiteCpp.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
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

/// What stream `stream` holds, read from its leader by sequence (STREAM.MSG.GET) from 1 through
/// `last`: how many sequences hold an event id already seen at a lower sequence, the first few
/// of them ("seq N repeats id X of seq M"), and the sequences it could not read. A failure
/// message of a cluster test prints it, to tell an event the stream lost from one a replica
/// did not store.
inline std::string stream_account(const NatsCluster& cluster, const std::string& stream,
                                  std::uint64_t last) {
  config::JetStreamConfig config;
  config.servers = cluster.urls();
  const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 2000);
  const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 5000);
  std::map<std::string, std::uint64_t> first_seq;
  std::uint64_t repeats = 0;
  std::string shown;
  std::string unreadable;
  for (std::uint64_t seq = 1; seq <= last; ++seq) {
    natsMsg* msg = nullptr;
    if (js_GetMsg(&msg, js.get(), stream.c_str(), seq, nullptr, nullptr) != NATS_OK) {
      natsMsg_Destroy(msg);
      unreadable += " " + std::to_string(seq);
      continue;
    }
    const nlohmann::json event = nlohmann::json::parse(
        std::string_view(natsMsg_GetData(msg),
                         static_cast<std::size_t>(natsMsg_GetDataLength(msg))),
        nullptr, false);
    natsMsg_Destroy(msg);
    const std::string id = event.is_object() ? event.value("id", "") : "";
    if (id.empty()) continue;
    const auto [at, inserted] = first_seq.emplace(id, seq);
    if (inserted) continue;
    if (++repeats <= 5) {
      shown += "; seq " + std::to_string(seq) + " repeats id " + id + " of seq " +
               std::to_string(at->second);
    }
  }
  return "stream " + stream + " through " + std::to_string(last) + ": " +
         std::to_string(first_seq.size()) + " distinct event ids, " + std::to_string(repeats) +
         " repeated" + shown + (unreadable.empty() ? "" : "; unreadable:" + unreadable);
}

// A control request over NATS request-reply through `urls`; null JSON when nobody answers
// within 5 s (or the server refuses the subject to that user).
inline nlohmann::json nats_request_via(const std::vector<std::string>& urls,
                                       const std::string& subject, const nlohmann::json& request) {
  config::JetStreamConfig config;
  config.servers = urls;
  const bus::NatsConnectionPtr connection = bus::nats_connect(config, "test", 2000);
  const std::string body = request.dump();
  natsMsg* reply = nullptr;
  if (natsConnection_Request(&reply, connection.get(), subject.c_str(), body.data(),
                             static_cast<int>(body.size()), 5000) != NATS_OK) {
    return nullptr;
  }
  const bus::NatsMsgPtr owned(reply);
  return nlohmann::json::parse(natsMsg_GetData(reply),
                               natsMsg_GetData(reply) + natsMsg_GetDataLength(reply));
}

inline nlohmann::json nats_request(const NatsCluster& cluster, const std::string& subject,
                                   const nlohmann::json& request) {
  return nats_request_via(cluster.urls(), subject, request);
}

inline std::vector<std::string> nats_args(const NatsCluster& cluster) {
  std::vector<std::string> args;
  for (const auto& url : cluster.urls()) {
    args.emplace_back("--nats");
    args.push_back(url);
  }
  return args;
}

// `reflectctl jetstream init --stream SHARD --replicas <replicas>` through `cluster`.
inline void init_shard(const NatsCluster& cluster, int replicas) {
  std::vector<std::string> init = {
      REFLECTCTL_BIN,          "jetstream", "init", "--stream", "SHARD", "--replicas",
      std::to_string(replicas)};
  for (const auto& arg : nats_args(cluster)) init.push_back(arg);
  REQUIRE(run_process(init, std::chrono::seconds(30)).status.code == 0);
}

// Publishes event "<prefix>-<n>" of namespace team-a ("turn <n> of <topic>") with its id as
// Nats-Msg-Id, and waits for its PubAck.
inline void publish_turn(const NatsCluster& cluster, const std::string& prefix, int n,
                         const std::string& topic) {
  const std::string id = prefix + "-" + std::to_string(n);
  publish_raw(cluster, "reflectd.events.team-a",
              nlohmann::json{{"id", id},
                             {"kind", "conversation"},
                             {"namespace", "team-a"},
                             {"content", "turn " + std::to_string(n) + " of " + topic},
                             {"timestamp", "2026-11-20T10:00:00Z"}}
                  .dump(),
              id);
}

}  // namespace reflectd::test
