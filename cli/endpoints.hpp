#pragma once
// Where reflectctl connects: an explicit endpoint flag, else the first endpoint the daemon's
// YAML configuration binds for that socket, else reflectd's built-in default.
//
// Error policy: every problem throws std::runtime_error (config::ConfigError, a subclass, for
// an invalid YAML file) with a message fit to show the user as is.
// Thread-safety: pure functions.

#include <string>
#include <string_view>

#include "config/config.hpp"

namespace reflectd::cli {

/// The daemon sockets reflectctl talks to.
enum class Role { kIngest, kPush, kControl };

/// What the user passed; empty strings mean "not given".
struct EndpointOptions {
  std::string config_path;  ///< --config: the daemon's YAML file.
  std::string ingest;       ///< --ingest: overrides bus.ingest.
  std::string push;         ///< --push-endpoint: overrides bus.push.
  std::string control;      ///< --control: overrides bus.control.
};

/// The configuration named by --config, or reflectd's built-in defaults without one.
/// Throws config::ConfigError naming file:line:column.
config::Config load_client_config(const EndpointOptions& options);

/// The endpoint to connect to for `role`. An explicit flag is returned verbatim; otherwise the
/// first configured endpoint goes through connectable_endpoint(). Throws std::runtime_error
/// when the configuration binds no endpoint for `role` or binds one no client can name.
std::string resolve_endpoint(const EndpointOptions& options, const config::Config& config,
                             Role role);

/// Turns a bind endpoint into one a client can connect to: a wildcard host (`*`, `0.0.0.0`)
/// becomes 127.0.0.1. Throws std::runtime_error for a wildcard (ephemeral) tcp port such as
/// `tcp://127.0.0.1:*` and for `ipc://*`, which no client can name.
std::string connectable_endpoint(std::string_view endpoint, Role role);

/// "ingest", "push" or "control".
std::string_view role_name(Role role);

}  // namespace reflectd::cli
