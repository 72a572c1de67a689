#pragma once
// Text helpers of the consolidation job (jobs/consolidation.hpp): the lines it quotes from an
// event's content, the fields it reads from parsed JSON, and the id lists it writes. Every
// function here is pure and thread-safe; none throws except std::bad_alloc.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace reflectd::jobs::consolidation {

/// `ids` as a JSON array, the text nlohmann::json(ids).dump() gives ("[1,2,3]", "[]"), without
/// building a json value per id: an observation's 200 ids were ~45,000 instructions that way.
std::string integer_array_json(std::span<const std::int64_t> ids);

/// The first line of `text` holding more than spaces, tabs and carriage returns, trimmed of
/// them at both ends and cut to at most `max_bytes` at a UTF-8 character boundary
/// (utf8_prefix). Empty when there is none.
std::string first_line(std::string_view text, std::size_t max_bytes);

/// The text after `label` (e.g. "Problem:", libzmq's convention) on the first line that starts
/// with it, as first_line(rest, 300) gives it; empty when no line starts with `label` (or the
/// rest is blank). The label must be at the very start of the line.
std::string labelled_line(std::string_view text, std::string_view label);

/// `object[key]` when `object` is an object and that member a string; else empty.
std::string string_field(const nlohmann::json& object, const char* key);

/// True when `object[key]` is true, or a number above 0.7 (a success score); false for any
/// other value, a missing key or a non-object.
bool truthy(const nlohmann::json& object, const char* key);

/// SQLite's `content LIKE '%Solution:%'` (ASCII case-insensitive): the candidates for the
/// "Solution:" lines a proposal stream lists.
bool mentions_solution(std::string_view content);

}  // namespace reflectd::jobs::consolidation
