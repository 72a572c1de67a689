// bench_ingest's modes of ingest under contention: while a job runs, while a hard forget runs,
// while recalls are asked (see bench/ingest.cpp).

#include "bench/ingest_harness.hpp"

namespace reflectd::bench_ingest {
namespace {

// A job that runs only when asked: no interval, event or idle trigger may start it early.
void on_demand(config::JobConfig& job) {
  job.enabled = true;
  job.after_events = 0;
  job.idle_s = 0;
  job.interval_s = 604800;
  job.timeout_s = 86400;
}

// The rates of a contention mode: `chunk` events idle in `idle_s`, then again in `busy_s`
// under contention (reported as `busy_key`). The figure compared with the baseline is the
// rate under contention.
void record_rates(ModeResult& result, std::uint64_t chunk, double idle_s, double busy_s,
                  const char* busy_key, const Options& options) {
  const double idle_rate = static_cast<double>(chunk) / idle_s;
  const double busy_rate = static_cast<double>(chunk) / busy_s;
  result.seconds = busy_s;
  result.extra["preloaded_events"] = options.preload;
  result.extra["idle_events_per_s"] = idle_rate;
  result.extra[busy_key] = busy_rate;
  result.extra["ratio_to_idle"] = busy_rate / idle_rate;
}

// What a contention mode stored after its preload (both chunks), checked against what was
// acknowledged; the database is removed.
void record_stored(ModeResult& result, const config::Config& cfg, std::uint64_t chunk,
                   std::uint64_t acknowledged, const Options& options) {
  result.stored = count_rows(cfg.store.path, cfg) - options.preload;
  result.expected = 2 * chunk;
  if (acknowledged != result.stored) {
    std::cerr << result.mode << ": " << acknowledged << " acknowledged but " << result.stored
              << " stored\n";
    result.stored = std::min(acknowledged, result.stored);
  }
  result.stored_for_rate = chunk;
  remove_database(cfg.store.path);
}

// The start the contention modes share: a daemon with --preload events pushed and stored, then
// `chunk` events ingested (windowed, acknowledged) while it is idle.
struct PreloadedDaemon {
  PreloadedDaemon(const config::Config& cfg, const Corpus& corpus, const Options& options,
                  std::uint64_t chunk, const std::string& mode)
      : daemon(cfg), context(1), control(context, cfg.bus.control.front()) {
    control.wait_ready();
    push = push_socket(context, cfg);
    push_events(push, corpus, 0, options.preload, options.batch);
    await_finished(control, options.preload, nullptr, (mode + " preload").c_str());
    dealer = ingest_socket(context, cfg.bus.ingest.front());
    next = options.preload;
    idle_s = ingest_idle(dealer, control, corpus, next, chunk, options, acknowledged);
  }

  ForkedDaemon daemon;
  zmq::context_t context;
  ControlClient control;
  zmq::socket_t push;
  zmq::socket_t dealer;
  std::uint64_t next = 0;          ///< The corpus position of the next event to ingest.
  std::uint64_t acknowledged = 0;  ///< Events acknowledged after the preload.
  double idle_s = 0;               ///< Seconds the idle chunk took.
};

}  // namespace

// Windowed ingest while the heaviest job runs, against idle windowed ingest in the same
// daemon: preload --preload events (push), ingest --under-job-events idle, start the job
// over the control socket, ingest the same number again while it runs.
ModeResult run_under_job(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underjob");
  on_demand(cfg.jobs.cluster);
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-job", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    PreloadedDaemon preloaded(cfg, corpus, options, chunk, "under-job");
    ControlClient& control = preloaded.control;

    const auto queued = control.request({{"cmd", "run"}, {"job", options.job}});
    if (!queued.value("ok", false)) throw std::runtime_error("under-job: " + queued.dump());
    // Running once its job_runs row says so.
    for (;;) {
      const auto runs = control.request({{"cmd", "jobs"}, {"job", options.job}, {"limit", 1}});
      const auto& rows = runs.at("runs");
      if (!rows.empty() && rows.at(0).at("status") == "running") break;
      std::this_thread::sleep_for(kPollInterval);
    }
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t resent = 0;
    acknowledged =
        preloaded.acknowledged +
        ingest_windowed(preloaded.dealer, corpus, preloaded.next, chunk, options, &resent);
    const double busy_s = Seconds(std::chrono::steady_clock::now() - start).count();
    const auto runs = control.request({{"cmd", "jobs"}, {"job", options.job}, {"limit", 1}});
    const bool overlapped = runs.at("runs").at(0).at("status") == "running";
    // How the write lock was shared meanwhile (store/write_gate.hpp; the idle part adds nothing).
    result.extra["write_gate"] = control.status()["write_gate"];
    record_rates(result, chunk, preloaded.idle_s, busy_s, "under_job_events_per_s", options);
    result.extra["job"] = options.job;
    result.extra["job_ran_throughout"] = overlapped;
    result.extra["messages_resent_storage_unavailable"] = resent;
    if (!overlapped) {
      std::cerr << "under-job: the " << options.job
                << " run ended before the ingest did; raise --preload for a full overlap\n";
    }
    if (!preloaded.daemon.stop())
      throw std::runtime_error("under-job: the daemon did not exit cleanly");
  }
  record_stored(result, cfg, chunk, acknowledged, options);
  return result;
}

// The events the forget removes: one namespace's, told apart by their agent.
void push_forget_events(zmq::socket_t& push, const Options& options) {
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
}

// Every job once, in the cycle's order, each awaited on a socket of its own: job runs at a
// million events outlast ControlClient's 60 s reply wait.
void run_every_job(zmq::context_t& context, const std::string& control_endpoint) {
  zmq::socket_t runs(context, zmq::socket_type::dealer);
  runs.set(zmq::sockopt::linger, 0);
  runs.connect(control_endpoint);
  for (const char* job : {"consolidate", "cluster", "importance", "facts", "medallion", "decay"}) {
    runs.send(zmq::buffer(nlohmann::json{{"cmd", "run"}, {"job", job}, {"wait", true}}.dump()),
              zmq::send_flags::none);
    zmq::message_t reply;
    if (!runs.recv(reply) || !nlohmann::json::parse(reply.to_string_view()).value("ok", false)) {
      throw std::runtime_error(std::string("under-forget: job ") + job + " failed");
    }
  }
}

// The forget's own run (its chunked clear, its delete and the index optimization), without
// the rebuild runs that "wait" includes, and how long the writer ever waited for the jobs.
void record_forget_run(ControlClient& control, nlohmann::json& forgotten, ModeResult& result) {
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
}

// Windowed ingest during a hard forget (memory_ops/forget.hpp), against idle windowed ingest in
// the same daemon (the under-job mode's protocol with a forget instead of a job).
ModeResult run_under_forget(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underforget");
  for (config::JobConfig* job : {&cfg.jobs.consolidate, &cfg.jobs.decay, &cfg.jobs.cluster,
                                 &cfg.jobs.importance, &cfg.jobs.medallion, &cfg.jobs.facts}) {
    on_demand(*job);
  }
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-forget", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    ForkedDaemon daemon(cfg);
    zmq::context_t context(1);
    ControlClient control(context, cfg.bus.control.front());
    control.wait_ready();
    zmq::socket_t push = push_socket(context, cfg);
    push_events(push, corpus, 0, options.preload, options.batch);
    push_forget_events(push, options);
    await_finished(control, options.preload + options.forget_events, nullptr,
                   "under-forget preload");
    const auto cycle_start = std::chrono::steady_clock::now();
    run_every_job(context, cfg.bus.control.front());
    result.extra["job_cycle_seconds"] =
        Seconds(std::chrono::steady_clock::now() - cycle_start).count();
    zmq::socket_t dealer = ingest_socket(context, cfg.bus.ingest.front());
    std::uint64_t next = options.preload;
    const double idle_s = ingest_idle(dealer, control, corpus, next, chunk, options, acknowledged);

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
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t resent = 0;
    acknowledged += ingest_windowed(dealer, corpus, next, chunk, options, &resent);
    const double busy_s = Seconds(std::chrono::steady_clock::now() - start).count();
    const bool overlapped = !forget_done;
    forgetter.join();
    if (!forgotten.value("ok", false)) {
      throw std::runtime_error("under-forget: the forget failed: " + forgotten.dump());
    }
    record_rates(result, chunk, idle_s, busy_s, "under_forget_events_per_s", options);
    result.extra["forgotten_events"] = forgotten["forgotten"]["events_deleted"];
    result.extra["forget_seconds"] = forget_s;
    record_forget_run(control, forgotten, result);
    result.extra["forget_ran_throughout"] = overlapped;
    result.extra["messages_resent_storage_unavailable"] = resent;
    if (!daemon.stop()) throw std::runtime_error("under-forget: the daemon did not exit cleanly");
  }
  record_stored(result, cfg, chunk, acknowledged, options);
  return result;
}

// Windowed ingest while `recall` is asked at --recall-qps, against idle windowed ingest in the
// same daemon (the under-job mode's protocol with reads instead of a job).
ModeResult run_under_recall(const Corpus& corpus, const Options& options, const fs::path& dir) {
  config::Config cfg = daemon_config(options, dir, "underrecall");
  const std::vector<std::string> questions = libzmq_questions(options.data_dir, 1, "under-recall");
  const std::uint64_t chunk = std::min(options.events, options.under_job_events);
  ModeResult result{"under-recall", 0, 0.0};
  std::uint64_t acknowledged = 0;
  {
    PreloadedDaemon preloaded(cfg, corpus, options, chunk, "under-recall");

    std::atomic<bool> done{false};
    std::vector<double> latency_ms;
    std::thread asker([&] {
      ControlClient reader(preloaded.context, cfg.bus.control.front());
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
    const auto start = std::chrono::steady_clock::now();
    acknowledged = preloaded.acknowledged +
                   ingest_windowed(preloaded.dealer, corpus, preloaded.next, chunk, options);
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
    record_rates(result, chunk, preloaded.idle_s, busy_s, "under_recall_events_per_s", options);
    result.extra["recall_qps_asked"] = options.recall_qps;
    result.extra["recalls_answered"] = latency_ms.size();
    result.extra["recall_p50_ms"] = at(0.5);
    result.extra["recall_p99_ms"] = at(0.99);
    if (!preloaded.daemon.stop()) {
      throw std::runtime_error("under-recall: the daemon did not exit cleanly");
    }
  }
  record_stored(result, cfg, chunk, acknowledged, options);
  return result;
}

}  // namespace reflectd::bench_ingest
