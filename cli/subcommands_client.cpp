// reflectctl's commands that are no control request: publish (the ingest socket), mcp (a
// server of its own), jetstream (NATS) and keygen (local files).

#include <cstdint>
#include <iostream>
#include <memory>
#include <string_view>

#include "cli/exit_codes.hpp"
#include "cli/jetstream.hpp"
#include "cli/mcp/stdio.hpp"
#include "cli/publish.hpp"
#include "cli/subcommands.hpp"
#include "common/zcert.hpp"

namespace reflectd::cli {

namespace {

void add_publish(Registry& r) {
  CLI::App* cmd = r.add("publish");
  struct Publish {
    PublishOptions options;
    std::size_t batch_events = 100;
    std::int64_t max_message_bytes = 0;  // 0: the configuration's bus.max_message_bytes.
    int timeout_ms = 5000;
  };
  auto p = std::make_shared<Publish>();
  PublishOptions& o = p->options;
  cmd->add_option("FILE", o.files,
                  "JSON Lines files, sent in order; - or none reads standard input");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("-b,--batch", p->batch_events,
                  "events per message (1 sends bare objects; a batch also stops before its "
                  "payload exceeds --max-message-bytes)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  cmd->add_option("-w,--window", o.window, "messages sent and not yet acknowledged, at most")
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  cmd->add_option("-t,--timeout-ms", p->timeout_ms,
                  "wait this long for a connection, and for each acknowledgement before "
                  "resending the message unchanged (push: for a send to be accepted)")
      ->check(CLI::Range(1, 3600000))
      ->type_name("MS");
  cmd->add_option("-r,--retries", o.retries,
                  "resends of an unacknowledged message before its events count as "
                  "unacknowledged")
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd->add_option("--max-message-bytes", p->max_message_bytes,
                  "largest batch payload to build (default: bus.max_message_bytes of the "
                  "configuration, 1048576 built in)")
      ->check(CLI::Range(std::int64_t{1024}, std::int64_t{64} << 20))
      ->type_name("BYTES")
      ->default_str("");
  cmd->add_flag("--push", o.push,
                "send over the fire-and-forget push socket instead: no acknowledgements, "
                "counts of events sent only");
  cmd->add_flag("--json", o.json, "print the summary as one JSON object");
  const Globals& g = r.globals();
  r.on(
      cmd,
      [&g, p](const config::Config& config) {
        PublishOptions& o = p->options;
        o.endpoint = resolve_endpoint(g.endpoints, config, o.push ? Role::kPush : Role::kIngest);
        o.timeout = std::chrono::milliseconds(p->timeout_ms);
        o.curve = load_curve_client(g.curve_key_file, g.server_key_file);
        o.batch.max_events = p->batch_events;
        o.batch.max_bytes = static_cast<std::size_t>(
            p->max_message_bytes > 0 ? p->max_message_bytes : config.bus.max_message_bytes);
      },
      [p] { return run_publish(p->options); });
}

void add_mcp(Registry& r) {
  CLI::App* cmd = r.add("mcp");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<mcp::McpOptions>();
  auto timeout = r.timeout(30000);
  cmd->add_option("-N,--namespace", o->ns,
                  "namespace of the tools' calls that name none (default: none: remember "
                  "then needs one, reads span every namespace the key may read)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-t,--timeout-ms", *timeout,
                  "wait this long for the daemon's reply to each tool call")
      ->check(CLI::Range(1, 86400000))
      ->type_name("MS");
  r.on(
      cmd,
      [&r, o, timeout](const config::Config& config) {
        r.resolve_control(o->control, config, *timeout);
        o->ingest_endpoint = resolve_endpoint(r.globals().endpoints, config, Role::kIngest);
      },
      [o] { return mcp::run_mcp(*o, std::cin, std::cout); });
}

void add_jetstream_init(CLI::App& cmd, bus::StreamLayout& layout) {
  CLI::App* init = cmd.get_subcommand("init");
  init->add_option("--stream", layout.name,
                   "the stream's name (default: bus.jetstream.stream of --config, REFLECTD)")
      ->type_name("NAME");
  init->add_option("--namespace", layout.namespaces,
                   "a namespace of the shard: subject reflectd.events.<NS> (repeatable; none: "
                   "every namespace, reflectd.events.>)")
      ->allow_extra_args(false)
      ->type_name("NS");
  init->add_option("--replicas", layout.replicas,
                   "Raft replicas of the stream (3 survives the loss of one server)")
      ->check(CLI::Range(1, 5))
      ->type_name("N");
  init->add_option("--max-bytes", layout.max_bytes, "limit on the stream's size; -1 = none")
      ->type_name("BYTES");
  init->add_option("--max-age-s", layout.max_age_s,
                   "messages older than this are removed; 0 = kept forever")
      ->check(CLI::NonNegativeNumber)
      ->type_name("S");
  init->add_option("--duplicate-window-s", layout.duplicate_window_s,
                   "how long JetStream remembers a Nats-Msg-Id to drop a resend")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400}))
      ->type_name("S");
}

void add_jetstream(Registry& r) {
  CLI::App* cmd = r.add("jetstream");
  cmd->require_subcommand(1);
  struct JetStream {
    JetStreamOptions options;
    bus::StreamLayout layout;
    std::vector<std::string> files;
    std::int64_t window = 256;
  };
  auto j = std::make_shared<JetStream>();
  const auto common = [&j](CLI::App& sub) {
    sub.option_defaults()->always_capture_default();
    sub.add_option("-t,--timeout-ms", j->options.timeout_ms,
                   "wait this long to connect, and for each JetStream reply")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{3600000}))
        ->type_name("MS");
    sub.add_flag("--json", j->options.json, "print the result as one JSON object");
  };
  CLI::App* init = cmd->add_subcommand("init", "create a shard's stream (or check it exists)");
  common(*init);
  add_jetstream_init(*cmd, j->layout);
  CLI::App* publish = cmd->add_subcommand("publish", "publish JSON Lines events into JetStream");
  common(*publish);
  publish->add_option("FILE", j->files,
                      "JSON Lines files, sent in order; - or none reads standard input");
  publish
      ->add_option("-w,--window", j->window, "messages published and not yet acknowledged, at most")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}))
      ->type_name("N");
  publish
      ->add_option("--agent", j->options.agent,
                   "publish as this agent, on reflectd.agents.<ID>.<namespace>: the nodes give "
                   "the events the rights of the authorized-keys entry with agent_id ID (NATS "
                   "permissions must let only that agent's user publish there)")
      ->check([](const std::string& id) {
        return id.find_first_of(".*> \t") == std::string::npos
                   ? std::string()
                   : std::string("an agent id on a subject has no '.', '*', '>' or spaces");
      })
      ->type_name("ID");
  const Globals& g = r.globals();
  r.on(
      cmd,
      [&g, j](const config::Config& config) {
        j->options.connection = config.bus.jetstream;
        if (!g.nats_servers.empty()) j->options.connection.servers = g.nats_servers;
        if (j->options.connection.servers.empty()) {
          throw std::runtime_error(
              "jetstream: no NATS server: pass --nats URL, or --config FILE with "
              "bus.jetstream.servers");
        }
        if (j->layout.name.empty()) j->layout.name = config.bus.jetstream.stream;
      },
      [j, init] {
        if (*init) return run_jetstream_init(j->options, j->layout);
        return run_jetstream_publish(j->options, j->files, j->window);
      });
}

int run_keygen(const std::string& path, bool force) {
  const CurveCert cert = generate_cert();
  try {
    write_cert_pair(path, cert, force);
  } catch (const std::runtime_error& error) {
    std::cerr << "reflectctl keygen: " << error.what() << '\n';
    const bool exists =
        std::string_view(error.what()).find("exists; not overwriting") != std::string_view::npos;
    return exists ? kExitUsage : kExitFailed;
  }
  std::cout << "secret key: " << path << " (mode 0600)\n"
            << "public key: " << path << ".pub\n"
            << "public_key: \"" << cert.public_key << "\"\n";
  return kExitOk;
}

void add_keygen(Registry& r) {
  CLI::App* cmd = r.add("keygen");
  struct Keygen {
    std::string path;
    bool force = false;
  };
  auto k = std::make_shared<Keygen>();
  cmd->add_option("PATH", k->path, "the secret key file; the public one is PATH.pub")->required();
  cmd->add_flag("-f,--force", k->force, "replace existing files");
  // No resolve: keygen reads no configuration.
  r.on(cmd, nullptr, [k] {
    try {
      return run_keygen(k->path, k->force);
    } catch (const std::exception& error) {
      std::cerr << "reflectctl keygen: " << error.what() << '\n';
      return kExitFailed;
    }
  });
}

}  // namespace

void add_client_commands(Registry& registry) {
  add_publish(registry);
  add_mcp(registry);
  add_jetstream(registry);
  add_keygen(registry);
}

}  // namespace reflectd::cli
