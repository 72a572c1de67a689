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
#include "store/database.hpp"
#include "store/fts_index.hpp"
#include "store/reinforcement.hpp"

namespace reflectd::daemon {

// Control parameters are read by the same pure helpers the control fuzz target drives.
using bus::fts_query;
using bus::limit_param;
using bus::string_list;
using bus::text_param;

namespace {

constexpr const char* kCommands =
    "status, run, jobs, knowledge, observations, reinforce, search, recall, context, get, episode, "
    "events, medallion, entities, clusters";

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
  // Jobs and the writer call back into the bus: stop them before the bus goes away.
  if (scheduler_) scheduler_->stop();
  if (writer_) writer_->stop();
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
  store::WriterOptions writer_settings = writer_options(config_, store_path_);
  writer_settings.gate = write_gate_.get();
  writer_ = std::make_unique<store::Writer>(std::move(writer_settings), clock_, [this] {
    if (bus::Bus* bus = bus_for_writer_.load()) bus->writer_has_space();
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
  reads_ = std::make_unique<ReadThread>(database, reader_vitality_, recall_params(config_), clock_);
  writer_->set_commit_listener([this](const std::map<std::string, std::uint64_t>& stored) {
    for (const auto& [ns, count] : stored) scheduler_->events_committed(ns, count);
  });

  bus_->start();
  scheduler_->start();

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

  spdlog::info("reflectd {} ready: database {}, ingest {}, push {}, control {}, heap {}", kVersion,
               store_path_, fmt::join(endpoints().ingest, ","), fmt::join(endpoints().push, ","),
               fmt::join(endpoints().control, ","), heap_allocator());
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
    } else if (security_.curve) {
      restart_needed.emplace_back("security.authorized_keys_file");
    }
    writer_->set_profiles(decay_profiles(config_.decay));
    scheduler_->reconfigure(std::move(next_jobs));
    reader_vitality_ = vitality_params(config_.decay);
    reads_->reconfigure(reader_vitality_, recall_params(config_));
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
      {"endpoints",
       {{"ingest", bound.ingest},
        {"push", bound.push},
        {"notify", bound.notify},
        {"control", bound.control}}},
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

void Daemon::handle_control(const nlohmann::json& request, const bus::Principal& caller,
                            const bus::ControlReply& reply) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string()) {
    reply({{"ok", false},
           {"error", std::string("request: \"cmd\" (string) is required; known: ") + kCommands}});
    return;
  }
  // Admin commands change what the daemon holds or does (README "Security").
  const bool admin_command = *cmd == "run" || *cmd == "reinforce" || *cmd == "test_stall";
  if (admin_command && !caller.admin) {
    return reply(
        {{"ok", false},
         {"error",
          cmd->get<std::string>() + ": not allowed for agent '" + caller.agent_id +
              "': admin commands (run, reinforce) need admin: true in the authorized keys"}});
  }
  try {
    if (*cmd == "status") return reply(status(caller));
    if (*cmd == "run") return control_run(request, reply);
    if (*cmd == "jobs") return reply(control_jobs(request));
    if (*cmd == "knowledge") return reply(control_knowledge(request, caller));
    if (*cmd == "observations") return reply(control_observations(request, caller));
    if (*cmd == "entities") return reply(control_entities(request, caller));
    if (*cmd == "clusters") return reply(control_clusters(request, caller));
    if (*cmd == "reinforce") return control_reinforce(request, caller, reply);
    if (*cmd == "search") return reply(control_search(request, caller));
    if (*cmd == "recall" || *cmd == "context" || *cmd == "get" || *cmd == "episode") {
      return control_read(cmd->get<std::string>(), request, caller, reply);
    }
    if (*cmd == "events") return reply(control_events(request, caller));
    if (*cmd == "medallion") return reply(control_medallion(request, caller));
    if (options_.test_hooks && *cmd == "test_stall") {
      // Test hook (daemon/test_hooks.hpp): a deliberately stuck event loop for the watchdog test.
      const auto ms = std::clamp<std::int64_t>(request.value("ms", std::int64_t{0}), 0, 60000);
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return reply({{"ok", true}, {"stalled_ms", ms}});
    }
  } catch (const std::exception& error) {
    return reply({{"ok", false}, {"error", std::string("request failed: ") + error.what()}});
  }
  reply({{"ok", false},
         {"error", "unknown command '" + cmd->get<std::string>() + "'; known: " + kCommands}});
}

namespace {

// The caller's read scope, bound to parameters ?20 (clearance), ?21 (every namespace) and ?22
// (its namespaces, a JSON array) that the read queries test in their WHERE clauses
// (rank_sql, scope_sql), so rows outside it are never read and a LIMIT counts only rows the
// caller may see. Numbered, not named: SQLite gives a named parameter the next free index,
// which collides with the queries' own ?N. ?23 is the redaction marker.
void bind_scope(SQLite::Statement& query, const bus::Principal& caller, bool with_clearance) {
  if (with_clearance) query.bind(20, caller.clearance);
  query.bind(21, caller.all_namespaces ? 1 : 0);
  query.bind(22, nlohmann::json(caller.namespaces).dump());
}

// Seed 002 level -> rank; an unknown value counts as the highest level.
std::string rank_sql(const char* column) {
  return fmt::format(
      "(CASE {} WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 "
      "WHEN 'high' THEN 3 ELSE 4 END)",
      column);
}

std::string scope_sql(const char* column) {
  return fmt::format("(?21 = 1 OR {} IN (SELECT value FROM json_each(?22)))", column);
}

// Returned in place of the content of a record one level above the caller's clearance.
constexpr const char* kRedacted = "[redacted: above your clearance]";

nlohmann::json column_value(const SQLite::Column& column) {
  if (column.isNull()) return nullptr;
  if (column.isInteger()) return column.getInt64();
  if (column.isFloat()) return column.getDouble();
  return column.getString();
}

// Rows as JSON objects; columns named *_json hold JSON text and are parsed.
nlohmann::json rows(SQLite::Statement& query) {
  nlohmann::json out = nlohmann::json::array();
  while (query.executeStep()) {
    nlohmann::json row = nlohmann::json::object();
    for (int i = 0; i < query.getColumnCount(); ++i) {
      std::string name = query.getColumnName(i);
      if (name.ends_with("_json")) {
        name.resize(name.size() - 5);
        row[name] = query.getColumn(i).isNull()
                        ? nlohmann::json()
                        : nlohmann::json::parse(query.getColumn(i).getString(), nullptr, false);
      } else {
        row[name] = column_value(query.getColumn(i));
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

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

// Derived records (migration 8) are read like events: rank r of the record's sensitivity,
// rows more than one level above the caller's clearance never read, rows one level above with
// their text replaced by kRedacted (?23) and their content lists nulled; `redacted` says which.
// `hidden(col)` and `redacted_text(col)` build those columns over an inner query's `r`.
namespace {

std::string level_sql(const std::string& rank) {
  return fmt::format(
      "(CASE {} WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' "
      "ELSE 'hyper' END)",
      rank);
}
std::string redacted_text(const char* column) {
  return fmt::format("CASE WHEN r > ?20 THEN ?23 ELSE {0} END AS {0}", column);
}
std::string hidden(const char* column, const char* alias = nullptr) {
  return fmt::format("CASE WHEN r > ?20 THEN NULL ELSE {} END AS {}", column,
                     alias ? alias : column);
}

// Observations are ranked when read, from their sources (consolidation rewrites them at every
// chunk, so triggers there were costly; they are few): a pattern from its problem occurrences,
// a community from its member entities and clusters (whose level can rise after it was
// detected), any other type from the events it lists as support. `o` names the table.
std::string observation_rank_sql(const char* o) {
  const std::string event = rank_sql("e.sensitivity");
  return fmt::format(
      "(CASE {0}.observation_type "
      "WHEN 'pattern' THEN coalesce((SELECT max({1}) FROM problem_occurrences p JOIN events e ON "
      "e.seq = p.seq "
      "WHERE p.namespace = {0}.namespace AND p.signature = {0}.signature), 0) "
      "WHEN 'community' THEN max("
      "coalesce((SELECT max({2}) FROM community_members cm JOIN entities n ON n.entity_id = "
      "cm.member_id "
      "WHERE cm.observation_id = {0}.observation_id AND cm.member_type = 'entity'), 0), "
      "coalesce((SELECT max({3}) FROM community_members cm JOIN clusters c ON c.cluster_id = "
      "cm.member_id "
      "WHERE cm.observation_id = {0}.observation_id AND cm.member_type = 'cluster'), 0)) "
      "ELSE coalesce((SELECT max({1}) FROM json_each({0}.supporting_event_ids) j JOIN events e ON "
      "e.seq = j.value), 0) "
      "END)",
      o, event, rank_sql("n.sensitivity"), rank_sql("c.sensitivity"));
}

}  // namespace

nlohmann::json Daemon::control_knowledge(const nlohmann::json& request,
                                         const bus::Principal& caller) {
  SQLite::Statement query(*reader_db_,
                          R"sql(
SELECT decision_id, namespace, kind, )sql" +
                              hidden("target") + ", " + redacted_text("title") + ", " +
                              redacted_text("rationale") + R"sql(, scope, status, phase, vitality,
       provenance, sensitivity, r > ?20 AS redacted, )sql" +
                              hidden("keywords", "keywords_json") + ", " +
                              hidden("evidence_event_ids", "evidence_event_ids_json") + ", " +
                              hidden("consequences", "consequences_json") + R"sql(,
       supersedes AS supersedes_json, superseded_by, )sql" +
                              hidden("procedural", "procedural_json") + R"sql(,
       frequency, unique_contexts, hit_count, confidence,
       stability_score, reinforcement_density, coverage, lifetime_days, estimated_removal_cost,
       estimated_utility, acceptance_score, first_seen_us, last_seen_us, updated_us
FROM (SELECT *, )sql" + rank_sql("sensitivity") +
                              R"sql( AS r FROM knowledge
      WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR phase = ?2) AND (?3 = '' OR status = ?3)
        AND )sql" + scope_sql("namespace") +
                              R"sql()
WHERE r <= ?20 + 1
ORDER BY CASE phase WHEN 'canonical' THEN 0 WHEN 'emergent' THEN 1 ELSE 2 END, frequency DESC,
         decision_id
LIMIT ?4)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "phase"));
  query.bind(3, text_param(request, "status"));
  query.bind(4, limit_param(request, 50));
  bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"knowledge", rows(query)}};
}

nlohmann::json Daemon::control_observations(const nlohmann::json& request,
                                            const bus::Principal& caller) {
  SQLite::Statement query(*reader_db_, R"sql(
SELECT observation_id, namespace, observation_type, )sql" +
                                           hidden("target") + ", " + redacted_text("title") + ", " +
                                           redacted_text("text") + ", " + level_sql("r") +
                                           R"sql( AS sensitivity, r > ?20 AS redacted,
       )sql" + hidden("supporting_event_ids", "supporting_event_ids_json") +
                                           R"sql(, support_count, trajectory_count,
       success_count, confidence, importance, times_reinforced, first_detected_us,
       last_reinforced_us
FROM (SELECT o.*, )sql" + observation_rank_sql("o") +
                                           R"sql( AS r FROM observations o
      WHERE (?1 = '' OR o.namespace = ?1) AND (?2 = '' OR o.observation_type = ?2) AND o.is_active = 1
        AND )sql" + scope_sql("o.namespace") +
                                           R"sql()
WHERE r <= ?20 + 1
ORDER BY support_count DESC, observation_id
LIMIT ?3)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "type"));
  query.bind(3, limit_param(request, 50));
  bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"observations", rows(query)}};
}

// {"cmd":"entities","namespace":NS,"top":K,"type":T}: the most important entities. A redacted
// entity keeps its canonical key's type but not the key: the key is text from its events.
nlohmann::json Daemon::control_entities(const nlohmann::json& request,
                                        const bus::Principal& caller) {
  const int top = limit_param(request, limit_param(request, 20), "top");
  SQLite::Statement query(*reader_db_, R"sql(
SELECT namespace, )sql" + redacted_text("canonical_key") +
                                           ", " + redacted_text("display_name") + R"sql(,
       entity_type, importance_score, mention_count, first_seen_us, last_seen_us,
       )sql" + redacted_text("summary_text") +
                                           R"sql(, sensitivity, r > ?20 AS redacted
FROM (SELECT *, )sql" + rank_sql("sensitivity") +
                                           R"sql( AS r FROM entities
      WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR entity_type = ?2) AND is_active = 1
        AND )sql" + scope_sql("namespace") +
                                           R"sql()
WHERE r <= ?20 + 1
ORDER BY importance_score DESC, mention_count DESC, namespace, canonical_key
LIMIT ?3)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "type"));
  query.bind(3, top);
  bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"entities", rows(query)}};
}

// {"cmd":"clusters","namespace":NS,"limit":N}: the largest clusters.
nlohmann::json Daemon::control_clusters(const nlohmann::json& request,
                                        const bus::Principal& caller) {
  SQLite::Statement query(*reader_db_, R"sql(
SELECT cluster_id, namespace, )sql" + redacted_text("label") +
                                           ", " + redacted_text("summary_text") + R"sql(,
       member_count, duplicate_count, )sql" +
                                           hidden("medoid_seq") + R"sql(,
       first_seq, last_seq, first_seen_us, last_seen_us, sensitivity, r > ?20 AS redacted
FROM (SELECT *, )sql" + rank_sql("sensitivity") +
                                           R"sql( AS r FROM clusters
      WHERE (?1 = '' OR namespace = ?1) AND is_active = 1
        AND )sql" + scope_sql("namespace") +
                                           R"sql()
WHERE r <= ?20 + 1
ORDER BY member_count + duplicate_count DESC, cluster_id
LIMIT ?2)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, limit_param(request, 20));
  bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"clusters", rows(query)}};
}

}  // namespace reflectd::daemon

namespace reflectd::daemon {

void Daemon::control_reinforce(const nlohmann::json& request, const bus::Principal& caller,
                               const bus::ControlReply& reply) {
  const std::string id = text_param(request, "id");
  if (id.empty())
    return reply({{"ok", false}, {"error", "reinforce: \"id\" (string) is required"}});
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

nlohmann::json Daemon::control_search(const nlohmann::json& request, const bus::Principal& caller) {
  const std::string query = fts_query(text_param(request, "text"));
  if (query.empty()) return {{"ok", false}, {"error", "search: \"text\" must contain a word"}};
  // score = bm25 relevance (negated: higher is better) x salience weight x vitality weight:
  // (0.5 + 0.5 * min(1, salience now)) and, for events behind a knowledge row, 1 / 0.75 / 0.5
  // for ACTIVE / DECAYING / DORMANT. Fields follow seed 000 SearchResultItem.
  // Clearance in the WHERE clause: rows more than one level above it are never read; rows
  // one level above come back with the preview replaced by kRedacted.
  const std::string rank = rank_sql("e.sensitivity");
  SQLite::Statement search(*reader_db_, R"sql(
SELECT e.uid AS id, e.seq, e.kind, e.namespace, e.sensitivity,
       coalesce(k.status, e.status) AS status,
       -bm25(events_fts, 1.0, 0.0) * (0.5 + 0.5 * min(1.0, rd_salience(e.salience_base, e.salience_ref_us,
           e.received_us, e.decay_curve, e.half_life_s, e.min_salience, e.max_age_s, e.pinned, ?4)))
         * CASE k.vitality WHEN 'decaying' THEN 0.75 WHEN 'dormant' THEN 0.5 ELSE 1.0 END AS score,
       CASE WHEN )sql" + rank + R"sql( > ?20 THEN ?23
            ELSE snippet(events_fts, 0, '[', ']', '...', 24) END AS preview,
       )sql" + rank + R"sql( > ?20 AS redacted
FROM events_fts JOIN events e ON e.seq = events_fts.rowid
LEFT JOIN knowledge k ON k.source_event_seq = e.seq
WHERE events_fts MATCH 'content : (' || ?1 || ')' AND (?2 = '' OR e.namespace = ?2) AND (?3 = '' OR e.kind = ?3)
  AND )sql" + rank + R"sql( <= ?20 + 1 AND )sql" +
                                            scope_sql("e.namespace") + R"sql(
ORDER BY score DESC, e.seq DESC
LIMIT ?5)sql");
  search.bind(1, query);
  search.bind(2, text_param(request, "namespace"));
  search.bind(3, text_param(request, "kind"));
  search.bind(4, static_cast<std::int64_t>(clock_.now_us()));
  search.bind(5, limit_param(request, 10));
  bind_scope(search, caller, true);
  search.bind(23, kRedacted);
  // Read first: the results below come from the same or a later snapshot, so they are
  // complete at least through indexed_through_seq.
  const store::FtsLag lag = store::read_fts_lag(*reader_db_);
  return {{"ok", true},
          {"query", query},
          {"indexed_through_seq", lag.indexed_through_seq},
          {"lag_events", lag.lag_events},
          {"results", rows(search)}};
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

nlohmann::json Daemon::control_events(const nlohmann::json& request, const bus::Principal& caller) {
  const auto after = request.find("after_seq");
  const std::int64_t after_seq =
      after != request.end() && after->is_number_integer() ? after->get<std::int64_t>() : -1;
  // Without after_seq: the latest `limit` events (newest last); with it: the next ones.
  // Clearance and namespace scope in the WHERE clause (see control_search).
  const std::string rank = rank_sql("sensitivity");
  SQLite::Statement query(*reader_db_, R"sql(
SELECT * FROM (
  SELECT seq, uid AS id, namespace, kind, source, agent_id, ts_us, status, sensitivity,
         CASE WHEN )sql" + rank + R"sql( > ?20 THEN ?23 ELSE substr(content, 1, 200) END AS preview,
         )sql" + rank + R"sql( > ?20 AS redacted
  FROM events
  WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR kind = ?2) AND (?3 < 0 OR seq > ?3)
    AND )sql" + rank + R"sql( <= ?20 + 1 AND )sql" +
                                           scope_sql("namespace") + R"sql(
  ORDER BY CASE WHEN ?3 < 0 THEN -seq ELSE seq END
  LIMIT ?4)
ORDER BY seq)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "kind"));
  query.bind(3, static_cast<std::int64_t>(after_seq));
  query.bind(4, limit_param(request, 20));
  bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"events", rows(query)}};
}

}  // namespace reflectd::daemon

namespace reflectd::daemon {

// A medallion is in the caller's scope when its scope's namespace is (medallion_scopes); a
// scope over every namespace only for callers with every namespace.
static std::string medallion_scope_sql(const char* id_column) {
  return fmt::format(
      "(?21 = 1 OR EXISTS (SELECT 1 FROM medallion_scopes s WHERE s.medallion_id = {} "
      "AND s.namespace IN (SELECT value FROM json_each(?22))))",
      id_column);
}

// A medallion is derived from the decisions and questions it lists (medallion_items: knowledge
// and pattern observations): its rank is theirs when read. An item whose source is gone counts
// as the highest level.
static std::string medallion_rank_sql(const char* id_column) {
  return fmt::format(
      "coalesce((SELECT max(CASE WHEN k.decision_id IS NOT NULL THEN {} WHEN o.observation_id IS "
      "NOT NULL THEN {} ELSE 4 END) FROM medallion_items i LEFT JOIN knowledge k ON k.decision_id "
      "= "
      "i.source_id LEFT JOIN observations o ON o.observation_id = i.source_id WHERE i.medallion_id "
      "= "
      "{}), 0)",
      rank_sql("k.sensitivity"), observation_rank_sql("o"), id_column);
}

nlohmann::json Daemon::control_medallion(const nlohmann::json& request,
                                         const bus::Principal& caller) {
  const std::string action = text_param(request, "action");
  const std::string id = text_param(request, "id");
  if (action == "get") {
    SQLite::Statement query(*reader_db_, "SELECT content_json, status, r, " + level_sql("r") +
                                             " FROM (SELECT m.*, " + medallion_rank_sql("m.id") +
                                             " AS r FROM medallions m WHERE id = ?1 AND " +
                                             medallion_scope_sql("m.id") + ") WHERE r <= ?20 + 1");
    query.bind(1, id);
    bind_scope(query, caller, true);
    if (!query.executeStep()) return {{"ok", false}, {"error", "no medallion '" + id + "'"}};
    if (query.getColumn(2).getInt() > caller.clearance) {
      return {{"ok", true},
              {"medallion",
               {{"id", id},
                {"redacted", 1},
                {"sensitivity", query.getColumn(3).getString()},
                {"summary", {{"high_level", kRedacted}}},
                {"meta", {{"status", query.getColumn(1).getString()}}}}}};
    }
    auto medallion = nlohmann::json::parse(query.getColumn(0).getString());
    medallion["meta"]["status"] = query.getColumn(1).getString();  // stale is marked in place
    medallion["meta"]["x_reflectd_sensitivity"] = query.getColumn(3).getString();
    return {{"ok", true}, {"medallion", std::move(medallion)}};
  }
  if (action == "history") {
    // Versions are ranked by the medallion's items as they are now (sources only rise).
    SQLite::Statement query(
        *reader_db_, "SELECT version, updated_at, content_json, " + medallion_rank_sql("?1") +
                         " AS r FROM medallion_history WHERE medallion_id = ?1 AND " +
                         medallion_scope_sql("?1") +
                         " AND r <= ?20 + 1 ORDER BY version DESC LIMIT ?2");
    query.bind(1, id);
    query.bind(2, limit_param(request, 20));
    bind_scope(query, caller, true);
    nlohmann::json versions = nlohmann::json::array();
    while (query.executeStep()) {
      const bool redacted = query.getColumn(3).getInt() > caller.clearance;
      versions.push_back(
          {{"version", query.getColumn(0).getInt64()},
           {"updated_at", query.getColumn(1).getString()},
           {"medallion", redacted ? nlohmann::json{{"id", id},
                                                   {"redacted", 1},
                                                   {"summary", {{"high_level", kRedacted}}}}
                                  : nlohmann::json::parse(query.getColumn(2).getString())}});
    }
    return {{"ok", true}, {"id", id}, {"versions", std::move(versions)}};
  }
  if (action == "query") {
    // Seed 001 semantics in SQL: every query node is a node of the medallion, and the tags
    // overlap (no tag filter when the query has none).
    const auto nodes = string_list(request, "nodes");
    const auto tags = string_list(request, "tags");
    SQLite::Statement query(*reader_db_, R"sql(
SELECT id, status, updated_at, scope_graph_nodes, scope_tags,
       CASE WHEN r > ?20 THEN ?23 ELSE json_extract(content_json, '$.summary.high_level') END AS high_level,
       )sql" + level_sql("r") + R"sql( AS sensitivity, r > ?20 AS redacted
FROM (SELECT m.*, )sql" + medallion_rank_sql("m.id") +
                                             R"sql( AS r FROM medallions m
      WHERE (SELECT count(*) FROM medallion_nodes n, json_each(?1) q
             WHERE n.medallion_id = m.id AND n.node = q.value) = json_array_length(?1)
        AND (json_array_length(?2) = 0 OR EXISTS (SELECT 1 FROM medallion_tags t, json_each(?2) q
             WHERE t.medallion_id = m.id AND t.tag = q.value))
        AND )sql" + medallion_scope_sql("m.id") +
                                             R"sql()
WHERE r <= ?20 + 1
ORDER BY updated_at DESC, id
LIMIT ?3)sql");
    std::vector<std::string> unique_nodes = nodes;
    std::sort(unique_nodes.begin(), unique_nodes.end());
    unique_nodes.erase(std::unique(unique_nodes.begin(), unique_nodes.end()), unique_nodes.end());
    query.bind(1, nlohmann::json(unique_nodes).dump());
    query.bind(2, nlohmann::json(tags).dump());
    query.bind(3, limit_param(request, 50));
    bind_scope(query, caller, true);
    query.bind(23, kRedacted);
    nlohmann::json found = nlohmann::json::array();
    while (query.executeStep()) {
      found.push_back({{"id", query.getColumn(0).getString()},
                       {"status", query.getColumn(1).getString()},
                       {"updated_at", query.getColumn(2).getString()},
                       {"scope",
                        {{"graph_nodes", nlohmann::json::parse(query.getColumn(3).getString())},
                         {"tags", nlohmann::json::parse(query.getColumn(4).getString())}}},
                       {"high_level", query.getColumn(5).getString()},
                       {"sensitivity", query.getColumn(6).getString()},
                       {"redacted", query.getColumn(7).getInt()}});
    }
    return {{"ok", true}, {"medallions", std::move(found)}};
  }
  if (action == "list" || action.empty()) {
    SQLite::Statement query(
        *reader_db_,
        "SELECT id, status, updated_at, CASE WHEN r > ?20 THEN ?23 ELSE "
        "json_extract(content_json, '$.summary.high_level') END AS high_level, " +
            level_sql("r") + " AS sensitivity, r > ?20 AS redacted FROM (SELECT m.*, " +
            medallion_rank_sql("m.id") + " AS r FROM medallions m WHERE " +
            medallion_scope_sql("m.id") + ") WHERE r <= ?20 + 1 ORDER BY id LIMIT ?1");
    query.bind(1, limit_param(request, 100));
    bind_scope(query, caller, true);
    query.bind(23, kRedacted);
    return {{"ok", true}, {"medallions", rows(query)}};
  }
  return {{"ok", false}, {"error", "medallion: \"action\" must be get, query, history or list"}};
}

}  // namespace reflectd::daemon
