#include "daemon/daemon.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "bus/control_request.hpp"
#include "common/heap.hpp"
#include "common/version.hpp"
#include "daemon/settings.hpp"
#include "jobs/sql_functions.hpp"
#include "memory_ops/medallions.hpp"
#include "model/commands.hpp"
#include "model/request_params.hpp"
#include "store/database.hpp"
#include "store/fts_index.hpp"
#include "store/reinforcement.hpp"

namespace reflectd::daemon {

// Control parameters are read by the same pure helpers the control fuzz target drives.
using model::limit_param;
using model::text_param;

namespace {

void notify_systemd(const std::string& state) {
  // A no-op returning 0 when $NOTIFY_SOCKET is unset (not run by systemd).
  if (sd_notify(0, state.c_str()) < 0) spdlog::debug("sd_notify failed for {}", state);
}

std::uint64_t file_size(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

}  // namespace

Daemon::Daemon(config::Config config, DaemonOptions options, const Clock& clock)
    : config_(std::move(config)), options_(std::move(options)), clock_(clock), zmq_context_(1) {}

Daemon::~Daemon() {
  if (metrics_) metrics_->stop();
  // Jobs and the writer call back into the bus: stop them before the bus goes away.
  if (jetstream_) jetstream_->stop_reading();
  if (scheduler_) scheduler_->stop();
  if (writer_) writer_->stop();
  if (jetstream_) jetstream_->close();
  if (forwarder_) forwarder_->close();
}

// The NATS side (docs/CLUSTER.md): the forwarder of a gateway, and the inlet of a replica
// with its reads over NATS. Made after the writer and the read thread they hand work to.
void Daemon::make_jetstream(const store::DatabaseOptions& database) {
  if (config_.bus.forward == "jetstream") {
    forwarder_ = std::make_unique<bus::JetStreamForwarder>(config_.bus, [this] {
      if (bus::Bus* bus = bus_for_writer_.load()) bus->writer_has_space();
    });
    bus_->forward_ingest_to(*forwarder_);
  }
  // A gateway (bus.forward: jetstream without a consumer) forwards and consumes nothing.
  const bool gateway = forwarder_ && config_.bus.jetstream.consumer.empty();
  if (!config_.bus.jetstream.servers.empty() && !gateway) {
    // Reads over NATS (docs/CLUSTER.md): status and the read commands, on the io thread like
    // requests from the control socket; the caller is limited to the subject's namespace.
    bus::NatsControlHandler nats_control = [this](nlohmann::json request,
                                                  const bus::Principal& caller,
                                                  std::function<void(nlohmann::json)> reply) {
      boost::asio::post(
          io_, [this, request = std::move(request), caller, reply = std::move(reply)] {
            if (stopping_) return reply({{"ok", false}, {"error", "reflectd is stopping"}});
            // A missing or non-string "cmd" goes on to handle_control(), which says what it
            // needs.
            const auto field = request.find("cmd");
            const std::string cmd =
                field != request.end() && field->is_string() ? field->get<std::string>() : "";
            if (!cmd.empty() && cmd != "status" && !ReadThread::answers(cmd)) {
              return reply({{"ok", false},
                            {"error", "cmd: '" + cmd +
                                          "' is not answered over NATS (status and the reads "
                                          "are; use the control socket)"}});
            }
            handle_control(request, caller, reply);
          });
    };
    jetstream_ = std::make_unique<bus::JetStreamInlet>(
        config_.bus.jetstream, database, *writer_, clock_, config_.bus.max_message_bytes,
        config_.store.writer_queue_events, std::move(nats_control));
    jetstream_->set_authorized_keys(security_.keys);
    jetstream_for_writer_ = jetstream_.get();
  }
}

void Daemon::start() {
  started_us_ = clock_.now_us();
  spdlog::set_level(spdlog::level::from_str(config_.log.level));
  store_path_ = config::resolve_store_path(config_.store.path, std::getenv("STATE_DIRECTORY"));
  security_ = bus::load_security(config_);
  if (security_.curve) {
    if (zmq_has("curve") == 0) throw std::runtime_error("security: libzmq was built without CURVE");
    zap_ = std::make_unique<bus::ZapHandler>(io_, zmq_context_, security_.keys);
    zap_->start();
  }

  write_gate_ =
      std::make_unique<store::WriteGate>(config_.jobs.write_wait_ms, config_.jobs.write_slice_ms);
  // The jobs' connection and the interrupted-run recovery come before the writer: the writer's
  // thread starts indexing unindexed events (FTS) at once, and the recovery's UPDATE would wait
  // for those transactions (0.7-1.6 s before READY=1 on a database with a search-index backlog).
  const store::DatabaseOptions database{store_path_, config_.store.synchronous,
                                        config_.store.busy_timeout_ms};
  jobs_db_ = std::make_unique<SQLite::Database>(
      store::open_database(jobs_database_options(config_, store_path_), store::Access::kWriter));
  page_size_bytes_ = jobs_db_->execAndGet("PRAGMA page_size").getInt64();
  if (page_size_bytes_ != store::kPageSizeBytes) {
    // A file from an earlier reflectd keeps its pages; the jobs run ~10% faster on new ones.
    spdlog::info(
        "database {} has {}-byte pages (new databases get {}); to convert it, stop reflectd "
        "and run reflectd --vacuum with the same configuration",
        store_path_, page_size_bytes_, store::kPageSizeBytes);
  }
  scheduler_ = std::make_unique<jobs::Scheduler>(
      *jobs_db_, clock_, build_jobs(config_),
      [this](const std::string& topic, nlohmann::json payload) {
        boost::asio::post(io_, [this, topic, payload = std::move(payload)]() mutable {
          if (!stopping_) bus_->publish(topic, std::move(payload));
        });
      },
      write_gate_.get());
  if (const int interrupted = scheduler_->recover_interrupted(); interrupted > 0) {
    spdlog::warn("{} job runs were interrupted by the previous stop", interrupted);
  }
  resume_interrupted_clears();
  store::WriterOptions writer_settings = writer_options(config_, store_path_);
  writer_settings.gate = write_gate_.get();
  writer_ = std::make_unique<store::Writer>(std::move(writer_settings), clock_, [this] {
    if (bus::Bus* bus = bus_for_writer_.load()) bus->writer_has_space();
    if (bus::JetStreamInlet* inlet = jetstream_for_writer_.load()) inlet->writer_has_space();
  });

  bus_ = std::make_unique<bus::Bus>(
      io_, zmq_context_, config_.bus, *writer_, clock_,
      [this](const nlohmann::json& request, const bus::Principal& caller,
             const bus::ControlReply& reply) { handle_control(request, caller, reply); },
      security_);
  bus_for_writer_ = bus_.get();
  writer_->share_checkpointer(*jobs_db_);
  reader_db_ =
      std::make_unique<SQLite::Database>(store::open_database(database, store::Access::kReader));
  reader_vitality_ = vitality_params(config_.decay);
  jobs::register_sql_functions(*reader_db_, reader_vitality_);
  if (!config_.recall.wordnet_dir.empty()) {
    wordnet_ = std::make_shared<const recall::WordNetLoader>(config_.recall.wordnet_dir);
  }
  reads_ = std::make_unique<ReadThread>(database, reader_vitality_,
                                        recall_params(config_, wordnet_), clock_);
  writer_->set_commit_listener([this](const std::map<std::string, std::uint64_t>& stored) {
    for (const auto& [ns, count] : stored) scheduler_->events_committed(ns, count);
  });

  make_jetstream(database);

  if (forwarder_) forwarder_->start();
  bus_->start();
  if (jetstream_) jetstream_->start();
  scheduler_->start();
  if (!config_.daemon.metrics_listen.empty()) {
    metrics_ = std::make_unique<metrics::HttpServer>(config_.daemon.metrics_listen,
                                                     [this] { return render_metrics(); });
  }

  start_http();

  if (options_.handle_signals) {
    signals_ = std::make_unique<boost::asio::signal_set>(io_, SIGTERM, SIGINT, SIGHUP);
    wait_for_signal();
  }
  stats_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
  arm_stats_timer();
  std::uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0) {
    watchdog_interval_us_ = watchdog_usec / 2;
    watchdog_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
    arm_watchdog_timer();
  }

  spdlog::info(
      "reflectd {} ready: database {}, ingest {}, push {}, control {}, metrics {}, http {}, heap "
      "{}",
      kVersion, store_path_, fmt::join(endpoints().ingest, ","), fmt::join(endpoints().push, ","),
      fmt::join(endpoints().control, ","),
      metrics_ ? "http://" + metrics_->bound_address() + "/metrics" : "off",
      http_ ? "http://" + http_->bound_address() + "/v1/" : "off", heap_allocator());
  notify_systemd("READY=1\nSTATUS=" + status_line());
}

int Daemon::run() {
  io_.run();
  spdlog::info("stopped: {}", status_line());
  return 0;
}

void Daemon::request_stop() {
  boost::asio::post(io_, [this] { stop_now(); });
}

void Daemon::request_reload() {
  boost::asio::post(io_, [this] { reload_now(); });
}

const bus::BoundEndpoints& Daemon::endpoints() const { return bus_->endpoints(); }

void Daemon::stop_now() {
  if (stopping_) return;
  stopping_ = true;
  notify_systemd("STOPPING=1");
  bus_->stop_reading();
  if (jetstream_) jetstream_->stop_reading();
  if (metrics_) metrics_->stop();  // a scrape in progress ends first (join)
  calls_stopping_ = true;
  if (mcp_sessions_) mcp_sessions_->stop();  // its waits end within 100 ms of the flag
  // A running job is cancelled cooperatively; its open transaction rolls back.
  scheduler_->stop();
  if (signals_) signals_->cancel();
  if (stats_timer_) stats_timer_->cancel();
  if (watchdog_timer_) watchdog_timer_->cancel();
  if (reads_) reads_->stop();
  flush_accesses();
  // Commits everything already received; its replies are posted to the io_context ahead of
  // the close below, so they are sent (within bus.linger_ms) before the sockets close.
  writer_->stop();
  // After the writer: the messages it answered while stopping have sent their acks.
  if (jetstream_) jetstream_->close();
  if (http_) http_->stop();
  // Waits for the PubAcks of what was forwarded; their replies are posted ahead of the close.
  if (forwarder_) forwarder_->close();
  boost::asio::post(io_, [this] {
    bus_->close();
    if (zap_) zap_->close();
  });
}

void Daemon::reload_now() {
  if (stopping_) return;
  notify_systemd("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()));
  last_reload_.at_us = clock_.now_us();
  try {
    config::Config next =
        options_.config_path.empty() ? config::defaults() : config::load_file(options_.config_path);
    // Everything that can fail is built before anything is applied.
    std::vector<jobs::Job> next_jobs = build_jobs(next);
    // The authorized keys are re-read on every reload (the file may change under the same
    // name); a broken file keeps the running list.
    std::shared_ptr<const bus::AuthorizedKeys> next_keys;
    if (!next.security.authorized_keys_file.empty()) {
      next_keys = std::make_shared<const bus::AuthorizedKeys>(
          bus::AuthorizedKeys::load_file(next.security.authorized_keys_file));
    }
    std::shared_ptr<const http::Tokens> next_tokens = load_http_tokens(next);
    std::vector<std::string> restart_needed;
    for (std::string_view key : config::changed_keys(config_, next)) {
      const auto table = config::key_table();
      const auto spec = std::find_if(table.begin(), table.end(),
                                     [&](const config::KeySpec& s) { return s.path == key; });
      if (spec != table.end() && !spec->live) restart_needed.emplace_back(key);
    }
    // Apply what can change live; the rest keeps its running value until a restart.
    config_.log = next.log;
    config_.bus.max_message_bytes = next.bus.max_message_bytes;
    config_.store.commit_max_events = next.store.commit_max_events;
    config_.store.commit_max_delay_ms = next.store.commit_max_delay_ms;
    config_.store.max_pages = next.store.max_pages;
    config_.store.fts_batch_events = next.store.fts_batch_events;
    config_.daemon = next.daemon;
    config_.jobs = next.jobs;
    config_.consolidation = next.consolidation;
    config_.decay = next.decay;
    config_.medallion = next.medallion;
    if (security_.curve && next_keys) {
      config_.security.authorized_keys_file = next.security.authorized_keys_file;
      security_.keys = next_keys;
      bus_->set_authorized_keys(next_keys);
      zap_->set_keys(next_keys);
      if (jetstream_) jetstream_->set_authorized_keys(next_keys);
    } else if (security_.curve) {
      restart_needed.emplace_back("security.authorized_keys_file");
    }
    config_.security.http_tokens_file = next.security.http_tokens_file;
    if (http_api_) http_api_->set_tokens(std::move(next_tokens));
    writer_->set_profiles(decay_profiles(config_.decay));
    scheduler_->reconfigure(std::move(next_jobs));
    reader_vitality_ = vitality_params(config_.decay);
    reads_->reconfigure(reader_vitality_, recall_params(config_, wordnet_));
    spdlog::set_level(spdlog::level::from_str(config_.log.level));
    bus_->set_max_message_bytes(config_.bus.max_message_bytes);
    writer_->set_commit_limits(config_.store.commit_max_events, config_.store.commit_max_delay_ms);
    writer_->set_max_pages(config_.store.max_pages);
    writer_->set_fts_batch_events(config_.store.fts_batch_events);
    write_gate_->set_policy(config_.jobs.write_wait_ms, config_.jobs.write_slice_ms);
    last_reload_.ok = true;
    last_reload_.message =
        restart_needed.empty()
            ? "applied"
            : "applied; needs a restart: " + fmt::format("{}", fmt::join(restart_needed, ", "));
    spdlog::info("configuration reloaded: {}", last_reload_.message);
  } catch (const std::exception& error) {
    last_reload_.ok = false;
    last_reload_.message = error.what();
    spdlog::error("reload failed, keeping the running configuration: {}", error.what());
  }
  notify_systemd("READY=1\nSTATUS=" + status_line());
}

void Daemon::wait_for_signal() {
  signals_->async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;
    if (signal == SIGHUP) {
      reload_now();
      if (!stopping_) wait_for_signal();
      return;
    }
    spdlog::info("received {}: stopping", signal == SIGTERM ? "SIGTERM" : "SIGINT");
    stop_now();
  });
}

void Daemon::arm_stats_timer() {
  stats_timer_->expires_after(std::chrono::milliseconds(config_.daemon.stats_interval_ms));
  stats_timer_->async_wait([this](const boost::system::error_code& error) {
    if (error || stopping_) return;
    flush_accesses();
    const auto& stats = writer_->stats();
    const std::uint64_t stored = stats.stored.load(), duplicate = stats.duplicate.load(),
                        rejected = stats.rejected.load();
    if (stored != last_stored_ || duplicate != last_duplicate_ || rejected != last_rejected_) {
      bus_->publish("events.stored", {{"stored", stored - last_stored_},
                                      {"duplicate", duplicate - last_duplicate_},
                                      {"rejected", rejected - last_rejected_},
                                      {"interval_ms", config_.daemon.stats_interval_ms},
                                      {"total_stored", stored}});
      last_stored_ = stored;
      last_duplicate_ = duplicate;
      last_rejected_ = rejected;
      notify_systemd("STATUS=" + status_line());
    }
    arm_stats_timer();
  });
}

void Daemon::arm_watchdog_timer() {
  // Pinged from the event loop itself: a stalled loop stops the pings and systemd restarts us.
  notify_systemd("WATCHDOG=1");
  watchdog_timer_->expires_after(std::chrono::microseconds(watchdog_interval_us_));
  watchdog_timer_->async_wait([this](const boost::system::error_code& error) {
    if (!error && !stopping_) arm_watchdog_timer();
  });
}

std::string Daemon::status_line() const {
  const auto& stats = writer_->stats();
  return fmt::format("{} stored, {} duplicate, {} rejected, {} dead letters, queue {}",
                     stats.stored.load(), stats.duplicate.load(), stats.rejected.load(),
                     stats.dead_letters.load(), stats.queue_events.load());
}

nlohmann::json Daemon::status(const bus::Principal& caller) const {
  const auto& stats = writer_->stats();
  const auto& bus_stats = bus_->stats();
  const auto& bound = endpoints();
  // CURVE subscribe publishers and whom their events are attributed to (null: key removed
  // by a reload, events refused).
  nlohmann::json publishers = nlohmann::json::array();
  for (const bus::SubscribeLink& link : bus_->subscribe_links()) {
    const bus::Principal* principal =
        security_.keys ? security_.keys->find(link.public_key) : nullptr;
    publishers.push_back(
        {{"endpoint", link.endpoint},
         {"public_key", link.public_key},
         {"agent_id", principal ? nlohmann::json(principal->agent_id) : nlohmann::json()},
         {"connected", link.connected},
         {"handshakes_succeeded", link.handshakes_succeeded},
         {"handshakes_failed", link.handshakes_failed},
         {"last_failure", link.last_failure}});
  }
  return {
      {"ok", true},
      {"version", kVersion},
      {"uptime_s", static_cast<double>(clock_.now_us() - started_us_) / 1e6},
      {"events",
       {{"stored", stats.stored.load()},
        {"duplicate", stats.duplicate.load()},
        {"rejected", stats.rejected.load()}}},
      {"dead_letters", stats.dead_letters.load()},
      {"writer_queue_events", stats.queue_events.load()},
      {"commits", stats.commits.load()},
      {"storage_errors", stats.storage_errors.load()},
      // Write-lock arbitration between ingest and the jobs (store/write_gate.hpp).
      {"write_gate",
       {{"job_turns", write_gate_->stats().job_turns.load()},
        {"job_yields", write_gate_->stats().job_yields.load()},
        {"job_forced", write_gate_->stats().job_forced.load()},
        {"writer_waits", write_gate_->stats().writer_waits.load()},
        {"writer_wait_max_us", write_gate_->stats().writer_wait_max_us.load()},
        {"writer_timeouts", write_gate_->stats().writer_timeouts.load()}}},
      {"messages", bus_stats.messages.load()},
      {"replies_dropped", bus_stats.replies_dropped.load()},
      {"reads_paused", bus_stats.paused.load()},
      {"db_bytes", file_size(store_path_) + file_size(store_path_ + "-wal")},
      {"page_size_bytes", page_size_bytes_},
      // Search is complete through indexed_through_seq; lag_events = last_seq minus it.
      {"search_index",
       {{"indexed_through_seq", stats.fts_indexed_seq.load()},
        {"last_seq", stats.last_seq.load()},
        {"lag_events",
         std::max<std::int64_t>(0, stats.last_seq.load() - stats.fts_indexed_seq.load())}}},
      {"database", store_path_},
      {"jetstream", jetstream_ ? jetstream_->status() : nlohmann::json()},
      {"forward", forwarder_ ? forwarder_->status() : nlohmann::json()},
      {"endpoints",
       {{"ingest", bound.ingest},
        {"push", bound.push},
        {"notify", bound.notify},
        {"control", bound.control},
        {"metrics", metrics_ ? "http://" + metrics_->bound_address() + "/metrics" : ""},
        {"http", http_ ? "http://" + http_->bound_address() + "/v1/" : ""}}},
      {"last_reload",
       {{"at_us", last_reload_.at_us}, {"ok", last_reload_.ok}, {"message", last_reload_.message}}},
      {"security",
       {{"curve", security_.curve},
        {"insecure", security_.insecure},
        {"authorized_keys", security_.keys ? security_.keys->size() : 0},
        {"handshakes_accepted", zap_ ? zap_->stats().accepted.load() : 0},
        {"handshakes_refused", zap_ ? zap_->stats().refused.load() : 0},
        {"subscribe_publishers", std::move(publishers)}}},
      {"caller",
       {{"agent_id",
         caller.is_local_operator() ? nlohmann::json() : nlohmann::json(caller.agent_id)},
        {"local_operator", caller.is_local_operator()},
        {"namespaces",
         caller.all_namespaces ? nlohmann::json::array({"*"}) : nlohmann::json(caller.namespaces)},
        {"max_sensitivity", bus::kSensitivityLevels[caller.clearance]},
        {"admin", caller.admin}}},
  };
}

const std::map<std::string, Daemon::ControlHandler, std::less<>>& Daemon::control_handlers() {
  // Captureless lambdas: member functions are private, and the lambdas, written here, may
  // call them.
  static const std::map<std::string, ControlHandler, std::less<>> kHandlers{
      {"status",
       [](Daemon& d, const std::string&, const nlohmann::json&, const bus::Principal& caller,
          const bus::ControlReply& reply) { reply(d.status(caller)); }},
      {"run",
       [](Daemon& d, const std::string&, const nlohmann::json& request, const bus::Principal&,
          const bus::ControlReply& reply) { d.control_run(request, reply); }},
      {"jobs",
       [](Daemon& d, const std::string&, const nlohmann::json& request, const bus::Principal&,
          const bus::ControlReply& reply) { reply(d.control_jobs(request)); }},
      {"reinforce",
       [](Daemon& d, const std::string&, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_reinforce(request, caller, reply); }},
      // medallion's writes only; its reads go to the read thread.
      {"medallion",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_write_op(cmd, request, caller, reply); }},
      {"revise",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_write_op(cmd, request, caller, reply); }},
      {"proposal",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_write_op(cmd, request, caller, reply); }},
      {"merge_entities",
       [](Daemon& d, const std::string&, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_merge_entities(request, caller, reply); }},
      {"forget",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_memory_op(cmd, request, caller, reply); }},
      {"restore",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_memory_op(cmd, request, caller, reply); }},
      {"pin",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_memory_op(cmd, request, caller, reply); }},
      {"unpin",
       [](Daemon& d, const std::string& cmd, const nlohmann::json& request,
          const bus::Principal& caller,
          const bus::ControlReply& reply) { d.control_memory_op(cmd, request, caller, reply); }},
      {"test_stall",
       [](Daemon&, const std::string&, const nlohmann::json& request, const bus::Principal&,
          const bus::ControlReply& reply) {
         // Test hook (daemon/test_hooks.hpp): a deliberately stuck event loop for the watchdog
         // test.
         const auto ms = std::clamp<std::int64_t>(request.value("ms", std::int64_t{0}), 0, 60000);
         std::this_thread::sleep_for(std::chrono::milliseconds(ms));
         reply({{"ok", true}, {"stalled_ms", ms}});
       }},
  };
  return kHandlers;
}

std::vector<std::string> Daemon::unhandled_commands() {
  std::vector<std::string> out;
  for (const model::CommandSpec& spec : model::command_table()) {
    if (!spec.daemon_command()) continue;
    const bool handled = spec.answerer == model::Answerer::kRead
                             ? ReadThread::answers(std::string(spec.name))
                             : control_handlers().count(spec.name) > 0;
    if (!handled) out.emplace_back(spec.name);
  }
  return out;
}

void Daemon::handle_control(const nlohmann::json& request, const bus::Principal& caller,
                            const bus::ControlReply& reply) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string()) {
    reply({{"ok", false},
           {"error", "request: \"cmd\" (string) is required; known: " +
                         model::known_commands(options_.test_hooks)}});
    return;
  }
  const auto& name = cmd->get_ref<const std::string&>();
  const model::CommandSpec* spec = model::find_command(name);
  if (spec == nullptr || !spec->daemon_command() || (spec->test_hook && !options_.test_hooks)) {
    return reply({{"ok", false},
                  {"error", "unknown command '" + name +
                                "'; known: " + model::known_commands(options_.test_hooks)}});
  }
  // Admin commands change what the daemon holds or does (docs/SECURITY.md).
  if (spec->admin && !caller.admin) {
    return reply({{"ok", false},
                  {"error", model::admin_refusal(name, caller.agent_id, options_.test_hooks)}});
  }
  try {
    // medallion is a read but for its writes (create, update, set_status), which the writer
    // thread runs like every other write.
    const bool read = spec->answerer == model::Answerer::kRead &&
                      !(name == "medallion" && memory_ops::is_medallion_write(request));
    if (read) return control_read(name, request, caller, reply);
    // Every daemon command of the table has a handler (unhandled_commands(), tested).
    if (const auto handler = control_handlers().find(name); handler != control_handlers().end()) {
      return handler->second(*this, name, request, caller, reply);
    }
    reply({{"ok", false}, {"error", name + ": no handler in this reflectd"}});
  } catch (const std::exception& error) {
    reply({{"ok", false}, {"error", std::string("request failed: ") + error.what()}});
  }
}

void Daemon::control_run(const nlohmann::json& request, const bus::ControlReply& reply) {
  const std::string job = text_param(request, "job");
  const std::string ns = text_param(request, "namespace");
  const bool wait = request.value("wait", false);
  jobs::Scheduler::RunDone done;
  if (wait) {
    done = [reply](const jobs::RunRecord& run) {
      nlohmann::json body = {{"ok", run.status == "ok" || run.status == "skipped"},
                             {"run", jobs::to_json(run)}};
      if (!run.error.empty()) body["error"] = run.error;
      reply(std::move(body));
    };
  }
  if (auto error = scheduler_->request(job, ns, std::move(done))) {
    return reply({{"ok", false}, {"error", *error}});
  }
  if (!wait) reply({{"ok", true}, {"queued", job}, {"namespace", ns}});
}

nlohmann::json Daemon::control_jobs(const nlohmann::json& request) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run :
       jobs::recent_runs(*reader_db_, limit_param(request, 20), text_param(request, "job"))) {
    runs.push_back(jobs::to_json(run));
  }
  return {{"ok", true}, {"jobs", scheduler_->job_names()}, {"runs", std::move(runs)}};
}

}  // namespace reflectd::daemon

namespace reflectd::daemon {

void Daemon::control_reinforce(const nlohmann::json& request, const bus::Principal& caller,
                               const bus::ControlReply& reply) {
  if (auto missing = model::missing_field(*model::find_command("reinforce"), request)) {
    return reply({{"ok", false}, {"error", *missing}});
  }
  const std::string id = text_param(request, "id");
  const bool useful = request.value("useful", true);
  // An authenticated caller is its key's agent_id in the audit row, whatever the request says.
  const std::string actor = !caller.is_local_operator() ? caller.agent_id
                            : text_param(request, "agent_id").empty()
                                ? "control"
                                : text_param(request, "agent_id");
  store::WriteRequest write;
  write.apply = [id, useful, actor, now = clock_.now_us(),
                 profiles = decay_profiles(config_.decay)](SQLite::Database& db) {
    return store::reinforce(db, id, useful, actor, now, profiles);
  };
  write.on_done = [reply](store::WriteResult&& result) {
    if (!result.storage_error.empty())
      return reply({{"ok", false}, {"error", result.storage_error}});
    if (!result.apply_error.empty()) return reply({{"ok", false}, {"error", result.apply_error}});
    reply({{"ok", true}, {"reinforced", nlohmann::json::parse(result.apply_result)}});
  };
  if (!writer_->submit(std::move(write))) {
    reply({{"ok", false}, {"error", "writer busy or stopping: retry"}});
  }
}

void Daemon::control_read(const std::string& cmd, const nlohmann::json& request,
                          const bus::Principal& caller, const bus::ControlReply& reply) {
  if (reads_->pending_accesses() >= store::kAccessBatchFlush) flush_accesses();
  reads_->post(cmd, request,
               recall::ReadScope{caller.clearance, caller.all_namespaces, caller.namespaces},
               reply);
}

void Daemon::flush_accesses() {
  unflushed_accesses_.merge(reads_->take_accesses());
  if (unflushed_accesses_.empty()) return;
  auto batch = std::make_shared<store::AccessBatch>(unflushed_accesses_.take());
  store::WriteRequest write;
  write.apply = [batch](SQLite::Database& db) { return std::to_string(batch->apply(db)); };
  write.on_done = [](store::WriteResult&& result) {
    if (!result.storage_error.empty() || !result.apply_error.empty()) {
      spdlog::warn("access counts not written: {}{}", result.storage_error, result.apply_error);
    }
  };
  // A full writer queue keeps the batch for the next tick.
  if (!writer_->submit(std::move(write))) unflushed_accesses_.merge(*batch);
}

}  // namespace reflectd::daemon

namespace reflectd::daemon {}  // namespace reflectd::daemon
