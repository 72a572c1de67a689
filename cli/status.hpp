#pragma once
// `reflectctl status`: asks the daemon's control socket for {"cmd":"status"} and shows the
// answer as a table or as the raw JSON.
//
// Error policy: run_status() prints every problem to stderr and returns an exit status;
// format_status_table() never throws (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace reflectd::cli {

struct StatusOptions {
  std::string endpoint;                     ///< The control endpoint.
  std::chrono::milliseconds timeout{3000};  ///< For connecting and the reply together.
  bool json = false;                        ///< Print the daemon's JSON reply verbatim.
};

/// Sends `request` as [request id, JSON] on a DEALER connected to `endpoint` and returns the
/// parsed reply, or nullopt when none arrived within `timeout`. A reply that is not JSON is
/// returned as a string value. Throws std::runtime_error for an endpoint that cannot be used.
std::optional<nlohmann::json> control_request(const std::string& endpoint,
                                              const nlohmann::json& request,
                                              std::chrono::milliseconds timeout);

/// The status reply as a two-column "label  value" table, one row per line.
std::string format_status_table(const nlohmann::json& status);

/// Runs the command: kExitOk, kExitFailed (the daemon answered with an error),
/// kExitUsage (bad endpoint) or kExitUnreachable (no reply in time).
int run_status(const StatusOptions& options);

}  // namespace reflectd::cli
