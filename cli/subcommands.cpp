#include "cli/subcommands.hpp"

#include <stdexcept>

#include "model/commands.hpp"

namespace reflectd::cli {

namespace {

const model::CommandSpec* find_subcommand(std::string_view cli_name) {
  for (const model::CommandSpec& spec : model::command_table()) {
    if (!spec.cli_usage.empty() && spec.cli_name() == cli_name) return &spec;
  }
  return nullptr;
}

}  // namespace

Registry::Registry(CLI::App& app, Globals& globals) : app_(app), globals_(globals) {
  // Every subcommand of the table, in its order (the order --help lists them in).
  for (const model::CommandSpec& spec : model::command_table()) {
    if (spec.cli_usage.empty()) continue;
    CLI::App* cmd = app_.add_subcommand(std::string(spec.cli_name()),
                                        spec.description != nullptr ? spec.description : "");
    if (spec.footer != nullptr) cmd->footer(spec.footer);
  }
}

CLI::App* Registry::add(std::string_view cli_name) {
  if (find_subcommand(cli_name) == nullptr) {
    throw std::logic_error("reflectctl: subcommand '" + std::string(cli_name) +
                           "' is not in the command table (model/commands.cpp)");
  }
  return app_.get_subcommand(std::string(cli_name));
}

void Registry::on(CLI::App* cmd, std::function<void(const config::Config&)> resolve,
                  std::function<int()> run) {
  commands_.push_back({cmd, std::move(resolve), std::move(run)});
}

std::shared_ptr<int> Registry::timeout(int timeout_ms) { return std::make_shared<int>(timeout_ms); }

void Registry::control(CLI::App* cmd, ControlOptions& control, int timeout_ms,
                       std::function<int()> run) {
  auto timeout_ms_given = timeout(timeout_ms);
  add_control_options(*cmd, *timeout_ms_given, control.json);
  on(
      cmd,
      [this, &control, timeout_ms_given](const config::Config& config) {
        resolve_control(control, config, *timeout_ms_given);
      },
      std::move(run));
}

void Registry::resolve_control(ControlOptions& options, const config::Config& config,
                               int timeout_ms) const {
  options.endpoint = resolve_endpoint(globals_.endpoints, config, Role::kControl);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  options.curve = load_curve_client(globals_.curve_key_file, globals_.server_key_file);
  options.nats = globals_.nats_servers;
  options.nats_agent = globals_.nats_agent;
  if (!options.nats_agent.empty() && options.nats.empty()) {
    throw std::runtime_error("--nats-agent: needs --nats URL (it names who reads over NATS)");
  }
  if (options.nats_agent.find_first_of(". *>\t") != std::string::npos) {
    throw std::runtime_error(
        "--nats-agent: must be one subject token (no '.', '*', '>' or "
        "spaces), got \"" +
        options.nats_agent + "\"");
  }
}

void Registry::check_complete() const {
  for (const model::CommandSpec& spec : model::command_table()) {
    if (spec.cli_usage.empty()) continue;
    bool found = false;
    for (const Subcommand& sub : commands_) found = found || sub.app->get_name() == spec.cli_name();
    if (!found) {
      throw std::logic_error("reflectctl: the table's subcommand '" + std::string(spec.cli_name()) +
                             "' is not registered");
    }
  }
}

const Subcommand* Registry::chosen() const {
  for (const Subcommand& sub : commands_) {
    if (*sub.app) return &sub;
  }
  return nullptr;
}

void add_control_options(CLI::App& cmd, int& timeout_ms, bool& json) {
  cmd.add_option("-t,--timeout-ms", timeout_ms,
                 "wait this long for the connection and the reply together")
      ->check(CLI::Range(1, 86400000))
      ->type_name("MS");
  cmd.add_flag("--json", json,
               "print the daemon's JSON reply (pretty-printed) instead of the table");
}

CLI::Option* add_limit(CLI::App& cmd, int& limit) {
  return cmd.add_option("-n,--limit", limit, "rows to show, at most")
      ->check(CLI::Range(1, 10000))
      ->type_name("N");
}

void add_namespace(CLI::App& cmd, std::string& ns) {
  cmd.add_option("-N,--namespace", ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
}

}  // namespace reflectd::cli
