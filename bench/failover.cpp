// bench_failover: how long a reflectd replica stops storing when the leader of its stream is
// lost (docs/CLUSTER.md, "Failure modes").
//
// Usage
//   ninja -C build bench_failover
//   build/bench/bench_failover                 # 5 trials, 50 events/s
//   build/bench/bench_failover --trials 10 --rate 100 --show-log
//
// What it runs: three nats-server processes clustered on free loopback ports
// (tests/support/nats_cluster.hpp), a stream of 3 replicas, and one reflectd replica consuming
// it as a child process (tests/support/child_daemon.hpp; its jobs off, bus.jetstream at its
// defaults). A publisher thread publishes one event per message at --rate, each with its id as
// Nats-Msg-Id, resending the same message until it gets a PubAck. Each trial:
//   1. waits until the stream has a leader and both followers are current, and the replica
//      has stored what was published;
//   2. keeps publishing for --settle-s: the baseline is the time from an event's first
//      publish attempt to its storage on the replica, for the events of that window;
//   3. asks $JS.API.STREAM.INFO.<stream> which server leads the stream (cluster.leader) and
//      SIGKILLs it (t_kill);
//   4. asks STREAM.INFO through each survivor every 10 ms until one names a new leader
//      (t_elect: when that answer arrived);
//   5. waits for the replica to store the first event whose first publish attempt came after
//      t_kill, and reads when it stored it;
//   6. restarts the killed server.
// An event's storage time is its `received` field as the replica's `get` command returns it:
// the replica's clock (the same host's) when its inlet took the message from a pull; the
// commit follows within the writer's group commit (milliseconds, part of the baseline too).
// Printed per trial: the election time after the kill, the resume time after the election,
// and when the publisher got that event's PubAck (the replica cannot store it earlier); then
// the median and max of each over the trials, and the baseline's median and max. Finally
// every event published is read back: the run fails (exit 1) when one is missing or the
// replica's stored count is not the number published (nothing lost, nothing stored twice).

#include <nats/nats.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bus/nats_client.hpp"
#include "common/guarded_main.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "support/child_daemon.hpp"
#include "support/nats_cluster.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace reflectd {
namespace {

using namespace std::chrono_literals;
using test::NatsCluster;

constexpr const char* kStream = "FAILOVER";
constexpr const char* kNamespace = "failover";
constexpr std::size_t kGetBatch = 100;  // recall/read_back.hpp kMaxGetIds

std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }

std::string event_id(std::size_t i) { return "failover:" + std::to_string(i); }

// One event published: when its first attempt started and when its PubAck came (0: not yet).
struct Sent {
  std::int64_t first_attempt_us = 0;
  std::int64_t acked_us = 0;
};

// Publishes event 0, 1, 2, ... at `rate` a second on its own thread, one at a time, each
// resent with the same Nats-Msg-Id every 50 ms (500 ms for a PubAck) until acknowledged. An
// event late because of a failover is followed by the ones due meanwhile at once.
class Publisher {
 public:
  Publisher(std::vector<std::string> urls, double rate) : urls_(std::move(urls)), rate_(rate) {}
  ~Publisher() { stop(); }
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  void start() {
    thread_ = std::thread([this] { run(); });
  }
  // Stops after the event being published is acknowledged.
  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // The first event whose first attempt started at or after `us`, once acknowledged.
  std::optional<std::size_t> first_acked_after(std::int64_t us) const {
    const std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < sent_.size(); ++i) {
      if (sent_[i].first_attempt_us >= us) {
        return sent_[i].acked_us > 0 ? std::optional<std::size_t>(i) : std::nullopt;
      }
    }
    return std::nullopt;
  }
  Sent sent(std::size_t i) const {
    const std::lock_guard lock(mutex_);
    return sent_.at(i);
  }
  // Events acknowledged so far (they are acknowledged in order).
  std::size_t acked() const {
    const std::lock_guard lock(mutex_);
    return !sent_.empty() && sent_.back().acked_us == 0 ? sent_.size() - 1 : sent_.size();
  }

 private:
  void run() {
    config::JetStreamConfig config;
    config.servers = urls_;
    const bus::NatsConnectionPtr connection =
        bus::nats_connect(config, "bench_failover publisher", 2000);
    const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), 500);
    const auto interval = std::chrono::microseconds(static_cast<std::int64_t>(1e6 / rate_));
    auto next = std::chrono::steady_clock::now();
    const std::string subject = bus::event_subject(kNamespace);
    for (std::size_t i = 0; !stopping_; ++i) {
      std::this_thread::sleep_until(next);
      next += interval;
      const std::string id = event_id(i);
      const std::string payload =
          nlohmann::json{{"id", id},
                         {"kind", "prompt"},
                         {"namespace", kNamespace},
                         {"agent_id", "bench"},
                         {"content", "failover benchmark event " + std::to_string(i)},
                         {"timestamp", format_rfc3339_us(wall_us())}}
              .dump();
      {
        const std::lock_guard lock(mutex_);
        sent_.push_back({wall_us(), 0});
      }
      jsPubOptions options;
      jsPubOptions_Init(&options);
      options.MsgId = id.c_str();
      for (;;) {
        jsPubAck* ack = nullptr;
        const natsStatus status = js_Publish(&ack, js.get(), subject.c_str(), payload.data(),
                                             static_cast<int>(payload.size()), &options, nullptr);
        jsPubAck_Destroy(ack);
        if (status == NATS_OK) break;
        std::this_thread::sleep_for(50ms);
      }
      const std::lock_guard lock(mutex_);
      sent_.back().acked_us = wall_us();
    }
  }

  const std::vector<std::string> urls_;
  const double rate_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::vector<Sent> sent_;
  std::thread thread_;
};

// A connection to one server of the cluster only, for JetStream API requests through it.
class ServerLink {
 public:
  explicit ServerLink(const std::string& url) {
    config::JetStreamConfig config;
    config.servers = {url};
    connection_ = bus::nats_connect(config, "bench_failover info", 2000);
  }
  // $JS.API.STREAM.INFO.<stream> through this server; null JSON without an answer within
  // `timeout_ms` or with an error answer.
  nlohmann::json stream_info(int timeout_ms) const {
    natsMsg* reply = nullptr;
    const std::string subject = std::string("$JS.API.STREAM.INFO.") + kStream;
    if (natsConnection_RequestString(&reply, connection_.get(), subject.c_str(), "", timeout_ms) !=
        NATS_OK) {
      return nullptr;
    }
    const bus::NatsMsgPtr owned(reply);
    nlohmann::json info = nlohmann::json::parse(
        natsMsg_GetData(reply), natsMsg_GetData(reply) + natsMsg_GetDataLength(reply), nullptr,
        false);
    if (info.is_discarded() || info.contains("error")) return nullptr;
    return info;
  }

 private:
  bus::NatsConnectionPtr connection_;
};

// The leader that `info` names ("" for none).
std::string leader_of(const nlohmann::json& info) {
  if (!info.is_object() || !info.contains("cluster")) return "";
  return info["cluster"].value("leader", "");
}

// A leader and two followers that are current: the stream survives the loss of any one.
bool stream_healthy(const nlohmann::json& info) {
  if (leader_of(info).empty()) return false;
  const nlohmann::json& replicas = info["cluster"].value("replicas", nlohmann::json::array());
  if (replicas.size() != 2) return false;
  return std::all_of(replicas.begin(), replicas.end(), [](const nlohmann::json& r) {
    return r.value("current", false) && !r.value("offline", false);
  });
}

// The reflectd replica: a child process with its own directory, database and consumer.
class Replica {
 public:
  Replica(const std::vector<std::string>& servers, const std::string& bus_extra) {
    std::string urls;
    for (const auto& url : servers) urls += (urls.empty() ? "\"" : ", \"") + url + "\"";
    test::ChildOptions options;
    options.bus_extra = "  jetstream:\n    servers: [" + urls + "]\n    stream: " + kStream +
                        "\n    consumer: failover-replica\n" + bus_extra;
    options.extra = test::kNoJobsYaml;
    options.log_level = "info";  // the inlet logs each bind and error
    config_ = dir_.file("reflectd.yaml");
    test::write_text_file(config_, test::child_config(dir_, dir_.file("events.db"), options));
  }

  void start() {
    process_ = std::make_unique<test::ChildProcess>(
        std::vector<std::string>{REFLECTD_BIN, "--config", config_},
        test::SpawnOptions{"", "", dir_.file("stderr.log")});
    if (!test::wait_ready(context_, control(), 15s)) {
      throw std::runtime_error("the replica did not answer its control socket within 15 s");
    }
  }
  bool stop() {
    process_->send_signal(SIGTERM);
    const auto status = process_->wait_for(30s);
    return status && status->code == 0;
  }

  nlohmann::json request(const nlohmann::json& body) const {
    return test::control_request(context_, control(), body, 5000);
  }
  // When the replica took each of `ids` (µs, its clock), or 0 for one it does not hold.
  std::vector<std::int64_t> received_us(const std::vector<std::string>& ids) const {
    std::vector<std::int64_t> out(ids.size(), 0);
    for (std::size_t from = 0; from < ids.size(); from += kGetBatch) {
      const std::size_t to = std::min(ids.size(), from + kGetBatch);
      const nlohmann::json reply = request(
          {{"cmd", "get"},
           {"ids", std::vector<std::string>(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                            ids.begin() + static_cast<std::ptrdiff_t>(to))}});
      if (!reply.is_object() || !reply.contains("events")) continue;
      for (const auto& event : reply["events"]) {
        const auto at =
            std::find(ids.begin() + static_cast<std::ptrdiff_t>(from),
                      ids.begin() + static_cast<std::ptrdiff_t>(to), event.value("id", ""));
        const auto us = parse_rfc3339_us(event.value("received", ""));
        if (at != ids.end() && us) out[static_cast<std::size_t>(at - ids.begin())] = *us;
      }
    }
    return out;
  }
  std::string log() const { return test::read_text_file(dir_.file("stderr.log")); }

 private:
  std::string control() const { return test::ipc_endpoint(dir_, "c"); }

  test::TempDir dir_;
  std::string config_;
  mutable zmq::context_t context_{1};
  std::unique_ptr<test::ChildProcess> process_;
};

struct Trial {
  std::string killed;
  double election_s = 0;  // t_elect - t_kill
  double resume_s = 0;    // first post-kill event stored - t_elect
  double acked_s = 0;     // its PubAck - t_elect
};

struct Bench {
  NatsCluster& cluster;
  std::vector<std::unique_ptr<ServerLink>> links;
  Replica& replica;
  Publisher& publisher;
  double settle_s;
  std::vector<double> baseline_s;  // publish to stored, every settled window
};

// Waits until the stream is healthy through every server and the replica holds every event
// acknowledged so far; false after 60 s.
bool wait_settled(Bench& bench) {
  return test::wait_until(
      [&] {
        for (const auto& link : bench.links) {
          if (!stream_healthy(link->stream_info(500))) return false;
        }
        const std::size_t acked = bench.publisher.acked();
        return acked == 0 || bench.replica.received_us({event_id(acked - 1)})[0] > 0;
      },
      60s, 100ms);
}

// Events [from, to), acknowledged in a settled window: their publish-to-stored times added
// once the replica holds the last of them.
void add_baseline(Bench& bench, std::size_t from, std::size_t to) {
  if (to <= from) return;
  test::wait_until([&] { return bench.replica.received_us({event_id(to - 1)})[0] > 0; }, 10s);
  std::vector<std::string> ids;
  for (std::size_t i = from; i < to; ++i) ids.push_back(event_id(i));
  const std::vector<std::int64_t> stored = bench.replica.received_us(ids);
  for (std::size_t i = from; i < to; ++i) {
    if (stored[i - from] > 0) {
      bench.baseline_s.push_back(
          seconds(stored[i - from] - bench.publisher.sent(i).first_attempt_us));
    }
  }
}

// Polls STREAM.INFO through every server but `killed`, each on its own thread every 10 ms
// (a request sent during the election goes unanswered for its 200 ms timeout), until one names
// a leader other than `killed`; the time the first such answer arrived, or nullopt after 60 s.
std::optional<std::int64_t> await_election(const Bench& bench, int killed,
                                           const std::string& killed_name) {
  std::atomic<std::int64_t> elected{0};
  std::vector<std::thread> pollers;
  for (int i = 0; i < bench.cluster.size(); ++i) {
    if (i == killed) continue;
    pollers.emplace_back([&, link = bench.links[static_cast<std::size_t>(i)].get()] {
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (elected.load() == 0 && std::chrono::steady_clock::now() < deadline) {
        const std::string leader = leader_of(link->stream_info(200));
        if (!leader.empty() && leader != killed_name) {
          std::int64_t none = 0;
          elected.compare_exchange_strong(none, wall_us());
          return;
        }
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  for (auto& poller : pollers) poller.join();
  return elected.load() > 0 ? std::optional<std::int64_t>(elected.load()) : std::nullopt;
}

Trial run_trial(Bench& bench, int number) {
  if (!wait_settled(bench)) throw std::runtime_error("the stream or the replica did not settle");
  const std::size_t window_from = bench.publisher.acked();
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(bench.settle_s * 1000)));
  add_baseline(bench, window_from, bench.publisher.acked());

  Trial trial;
  trial.killed = leader_of(bench.links[0]->stream_info(1000));
  const int killed = trial.killed.empty() ? -1 : std::stoi(trial.killed.substr(1)) - 1;
  if (killed < 0 || killed >= bench.cluster.size()) {
    throw std::runtime_error("no stream leader found through STREAM.INFO");
  }
  const std::int64_t kill_us = wall_us();
  bench.cluster.kill(killed);
  const std::optional<std::int64_t> elect_us = await_election(bench, killed, trial.killed);
  if (!elect_us) throw std::runtime_error("no new stream leader within 60 s of the kill");
  trial.election_s = seconds(*elect_us - kill_us);

  std::optional<std::size_t> first;
  std::int64_t stored_us = 0;
  test::wait_until(
      [&] {
        if (!first) first = bench.publisher.first_acked_after(kill_us);
        if (first) stored_us = bench.replica.received_us({event_id(*first)})[0];
        return stored_us > 0;
      },
      120s, 10ms);
  if (stored_us == 0) throw std::runtime_error("the replica stored nothing within 120 s");
  trial.resume_s = seconds(stored_us - *elect_us);
  trial.acked_s = seconds(bench.publisher.sent(*first).acked_us - *elect_us);
  std::printf(
      "trial %d: killed %s (stream leader) at %s; new leader %.3f s after the kill; replica "
      "stored %s %.3f s after the election (its PubAck %.3f s after the election)\n",
      number, trial.killed.c_str(), format_rfc3339_us(kill_us).c_str(), trial.election_s,
      event_id(*first).c_str(), trial.resume_s, trial.acked_s);
  std::fflush(stdout);
  bench.cluster.start(killed);
  return trial;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double maximum(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

// Every published event on the replica, and as many stored as published; prints what differs.
bool check_complete(const Replica& replica, std::size_t published) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < published; ++i) ids.push_back(event_id(i));
  std::vector<std::int64_t> stored;
  const bool all = test::wait_until(
      [&] {
        stored = replica.received_us(ids);
        return std::all_of(stored.begin(), stored.end(), [](std::int64_t us) { return us > 0; });
      },
      60s, 200ms);
  const nlohmann::json status = replica.request({{"cmd", "status"}});
  const auto stored_count = status["jetstream"].value("stored", std::uint64_t{0});
  const nlohmann::json& js = status["jetstream"];
  std::printf(
      "published %zu events; the replica holds %zu of them, stored %llu, duplicates %llu; read "
      "from the stream's leader %llu, delivered again after that %llu\n",
      published,
      static_cast<std::size_t>(
          std::count_if(stored.begin(), stored.end(), [](std::int64_t us) { return us > 0; })),
      static_cast<unsigned long long>(stored_count),
      static_cast<unsigned long long>(js.value("duplicate", 0ULL)),
      static_cast<unsigned long long>(js.value("from_leader", 0ULL)),
      static_cast<unsigned long long>(js.value("already_read", 0ULL)));
  return all && stored_count == published;
}

int run(int argc, char** argv) {
  CLI::App app{"bench_failover: a reflectd replica's stall when its stream's leader is lost"};
  int trials = 5;
  double rate = 50;
  double settle_s = 3;
  bool show_log = false;
  std::string bus_extra;
  app.add_option("--trials", trials, "leader kills, each followed by a restart")
      ->check(CLI::Range(1, 100));
  app.add_option("--rate", rate, "events published a second")->check(CLI::Range(1.0, 1000.0));
  app.add_option("--settle-s", settle_s, "steady publishing before each kill (the baseline)")
      ->check(CLI::Range(0.5, 60.0));
  app.add_option("--bus-extra", bus_extra,
                 "YAML lines appended to the replica's bus.jetstream (each indented 4 spaces)");
  app.add_flag("--show-log", show_log, "print the replica's log at the end");
  CLI11_PARSE(app, argc, argv);

  const test::TempDir dir;
  NatsCluster cluster(dir);
  {
    config::JetStreamConfig config;
    config.servers = cluster.urls();
    const bus::NatsConnectionPtr connection = bus::nats_connect(config, "bench_failover", 2000);
    bus::StreamLayout layout;
    layout.name = kStream;
    layout.namespaces = {kNamespace};
    bus::ensure_stream(bus::jetstream_context(connection.get(), 5000).get(), layout);
  }
  Replica replica(cluster.urls(), bus_extra);
  replica.start();
  Publisher publisher(cluster.urls(), rate);
  publisher.start();
  Bench bench{cluster, {}, replica, publisher, settle_s, {}};
  for (int i = 0; i < cluster.size(); ++i) {
    bench.links.push_back(std::make_unique<ServerLink>(cluster.url(i)));
  }
  std::vector<double> election;
  std::vector<double> resume;
  std::vector<double> acked;
  try {
    for (int t = 1; t <= trials; ++t) {
      const Trial trial = run_trial(bench, t);
      election.push_back(trial.election_s);
      resume.push_back(trial.resume_s);
      acked.push_back(trial.acked_s);
    }
    if (!wait_settled(bench)) throw std::runtime_error("the cluster did not settle after trials");
  } catch (const std::exception&) {
    if (show_log) std::printf("replica log:\n%s", replica.log().c_str());
    throw;
  }
  publisher.stop();
  std::printf(
      "over %d trials (median / max, s): election after kill %.3f / %.3f; replica "
      "resumed after election %.3f / %.3f; PubAck after election %.3f / %.3f\n",
      trials, median(election), maximum(election), median(resume), maximum(resume), median(acked),
      maximum(acked));
  std::printf(
      "baseline, publish to stored without a kill (median / max over %zu events, s): "
      "%.3f / %.3f\n",
      bench.baseline_s.size(), median(bench.baseline_s), maximum(bench.baseline_s));
  const bool complete = check_complete(replica, publisher.acked());
  const bool clean = replica.stop();
  if (show_log) std::printf("replica log:\n%s", replica.log().c_str());
  if (!clean) std::printf("FAIL: the replica did not exit cleanly\n");
  if (!complete) std::printf("FAIL: an event published is missing or was stored twice\n");
  return complete && clean ? 0 : 1;
}

}  // namespace
}  // namespace reflectd

int main(int argc, char** argv) {
  return reflectd::guarded_main("bench_failover", reflectd::run, argc, argv);
}
