// bench_ingest: how close the daemon's ingest path comes to SQLite's own insert rate.
//
// Usage
//   ninja -C build bench_ingest
//   build/bench/bench_ingest                      # 1,000,000 events, table on stdout
//   build/bench/bench_ingest --events 200000 --json
//   build/bench/bench_ingest --dir /var/tmp       # put the databases on another disk
//   ctest --test-dir build -R bench_ingest_smoke  # 20,000 events: proves it still runs
//
// Modes, each into a fresh database in a temporary directory (removed afterwards):
//   baseline  the same rows inserted straight into the same schema (store::open_database +
//             store::EventStore::insert, one prepared statement) in transactions of
//             store.commit_max_events, with the configured synchronous mode (FULL by
//             default). Rows are decoded beforehand with bus::EventDecoder from the very
//             payloads the daemon receives; only insert + commit time is counted. This is the
//             storage ceiling the other modes are compared with.
//   push      an in-process Daemon (built-in defaults, ipc:// endpoints) fed by a PUSH socket,
//             --batch events per message; timed until the daemon's control socket reports
//             every event stored (polled every 5 ms: a benchmark may poll).
//   ingest    the same daemon fed by a DEALER socket keeping --window messages in flight;
//             timed until every message is acknowledged (acknowledgements follow commits).
// Daemon modes include building the messages and ZeroMQ transport, as a publisher would.
//
// Events: the real streams in --data (libzmq-commits.jsonl, then swe-agent-trajectories.jsonl)
// cycled in file order up to --events, each given the unique id "bench:<n>", so every run
// sends byte-identical input. Columns: events/s = events / seconds; ratio = events/s over the
// baseline's; bytes/event = mean size of one event's JSON as sent.
//
// Exit status: 0 when every mode stored all events; 1 otherwise (or on any error).

#include <CLI/CLI.hpp>
#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>
#include <simdjson.h>
#include <zmq.hpp>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/settings.hpp"
#include "daemon/logging.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"

namespace {

namespace fs = std::filesystem;
using namespace reflectd;
using Seconds = std::chrono::duration<double>;

#ifndef REFLECTD_DATA_DIR
#define REFLECTD_DATA_DIR "."
#endif

constexpr const char* kDataFiles[] = {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"};
constexpr auto kPollInterval = std::chrono::milliseconds(5);
// A daemon that makes no progress this long is stuck (or lost events): fail instead of hanging.
constexpr auto kStallTimeout = std::chrono::seconds(60);

struct Options {
  std::uint64_t events = 1'000'000;
  std::uint64_t batch = 100;
  std::uint64_t window = 32;
  std::string data_dir = REFLECTD_DATA_DIR;
  std::string dir;
  bool json = false;
};

struct ModeResult {
  std::string mode;
  std::uint64_t stored = 0;
  double seconds = 0;
};

// The input stream: event n is template n % size with "id" set to "bench:<n>". A template is
// the event's compact JSON split around the id's value, so building a message is appending.
class Corpus {
 public:
  explicit Corpus(const fs::path& data_dir) {
    const std::string marker = "@@reflectd-bench-id@@";
    for (const char* name : kDataFiles) {
      std::ifstream in(data_dir / name);
      if (!in) throw std::runtime_error("cannot read " + (data_dir / name).string());
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto event = nlohmann::ordered_json::parse(line);
        event["id"] = marker;
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
    out += std::to_string(n);
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

 private:
  struct Template {
    std::string prefix;
    std::string suffix;
  };
  std::vector<Template> templates_;
};

std::uint64_t count_rows(const std::string& path, const config::Config& cfg) {
  auto db = store::open_database({path, cfg.store.synchronous, cfg.store.busy_timeout_ms},
                                 store::Access::kWriter);
  return static_cast<std::uint64_t>(db.execAndGet("SELECT count(*) FROM events").getInt64());
}

void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
}

ModeResult run_baseline(const Corpus& corpus, const Options& options, const config::Config& cfg,
                        const fs::path& dir) {
  const std::string path = (dir / "baseline.db").string();
  SystemClock clock;
  bus::EventDecoder decoder(clock);
  ModeResult result{"baseline", 0, 0.0};
  {
    auto db = store::open_database({path, cfg.store.synchronous, cfg.store.busy_timeout_ms},
                                   store::Access::kWriter);
    store::EventStore event_store(db);
    const store::DecayProfiles profiles = daemon::decay_profiles(cfg.decay);
    const auto chunk = static_cast<std::uint64_t>(cfg.store.commit_max_events);
    std::vector<store::EventRecord> rows;
    rows.reserve(chunk);
    Seconds elapsed{0};
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
      const auto start = std::chrono::steady_clock::now();
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (const auto& row : rows) {
        if (!event_store.insert(row, store::resolve_lifecycle(row, profiles)).duplicate) {
          ++result.stored;
        }
      }
      transaction.commit();
      elapsed += std::chrono::steady_clock::now() - start;
    }
    result.seconds = elapsed.count();
  }
  if (count_rows(path, cfg) != result.stored) throw std::runtime_error("baseline: row count differs");
  remove_database(path);
  return result;
}

// An in-process daemon serving on its own thread for the lifetime of this object.
class RunningDaemon {
 public:
  RunningDaemon(config::Config cfg, const Clock& clock) : daemon_(std::move(cfg), {}, clock) {
    daemon_.start();
    thread_ = std::thread([this] { daemon_.run(); });
  }
  ~RunningDaemon() {
    daemon_.request_stop();
    thread_.join();
  }
  RunningDaemon(const RunningDaemon&) = delete;
  RunningDaemon& operator=(const RunningDaemon&) = delete;
  const bus::BoundEndpoints& endpoints() const { return daemon_.endpoints(); }

 private:
  daemon::Daemon daemon_;
  std::thread thread_;
};

// The writer's counters, read through the control socket like reflectctl does.
class StatusClient {
 public:
  StatusClient(zmq::context_t& context, const std::string& endpoint)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.set(zmq::sockopt::rcvtimeo, 10'000);
    socket_.connect(endpoint);
  }

  /// stored + rejected events: everything the writer has finished with.
  std::uint64_t finished_events() {
    socket_.send(zmq::str_buffer(R"({"cmd":"status"})"), zmq::send_flags::none);
    zmq::message_t reply;
    if (!socket_.recv(reply)) throw std::runtime_error("control: no status reply within 10 s");
    const auto status = nlohmann::json::parse(reply.to_string_view());
    const auto& events = status.at("events");
    return events.at("stored").get<std::uint64_t>() + events.at("rejected").get<std::uint64_t>() +
           status.at("dead_letters").get<std::uint64_t>();
  }

 private:
  zmq::socket_t socket_;
};

config::Config daemon_config(const fs::path& dir, const std::string& mode) {
  config::Config cfg = config::defaults();
  cfg.log.level = "warn";
  const auto ipc = [&](const char* name) { return "ipc://" + (dir / name).string(); };
  cfg.bus.ingest = {ipc("ingest.sock")};
  cfg.bus.push = {ipc("push.sock")};
  cfg.bus.notify = {ipc("notify.sock")};
  cfg.bus.control = {ipc("control.sock")};
  cfg.store.path = (dir / (mode + ".db")).string();
  // Ingest alone is measured: a background job would share the write lock (and, slow enough,
  // hold it past busy_timeout_ms so that ingest is refused).
  for (config::JobConfig* job : {&cfg.jobs.consolidate, &cfg.jobs.decay, &cfg.jobs.cluster,
                                 &cfg.jobs.importance, &cfg.jobs.medallion}) {
    job->enabled = false;
  }
  return cfg;
}

ModeResult run_push(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const config::Config cfg = daemon_config(dir, "push");
  SystemClock clock;
  zmq::context_t context(1);
  ModeResult result{"push", 0, 0.0};
  {
    RunningDaemon daemon(cfg, clock);
    StatusClient status(context, daemon.endpoints().control.front());
    status.finished_events();  // the daemon answers: start timing from a serving daemon
    zmq::socket_t push(context, zmq::socket_type::push);
    push.set(zmq::sockopt::linger, 0);
    push.connect(daemon.endpoints().push.front());

    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t first = 0; first < options.events; first += options.batch) {
      push.send(zmq::buffer(corpus.message(first, std::min(options.batch, options.events - first))),
                zmq::send_flags::none);
    }
    std::uint64_t finished = 0;
    auto last_progress = std::chrono::steady_clock::now();
    while (finished < options.events) {
      const std::uint64_t now_finished = status.finished_events();
      const auto now = std::chrono::steady_clock::now();
      if (now_finished != finished) {
        finished = now_finished;
        last_progress = now;
      } else if (now - last_progress > kStallTimeout) {
        throw std::runtime_error("push: no progress for 60 s at " + std::to_string(finished) +
                                 " of " + std::to_string(options.events) + " events");
      }
      if (finished < options.events) std::this_thread::sleep_for(kPollInterval);
    }
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
  }
  result.stored = count_rows(cfg.store.path, cfg);
  remove_database(cfg.store.path);
  return result;
}

ModeResult run_ingest(const Corpus& corpus, const Options& options, const fs::path& dir) {
  const config::Config cfg = daemon_config(dir, "ingest");
  SystemClock clock;
  zmq::context_t context(1);
  ModeResult result{"ingest", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    RunningDaemon daemon(cfg, clock);
    StatusClient(context, daemon.endpoints().control.front()).finished_events();
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::rcvtimeo, static_cast<int>(
                                           std::chrono::milliseconds(kStallTimeout).count()));
    dealer.connect(daemon.endpoints().ingest.front());
    simdjson::dom::parser parser;

    const std::uint64_t messages = (options.events + options.batch - 1) / options.batch;
    std::uint64_t sent = 0, answered = 0;
    const auto start = std::chrono::steady_clock::now();
    while (answered < messages) {
      for (; sent < messages && sent - answered < options.window; ++sent) {
        const std::uint64_t first = sent * options.batch;
        dealer.send(zmq::buffer(corpus.message(first, std::min(options.batch, options.events - first))),
                    zmq::send_flags::none);
      }
      zmq::message_t reply;
      if (!dealer.recv(reply)) throw std::runtime_error("ingest: no reply for 60 s");
      ++answered;
      simdjson::dom::element body;
      if (parser.parse(static_cast<const char*>(reply.data()), reply.size()).get(body)) {
        throw std::runtime_error("ingest: reply is not JSON: " + reply.to_string());
      }
      simdjson::dom::array results;
      if (body["results"].get_array().get(results)) continue;
      for (simdjson::dom::element item : results) {
        std::string_view status;
        if (!item["status"].get_string().get(status) && status != "rejected") ++acknowledged;
      }
    }
    result.seconds = Seconds(std::chrono::steady_clock::now() - start).count();
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

void print_table(const std::vector<ModeResult>& results, std::uint64_t events, double bytes) {
  const double baseline = static_cast<double>(results.front().stored) / results.front().seconds;
  std::printf("%-9s %10s %9s %11s %6s %12s\n", "mode", "events", "seconds", "events/s", "ratio",
              "bytes/event");
  for (const auto& r : results) {
    const double rate = static_cast<double>(r.stored) / r.seconds;
    std::printf("%-9s %10llu %9.3f %11.0f %6.2f %12.0f%s\n", r.mode.c_str(),
                static_cast<unsigned long long>(r.stored), r.seconds, rate, rate / baseline,
                bytes, r.stored == events ? "" : "  (events missing)");
  }
}

nlohmann::ordered_json to_json(const std::vector<ModeResult>& results, const Options& options,
                       const config::Config& cfg, double bytes) {
  const double baseline = static_cast<double>(results.front().stored) / results.front().seconds;
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    const double rate = static_cast<double>(r.stored) / r.seconds;
    modes.push_back({{"mode", r.mode},
                     {"events", r.stored},
                     {"seconds", r.seconds},
                     {"events_per_s", rate},
                     {"ratio", rate / baseline},
                     {"mean_payload_bytes", bytes}});
  }
  return {{"events", options.events},
          {"batch_events", options.batch},
          {"window_messages", options.window},
          {"commit_max_events", cfg.store.commit_max_events},
          {"synchronous", cfg.store.synchronous},
          {"modes", std::move(modes)}};
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Measures reflectd's ingest rate against a bare SQLite insert loop.",
               "bench_ingest"};
  app.add_option("--events", options.events, "Events per mode")->check(CLI::Range(1, 100'000'000));
  app.add_option("--batch", options.batch, "Events per message")
      ->check(CLI::Range(1, static_cast<int>(bus::kMaxBatchEvents)));
  app.add_option("--window", options.window, "ingest: messages in flight")->check(CLI::Range(1, 10'000));
  app.add_option("--data", options.data_dir, "Directory holding the .jsonl event streams")
      ->check(CLI::ExistingDirectory);
  app.add_option("--dir", options.dir, "Parent of the temporary database directory (default $TMPDIR)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--json", options.json, "Print the results as JSON");
  CLI11_PARSE(app, argc, argv);

  // The in-process daemon must not talk to whatever supervises this benchmark.
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  daemon::setup_logging();
  try {
    const Corpus corpus(options.data_dir);
    const double bytes = corpus.mean_event_bytes(options.events);
    const TempDir dir(options.dir);
    const config::Config cfg = config::defaults();
    if (!options.json) {
      std::printf("%llu events (%zu distinct from %s), %llu per message, ingest window %llu, "
                  "commit_max_events %lld, synchronous %s, databases in %s\n\n",
                  static_cast<unsigned long long>(options.events), corpus.size(),
                  options.data_dir.c_str(), static_cast<unsigned long long>(options.batch),
                  static_cast<unsigned long long>(options.window),
                  static_cast<long long>(cfg.store.commit_max_events), cfg.store.synchronous.c_str(),
                  dir.path().c_str());
      std::fflush(stdout);
    }
    std::vector<ModeResult> results;
    results.push_back(run_baseline(corpus, options, cfg, dir.path()));
    results.push_back(run_push(corpus, options, dir.path()));
    results.push_back(run_ingest(corpus, options, dir.path()));
    if (options.json) {
      std::cout << to_json(results, options, cfg, bytes).dump(2) << '\n';
    } else {
      print_table(results, options.events, bytes);
    }
    const bool complete = std::all_of(results.begin(), results.end(),
                                      [&](const ModeResult& r) { return r.stored == options.events; });
    if (!complete) std::cerr << "bench_ingest: some events were not stored (see above)\n";
    return complete ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "bench_ingest: " << error.what() << '\n';
    return 1;
  }
}
