#pragma once
// Fire-and-forget publishing over the daemon's push PULL socket: no replies, so the outcome
// is only "handed to ZeroMQ" or "could not be sent".
//
// Error policy: zmq::error_t from the socket and std::runtime_error from the input
// propagate. Thread-safety: one call per socket at a time.

#include <chrono>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "cli/message_builder.hpp"
#include "cli/progress.hpp"
#include "cli/summary.hpp"

namespace reflectd::cli {

struct PushSettings {
  std::chrono::milliseconds timeout{5000};  ///< Longest one send may block (full queue).
  int retries = 5;                          ///< Further attempts before giving up.
};

/// Sends every message on `socket`, a connected PUSH. Lines that are not JSON objects are
/// sent too (the daemon dead-letters them) and counted in Summary::rejected. When a message
/// cannot be sent after all attempts the daemon is taken to be gone: the rest of the input
/// is counted in Summary::unacknowledged without being sent.
void push_all(zmq::socket_t& socket, MessageBuilder& builder, const std::vector<std::string>& names,
              PushSettings settings, Summary& summary, Progress& progress);

}  // namespace reflectd::cli
