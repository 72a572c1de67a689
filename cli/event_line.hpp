#pragma once
// The local check of one JSON Lines input line, and the id that makes re-sending it
// idempotent.
//
// Error policy: nothing throws for bad input; a line that is not a JSON object is reported
// as LineShape::kOther and sent as is, so the daemon's precise error reaches the user.
// Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace reflectd::cli {

enum class LineShape {
  kBlank,   ///< Only white space: skipped.
  kObject,  ///< Exactly one syntactically valid JSON object.
  kOther,   ///< Anything else: invalid JSON, an array, a scalar, trailing garbage.
};

struct LineCheck {
  LineShape shape = LineShape::kOther;
  bool has_id = false;  ///< kObject only: the object has a top-level "id" member.
};

/// Classifies `line` with nlohmann::json's SAX parser (no DOM is built).
LineCheck check_line(std::string_view line);

/// The id given to an object line that has none: "line:" + SHA-256 hex of the line's text.
std::string line_id(std::string_view line);

/// Returns `line` with "id":"<line_id(line)>" spliced in as the object's first member,
/// leaving every other byte untouched. Precondition: check_line(line) is an object without id.
std::string with_line_id(std::string_view line);

/// `line` without a trailing carriage return (CRLF files).
std::string_view strip_cr(std::string_view line);

}  // namespace reflectd::cli
