#pragma once
// reflectctl's subcommands, registered by their names in the command table
// (model/commands.hpp): the table gives each its --help description and footer and the main
// --help's COMMANDS list; each add_*() function here binds a subcommand's options to
// heap-allocated option structs and says how to resolve its endpoints and run it.
//
// Errors: Registry::add() and Registry::check_complete() throw std::logic_error when the
// registrations and the table disagree (a programming error, caught by the tests);
// resolve functions throw std::runtime_error or config::ConfigError for bad flags or
// configuration. Thread-safety: used by main()'s thread only.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/control.hpp"
#include "cli/endpoints.hpp"
#include "config/config.hpp"

namespace reflectd::cli {

/// --timeout-ms of the control commands unless they say otherwise.
inline constexpr int kControlTimeoutMs = 3000;

/// The global options every subcommand reads (--config, endpoints, CURVE keys, NATS).
struct Globals {
  EndpointOptions endpoints;
  std::string curve_key_file;             ///< --curve-key
  std::string server_key_file;            ///< --server-key
  std::vector<std::string> nats_servers;  ///< --nats: overrides bus.jetstream.servers
  std::string nats_agent;                 ///< --nats-agent
};

/// One registered subcommand.
struct Subcommand {
  CLI::App* app = nullptr;
  /// Fills endpoints and limits from the loaded configuration; null: the subcommand needs no
  /// configuration (keygen), and none is loaded.
  std::function<void(const config::Config&)> resolve;
  /// Does the work; returns the exit status (cli/exit_codes.hpp).
  std::function<int()> run;
};

/// The subcommands of one CLI::App, each added under its command-table name.
class Registry {
 public:
  /// Adds every subcommand of the table to `app`, in table order, with its description and
  /// footer; the add_*() functions then give them their options.
  Registry(CLI::App& app, Globals& globals);

  /// The table's subcommand `cli_name`, to give options to.
  /// Throws std::logic_error when the table has no such subcommand.
  CLI::App* add(std::string_view cli_name);

  /// Records how `cmd` is resolved and run.
  void on(CLI::App* cmd, std::function<void(const config::Config&)> resolve,
          std::function<int()> run);

  /// Adds --timeout-ms (default `timeout_ms`) and --json to `cmd`, a control command whose
  /// request options are `control`; `run` runs it. `control` must outlive the registry (it
  /// lives in the option struct `run` holds).
  void control(CLI::App* cmd, ControlOptions& control, int timeout_ms, std::function<int()> run);
  /// As control() for a command whose options are on its own subcommands (medallion's):
  /// returns the timeout they share, to bind with add_control_options().
  std::shared_ptr<int> timeout(int timeout_ms);

  /// Fills `options` (endpoint, timeout, CURVE keys, NATS) from the globals and `config`.
  void resolve_control(ControlOptions& options, const config::Config& config, int timeout_ms) const;

  /// Throws std::logic_error unless every subcommand of the table was given a run function.
  void check_complete() const;

  /// The subcommand the command line chose, or null.
  const Subcommand* chosen() const;

  Globals& globals() { return globals_; }

 private:
  CLI::App& app_;
  Globals& globals_;
  std::vector<Subcommand> commands_;
};

/// --timeout-ms (bound to `*timeout_ms`) and --json, shared by every control command.
void add_control_options(CLI::App& cmd, int& timeout_ms, bool& json);
/// -n,--limit with a range of 1..10000.
CLI::Option* add_limit(CLI::App& cmd, int& limit);
/// -N,--namespace: rows of one namespace.
void add_namespace(CLI::App& cmd, std::string& ns);

/// status, run, jobs, reinforce and the memory operations (forget, restore, pin, unpin,
/// revise, proposal, merge-entities).
void add_control_commands(Registry& registry);
/// The reads: knowledge, observations, facts, search, recall, context, get, episode, audit,
/// events, medallion, entities, clusters.
void add_read_commands(Registry& registry);
/// What reflectctl does without the control socket: publish, mcp, jetstream, keygen.
void add_client_commands(Registry& registry);

}  // namespace reflectd::cli
