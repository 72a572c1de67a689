// Fuzz target: recall's query parser and time-expression parser (recall/query.hpp,
// text/time_expressions.hpp) over arbitrary text and reference times.
// Checks: the FTS5 expression is only double-quoted strings of letters, digits, spaces and
// non-ASCII bytes joined by " OR " (no user text reaches FTS5 syntax); every time mention
// lies inside the text, in order, not overlapping, with a non-empty label and from < to;
// with_absolute_dates() keeps the text and only inserts bracketed dates.

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.hpp"
#include "recall/query.hpp"
#include "text/time_expressions.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reflectd;
  using namespace reflectd::recall;
  using namespace reflectd::text;
  if (size < 4) return 0;
  // The first 4 bytes pick a reference day between 1970 and about 2106.
  std::uint32_t seconds = 0;
  std::memcpy(&seconds, data, sizeof seconds);
  const std::int64_t reference_us = static_cast<std::int64_t>(seconds) * 1'000'000;
  const std::string_view text(reinterpret_cast<const char*>(data + 4), size - 4);

  const ParsedQuery query = parse_query(text, reference_us);
  const std::string match = fts_match(query.terms, query.phrases);
  bool inside = false;
  for (std::size_t i = 0; i < match.size(); ++i) {
    const char c = match[i];
    if (c == '"') {
      inside = !inside;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (inside) {
      FUZZ_CHECK(std::isalnum(byte) != 0 || byte >= 0x80 || c == ' ', "byte 0x%02x in a string",
                 byte);
    } else {
      FUZZ_CHECK(c == ' ' || c == 'O' || c == 'R', "'%c' outside quotes", c);
    }
  }
  FUZZ_CHECK(!inside, "unbalanced quotes in %s", match.c_str());

  std::size_t previous_end = 0;
  for (const TimeMention& m : find_time_expressions(text, reference_us)) {
    FUZZ_CHECK(m.begin >= previous_end && m.begin < m.end && m.end <= text.size(),
               "mention [%zu, %zu) out of order or outside %zu bytes", m.begin, m.end, text.size());
    FUZZ_CHECK(!m.range.label.empty() && m.range.from_us < m.range.to_us, "empty range %s",
               m.range.label.c_str());
    previous_end = m.end;
  }
  const std::string annotated = with_absolute_dates(text, reference_us);
  FUZZ_CHECK(annotated.size() >= text.size(), "with_absolute_dates lost bytes");
  return 0;
}
