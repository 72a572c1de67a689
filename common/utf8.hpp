#pragma once
// Cutting UTF-8 text to a byte budget without splitting a code point: every place that
// shortens stored or shown text (titles, summaries, previews, audit rationales) cuts here.

#include <cstddef>
#include <string_view>

namespace reflectd {

/// The largest p <= min(pos, text.size()) at which a code point starts or the text ends, so
/// that text.substr(0, p) never ends inside a UTF-8 sequence (a continuation byte is
/// 10xxxxxx). At most three steps back for valid UTF-8; on invalid input it still returns a
/// position (0 at worst). Pure; thread-safe.
constexpr std::size_t utf8_boundary(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return text.size();
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0U) == 0x80U) --pos;
  return pos;
}

/// `text`'s longest prefix of at most `max_bytes` bytes that ends on a code point boundary.
constexpr std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes) {
  return text.substr(0, utf8_boundary(text, max_bytes));
}

}  // namespace reflectd
