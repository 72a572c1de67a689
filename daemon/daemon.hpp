#pragma once
// The whole daemon as a library: config + store writer + bus + systemd integration, wired on
// one io_context. main() only parses flags; tests start a Daemon in-process the same way.
//
// Lifecycle: construct (nothing opened) -> start() (opens the database, binds sockets, sends
// READY=1; throws on any startup error) -> run() (serves until a stop) -> returns the exit
// status. request_stop() and request_reload() are thread-safe; SIGTERM/SIGINT and SIGHUP map
// to them when DaemonOptions::handle_signals is set.
//
// Error policy: exceptions at startup and config load (std::runtime_error,
// config::ConfigError, SQLite::Exception, zmq::error_t); results and error replies on the
// event path; asserts only for invariants.

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bus/bus.hpp"
#include "bus/jetstream_forwarder.hpp"
#include "bus/jetstream_inlet.hpp"
#include "bus/security.hpp"
#include "bus/zap_handler.hpp"
#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/mcp_sessions.hpp"
#include "daemon/read_thread.hpp"
#include "http/api.hpp"
#include "http/server.hpp"
#include "jobs/scheduler.hpp"
#include "metrics/http_server.hpp"
#include "store/access_counts.hpp"
#include "store/writer.hpp"

namespace reflectd::daemon {

struct DaemonOptions {
  /// File re-read on reload; empty means reload only re-applies the built-in defaults.
  std::string config_path;
  /// Install SIGTERM/SIGINT/SIGHUP handlers (the real daemon; tests may leave it off).
  bool handle_signals = false;
  /// Enables test-only control commands (daemon/test_hooks.hpp); REFLECTD_TEST_HOOKS=1.
  bool test_hooks = false;
};

/// Outcome of the last reload, reported by `status`.
struct ReloadState {
  std::int64_t at_us = 0;  ///< 0 when no reload happened yet.
  bool ok = true;
  std::string message;
};

class Daemon {
 public:
  Daemon(config::Config config, DaemonOptions options, const Clock& clock);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Opens the store, binds the bus, arms timers and signals, then sends READY=1.
  void start();
  /// Runs the event loop on the calling thread until stopped. Returns 0 after a clean stop.
  int run();
  /// Begins a graceful stop: stop reading, commit and answer everything received, close.
  void request_stop();
  /// Re-reads the config file (SIGHUP semantics).
  void request_reload();

  /// Endpoints bound by start() (wildcard ports resolved).
  const bus::BoundEndpoints& endpoints() const;
  /// The store path in use (after $STATE_DIRECTORY resolution).
  const std::string& store_path() const { return store_path_; }

  /// Answers one control request from `caller` (what the control socket calls); see
  /// docs/COMMANDS.md and docs/SECURITY.md: admin commands need caller.admin, reads are limited to
  /// the caller's namespaces and clearance inside their SQL.
  void handle_control(const nlohmann::json& request, const bus::Principal& caller,
                      const bus::ControlReply& reply);

  /// The daemon commands of model::command_table() that neither a control handler nor the
  /// read thread answers: empty unless the table and the handlers disagree (a test checks).
  static std::vector<std::string> unhandled_commands();

 private:
  /// A handler of the io thread, registered by its command's table name.
  using ControlHandler = void (*)(Daemon& daemon, const std::string& cmd,
                                  const nlohmann::json& request, const bus::Principal& caller,
                                  const bus::ControlReply& reply);
  /// The io thread's handlers (model::Answerer::kControl commands, and medallion's writes).
  static const std::map<std::string, ControlHandler, std::less<>>& control_handlers();
  void stop_now();
  void reload_now();
  void wait_for_signal();
  void arm_stats_timer();
  void arm_watchdog_timer();
  nlohmann::json status(const bus::Principal& caller) const;
  void control_run(const nlohmann::json& request, const bus::ControlReply& reply);
  nlohmann::json control_jobs(const nlohmann::json& request);
  void control_reinforce(const nlohmann::json& request, const bus::Principal& caller,
                         const bus::ControlReply& reply);
  // forget, restore, pin, unpin (memory_ops/; daemon/memory_commands.cpp).
  /// revise (memory_ops/revise.hpp) and proposal verdicts (memory_ops/proposals.hpp), run by
  /// the writer thread.
  void control_write_op(const std::string& cmd, const nlohmann::json& request,
                        const bus::Principal& caller, const bus::ControlReply& reply);
  void control_memory_op(const std::string& cmd, const nlohmann::json& request,
                         const bus::Principal& caller, const bus::ControlReply& reply);
  /// At start, before the scheduler runs: queues the finish of the derived-state clears a
  /// crash interrupted (memory_ops/forget.hpp finish_pending_clears()) and the rebuild of
  /// those namespaces.
  void resume_interrupted_clears();
  /// Makes the NATS side (docs/CLUSTER.md): the JetStream forwarder of a gateway and the
  /// inlet of a replica, with its reads over NATS. Called by start() after the writer and the
  /// read thread exist; throws what their constructors throw (bad NATS configuration).
  void make_jetstream(const store::DatabaseOptions& database);
  // The HTTP JSON API (http.listen), its routes handing work to the bus and handle_control
  // (daemon/http_api.cpp).
  void start_http();
  // A control request, or one event of acknowledged ingest, for `caller` from a thread other
  // than the io thread (the MCP sessions' worker), waiting for the answer.
  std::variant<nlohmann::json, std::string> control_and_wait(const nlohmann::json& request,
                                                             const bus::Principal& caller);
  std::variant<nlohmann::json, std::string> ingest_and_wait(const nlohmann::json& event,
                                                            const bus::Principal& caller);
  // The tokens of `config`'s security.http_tokens_file (nullptr: none); throws ConfigError.
  static std::shared_ptr<const http::Tokens> load_http_tokens(const config::Config& config);
  /// merge_entities (memory_ops/entity_merges.hpp), a task on the jobs' thread.
  void control_merge_entities(const nlohmann::json& request, const bus::Principal& caller,
                              const bus::ControlReply& reply);
  // Every read of the read library (recall/): on the read thread.
  void control_read(const std::string& cmd, const nlohmann::json& request,
                    const bus::Principal& caller, const bus::ControlReply& reply);
  // Hands the accesses recorded by reads to the writer (store/access_counts.hpp).
  void flush_accesses();
  std::string status_line() const;
  // GET /metrics (daemon/metrics.cpp); called on the metrics server's thread.
  std::string render_metrics() const;

  config::Config config_;
  DaemonOptions options_;
  const Clock& clock_;
  std::string store_path_;
  std::int64_t page_size_bytes_ = 0;  // the database file's, read once at start
  std::int64_t started_us_ = 0;
  std::uint64_t watchdog_interval_us_ = 0;
  ReloadState last_reload_;
  bool stopping_ = false;
  std::uint64_t last_stored_ = 0, last_duplicate_ = 0, last_rejected_ = 0;

  // Declaration order is destruction order in reverse: the io_context outlives everything
  // that posts to it, the writer outlives the bus.
  boost::asio::io_context io_;
  zmq::context_t zmq_context_;
  bus::SecuritySettings security_;
  std::unique_ptr<bus::ZapHandler> zap_;  // bound before the bus, closed after it
  // Shared by the writer and the jobs' transactions: outlives both.
  std::unique_ptr<store::WriteGate> write_gate_;
  std::unique_ptr<store::Writer> writer_;
  std::unique_ptr<bus::Bus> bus_;
  std::unique_ptr<SQLite::Database> jobs_db_;    // the scheduler thread's connection
  std::unique_ptr<SQLite::Database> reader_db_;  // control queries, on the io thread
  std::unique_ptr<jobs::Scheduler> scheduler_;
  model::VitalityParams reader_vitality_;  // registered on reader_db_ (io thread only)
  std::shared_ptr<const recall::WordNetLoader> wordnet_;  // recall.wordnet_dir, loaded at start
  std::unique_ptr<ReadThread> reads_;                     // recall, context, get, episode
  store::AccessBatch unflushed_accesses_;                 // a batch the writer refused (io thread)
  std::atomic<bus::Bus*> bus_for_writer_{nullptr};        // read by the writer thread
  // The JetStream input (bus.jetstream.servers set); its completions need the writer to stop
  // before it closes.
  std::unique_ptr<bus::JetStreamInlet> jetstream_;
  std::atomic<bus::JetStreamInlet*> jetstream_for_writer_{nullptr};  // read by the writer
  // bus.forward: jetstream: acknowledged ingest is published to JetStream, not stored here.
  std::unique_ptr<bus::JetStreamForwarder> forwarder_;
  std::unique_ptr<boost::asio::signal_set> signals_;
  std::unique_ptr<boost::asio::steady_timer> stats_timer_;
  std::unique_ptr<boost::asio::steady_timer> watchdog_timer_;
  // Last: they read the members above from their own threads, so they are destroyed first.
  std::unique_ptr<metrics::HttpServer> metrics_;
  std::unique_ptr<http::Api> http_api_;
  std::atomic<bool> calls_stopping_{false};  // ends the MCP sessions' waits (stop_now)
  std::unique_ptr<McpSessions> mcp_sessions_;
  std::unique_ptr<http::Server> http_;
};

}  // namespace reflectd::daemon
