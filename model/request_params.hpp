#pragma once
// Parameters of a control request (docs/COMMANDS.md) read with each command's default: the
// daemon's dispatch, the read library and the control fuzz target read them the same way.
// Error policy: none of these throws; a parameter of the wrong type reads as absent, and the
// command table's schema (model/commands.hpp) is what refuses it with the field and the rule.
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reflectd::model {

/// The string parameter `key` of `request`; empty when absent or not a string.
std::string text_param(const nlohmann::json& request, const char* key);

/// The integer parameter `key` (default "limit") clamped to [1, 10000]; `fallback` when
/// absent or not an integer. Huge values clamp to 10000 (they are not truncated to int).
int limit_param(const nlohmann::json& request, int fallback, const char* key = "limit");

/// The strings of the array parameter `key`, in order; non-string items are skipped; empty
/// when absent or not an array.
std::vector<std::string> string_list(const nlohmann::json& request, const char* key);

}  // namespace reflectd::model
