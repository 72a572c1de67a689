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
//   http          acknowledged ingest over POST /v1/events (bench/ingest_http.cpp): --window
//                 keep-alive connections, one request of --batch events each in flight.
//   recall-http   recall over the control socket and over POST /v1/recall, alternately, on
//                 --preload events: each one's p50 and p99 (bench/ingest_http.cpp).
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

#include "bench/ingest_harness.hpp"

namespace reflectd::bench_ingest {
namespace {

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

ModeResult run_push(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const config::Config cfg = daemon_config(options, dir, "push");
  ModeResult result{"push", 0, 0.0};
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();  // start timing from a serving daemon
    zmq::socket_t push = push_socket(context, cfg);

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
    result.extra["index_catch_up_s"] = await_index_catch_up(control, stored, progress, "push");
    result.extra["index_lag_max_events"] = progress.max_lag;
    result.extra["daemon_peak_rss_mb"] =
        static_cast<double>(daemon.peak_rss_bytes()) / (1024.0 * 1024.0);
    if (!daemon.stop()) throw std::runtime_error("push: the daemon did not exit cleanly");
  }
  result.stored = count_rows(cfg.store.path, cfg);
  remove_database(cfg.store.path);
  return result;
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

// The job runs that overlapped [measured_from_us, measured_to_us) (started before its end, not
// ended before its start; finished_us 0 = still running), their seconds inside it, and how the
// write lock was shared (store/write_gate.hpp), preload included.
void record_overlapping_jobs(ControlClient& control, std::int64_t measured_from_us,
                             std::int64_t measured_to_us, const Options& options,
                             ModeResult& result) {
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
  result.extra["write_gate"] = control.status()["write_gate"];
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
      zmq::socket_t push = push_socket(context, cfg);
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
    if (with_jobs) record_overlapping_jobs(control, measured_from_us, wall_us(), options, result);
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
                             "latency-jobs", "under-job", "under-recall", "under-forget", "http",
                             "recall-http", "jetstream", "jetstream-shards", "forward"}));
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
      if (mode == "http") results.push_back(run_http(corpus, options, dir.path()));
      if (mode == "recall-http") results.push_back(run_recall_http(corpus, options, dir.path()));
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
}  // namespace reflectd::bench_ingest

int main(int argc, char** argv) {
  return reflectd::guarded_main("bench_ingest", reflectd::bench_ingest::run, argc, argv);
}
