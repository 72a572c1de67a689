// reflectctl: thin entry point. Flags -> endpoints -> one command; the subcommands are
// registered by their names in the command table (model/commands.hpp, cli/subcommands.hpp) and
// the work lives in the reflectctl_core library.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/exit_codes.hpp"
#include "cli/subcommands.hpp"
#include "common/version.hpp"
#include "model/command_help.hpp"
#include "model/commands.hpp"

namespace {

using namespace reflectd::cli;

void add_global_options(CLI::App& app, Globals& c) {
  app.add_option("-c,--config", c.endpoints.config_path,
                 "reflectd's YAML configuration: endpoints (and the payload limit) are read "
                 "from it (default: reflectd's built-in defaults)")
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  app.add_option("--ingest", c.endpoints.ingest,
                 "ingest endpoint to connect to, e.g. tcp://127.0.0.1:7701 (overrides "
                 "bus.ingest)")
      ->type_name("EP");
  // Also --push, as asked of every command; after `publish` that name is its mode flag.
  app.add_option("--push-endpoint,--push", c.endpoints.push,
                 "push endpoint to connect to, e.g. tcp://127.0.0.1:7702 (overrides bus.push; "
                 "used by publish --push)")
      ->type_name("EP");
  app.add_option("--control", c.endpoints.control,
                 "control endpoint to connect to, e.g. tcp://127.0.0.1:7704 (overrides "
                 "bus.control)")
      ->type_name("EP");
  app.add_option("--curve-key", c.curve_key_file,
                 "connect with CURVE using this secret key file (zcert, from `reflectctl keygen`)")
      ->envname("REFLECTCTL_CURVE_KEY")
      ->type_name("FILE");
  app.add_option("--server-key", c.server_key_file,
                 "the daemon's public key file (its keygen .pub) for CURVE")
      ->envname("REFLECTCTL_SERVER_KEY")
      ->type_name("FILE");
  app.add_option("--nats", c.nats_servers,
                 "a NATS server URL, nats://host:4222 (repeatable): `jetstream` commands use it "
                 "instead of bus.jetstream.servers, and read commands go over NATS to the shard "
                 "of their --namespace; without --namespace (status, jobs, knowledge...) one "
                 "replica of every shard answers, each reply under its shard's name, and shards "
                 "silent for --timeout-ms are named (docs/CLUSTER.md)")
      ->allow_extra_args(false)
      ->type_name("URL");
  app.add_option("--nats-agent", c.nats_agent,
                 "with --nats, read as this agent (one subject token): requests go to "
                 "reflectd.agent-control.ID.<namespace>, and the node answers with the rights of "
                 "the authorized-keys entry whose agent_id is ID (its namespaces, its "
                 "max_sensitivity); without it, reads over NATS see the public level only "
                 "(docs/CLUSTER.md, \"Security\")")
      ->envname("REFLECTCTL_NATS_AGENT")
      ->type_name("ID");
  app.set_version_flag("-V,--version", std::string("reflectctl ") + reflectd::kVersion);
}

int run(int argc, char** argv) {
  using namespace reflectd::model::help;
  CLI::App app{kMainDescription, "reflectctl"};
  // The COMMANDS list comes from the command table; the rest of the footer is prose.
  app.footer("\nCOMMANDS\n" + reflectd::model::help_command_list() + (kMainFooter + 1));
  app.require_subcommand(1);
  app.fallthrough();
  Globals globals;
  add_global_options(app, globals);
  Registry registry(app, globals);
  add_client_commands(registry);
  add_control_commands(registry);
  add_read_commands(registry);
  registry.check_complete();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitOk : kExitUsage;
  }
  const Subcommand* chosen = registry.chosen();
  if (chosen == nullptr) return kExitUsage;  // require_subcommand(1) makes this unreachable
  if (chosen->resolve) {
    try {
      chosen->resolve(load_client_config(globals.endpoints));
    } catch (const std::exception& error) {
      std::cerr << "reflectctl: " << error.what() << '\n';
      return kExitUsage;
    }
  }
  try {
    return chosen->run();
  } catch (const std::exception& error) {
    std::cerr << "reflectctl: " << error.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // run() handles every expected error; this only keeps e.g. std::bad_alloc from aborting.
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "reflectctl: %s\n", error.what());
  } catch (...) {
    std::fputs("reflectctl: unexpected error\n", stderr);
  }
  return kExitFailed;
}
