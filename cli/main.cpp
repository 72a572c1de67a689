// reflectctl: thin entry point. Flags -> endpoints -> one command; the work lives in the
// reflectctl_core library.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include "cli/endpoints.hpp"
#include "cli/exit_codes.hpp"
#include "cli/help_text.hpp"
#include "cli/publish.hpp"
#include "cli/status.hpp"
#include "common/version.hpp"

namespace {

using namespace reflectd::cli;

struct Commands {
  EndpointOptions endpoints;
  CLI::App* publish = nullptr;
  PublishOptions publish_options;
  std::size_t batch_events = 100;
  std::int64_t max_message_bytes = 0;  // 0: the configuration's bus.max_message_bytes.
  int publish_timeout_ms = 5000;
  CLI::App* status = nullptr;
  StatusOptions status_options;
  int status_timeout_ms = 3000;
};

void add_global_options(CLI::App& app, Commands& c) {
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
  app.set_version_flag("-V,--version", std::string("reflectctl ") + reflectd::kVersion);
}

void add_publish(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("publish", reflectd::cli::kPublishDescription);
  cmd->footer(kPublishFooter);
  PublishOptions& o = c.publish_options;
  cmd->add_option("FILE", o.files,
                  "JSON Lines files, sent in order; - or none reads standard input");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("-b,--batch", c.batch_events,
                  "events per message (1 sends bare objects; a batch also stops before its "
                  "payload exceeds --max-message-bytes)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  cmd->add_option("-w,--window", o.window, "messages sent and not yet acknowledged, at most")
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  cmd->add_option("-t,--timeout-ms", c.publish_timeout_ms,
                  "wait this long for a connection, and for each acknowledgement before "
                  "resending the message unchanged (push: for a send to be accepted)")
      ->check(CLI::Range(1, 3600000))
      ->type_name("MS");
  cmd->add_option("-r,--retries", o.retries,
                  "resends of an unacknowledged message before its events count as "
                  "unacknowledged")
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd->add_option("--max-message-bytes", c.max_message_bytes,
                  "largest batch payload to build (default: bus.max_message_bytes of the "
                  "configuration, 1048576 built in)")
      ->check(CLI::Range(std::int64_t{1024}, std::int64_t{64} << 20))
      ->type_name("BYTES")
      ->default_str("");
  cmd->add_flag("--push", o.push,
                "send over the fire-and-forget push socket instead: no acknowledgements, "
                "counts of events sent only");
  cmd->add_flag("--json", o.json, "print the summary as one JSON object");
  c.publish = cmd;
}

void add_status(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("status", kStatusDescription);
  cmd->footer(kStatusFooter);
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("-t,--timeout-ms", c.status_timeout_ms,
                  "wait this long for the connection and the reply together")
      ->check(CLI::Range(1, 3600000))
      ->type_name("MS");
  cmd->add_flag("--json", c.status_options.json,
                "print the daemon's JSON reply (pretty-printed) instead of the table");
  c.status = cmd;
}

// Resolves endpoints and limits; throws std::runtime_error (or config::ConfigError).
void resolve(Commands& c) {
  const reflectd::config::Config config = load_client_config(c.endpoints);
  if (*c.publish) {
    PublishOptions& o = c.publish_options;
    o.endpoint = resolve_endpoint(c.endpoints, config, o.push ? Role::kPush : Role::kIngest);
    o.timeout = std::chrono::milliseconds(c.publish_timeout_ms);
    o.batch.max_events = c.batch_events;
    o.batch.max_bytes = static_cast<std::size_t>(
        c.max_message_bytes > 0 ? c.max_message_bytes : config.bus.max_message_bytes);
  } else {
    c.status_options.endpoint = resolve_endpoint(c.endpoints, config, Role::kControl);
    c.status_options.timeout = std::chrono::milliseconds(c.status_timeout_ms);
  }
}

int run(int argc, char** argv) {
  CLI::App app{kMainDescription, "reflectctl"};
  app.footer(kMainFooter);
  app.require_subcommand(1);
  app.fallthrough();
  Commands commands;
  add_global_options(app, commands);
  add_publish(app, commands);
  add_status(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitOk : kExitUsage;
  }

  try {
    resolve(commands);
  } catch (const std::exception& error) {
    std::cerr << "reflectctl: " << error.what() << '\n';
    return kExitUsage;
  }
  try {
    return *commands.publish ? run_publish(commands.publish_options)
                             : run_status(commands.status_options);
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
