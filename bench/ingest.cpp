// bench_ingest: how close the daemon's ingest path comes to SQLite's own insert rate, its
// acknowledgement latency, ingest while a job runs, the search-index lag and the daemon's RSS.
//
// Usage
//   ninja -C build bench_ingest
//   build/bench/bench_ingest                      # every mode, 1,000,000 events, table on stdout
//   build/bench/bench_ingest --events 200000 --json
//   build/bench/bench_ingest --modes baseline,push --events 1000000
//   build/bench/bench_ingest --dir /var/tmp       # put the databases on another disk
//   ctest --test-dir build -R bench_ingest_smoke  # small sizes: proves it still runs
//
// Modes, each into a fresh database in a temporary directory (removed afterwards); ratios are
// to the first mode run (baseline by default):
//   baseline      the same rows inserted straight into the same schema as migrated
//                 (store::open_database + store::EventStore::insert, one prepared statement) in
//                 transactions of store.commit_max_events, with the configured synchronous mode
//                 (FULL by default) and page cache (store.cache_mib). Rows are decoded beforehand
//                 with bus::EventDecoder from the very payloads the daemon receives; only insert +
//                 commit time is counted.
//   baseline-fts  the same, also adding each transaction's rows to the full-text index in it
//                 (what an insert trigger would do): the price of indexing on the write path.
//   push          a daemon (built-in defaults, ipc:// endpoints, reflection jobs off) fed by a
//                 PUSH socket, --batch events per message; timed until the control socket
//                 reports every event stored (polled every 5 ms: a benchmark may poll). Also
//                 reported: the largest search-index lag seen (events), the time from the last
//                 commit until the index caught up, and the daemon's peak RSS (VmHWM).
//                 baseline, push and ingest also report written_bytes_per_event: what the
//                 inserting process passed to write system calls while timed (WAL frames,
//                 checkpoint copies; for the daemon also its replies), per event: the schema's
//                 write amplification, which hardly depends on the machine's load.
//   ingest        the same daemon fed by a DEALER keeping --window messages in flight; timed
//                 until every message is acknowledged (acknowledgements follow commits and,
//                 with store.commit_pipelining, the sync stage's fsync of the WAL; compare
//                 with `--daemon-config` setting `store.commit_pipelining: false`).
//   latency       one DEALER, one event per message, paced at --rate for --latency-events;
//                 percentiles of send-to-acknowledgement time (µs), and their ratios to the
//                 percentiles of 3,000 4 KiB fdatasync calls measured just before in the same
//                 directory. Its events/s is the pace.
//   latency-jobs  the same after --preload events pushed, with the reflection jobs on their
//                 default schedule (or --daemon-config's): they run during the measurement
//                 (job_runs_overlapping, job_seconds_overlapping say how much).
//   under-job     --preload events pushed, then --under-job-events ingested (windowed) with the
//                 daemon idle, then --job (cluster by default: the heaviest) started over the
//                 control socket and as many ingested while it runs; ratio_to_idle compares the
//                 two rates, job_ran_throughout says whether the run covered the whole second
//                 measurement.
//   under-recall  the same with `recall` instead of a job: --preload events pushed, then
//                 --under-job-events ingested idle, then as many while another thread asks
//                 `recall` --recall-qps times a second (each a libzmq commit subject, in order,
//                 in namespace libzmq: questions as broad as an agent's). ratio_to_idle compares
//                 the two ingest rates; the recalls' latency under load is reported too.
//   under-forget  --preload events pushed plus --forget-events more (namespace libzmq, agent
//                 bench-forget), every job run once (so that there is derived state to clear),
//                 --under-job-events ingested idle, then a hard forget of the --forget-events
//                 ({"mode":"delete"}: the chunked clear, the delete, the index optimization
//                 and, with --forget-wait true, the rebuild of namespace libzmq) and as many
//                 ingested while it runs; reports the forget's time to its reply, its own
//                 run's time, the writer's longest wait for the jobs and ratio_to_idle.
//   jetstream     a nats-server (Debian's, one server, JetStream on file storage in the
//                 temporary directory) and a stream of 1 replica; the events published into it
//                 one per message on reflectd.events.<namespace> with Nats-Msg-Id = id (async,
//                 --window in flight; publish_events_per_s), then a daemon with bus.jetstream
//                 started and timed until every event is stored: its JetStream inlet's rate
//                 (pull, commit, fsync, ack). Not in the default modes (it needs nats-server).
//   jetstream-shards  the same with two shards on two nodes: event n in namespace
//                 bench-<n % 2> (its JSON's namespace rewritten), streams SHARD_0 and SHARD_1,
//                 one node consuming each, both started at once and timed until both are done.
//   forward       windowed ingest (as `ingest`) into a gateway with bus.forward: jetstream
//                 (consumer "": it stores nothing), each message answered after JetStream's
//                 PubAck: the forwarder's acknowledged rate.
// The daemon runs in a child process forked before this one starts any thread, so its peak
// RSS is its own; it stops with SIGTERM like reflectd and must exit 0.
//
// Events: the real streams in --data (libzmq-commits.jsonl, then swe-agent-trajectories.jsonl)
// cycled in file order, each given the unique id "bench:<n>", so every run sends
// byte-identical input. The header line gives the mean size of one event's JSON as sent.
// --random-ids gives event n the id "bench:" + 16 hex digits of splitmix64(n) instead (still
// unique: splitmix64 is a bijection): ids that land anywhere in the uid index, as hashes
// (git commits, derived SHA-256 ids) do, where "bench:<n>" is nearly sequential.
//
// Exit status: 0 when every mode stored all its events; 1 otherwise (or on any error).

#include <SQLiteCpp/SQLiteCpp.h>
#include <simdjson.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bus/event_decoder.hpp"
#include "bus/nats_client.hpp"
#include "common/clock.hpp"
#include "common/free_tcp_port.hpp"
#include "common/guarded_main.hpp"
#include "common/heap.hpp"
#include "config/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/settings.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "store/sqlite_library.hpp"

namespace {

namespace fs = std::filesystem;

// Bytes a process has passed to write system calls so far (`wchar` of /proc/PID/io): for the
// daemon, the WAL frames, the checkpoints' copies into the database and its replies. Unlike a
// rate it hardly depends on the machine's load, so it shows the write amplification of the
// schema. 0 when unavailable.
std::uint64_t written_bytes(const std::string& pid) {
  std::ifstream io("/proc/" + pid + "/io");
  std::string line;
  while (std::getline(io, line)) {
    if (line.rfind("wchar:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}
using namespace reflectd;
using Seconds = std::chrono::duration<double>;

#ifndef REFLECTD_DATA_DIR
#define REFLECTD_DATA_DIR "."
#endif

constexpr std::array<const char*, 2> kDataFiles = {"libzmq-commits.jsonl",
                                                   "swe-agent-trajectories.jsonl"};
constexpr auto kPollInterval = std::chrono::milliseconds(5);
// A daemon that makes no progress this long is stuck (or lost events): fail instead of hanging.
constexpr auto kStallTimeout = std::chrono::seconds(60);

struct Options {
  std::uint64_t events = 1'000'000;
  std::uint64_t batch = 100;
  std::uint64_t window = 32;
  std::uint64_t latency_events = 10'000;
  std::uint64_t rate = 1000;
  std::uint64_t preload = 200'000;
  std::uint64_t under_job_events = 100'000;
  std::string job = "cluster";
  std::uint64_t recall_qps = 100;
  std::uint64_t forget_events = 10'000;
  bool forget_wait =
      true;  ///< under-forget: the reply (and the measured time) includes the rebuild.
  std::vector<std::string> modes{"baseline", "baseline-fts", "push",         "ingest",
                                 "latency",  "under-job",    "under-recall", "under-forget"};
  std::string data_dir = REFLECTD_DATA_DIR;
  std::string dir;
  std::string daemon_config;  ///< YAML applied over the defaults (daemon modes and baselines).
  bool json = false;
  bool random_ids = false;
  config::Config base = config::defaults();  ///< The defaults, or --daemon-config loaded.
};

struct ModeResult {
  std::string mode;
  std::uint64_t stored = 0;
  double seconds = 0;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  std::uint64_t expected = 0;         ///< Events the mode must store; 0 = --events.
  std::uint64_t stored_for_rate = 0;  ///< Events the rate is computed from; 0 = stored.
  bool paced = false;                 ///< The rate is the publisher's pace, not a capacity.

  double rate() const {
    return static_cast<double>(stored_for_rate ? stored_for_rate : stored) / seconds;
  }
};

// The input stream: event n is template n % size with "id" set to "bench:<n>". A template is
// the event's compact JSON split around the id's value, so building a message is appending.
class Corpus {
 public:
  Corpus(const fs::path& data_dir, bool random_ids) : random_ids_(random_ids) {
    const std::string marker = "@@reflectd-bench-id@@";
    for (const char* name : kDataFiles) {
      std::ifstream in(data_dir / name);
      if (!in) throw std::runtime_error("cannot read " + (data_dir / name).string());
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto event = nlohmann::ordered_json::parse(line);
        event["id"] = marker;
        namespaces_.push_back(event.value("namespace", ""));
        const std::string text = event.dump();
        const auto at = text.find('"' + marker + '"');
        templates_.push_back({text.substr(0, at + 1), text.substr(at + 1 + marker.size())});
      }
    }
    if (templates_.empty()) throw std::runtime_error("no events in " + data_dir.string());
  }

  void append_event(std::string& out, std::uint64_t n) const {
    const Template& t = templates_[n % templates_.size()];
    out += t.prefix;
    out += "bench:";
    if (random_ids_) {
      // splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit integers.
      std::uint64_t z = n + 0x9e3779b97f4a7c15ULL;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      z ^= z >> 31;
      std::array<char, 17> hex{};
      std::snprintf(hex.data(), hex.size(), "%016llx", static_cast<unsigned long long>(z));
      out += hex.data();
    } else {
      out += std::to_string(n);
    }
    out += t.suffix;
  }

  /// A batch message: a JSON array of events [first, first + count).
  std::string message(std::uint64_t first, std::uint64_t count) const {
    std::string out = "[";
    for (std::uint64_t n = first; n < first + count; ++n) {
      if (n != first) out += ',';
      append_event(out, n);
    }
    out += ']';
    return out;
  }

  double mean_event_bytes(std::uint64_t events) const {
    std::uint64_t total = 0;
    std::string scratch;
    for (std::uint64_t n = 0; n < events; ++n) {
      scratch.clear();
      append_event(scratch, n);
      total += scratch.size();
    }
    return events ? static_cast<double>(total) / static_cast<double>(events) : 0.0;
  }

  std::size_t size() const { return templates_.size(); }

  /// The namespace of event n.
  const std::string& ns(std::uint64_t n) const { return namespaces_[n % namespaces_.size()]; }

 private:
  struct Template {
    std::string prefix;
    std::string suffix;
  };
  std::vector<Template> templates_;
  std::vector<std::string> namespaces_;
  bool random_ids_ = false;
};

std::uint64_t count_rows(const std::string& path, const config::Config& cfg) {
  auto db = store::open_database({path, cfg.store.synchronous, cfg.store.busy_timeout_ms},
                                 store::Access::kWriter);
  return static_cast<std::uint64_t>(db.execAndGet("SELECT count(*) FROM events").getInt64());
}

void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
}

// `with_fts`: the full-text index is built in the same transactions (what the insert trigger
// used to do), for comparison with indexing in the background.
ModeResult run_baseline(const Corpus& corpus, const Options& options, const config::Config& cfg,
                        const fs::path& dir, bool with_fts) {
  const std::string path = (dir / (with_fts ? "baseline-fts.db" : "baseline.db")).string();
  SystemClock clock;
  bus::EventDecoder decoder(clock);
  ModeResult result{with_fts ? "baseline-fts" : "baseline", 0, 0.0};
  {
    auto db = store::open_database({path, cfg.store.synchronous, cfg.store.busy_timeout_ms},
                                   store::Access::kWriter);
    // The writer's page cache too: the same storage settings as the daemon, only the daemon taken
    // away.
    db.exec("PRAGMA cache_size = " + std::to_string(-cfg.store.cache_mib * 1024));
    // As the writer keeps them: each namespace's newest event time once per transaction.
    store::EventStore event_store(db, store::NamespaceTimes::kPerTransaction);
    store::FtsIndex fts(db);
    const store::DecayProfiles profiles = daemon::decay_profiles(cfg.decay);
    const auto chunk = static_cast<std::uint64_t>(cfg.store.commit_max_events);
    std::vector<store::EventRecord> rows;
    rows.reserve(chunk);
    Seconds elapsed{0};
    std::uint64_t written = 0;
    for (std::uint64_t first = 0; first < options.events; first += chunk) {
      const std::uint64_t last = std::min(first + chunk, options.events);
      rows.clear();
      for (std::uint64_t b = first; b < last; b += options.batch) {
        const std::string payload = corpus.message(b, std::min(options.batch, last - b));
        auto decoded = decoder.decode(payload, static_cast<std::size_t>(cfg.bus.max_message_bytes));
        for (auto& entry : decoded.events) {
          if (entry.event) rows.push_back(std::move(*entry.event));
        }
      }
      const std::uint64_t written_before = written_bytes("self");
      const auto start = std::chrono::steady_clock::now();
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (const auto& row : rows) {
        if (!event_store.insert(row, store::resolve_lifecycle(row, profiles)).duplicate) {
          ++result.stored;
        }
      }
      event_store.write_namespace_times();
      if (with_fts) fts.index_pending(static_cast<std::int64_t>(rows.size()));
      transaction.commit();
      elapsed += std::chrono::steady_clock::now() - start;
      written += written_bytes("self") - written_before;
    }
    result.seconds = elapsed.count();
    result.extra["written_bytes_per_event"] =
        static_cast<double>(written) /
        static_cast<double>(std::max<std::uint64_t>(result.stored, 1));
  }
  if (count_rows(path, cfg) != result.stored)
    throw std::runtime_error("baseline: row count differs");
  remove_database(path);
  return result;
}

// The daemon under test, in a child process forked before this process starts any thread or
// ZeroMQ context, so that its peak RSS (VmHWM) is the daemon's alone and not the publisher's
// buffers. It runs the same Daemon library as reflectd; SIGTERM stops it cleanly.
class ForkedDaemon {
 public:
  explicit ForkedDaemon(const config::Config& cfg) {
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // A bench that dies (an exception, a sanitizer abort) takes its daemon with it, so that
      // CTest sees the failure at once instead of waiting on the daemon's copy of its pipe.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int status = 1;
      keep_freed_heap_mapped();  // as reflectd's main() does
      try {
        SystemClock clock;
        daemon::DaemonOptions options;
        options.handle_signals = true;
        daemon::Daemon daemon(cfg, options, clock);
        daemon.start();
        status = daemon.run();
      } catch (const std::exception& error) {
        std::cerr << "bench_ingest: daemon: " << error.what() << '\n';
      }
      std::fflush(nullptr);
      ::_exit(status);
    }
  }
  ~ForkedDaemon() { stop(); }
  ForkedDaemon(const ForkedDaemon&) = delete;
  ForkedDaemon& operator=(const ForkedDaemon&) = delete;

  /// Peak resident set of the daemon so far, in bytes (VmHWM).
  std::uint64_t peak_rss_bytes() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
    }
    return 0;
  }

  /// Bytes the daemon has passed to write system calls so far (see written_bytes()).
  std::uint64_t written_bytes() const { return ::written_bytes(std::to_string(pid_)); }

  /// SIGTERM, then waits; true when it exited 0.
  bool stop() {
    if (pid_ <= 0) return exit_ok_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_ok_ = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return exit_ok_;
  }

 private:
  pid_t pid_ = -1;
  bool exit_ok_ = false;
};

// Control requests, like reflectctl sends them.
class ControlClient {
 public:
  ControlClient(zmq::context_t& context, const std::string& endpoint)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::rcvtimeo, 500);
    socket_.connect(endpoint);
  }

  nlohmann::json request(const nlohmann::json& body) {
    socket_.send(zmq::buffer(body.dump()), zmq::send_flags::none);
    zmq::message_t reply;
    const auto deadline = std::chrono::steady_clock::now() + kStallTimeout;
    while (!socket_.recv(reply)) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error("control: no reply to " + body.dump() + " within 60 s");
      }
    }
    return nlohmann::json::parse(reply.to_string_view());
  }

  /// Waits until the (forked) daemon answers. One request only: a DEALER queues it until the
  /// daemon binds, and a second one sent after a slow start (a sanitizer build) would leave an
  /// extra reply queued, so that every later request read the previous one's reply.
  void wait_ready() { (void)status(); }

  nlohmann::json status() { return request({{"cmd", "status"}}); }

  /// stored + rejected events + dead letters: everything the writer has finished with.
  static std::uint64_t finished_events(const nlohmann::json& status) {
    const auto& events = status.at("events");
    return events.at("stored").get<std::uint64_t>() + events.at("rejected").get<std::uint64_t>() +
           status.at("dead_letters").get<std::uint64_t>();
  }
  static std::int64_t index_lag(const nlohmann::json& status) {
    return status.at("search_index").at("lag_events").get<std::int64_t>();
  }

 private:
  zmq::socket_t socket_;
};

void disable_jobs(config::Config& cfg) {
  // The reflection jobs compete for the same two cores; the under-job mode and bench_jobs
  // measure them, the other modes measure ingest alone.
  for (config::JobConfig* job : {&cfg.jobs.consolidate, &cfg.jobs.decay, &cfg.jobs.cluster,
                                 &cfg.jobs.importance, &cfg.jobs.medallion, &cfg.jobs.facts}) {
    job->enabled = false;
  }
}

config::Config daemon_config(const Options& options, const fs::path& dir, const std::string& mode) {
  config::Config cfg = options.base;
  cfg.log.level = "warn";
  const auto ipc = [&](const char* name) {
    return "ipc://" + (dir / (mode + "-" + name)).string();
  };
  cfg.bus.ingest = {ipc("ingest.sock")};
  cfg.bus.push = {ipc("push.sock")};
  cfg.bus.notify = {ipc("notify.sock")};
  cfg.bus.control = {ipc("control.sock")};
  cfg.store.path = (dir / (mode + ".db")).string();
  cfg.daemon.metrics_listen = "127.0.0.1:0";  // served as by default, on a port of its own
  disable_jobs(cfg);
  return cfg;
}

// Sends [first, first + count) as fast as PUSH takes it, --batch events per message.
void push_events(zmq::socket_t& push, const Corpus& corpus, std::uint64_t first,
                 std::uint64_t count, std::uint64_t batch) {
  for (std::uint64_t n = first; n < first + count; n += batch) {
    push.send(zmq::buffer(corpus.message(n, std::min(batch, first + count - n))),
              zmq::send_flags::none);
  }
}

// Polls status until `target` events are finished (a benchmark may poll); tracks the FTS lag.
struct PushProgress {
  std::int64_t max_lag = 0;
};
void await_finished(ControlClient& control, std::uint64_t target, PushProgress* progress,
                    const char* mode) {
  std::uint64_t finished = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (finished < target) {
    const auto status = control.status();
    if (progress) progress->max_lag = std::max(progress->max_lag, ControlClient::index_lag(status));
    const std::uint64_t now_finished = ControlClient::finished_events(status);
    const auto now = std::chrono::steady_clock::now();
    if (now_finished != finished) {
      finished = now_finished;
      last_progress = now;
    } else if (now - last_progress > kStallTimeout) {
      throw std::runtime_error(std::string(mode) + ": no progress for 60 s at " +
                               std::to_string(finished) + " of " + std::to_string(target) +
                               " events");
    }
    if (finished < target) std::this_thread::sleep_for(kPollInterval);
  }
}

ModeResult run_push(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const config::Config cfg = daemon_config(options, dir, "push");
  ModeResult result{"push", 0, 0.0};
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();  // start timing from a serving daemon
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.connect(cfg.bus.push.front());

    const std::uint64_t written_before = daemon.written_bytes();
    const auto start = std::chrono::steady_clock::now();
    push_events(push, corpus, 0, options.events, options.batch);
    PushProgress progress;
    await_finished(control, options.events, &progress, "push");
    const auto stored = std::chrono::steady_clock::now();
    result.seconds = Seconds(stored - start).count();
    // Until every event is stored; the search index's catch-up below is not counted.
    result.extra["written_bytes_per_event"] =
        static_cast<double>(daemon.written_bytes() - written_before) /
        static_cast<double>(options.events);
    // Search index: how far behind it was, and how long after the last commit it caught up.
    for (;;) {
      const std::int64_t lag = ControlClient::index_lag(control.status());
      progress.max_lag = std::max(progress.max_lag, lag);
      if (lag == 0) break;
      if (std::chrono::steady_clock::now() - stored > kStallTimeout * 5) {
        throw std::runtime_error("push: search index still " + std::to_string(lag) +
                                 " events behind");
      }
      std::this_thread::sleep_for(kPollInterval);
    }
    result.extra["index_lag_max_events"] = progress.max_lag;
    result.extra["index_catch_up_s"] = Seconds(std::chrono::steady_clock::now() - stored).count();
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (!daemon.stop()) throw std::runtime_error("push: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  remove_database(cfg.store.path);
  return result;
}

// A nats-server child process with JetStream in `dir`, on a free loopback port; killed (and
// reaped) when destroyed.
class NatsServer {
 public:
  /// `name` names its files in `dir` (a store of its own per mode: a stream left by an
  /// earlier mode would answer its ids as duplicates).
  NatsServer(const fs::path& dir, const std::string& name) {
    const char* binary = ::access("/usr/sbin/nats-server", X_OK) == 0 ? "/usr/sbin/nats-server"
                                                                      : "/usr/bin/nats-server";
    port_ = free_tcp_port();
    const std::string conf = (dir / (name + "-nats.conf")).string();
    std::ofstream(conf) << "listen: 127.0.0.1:" << port_ << "\njetstream { store_dir: \""
                        << (dir / (name + "-nats-store")).string() << "\" }\n";
    std::vector<std::string> args = {binary, "-c", conf, "-l",
                                     (dir / (name + "-nats.log")).string()};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, binary, nullptr, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error(std::string("cannot start ") + binary +
                               " (Debian package nats-server)");
    }
  }
  ~NatsServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// Runs `work` in a child process and returns its result. The NATS client work of the
// JetStream modes runs there, so that this process never starts nats.c's threads: a daemon
// forked later (ForkedDaemon) would inherit nats.c's state with locks held by threads that
// do not exist in the child, and could hang in its first NATS call.
double in_child_process(const std::function<double()>& work) {
  std::array<int, 2> fds{};
  if (::pipe(fds.data()) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    int status = 1;
    try {
      const double value = work();
      if (::write(fds[1], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) status = 0;
    } catch (const std::exception& error) {
      std::cerr << "bench_ingest: " << error.what() << '\n';
    }
    std::fflush(nullptr);
    ::_exit(status);
  }
  ::close(fds[1]);
  double value = 0;
  const ssize_t got = ::read(fds[0], &value, sizeof value);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof value) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("the NATS client process failed");
  }
  return value;
}

// A connection to `server`, retried for 10 s while it starts.
bus::NatsConnectionPtr connect_when_up(const config::JetStreamConfig& config) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      return bus::nats_connect(config, "bench_ingest", 1000);
    } catch (const bus::NatsError&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// Event n's JSON with its namespace replaced by `ns` (the templates are compact JSON).
std::string with_namespace(std::string event, const std::string& from, const std::string& ns) {
  const std::string key = R"("namespace":")" + from + "\"";
  const auto at = event.find(key);
  if (at != std::string::npos) event.replace(at, key.size(), R"("namespace":")" + ns + "\"");
  return event;
}

// Creates the streams of `layouts` (replicas 1) and publishes the events into them, one per
// message on reflectd.events.<namespace_of(n)>, Nats-Msg-Id = the event's id, --window x 8 in
// flight; returns the publishing rate (events/s, every PubAck received).
double publish_to_jetstream(const Corpus& corpus, const Options& options,
                            const config::JetStreamConfig& config,
                            const std::vector<bus::StreamLayout>& layouts,
                            const std::function<std::string(std::uint64_t)>& namespace_of) {
  const bus::NatsConnectionPtr connection = connect_when_up(config);
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.PublishAsync.MaxPending = static_cast<int64_t>(options.window) * 8;
  jsCtx* raw = nullptr;
  if (natsConnection_JetStream(&raw, connection.get(), &js_options) != NATS_OK) {
    throw std::runtime_error("jetstream: no JetStream context");
  }
  const bus::JsCtxPtr js(raw);
  for (const auto& layout : layouts) bus::ensure_stream(js.get(), layout);
  const auto start = std::chrono::steady_clock::now();
  std::string payload;
  for (std::uint64_t n = 0; n < options.events; ++n) {
    payload.clear();
    corpus.append_event(payload, n);
    const std::string ns = namespace_of(n);
    if (ns != corpus.ns(n)) payload = with_namespace(payload, corpus.ns(n), ns);
    const std::string subject = bus::event_subject(ns);
    const std::string id = "bench:" + std::to_string(n);
    natsMsg* msg = nullptr;
    natsMsg_Create(&msg, subject.c_str(), nullptr, payload.data(),
                   static_cast<int>(payload.size()));
    natsMsgHeader_Set(msg, "Nats-Msg-Id", id.c_str());
    if (js_PublishMsgAsync(js.get(), &msg, nullptr) != NATS_OK) {
      natsMsg_Destroy(msg);
      throw std::runtime_error("jetstream: publish failed");
    }
  }
  jsPubOptions complete;
  jsPubOptions_Init(&complete);
  complete.MaxWait = 60'000;
  if (js_PublishAsyncComplete(js.get(), &complete) != NATS_OK) {
    throw std::runtime_error("jetstream: PubAcks missing after 60 s");
  }
  return static_cast<double>(options.events) /
         Seconds(std::chrono::steady_clock::now() - start).count();
}

ModeResult run_jetstream(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "jetstream");
  NatsServer server(dir, "jetstream");
  cfg.bus.jetstream.servers = {server.url()};
  cfg.bus.jetstream.stream = "BENCH";
  cfg.bus.jetstream.consumer = "bench";
  ModeResult result{"jetstream", 0, 0.0};
  {
    bus::StreamLayout layout;
    layout.name = "BENCH";
    layout.replicas = 1;
    result.extra["publish_events_per_s"] = in_child_process([&] {
      return publish_to_jetstream(corpus, options, cfg.bus.jetstream, {layout},
                                  [&corpus](std::uint64_t n) { return corpus.ns(n); });
    });
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    const auto start = std::chrono::steady_clock::now();
    await_finished(control, options.events, nullptr, "jetstream");
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (!daemon.stop()) throw std::runtime_error("jetstream: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  remove_database(cfg.store.path);
  return result;
}

// Two shards on two nodes: event n goes to namespace bench-<n % 2> (its JSON's namespace
// rewritten), stream SHARD_<n % 2>; after publishing, both nodes start at once and the time
// runs until both have stored their half.
ModeResult run_jetstream_shards(const Corpus& corpus, const Options& options, const fs::path& dir) {
  NatsServer server(dir, "shards");
  std::vector<config::Config> configs;
  std::vector<bus::StreamLayout> layouts;
  for (int shard = 0; shard < 2; ++shard) {
    config::Config cfg = daemon_config(options, dir, "shard" + std::to_string(shard));
    cfg.bus.jetstream.servers = {server.url()};
    cfg.bus.jetstream.stream = "SHARD_" + std::to_string(shard);
    cfg.bus.jetstream.consumer = "node" + std::to_string(shard);
    configs.push_back(cfg);
    bus::StreamLayout layout;
    layout.name = cfg.bus.jetstream.stream;
    layout.namespaces = {"bench-" + std::to_string(shard)};
    layout.replicas = 1;
    layouts.push_back(layout);
  }
  ModeResult result{"jetstream-shards", 0, 0.0};
  result.extra["publish_events_per_s"] = in_child_process([&] {
    return publish_to_jetstream(corpus, options, configs[0].bus.jetstream, layouts,
                                [](std::uint64_t n) { return "bench-" + std::to_string(n % 2); });
  });
  {
    ForkedDaemon node0(configs[0]);
    ForkedDaemon node1(configs[1]);
    zmq::context_t context(1);
    ControlClient control0(context, configs[0].bus.control.front());
    ControlClient control1(context, configs[1].bus.control.front());
    control0.wait_ready();
    control1.wait_ready();
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t half0 = (options.events + 1) / 2;
    await_finished(control0, half0, nullptr, "jetstream-shards");
    const double first = Seconds(std::chrono::steady_clock::now() - start).count();
    await_finished(control1, options.events - half0, nullptr, "jetstream-shards");
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    result.extra["shard0_done_s"] = first;
    if (!node0.stop() || !node1.stop()) {
      throw std::runtime_error("jetstream-shards: a daemon did not exit cleanly");
    }
  }
  for (const auto& cfg : configs) {
    result.stored += count_rows(cfg.store.path, cfg);
    remove_database(cfg.store.path);
  }
  return result;
}

// Keeps `window` messages in flight on a DEALER until [first, first + count) is acknowledged.
// Like a real publisher it resends, with the same ids, a message answered "storage
// unavailable" (the writer could not get the write lock in time); `resent` counts those.
// Returns the events acknowledged as stored or duplicate.
std::uint64_t ingest_windowed(zmq::socket_t& dealer, const Corpus& corpus, std::uint64_t first,
                              std::uint64_t count, const Options& options,
                              std::uint64_t* resent = nullptr) {
  simdjson::dom::parser parser;
  std::uint64_t acknowledged = 0;
  const std::uint64_t messages = (count + options.batch - 1) / options.batch;
  std::uint64_t next = 0, in_flight = 0, done = 0;
  std::deque<std::uint64_t> again;
  while (done < messages) {
    while (in_flight < options.window && (!again.empty() || next < messages)) {
      std::uint64_t m = next;
      if (!again.empty()) {
        m = again.front();
        again.pop_front();
      } else {
        ++next;
      }
      const std::uint64_t at = first + m * options.batch;
      const std::string id = std::to_string(m);
      dealer.send(zmq::buffer(id), zmq::send_flags::sndmore);
      dealer.send(zmq::buffer(corpus.message(at, std::min(options.batch, first + count - at))),
                  zmq::send_flags::none);
      ++in_flight;
    }
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(dealer, std::back_inserter(frames))) {
      throw std::runtime_error("ingest: no reply for 60 s");
    }
    --in_flight;
    if (frames.size() != 2) throw std::runtime_error("ingest: unexpected reply shape");
    const std::uint64_t m = std::stoull(frames[0].to_string());
    if (frames[1].to_string_view().find("storage unavailable") != std::string_view::npos) {
      again.push_back(m);
      if (resent) ++*resent;
      continue;
    }
    ++done;
    simdjson::dom::element body;
    if (parser.parse(static_cast<const char*>(frames[1].data()), frames[1].size()).get(body)) {
      throw std::runtime_error("ingest: reply is not JSON: " + frames[1].to_string());
    }
    simdjson::dom::array results;
    if (body["results"].get_array().get(results)) continue;
    for (simdjson::dom::element item : results) {
      std::string_view status;
      if (!item["status"].get_string().get(status) && status != "rejected") ++acknowledged;
    }
  }
  return acknowledged;
}

zmq::socket_t ingest_socket(zmq::context_t& context, const std::string& endpoint) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo,
             static_cast<int>(std::chrono::milliseconds(kStallTimeout).count()));
  dealer.connect(endpoint);
  return dealer;
}

ModeResult run_ingest(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const config::Config cfg = daemon_config(options, dir, "ingest");
  ModeResult result{"ingest", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient(context, cfg.bus.control.front()).wait_ready();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    const std::uint64_t written_before = daemon.written_bytes();
    const auto start = std::chrono::steady_clock::now();
    acknowledged = ingest_windowed(dealer, corpus, 0, options.events, options);
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    result.extra["written_bytes_per_event"] =
        static_cast<double>(daemon.written_bytes() - written_before) /
        static_cast<double>(options.events);
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (!daemon.stop()) throw std::runtime_error("ingest: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  if (acknowledged != result.stored) {
    std::cerr << "ingest: " << acknowledged << " events acknowledged but " << result.stored
              << " rows stored\n";
    result.stored = std::min(acknowledged, result.stored);
  }
  remove_database(cfg.store.path);
  return result;
}

// ZeroMQ ingest through a gateway with bus.forward: jetstream: windowed batches as in `ingest`,
// each answered after JetStream's PubAck (a stream of 1 replica on one nats-server); the
// gateway stores nothing, so the rate is the acknowledged events per second.
ModeResult run_forward(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "forward");
  NatsServer server(dir, "forward");
  cfg.bus.forward = "jetstream";
  cfg.bus.push.clear();
  cfg.bus.jetstream.servers = {server.url()};
  cfg.bus.jetstream.consumer = "";  // a gateway
  ModeResult result{"forward", 0, 0.0};
  in_child_process([&] {
    const bus::NatsConnectionPtr connection = connect_when_up(cfg.bus.jetstream);
    bus::StreamLayout layout;
    layout.name = "BENCH";
    layout.replicas = 1;
    bus::ensure_stream(bus::jetstream_context(connection.get(), 5000).get(), layout);
    return 0.0;
  });
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient(context, cfg.bus.control.front()).wait_ready();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    const auto start = std::chrono::steady_clock::now();
    result.stored = ingest_windowed(dealer, corpus, 0, options.events, options);
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
    if (!daemon.stop()) throw std::runtime_error("forward: the daemon did not exit cleanly");
  }
  remove_database(cfg.store.path);
  return result;
}

// Percentiles (µs) of `samples` fdatasync(2) calls, each after a 4 KiB pwrite(2) into a file
// in `dir` (cycling over 1 MiB, as a WAL is rewritten after a checkpoint): what the disk itself
// costs an acknowledgement, measured on the same file system in the same minute.
struct SyncProbe {
  double p50_us = 0, p99_us = 0, p99_9_us = 0, max_us = 0;
};
SyncProbe probe_fdatasync(const fs::path& dir, int samples) {
  const fs::path file = dir / "fdatasync-probe";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + file.string());
  std::vector<double> latencies;
  const std::string block(4096, 'x');
  for (int i = 0; i < samples; ++i) {
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i % 256) * 4096) < 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + file.string());
    }
    const auto start = std::chrono::steady_clock::now();
    ::fdatasync(fd);
    latencies.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  ::close(fd);
  fs::remove(file);
  std::sort(latencies.begin(), latencies.end());
  const auto pct = [&](double p) {
    return latencies[std::min(latencies.size() - 1,
                              static_cast<std::size_t>(std::lround(
                                  p / 100.0 * static_cast<double>(latencies.size() - 1))))];
  };
  return {pct(50), pct(99), pct(99.9), latencies.back()};
}

// One publisher, one event per message, paced at --rate: the acknowledgement latency of each
// (send to reply, µs) as percentiles, and as ratios to the disk's own fdatasync percentiles
// (probe_fdatasync, run just before in the database's directory). Throughput here is the
// pace, not a capacity.
// With `with_jobs` (mode latency-jobs): the reflection jobs on their configured schedule
// (the defaults, or --daemon-config's), --preload events pushed first, and the paced events
// follow them; the job runs that overlapped the measurement are counted.
ModeResult run_latency(const Corpus& corpus, const Options& options, const fs::path& dir,
                       bool with_jobs) {
  const std::string mode = with_jobs ? "latency-jobs" : "latency";
  config::Config cfg = daemon_config(options, dir, mode);
  if (with_jobs) cfg.jobs = options.base.jobs;
  const std::uint64_t events = std::min(options.events, options.latency_events);
  const std::uint64_t first = with_jobs ? options.preload : 0;
  ModeResult result{mode, 0, 0.0};
  const SyncProbe disk = probe_fdatasync(dir, 3000);
  std::vector<double> latencies;
  latencies.reserve(events);
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    if (with_jobs) {
      zmq::socket_t push(context, zmq::socket_type::push);
      push.set(zmq::sockopt::linger, 0);
      push.connect(cfg.bus.push.front());
      push_events(push, corpus, 0, options.preload, options.batch);
      await_finished(control, options.preload, nullptr, "latency-jobs preload");
    }
    const auto wall_us = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
    const std::int64_t measured_from_us = wall_us();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    const int dealer_fd = dealer.get(zmq::sockopt::fd);
    using Clock = std::chrono::steady_clock;
    std::vector<Clock::time_point> sent_at(events);
    const auto period = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / static_cast<double>(options.rate)));
    const auto start = Clock::now();
    std::uint64_t sent = 0, answered = 0;
    std::string payload;
    while (answered < events) {
      const auto now = Clock::now();
      if (sent < events && now >= start + period * static_cast<long>(sent)) {
        payload.clear();
        corpus.append_event(payload, first + sent);
        const std::string request_id = std::to_string(sent);
        sent_at[sent] = Clock::now();
        dealer.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
        dealer.send(zmq::buffer(payload), zmq::send_flags::none);
        ++sent;
        continue;
      }
      // Wait for a reply until the next send is due, to the microsecond: zmq_poll counts
      // milliseconds, so a sub-millisecond wait became poll(0) and the publisher spun a whole
      // core, which on a 2-core machine the daemon's threads then waited for (the ack tail
      // measured the benchmark). ZMQ_FD signals "look at ZMQ_EVENTS"; check, then wait.
      const auto due =
          sent < events ? start + period * static_cast<long>(sent) : now + kStallTimeout;
      if ((dealer.get(zmq::sockopt::events) & ZMQ_POLLIN) == 0 && due > now) {
        const auto wait_ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(due - now).count();
        const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                               static_cast<long>(wait_ns % 1'000'000'000)};
        pollfd item{dealer_fd, POLLIN, 0};
        ::ppoll(&item, 1, &timeout, nullptr);
      }
      std::vector<zmq::message_t> frames;
      while (zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
        const auto received = Clock::now();
        if (frames.size() != 2) throw std::runtime_error("latency: unexpected reply shape");
        const std::uint64_t n = std::stoull(frames[0].to_string());
        if (frames[1].to_string().find(R"("status":"stored")") == std::string::npos) {
          throw std::runtime_error("latency: not stored: " + frames[1].to_string());
        }
        latencies.push_back(
            std::chrono::duration<double, std::micro>(received - sent_at.at(n)).count());
        ++answered;
        frames.clear();
      }
      if (sent == events && answered < events && Clock::now() - start > kStallTimeout * 10) {
        throw std::runtime_error("latency: replies missing");
      }
    }
    result.seconds = Seconds(Clock::now() - start).count();
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (with_jobs) {
      // Runs that overlapped [measured_from, now]: started before its end, not ended before
      // its start (finished_us 0 = still running).
      const std::int64_t measured_to_us = wall_us();
      const auto runs = control.request({{"cmd", "jobs"}, {"limit", 1000}});
      std::uint64_t overlapping = 0;
      double job_seconds = 0;
      nlohmann::json names = nlohmann::json::array();
      for (const auto& run : runs.at("runs")) {
        const std::int64_t started = run.value("started_us", std::int64_t{0});
        std::int64_t finished = run.value("finished_us", std::int64_t{0});
        if (finished == 0) finished = measured_to_us;
        if (started < measured_to_us && finished > measured_from_us) {
          ++overlapping;
          job_seconds += static_cast<double>(std::min(finished, measured_to_us) -
                                             std::max(started, measured_from_us)) /
                         1e6;
          names.push_back(run.value("job", std::string()));
        }
      }
      result.extra["preloaded_events"] = options.preload;
      result.extra["job_runs_overlapping"] = overlapping;
      result.extra["job_seconds_overlapping"] = job_seconds;
      result.extra["jobs_overlapping"] = names;
      // How the write lock was shared (store/write_gate.hpp), preload included.
      result.extra["write_gate"] = control.status()["write_gate"];
    }
    if (!daemon.stop()) throw std::runtime_error(mode + ": the daemon did not exit cleanly");
  }
  std::sort(latencies.begin(), latencies.end());
  const auto pct = [&](double p) {
    const auto at = static_cast<std::size_t>(
        std::lround(p / 100.0 * static_cast<double>(latencies.size() - 1)));
    return latencies[std::min(at, latencies.size() - 1)];
  };
  result.extra["rate_per_s"] = static_cast<double>(options.rate);
  result.extra["ack_p50_us"] = pct(50);
  result.extra["ack_p90_us"] = pct(90);
  result.extra["ack_p99_us"] = pct(99);
  result.extra["ack_p99_9_us"] = pct(99.9);
  result.extra["ack_max_us"] = latencies.back();
  result.extra["fdatasync_p50_us"] = disk.p50_us;
  result.extra["fdatasync_p99_us"] = disk.p99_us;
  result.extra["fdatasync_p99_9_us"] = disk.p99_9_us;
  result.extra["ack_p99_to_fdatasync_p99"] = pct(99) / disk.p99_us;
  result.extra["ack_p99_9_to_fdatasync_p99_9"] = pct(99.9) / disk.p99_9_us;
  result.stored = count_rows(cfg.store.path, cfg) - first;
  result.expected = events;
  remove_database(cfg.store.path);
  return result;
}

// Windowed ingest while the heaviest job runs, against idle windowed ingest in the same
// daemon: preload --preload events (push), ingest --under-job-events idle, start the job
// over the control socket, ingest the same number again while it runs.
ModeResult run_under_job(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underjob");
  // Only on demand: no interval, event or idle trigger may start it early.
  config::JobConfig& job = cfg.jobs.cluster;
  job.enabled = true;
  job.after_events = 0;
  job.idle_s = 0;
  job.interval_s = 604800;
  job.timeout_s = 86400;
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-job", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.connect(cfg.bus.push.front());
    push_events(push, corpus, 0, options.preload, options.batch);
    await_finished(control, options.preload, nullptr, "under-job preload");
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    std::uint64_t next = options.preload;
    // Let the index catch up so that the idle figure is idle.
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);

    auto start = std::chrono::steady_clock::now();
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options);
    const double idle_s = Seconds(std::chrono::steady_clock::now() - start).count();
    next += chunk;
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);

    const auto queued = control.request({{"cmd", "run"}, {"job", options.job}});
    if (!queued.value("ok", false)) throw std::runtime_error("under-job: " + queued.dump());
    // Running once its job_runs row says so.
    for (;;) {
      const auto runs = control.request({{"cmd", "jobs"}, {"job", options.job}, {"limit", 1}});
      const auto& rows = runs.at("runs");
      if (!rows.empty() && rows.at(0).at("status") == "running") break;
      std::this_thread::sleep_for(kPollInterval);
    }
    start = std::chrono::steady_clock::now();
    std::uint64_t resent = 0;
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options, &resent);
    const double busy_s = Seconds(std::chrono::steady_clock::now() - start).count();
    const auto runs = control.request({{"cmd", "jobs"}, {"job", options.job}, {"limit", 1}});
    const bool overlapped = runs.at("runs").at(0).at("status") == "running";
    // How the write lock was shared meanwhile (store/write_gate.hpp; the idle part adds nothing).
    result.extra["write_gate"] = control.status()["write_gate"];
    const double idle_rate = static_cast<double>(chunk) / idle_s;
    const double busy_rate = static_cast<double>(chunk) / busy_s;
    result.seconds = busy_s;
    result.extra["job"] = options.job;
    result.extra["preloaded_events"] = options.preload;
    result.extra["idle_events_per_s"] = idle_rate;
    result.extra["under_job_events_per_s"] = busy_rate;
    result.extra["ratio_to_idle"] = busy_rate / idle_rate;
    result.extra["job_ran_throughout"] = overlapped;
    result.extra["messages_resent_storage_unavailable"] = resent;
    if (!overlapped) {
      std::cerr << "under-job: the " << options.job
                << " run ended before the ingest did; raise --preload for a full overlap\n";
    }
    if (!daemon.stop()) throw std::runtime_error("under-job: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg) - options.preload;
  result.expected = 2 * chunk;
  if (acknowledged != result.stored) {
    std::cerr << "under-job: " << acknowledged << " acknowledged but " << result.stored
              << " stored\n";
    result.stored = std::min(acknowledged, result.stored);
  }
  // The figure compared with the baseline: the rate while the job ran.
  result.stored_for_rate = chunk;
  remove_database(cfg.store.path);
  return result;
}

// Windowed ingest during a hard forget (memory_ops/forget.hpp), against idle windowed ingest in
// the same daemon (the under-job mode's protocol with a forget instead of a job).
ModeResult run_under_forget(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underforget");
  for (config::JobConfig* job : {&cfg.jobs.consolidate, &cfg.jobs.decay, &cfg.jobs.cluster,
                                 &cfg.jobs.importance, &cfg.jobs.medallion, &cfg.jobs.facts}) {
    job->enabled = true;  // on demand only: no interval, event or idle trigger
    job->after_events = 0;
    job->idle_s = 0;
    job->interval_s = 604800;
    job->timeout_s = 86400;
  }
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-forget", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.connect(cfg.bus.push.front());
    push_events(push, corpus, 0, options.preload, options.batch);
    // The events to forget: one namespace's, told apart by their agent.
    for (std::uint64_t n = 0; n < options.forget_events; n += options.batch) {
      nlohmann::json batch = nlohmann::json::array();
      for (std::uint64_t i = n; i < std::min(options.forget_events, n + options.batch); ++i) {
        batch.push_back({{"id", "forget:" + std::to_string(i)},
                         {"kind", "observation"},
                         {"namespace", "libzmq"},
                         {"agent_id", "bench-forget"},
                         {"content", "reconnect " + std::to_string(i) +
                                         " dropped frames in src/session_base.cpp"}});
      }
      push.send(zmq::buffer(batch.dump()), zmq::send_flags::none);
    }
    await_finished(control, options.preload + options.forget_events, nullptr,
                   "under-forget preload");
    const auto cycle_start = std::chrono::steady_clock::now();
    {
      // Job runs at a million events outlast ControlClient's 60 s reply wait.
      zmq::socket_t runs(context, zmq::socket_type::dealer);
      runs.set(zmq::sockopt::linger, 0);
      runs.connect(cfg.bus.control.front());
      for (const char* job :
           {"consolidate", "cluster", "importance", "facts", "medallion", "decay"}) {
        runs.send(zmq::buffer(nlohmann::json{{"cmd", "run"}, {"job", job}, {"wait", true}}.dump()),
                  zmq::send_flags::none);
        zmq::message_t reply;
        if (!runs.recv(reply) ||
            !nlohmann::json::parse(reply.to_string_view()).value("ok", false)) {
          throw std::runtime_error(std::string("under-forget: job ") + job + " failed");
        }
      }
    }
    result.extra["job_cycle_seconds"] =
        Seconds(std::chrono::steady_clock::now() - cycle_start).count();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    std::uint64_t next = options.preload;
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);
    auto start = std::chrono::steady_clock::now();
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options);
    const double idle_s = Seconds(std::chrono::steady_clock::now() - start).count();
    next += chunk;
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);

    nlohmann::json forgotten;
    double forget_s = 0;
    std::atomic<bool> forget_done{false};
    std::thread forgetter([&] {
      zmq::socket_t socket(context, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      socket.connect(cfg.bus.control.front());
      const auto begin = std::chrono::steady_clock::now();
      socket.send(zmq::buffer(nlohmann::json{
                      {"cmd", "forget"},
                      {"mode", "delete"},
                      {"wait", options.forget_wait},
                      {"filter", {{"namespace", "libzmq"}, {"agent_id", "bench-forget"}}}}
                                  .dump()),
                  zmq::send_flags::none);
      zmq::message_t reply;
      if (socket.recv(reply)) forgotten = nlohmann::json::parse(reply.to_string_view());
      forget_s = Seconds(std::chrono::steady_clock::now() - begin).count();
      forget_done = true;
    });
    for (;;) {
      const auto runs = control.request({{"cmd", "jobs"}, {"job", "forget"}, {"limit", 1}});
      const auto& rows = runs.at("runs");
      if (!rows.empty() && rows.at(0).at("status") == "running") break;
      std::this_thread::sleep_for(kPollInterval);
    }
    start = std::chrono::steady_clock::now();
    std::uint64_t resent = 0;
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options, &resent);
    const double busy_s = Seconds(std::chrono::steady_clock::now() - start).count();
    const bool overlapped = !forget_done;
    forgetter.join();
    if (!forgotten.value("ok", false)) {
      throw std::runtime_error("under-forget: the forget failed: " + forgotten.dump());
    }
    const double idle_rate = static_cast<double>(chunk) / idle_s;
    const double busy_rate = static_cast<double>(chunk) / busy_s;
    result.seconds = busy_s;
    result.extra["preloaded_events"] = options.preload;
    result.extra["forgotten_events"] = forgotten["forgotten"]["events_deleted"];
    result.extra["forget_seconds"] = forget_s;
    // The forget's own run (its chunked clear, its delete and the index optimization), without
    // the rebuild runs that "wait" includes, and how long the writer ever waited for the jobs.
    const auto forget_runs = control.request({{"cmd", "jobs"}, {"job", "forget"}, {"limit", 1}});
    const auto& forget_run = forget_runs.at("runs").at(0);
    result.extra["forget_run_seconds"] =
        static_cast<double>(forget_run.at("finished_us").get<std::int64_t>() -
                            forget_run.at("started_us").get<std::int64_t>()) /
        1e6;
    const auto gate = control.status().at("write_gate");
    result.extra["writer_wait_max_ms"] =
        static_cast<double>(gate.at("writer_wait_max_us").get<std::int64_t>()) / 1e3;
    result.extra["writer_timeouts"] = gate.at("writer_timeouts");
    for (const char* stage : {"clear_ms", "clear_transactions", "delete_ms", "optimize_ms"}) {
      result.extra[stage] = forgotten["forgotten"][stage];
    }
    result.extra["idle_events_per_s"] = idle_rate;
    result.extra["under_forget_events_per_s"] = busy_rate;
    result.extra["ratio_to_idle"] = busy_rate / idle_rate;
    result.extra["forget_ran_throughout"] = overlapped;
    result.extra["messages_resent_storage_unavailable"] = resent;
    if (!daemon.stop()) throw std::runtime_error("under-forget: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg) - options.preload;
  result.expected = 2 * chunk;
  if (acknowledged != result.stored) {
    std::cerr << "under-forget: " << acknowledged << " acknowledged but " << result.stored
              << " stored\n";
    result.stored = std::min(acknowledged, result.stored);
  }
  result.stored_for_rate = chunk;
  remove_database(cfg.store.path);
  return result;
}

// Windowed ingest while `recall` is asked at --recall-qps, against idle windowed ingest in the
// same daemon (the under-job mode's protocol with reads instead of a job).
ModeResult run_under_recall(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underrecall");
  std::vector<std::string> questions;
  {
    std::ifstream in(fs::path(options.data_dir) / "libzmq-commits.jsonl");
    std::string line;
    while (std::getline(in, line)) {
      const std::string content = nlohmann::json::parse(line).value("content", "");
      questions.push_back(content.substr(0, std::min(content.find('\n'), std::size_t{200})));
    }
  }
  if (questions.empty()) throw std::runtime_error("under-recall: no libzmq-commits.jsonl");
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-recall", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.connect(cfg.bus.push.front());
    push_events(push, corpus, 0, options.preload, options.batch);
    await_finished(control, options.preload, nullptr, "under-recall preload");
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    std::uint64_t next = options.preload;
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);

    auto start = std::chrono::steady_clock::now();
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options);
    const double idle_s = Seconds(std::chrono::steady_clock::now() - start).count();
    next += chunk;
    while (ControlClient::index_lag(control.status()) > 0)
      std::this_thread::sleep_for(kPollInterval);

    std::atomic<bool> done{false};
    std::vector<double> latency_ms;
    std::thread asker([&] {
      ControlClient reader(context, cfg.bus.control.front());
      const auto period = std::chrono::microseconds(1'000'000 / options.recall_qps);
      auto due = std::chrono::steady_clock::now();
      for (std::size_t i = 0; !done; ++i) {
        std::this_thread::sleep_until(due);
        due += period;
        const auto sent = std::chrono::steady_clock::now();
        const auto reply = reader.request({{"cmd", "recall"},
                                           {"text", questions[i % questions.size()]},
                                           {"namespace", "libzmq"},
                                           {"limit", 10}});
        latency_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                .count());
        (void)reply;
      }
    });
    start = std::chrono::steady_clock::now();
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options);
    const double busy_s = Seconds(std::chrono::steady_clock::now() - start).count();
    done = true;
    asker.join();
    std::sort(latency_ms.begin(), latency_ms.end());
    auto at = [&](double p) {
      return latency_ms.empty()
                 ? 0.0
                 : latency_ms[std::min(
                       latency_ms.size() - 1,
                       static_cast<std::size_t>(p * static_cast<double>(latency_ms.size())))];
    };
    const double idle_rate = static_cast<double>(chunk) / idle_s;
    const double busy_rate = static_cast<double>(chunk) / busy_s;
    result.seconds = busy_s;
    result.extra["preloaded_events"] = options.preload;
    result.extra["recall_qps_asked"] = options.recall_qps;
    result.extra["recalls_answered"] = latency_ms.size();
    result.extra["recall_p50_ms"] = at(0.5);
    result.extra["recall_p99_ms"] = at(0.99);
    result.extra["idle_events_per_s"] = idle_rate;
    result.extra["under_recall_events_per_s"] = busy_rate;
    result.extra["ratio_to_idle"] = busy_rate / idle_rate;
    if (!daemon.stop()) throw std::runtime_error("under-recall: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg) - options.preload;
  result.expected = 2 * chunk;
  if (acknowledged != result.stored) {
    std::cerr << "under-recall: " << acknowledged << " acknowledged but " << result.stored
              << " stored\n";
    result.stored = std::min(acknowledged, result.stored);
  }
  result.stored_for_rate = chunk;
  remove_database(cfg.store.path);
  return result;
}

class TempDir {
 public:
  explicit TempDir(const std::string& parent) {
    const fs::path base = parent.empty() ? fs::temp_directory_path() : fs::path(parent);
    std::string pattern = (base / "reflectd-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void print_table(const std::vector<ModeResult>& results) {
  const double baseline = results.front().rate();
  std::printf("%-12s %10s %9s %11s %6s\n", "mode", "events", "seconds", "events/s", "ratio");
  for (const auto& r : results) {
    if (r.paced) {
      std::printf("%-12s %10llu %9.3f %11.0f %6s  (paced)\n", r.mode.c_str(),
                  static_cast<unsigned long long>(r.stored), r.seconds, r.rate(), "-");
    } else {
      std::printf("%-12s %10llu %9.3f %11.0f %6.2f\n", r.mode.c_str(),
                  static_cast<unsigned long long>(r.stored), r.seconds, r.rate(),
                  r.rate() / baseline);
    }
  }
  std::printf("\n");
  for (const auto& r : results) {
    if (r.extra.empty()) continue;
    std::printf("%-12s", r.mode.c_str());
    for (const auto& [key, value] : r.extra.items()) {
      if (value.is_number_float()) {
        std::printf(" %s=%.2f", key.c_str(), value.get<double>());
      } else {
        std::printf(" %s=%s", key.c_str(), value.dump().c_str());
      }
    }
    std::printf("\n");
  }
}

nlohmann::ordered_json to_json(const std::vector<ModeResult>& results, const Options& options,
                               const config::Config& cfg, double bytes) {
  const double baseline = results.front().rate();
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    nlohmann::ordered_json mode = {
        {"mode", r.mode}, {"events", r.stored}, {"seconds", r.seconds}, {"events_per_s", r.rate()}};
    if (!r.paced) mode["ratio"] = r.rate() / baseline;
    mode.update(r.extra);
    modes.push_back(std::move(mode));
  }
  return {{"events", options.events},
          {"mean_event_bytes", bytes},
          {"batch_events", options.batch},
          {"window_messages", options.window},
          {"commit_max_events", cfg.store.commit_max_events},
          {"synchronous", cfg.store.synchronous},
          {"commit_pipelining", cfg.store.commit_pipelining},
          {"ids", options.random_ids ? "random" : "sequential"},
          {"modes", std::move(modes)}};
}

int run(int argc, char** argv) {
  // As reflectd's main() does, before the baseline's connection, so that both the baseline
  // and the forked daemon run SQLite with the daemon's settings.
  store::disable_sqlite_memory_statistics();
  Options options;
  CLI::App app{"Measures reflectd's ingest rate against a bare SQLite insert loop.",
               "bench_ingest"};
  app.add_option("--events", options.events, "Events per mode")->check(CLI::Range(1, 100'000'000));
  app.add_option("--batch", options.batch, "Events per message")
      ->check(CLI::Range(1, static_cast<int>(bus::kMaxBatchEvents)));
  app.add_option("--window", options.window, "ingest: messages in flight")
      ->check(CLI::Range(1, 10'000));
  app.add_option("--modes", options.modes,
                 "Modes to run, the first being the baseline of the ratios")
      ->delimiter(',')
      ->check(CLI::IsMember({"baseline", "baseline-fts", "push", "ingest", "latency",
                             "latency-jobs", "under-job", "under-recall", "under-forget",
                             "jetstream", "jetstream-shards", "forward"}));
  app.add_option("--latency-events", options.latency_events, "latency: events (at most --events)")
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--rate", options.rate, "latency: events per second")
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--preload", options.preload,
                 "under-job, under-recall, under-forget, latency-jobs: events stored first")
      ->check(CLI::Range(1, 100'000'000));
  app.add_option(
         "--under-job-events", options.under_job_events,
         "under-job: events ingested idle, then as many while the job runs (at most --events)")
      ->check(CLI::Range(1, 100'000'000));
  app.add_option("--recall-qps", options.recall_qps, "under-recall: recall requests per second")
      ->check(CLI::Range(1, 10'000));
  app.add_option("--forget-events", options.forget_events,
                 "under-forget: events stored to be forgotten (namespace libzmq)")
      ->check(CLI::Range(1ULL, 100'000ULL));
  app.add_option("--forget-wait", options.forget_wait,
                 "under-forget: true = the forget's reply (and forget_seconds) comes after the "
                 "jobs rebuilt the namespace; false = after the forget's own run (the clear, the "
                 "delete and the index optimization), and the daemon stops during the rebuild");
  app.add_option("--job", options.job, "under-job: the job to run")
      ->check(CLI::IsMember({"cluster", "consolidate", "importance", "medallion", "decay"}));
  app.add_option("--data", options.data_dir, "Directory holding the .jsonl event streams")
      ->check(CLI::ExistingDirectory);
  app.add_option("--dir", options.dir,
                 "Parent of the temporary database directory (default $TMPDIR)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--daemon-config", options.daemon_config,
                 "YAML file applied over the built-in defaults (e.g. store.checkpoint_pages: 0); "
                 "endpoints, store.path and the jobs are set by the benchmark")
      ->check(CLI::ExistingFile);
  app.add_flag("--json", options.json, "Print the results as JSON");
  app.add_flag("--random-ids", options.random_ids,
               "Ids spread over the uid index (hashes) instead of the nearly sequential bench:<n>");
  CLI11_PARSE(app, argc, argv);

  // The daemon must not talk to whatever supervises this benchmark.
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  daemon::setup_logging();
  try {
    const Corpus corpus(options.data_dir, options.random_ids);
    const double bytes = corpus.mean_event_bytes(options.events);
    const TempDir dir(options.dir);
    if (!options.daemon_config.empty()) options.base = config::load_file(options.daemon_config);
    const config::Config& cfg = options.base;
    if (!options.json) {
      std::printf(
          "%llu events (%zu distinct from %s), mean %.0f bytes/event as sent, %llu per message, "
          "ingest window %llu, commit_max_events %lld, synchronous %s, commit pipelining %s, %s "
          "ids, databases in %s\n\n",
          static_cast<unsigned long long>(options.events), corpus.size(), options.data_dir.c_str(),
          bytes, static_cast<unsigned long long>(options.batch),
          static_cast<unsigned long long>(options.window),
          static_cast<long long>(cfg.store.commit_max_events), cfg.store.synchronous.c_str(),
          cfg.store.commit_pipelining ? "on" : "off", options.random_ids ? "random" : "sequential",
          dir.path().c_str());
      std::fflush(stdout);
    }
    std::vector<ModeResult> results;
    for (const auto& mode : options.modes) {
      if (mode == "baseline")
        results.push_back(run_baseline(corpus, options, cfg, dir.path(), false));
      if (mode == "baseline-fts")
        results.push_back(run_baseline(corpus, options, cfg, dir.path(), true));
      if (mode == "push") results.push_back(run_push(corpus, options, dir.path()));
      if (mode == "ingest") results.push_back(run_ingest(corpus, options, dir.path()));
      if (mode == "latency" || mode == "latency-jobs") {
        results.push_back(run_latency(corpus, options, dir.path(), mode == "latency-jobs"));
        results.back().paced = true;
      }
      if (mode == "under-job") results.push_back(run_under_job(corpus, options, dir.path()));
      if (mode == "jetstream") results.push_back(run_jetstream(corpus, options, dir.path()));
      if (mode == "jetstream-shards") {
        results.push_back(run_jetstream_shards(corpus, options, dir.path()));
      }
      if (mode == "forward") results.push_back(run_forward(corpus, options, dir.path()));
      if (mode == "under-forget") {
        results.push_back(run_under_forget(corpus, options, dir.path()));
      }
      if (mode == "under-recall") {
        results.push_back(run_under_recall(corpus, options, dir.path()));
      }
    }
    if (results.empty()) throw std::runtime_error("no mode to run");
    if (options.json) {
      std::cout << to_json(results, options, cfg, bytes).dump(2) << '\n';
    } else {
      print_table(results);
    }
    const bool complete = std::all_of(results.begin(), results.end(), [&](const ModeResult& r) {
      return r.stored == (r.expected ? r.expected : options.events);
    });
    if (!complete) std::cerr << "bench_ingest: some events were not stored (see above)\n";
    return complete ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "bench_ingest: " << error.what() << '\n';
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { return reflectd::guarded_main("bench_ingest", run, argc, argv); }
