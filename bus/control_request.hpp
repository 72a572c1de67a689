#pragma once
// Parsing of control-socket requests (docs/COMMANDS.md), kept apart from the sockets so
// that it is a pure function: the bus calls parse_control_request() for every message read
// on `control`, the daemon reads parameters with the helpers below, and
// fuzz/control_request_fuzz.cpp drives exactly this code with hostile bytes.
//
// Error policy (event path): nothing here throws for bad input. A request that cannot be
// parsed yields ParsedControlRequest::error, the text of the `{"ok":false,"error":...}`
// reply; parameters of the wrong type read as absent (the command's default applies).
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

/// The string parameter `key` of `request`; empty when absent or not a string.
std::string text_param(const nlohmann::json& request, const char* key);

/// The integer parameter `key` (default "limit") clamped to [1, 10000]; `fallback` when
/// absent or not an integer. Huge values clamp to 10000 (they are not truncated to int).
int limit_param(const nlohmann::json& request, int fallback, const char* key = "limit");

/// The strings of the array parameter `key`, in order; non-string items are skipped; empty
/// when absent or not an array.
std::vector<std::string> string_list(const nlohmann::json& request, const char* key);

/// An FTS5 MATCH expression that matches every word of `text`: each run of ASCII letters,
/// digits, '_' and non-ASCII bytes becomes one double-quoted string, so no user text is ever
/// parsed as FTS5 syntax. Empty when `text` has no word.
std::string fts_query(std::string_view text);

}  // namespace reflectd::bus
