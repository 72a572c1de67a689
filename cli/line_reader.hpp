#pragma once
// Reads the input files of `reflectctl publish` one line at a time, remembering where each
// line came from so results map back to file:line.
//
// Error policy: the constructor throws std::runtime_error naming the first input that cannot
// be opened (checked up front so a typo fails before anything is sent); next() throws
// std::runtime_error on a read error. Thread-safety: one reader per thread.

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace reflectd::cli {

/// One input line. `file` indexes LineReader::names(); `number` counts from 1.
struct InputLine {
  std::uint32_t file = 0;
  std::uint64_t number = 0;
  std::string text;  ///< Without the newline (nor a CRLF file's carriage return).
};

class LineReader {
 public:
  /// `paths` are read in order; "-" is standard input. An empty list means standard input.
  explicit LineReader(std::vector<std::string> paths);

  /// The next line, or nullopt after the last line of the last input.
  std::optional<InputLine> next();

  /// Display names of the inputs ("<stdin>" for "-"), indexed by InputLine::file.
  const std::vector<std::string>& names() const { return names_; }

  /// Sum of the sizes of the inputs, or 0 when one of them is not a regular file.
  std::uint64_t total_bytes() const { return total_bytes_; }

 private:
  bool open_next();

  std::vector<std::string> paths_;
  std::vector<std::string> names_;
  std::uint64_t total_bytes_ = 0;
  std::size_t current_ = 0;
  std::ifstream file_;
  std::istream* in_ = nullptr;
  std::uint64_t line_number_ = 0;
};

}  // namespace reflectd::cli
