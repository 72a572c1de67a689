#pragma once
// `reflectctl status`: asks the daemon's control socket for {"cmd":"status"} and shows the
// answer as a table or as the raw JSON.
//
// Error policy: run_status() prints every problem to stderr and returns an exit status;
// format_status_table() never throws (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

using StatusOptions = ControlOptions;

/// The status reply as a two-column "label  value" table, one row per line.
std::string format_status_table(const nlohmann::json& status);

/// Runs the command: kExitOk, kExitFailed (the daemon answered with an error),
/// kExitUsage (bad endpoint) or kExitUnreachable (no reply in time).
int run_status(const StatusOptions& options);

}  // namespace reflectd::cli
