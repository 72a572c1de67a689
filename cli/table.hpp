#pragma once
// Plain-text tables for reflectctl's listings (jobs, knowledge, observations): a header row,
// columns padded by display width (UTF-8 code points), two spaces between columns, and cells
// cut to a width with "…" so a row stays on a terminal line.
//
// Error policy: nothing here throws except std::bad_alloc; missing or null JSON values show
// as "-". Thread-safety: plain data and pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace reflectd::cli {

/// The width of an id column (event, decision, record ids are at most this wide as shown).
inline constexpr std::size_t kIdColumnWidth = 40;

/// Number of code points in UTF-8 `text` (continuation bytes are not counted).
std::size_t display_width(std::string_view text);

/// `text` on one line (control characters, newlines included, become spaces) and at most
/// `max_width` code points: longer text keeps its first max_width - 1 and ends with "…".
std::string clip(std::string_view text, std::size_t max_width);

/// A member of a JSON object as cell text: strings as they are, numbers and booleans as JSON,
/// objects and arrays as compact JSON, "-" when absent or null.
std::string cell(const nlohmann::json& object, std::string_view key);

/// A number with `decimals` digits after the point ("-" when not a number).
std::string fixed(const nlohmann::json& object, std::string_view key, int decimals);

/// Microseconds since the epoch as RFC 3339 UTC to the second: 2024-12-01T09:00:00Z.
std::string rfc3339_utc(std::int64_t epoch_us);

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
  std::size_t max_width = 0;  ///< 0: unlimited; otherwise cells are clip()ped to it.
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  /// Adds a row; missing trailing cells are empty, extra cells are ignored.
  void add(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  /// The header and every row, each ending in '\n'; no trailing blanks on any line.
  std::string render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace reflectd::cli
