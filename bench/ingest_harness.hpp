#pragma once
// bench_ingest's harness, shared by its modes (bench/ingest.cpp, ingest_jetstream.cpp,
// ingest_contention.cpp): options and results, the event corpus, a daemon forked before any
// thread starts, its control client, the daemon's configuration per mode, and the push and
// windowed-ingest loops.
//
// Error policy: std::runtime_error for what makes a mode's figures meaningless (a daemon that
// does not start or stalls for kStallTimeout); the caller prints it and exits 1.
// Thread-safety: one thread, but for what a mode starts itself.

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

namespace reflectd::bench_ingest {

namespace fs = std::filesystem;

// Bytes a process has passed to write system calls so far (`wchar` of /proc/PID/io): for the
// daemon, the WAL frames, the checkpoints' copies into the database and its replies. Unlike a
// rate it hardly depends on the machine's load, so it shows the write amplification of the
// schema. 0 when unavailable.
inline std::uint64_t written_bytes(const std::string& pid) {
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

inline constexpr std::array<const char*, 2> kDataFiles = {"libzmq-commits.jsonl",
                                                          "swe-agent-trajectories.jsonl"};
inline constexpr auto kPollInterval = std::chrono::milliseconds(5);
// A daemon that makes no progress this long is stuck (or lost events): fail instead of hanging.
inline constexpr auto kStallTimeout = std::chrono::seconds(60);

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

inline std::uint64_t count_rows(const std::string& path, const config::Config& cfg) {
  auto db = store::open_database({path, cfg.store.synchronous, cfg.store.busy_timeout_ms},
                                 store::Access::kWriter);
  return static_cast<std::uint64_t>(db.execAndGet("SELECT count(*) FROM events").getInt64());
}

inline void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
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
  std::uint64_t written_bytes() const { return bench_ingest::written_bytes(std::to_string(pid_)); }

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

inline void disable_jobs(config::Config& cfg) {
  // The reflection jobs compete for the same two cores; the under-job mode and bench_jobs
  // measure them, the other modes measure ingest alone.
  for (config::JobConfig* job : {&cfg.jobs.consolidate, &cfg.jobs.decay, &cfg.jobs.cluster,
                                 &cfg.jobs.importance, &cfg.jobs.medallion, &cfg.jobs.facts}) {
    job->enabled = false;
  }
}

inline config::Config daemon_config(const Options& options, const fs::path& dir,
                                    const std::string& mode) {
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
  cfg.http.listen = "127.0.0.1:0";
  disable_jobs(cfg);
  return cfg;
}

// Sends [first, first + count) as fast as PUSH takes it, --batch events per message.
inline void push_events(zmq::socket_t& push, const Corpus& corpus, std::uint64_t first,
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
inline void await_finished(ControlClient& control, std::uint64_t target, PushProgress* progress,
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

// After await_finished: waits until the search index has caught up with the stored events
// (kStallTimeout x 5 at most), keeping the largest lag seen in `progress`; returns the seconds
// since `stored` (the moment the last event was stored).
inline double await_index_catch_up(ControlClient& control,
                                   std::chrono::steady_clock::time_point stored,
                                   PushProgress& progress, const char* mode) {
  for (;;) {
    const std::int64_t lag = ControlClient::index_lag(control.status());
    progress.max_lag = std::max(progress.max_lag, lag);
    if (lag == 0) break;
    if (std::chrono::steady_clock::now() - stored > kStallTimeout * 5) {
      throw std::runtime_error(std::string(mode) + ": search index still " + std::to_string(lag) +
                               " events behind");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - stored).count();
}

// Waits until the search index has caught up with the stored events.
inline void await_indexed(ControlClient& control) {
  while (ControlClient::index_lag(control.status()) > 0) std::this_thread::sleep_for(kPollInterval);
}

// A PUSH socket connected to the daemon's first push endpoint.
inline zmq::socket_t push_socket(zmq::context_t& context, const config::Config& cfg) {
  zmq::socket_t push(context, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  push.connect(cfg.bus.push.front());
  return push;
}

// The first line (at most 200 bytes) of every `every`-th commit message of libzmq's history
// in --data: questions as broad as an agent's. Throws when the file gives none.
inline std::vector<std::string> libzmq_questions(const std::string& data_dir, std::size_t every,
                                                 const char* mode) {
  std::vector<std::string> questions;
  std::ifstream in(fs::path(data_dir) / "libzmq-commits.jsonl");
  std::string line;
  for (std::size_t n = 0; std::getline(in, line); ++n) {
    if (n % every != 0) continue;
    const std::string content = nlohmann::json::parse(line).value("content", "");
    questions.push_back(content.substr(0, std::min(content.find('\n'), std::size_t{200})));
  }
  if (questions.empty()) throw std::runtime_error(std::string(mode) + ": no libzmq-commits.jsonl");
  return questions;
}

// Keeps `window` messages in flight on a DEALER until [first, first + count) is acknowledged.
// Like a real publisher it resends, with the same ids, a message answered "storage
// unavailable" (the writer could not get the write lock in time); `resent` counts those.
// Returns the events acknowledged as stored or duplicate.
inline std::uint64_t ingest_windowed(zmq::socket_t& dealer, const Corpus& corpus,
                                     std::uint64_t first, std::uint64_t count,
                                     const Options& options, std::uint64_t* resent = nullptr) {
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

inline zmq::socket_t ingest_socket(zmq::context_t& context, const std::string& endpoint) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo,
             static_cast<int>(std::chrono::milliseconds(kStallTimeout).count()));
  dealer.connect(endpoint);
  return dealer;
}

// The contention modes' idle figure: [next, next + count) acknowledged on `dealer` with
// nothing else running, from and back to a caught-up search index. Returns its seconds and
// adds the acknowledged events to `acknowledged`; `next` moves past them.
inline double ingest_idle(zmq::socket_t& dealer, ControlClient& control, const Corpus& corpus,
                          std::uint64_t& next, std::uint64_t count, const Options& options,
                          std::uint64_t& acknowledged) {
  await_indexed(control);
  const auto start = std::chrono::steady_clock::now();
  acknowledged += ingest_windowed(dealer, corpus, next, count, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  next += count;
  await_indexed(control);
  return seconds;
}

// The modes run by other files of bench_ingest (bench/ingest_jetstream.cpp,
// bench/ingest_contention.cpp, bench/ingest_http.cpp); each stores --events into a fresh database
// in `dir` and returns its figures (bench/ingest.cpp's header says what each measures).
ModeResult run_jetstream(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_jetstream_shards(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_forward(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_http(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_recall_http(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_under_job(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_under_forget(const Corpus& corpus, const Options& options, const fs::path& dir);
ModeResult run_under_recall(const Corpus& corpus, const Options& options, const fs::path& dir);

}  // namespace reflectd::bench_ingest
