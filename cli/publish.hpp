#pragma once
// `reflectctl publish`: JSON Lines files in, a summary of what the daemon did with each
// event out.
//
// Error policy: problems the user can fix before anything is sent (unreadable input,
// unusable endpoint) are printed to stderr and returned as kExitUsage; a daemon that never
// completes a connection within `timeout` gives kExitUnreachable. A read error in the middle
// of the input throws std::runtime_error. Thread-safety: call from one thread at a time.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/message_builder.hpp"
#include "cli/socket.hpp"

namespace reflectd::cli {

struct PublishOptions {
  std::vector<std::string> files;  ///< "-" or none: standard input.
  std::string endpoint;            ///< ingest endpoint, or push endpoint when `push`.
  bool push = false;
  bool json = false;  ///< Print the summary as JSON.
  BatchLimits batch;
  std::size_t window = 64;
  std::chrono::milliseconds timeout{5000};
  int retries = 5;
  std::optional<CurveClientKeys> curve;  ///< Connect with CURVE (--curve-key, --server-key).
};

/// Publishes, draws progress on stderr when it is a terminal, prints the summary on stdout
/// and returns the exit status (cli/exit_codes.hpp).
int run_publish(const PublishOptions& options);

}  // namespace reflectd::cli
