#pragma once
// Text helpers of the medallion refresh (jobs/medallion.hpp): how it cuts what it quotes to
// the lengths seed 001 allows, the lines it quotes from an event's content and the id lists
// it writes. Every function here is pure and thread-safe; none throws except std::bad_alloc
// (and clip/last_ids nothing else either: last_ids parses without exceptions).

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reflectd::jobs::medallion {

/// A day in microseconds, to turn the difference of two event times into days.
inline constexpr std::int64_t kUsPerDay = 86'400'000'000;

/// The parts of `text` between `separator`s, trimmed of spaces; blank parts are dropped.
std::vector<std::string> split(const std::string& text, char separator);

/// The number of UTF-8 code points of `text` (bytes that are not continuation bytes): what
/// seed 001's "at most 300 characters" counts.
std::size_t utf8_chars(const std::string& text);

/// `text` cut to at most `max_chars` code points (utf8_chars): unchanged when it fits; else at
/// the end of a sentence (". ") in the second half of what fits, or at a word boundary in the
/// second half followed by "...", or after max_chars - 3 code points followed by "...".
/// `max_chars` must be at least 3.
std::string clip(const std::string& text, std::size_t max_chars);

/// The UTC day of a time in µs since the epoch, "YYYY-MM-DD".
std::string day(std::int64_t us);

/// The first line of `text` that is not blank (spaces, tabs, carriage returns), trimmed of
/// them: an error's message. Empty when there is none.
std::string first_text_line(const std::string& text);

/// The last line of `text` that is not blank, trimmed as first_text_line: the question at the
/// end of a turn. Empty when there is none.
std::string last_text_line(const std::string& text);

/// The problem a message states: its "Problem:" or "Issue:" paragraph (labelled_paragraph,
/// jobs/decision_extraction.hpp); empty when it has none.
std::string problem_line(const std::string& text);

/// The newest (last) `n` ids of a stored JSON array of event ids, oldest first; an empty array
/// when `text` is not a JSON array (a NULL column reads as ""). Parsed only for the items a
/// medallion lists: a scope has thousands of streams and recurring problems, each with up to
/// 200 ids, and lists ten of each.
nlohmann::json last_ids(const std::string& text, std::size_t n);

}  // namespace reflectd::jobs::medallion
