#include "daemon/daemon.hpp"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "common/version.hpp"
#include "daemon/settings.hpp"

namespace reflectd::daemon {
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
  // The writer's callbacks post to the bus: stop it before the bus goes away.
  if (writer_) writer_->stop();
}

void Daemon::start() {
  started_us_ = clock_.now_us();
  spdlog::set_level(spdlog::level::from_str(config_.log.level));
  store_path_ = config::resolve_store_path(config_.store.path, std::getenv("STATE_DIRECTORY"));

  writer_ = std::make_unique<store::Writer>(writer_options(config_, store_path_), clock_, [this] {
    if (bus::Bus* bus = bus_for_writer_.load()) bus->writer_has_space();
  });

  bus_ = std::make_unique<bus::Bus>(io_, zmq_context_, config_.bus, *writer_, clock_,
                                    [this](const nlohmann::json& request, bus::ControlReply reply) {
                                      handle_control(request, std::move(reply));
                                    });
  bus_for_writer_ = bus_.get();
  bus_->start();

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

  spdlog::info("reflectd {} ready: database {}, ingest {}, push {}, control {}", kVersion,
               store_path_, fmt::join(endpoints().ingest, ","), fmt::join(endpoints().push, ","),
               fmt::join(endpoints().control, ","));
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
  if (signals_) signals_->cancel();
  if (stats_timer_) stats_timer_->cancel();
  if (watchdog_timer_) watchdog_timer_->cancel();
  // Commits everything already received; its replies are posted to the io_context ahead of
  // the close below, so they are sent (within bus.linger_ms) before the sockets close.
  writer_->stop();
  boost::asio::post(io_, [this] { bus_->close(); });
}

void Daemon::reload_now() {
  if (stopping_) return;
  notify_systemd("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec()));
  last_reload_.at_us = clock_.now_us();
  try {
    config::Config next =
        options_.config_path.empty() ? config::defaults() : config::load_file(options_.config_path);
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
    config_.daemon = next.daemon;
    config_.jobs = next.jobs;
    config_.consolidation = next.consolidation;
    config_.decay = next.decay;
    writer_->set_profiles(decay_profiles(config_.decay));
    spdlog::set_level(spdlog::level::from_str(config_.log.level));
    bus_->set_max_message_bytes(config_.bus.max_message_bytes);
    writer_->set_commit_limits(config_.store.commit_max_events, config_.store.commit_max_delay_ms);
    last_reload_.ok = true;
    last_reload_.message = restart_needed.empty()
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

nlohmann::json Daemon::status() const {
  const auto& stats = writer_->stats();
  const auto& bus_stats = bus_->stats();
  const auto& bound = endpoints();
  return {
      {"ok", true},
      {"version", kVersion},
      {"uptime_s", static_cast<double>(clock_.now_us() - started_us_) / 1e6},
      {"events", {{"stored", stats.stored.load()},
                  {"duplicate", stats.duplicate.load()},
                  {"rejected", stats.rejected.load()}}},
      {"dead_letters", stats.dead_letters.load()},
      {"writer_queue_events", stats.queue_events.load()},
      {"commits", stats.commits.load()},
      {"storage_errors", stats.storage_errors.load()},
      {"messages", bus_stats.messages.load()},
      {"replies_dropped", bus_stats.replies_dropped.load()},
      {"db_bytes", file_size(store_path_) + file_size(store_path_ + "-wal")},
      {"database", store_path_},
      {"endpoints",
       {{"ingest", bound.ingest}, {"push", bound.push}, {"notify", bound.notify},
        {"control", bound.control}}},
      {"last_reload",
       {{"at_us", last_reload_.at_us}, {"ok", last_reload_.ok}, {"message", last_reload_.message}}},
  };
}

void Daemon::handle_control(const nlohmann::json& request, bus::ControlReply reply) {
  const auto cmd = request.find("cmd");
  if (cmd == request.end() || !cmd->is_string()) {
    reply({{"ok", false}, {"error", "request: \"cmd\" (string) is required; known: status"}});
    return;
  }
  if (*cmd == "status") {
    reply(status());
    return;
  }
  reply({{"ok", false},
         {"error", "unknown command '" + cmd->get<std::string>() + "'; known: status"}});
}

}  // namespace reflectd::daemon
