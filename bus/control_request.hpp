#pragma once
// Parsing of control-socket requests (docs/COMMANDS.md), kept apart from the sockets so
// that it is a pure function: the bus calls parse_control_request() for every message read
// on `control` (the daemon reads its parameters with model/request_params.hpp), and
// fuzz/control_request_fuzz.cpp drives exactly this code with hostile bytes.
//
// Error policy (event path): nothing here throws for bad input. A request that cannot be
// parsed yields ParsedControlRequest::error, the text of the `{"ok":false,"error":...}`
// Thread-safety: every function is pure and reentrant.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace reflectd::bus {

/// The result of parsing one control message.
// nlohmann::json's destructor may allocate (it flattens nested values); a bad_alloc there
// ends the process, as it would anywhere else.
struct ParsedControlRequest {  // NOLINT(bugprone-exception-escape)
  nlohmann::json request;      ///< A JSON object when `error` is empty; null otherwise.
  std::string error;           ///< Non-empty, starting with "request: ", when refused.
};

/// Parses one control message. `frame_count` is the number of ZeroMQ frames of the message
/// (ROUTER: routing id, optional empty delimiter of REQ, payload last), `payload` its last
/// frame and `max_message_bytes` the bus.max_message_bytes limit. The request must be a JSON
/// object (RFC 8259, nlohmann's parser, so depth is bounded by memory only and parsing is
/// iterative); its `cmd` is checked by the command dispatcher, not here.
ParsedControlRequest parse_control_request(std::size_t frame_count, std::string_view payload,
                                           std::size_t max_message_bytes);

}  // namespace reflectd::bus
