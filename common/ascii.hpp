#pragma once
// ASCII case folding for keys, stop-word look-ups and rule matching: bytes outside A-Z (UTF-8
// sequences included) are kept as they are. Unicode-aware folding is jobs/entity_extraction's
// (utf8proc); this is for text whose rules are written in ASCII.

#include <string>
#include <string_view>

namespace reflectd {

/// `text` with A-Z mapped to a-z and every other byte unchanged. Pure; thread-safe.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// `text` without leading and trailing spaces, tabs and line breaks. Pure; thread-safe.
inline std::string_view trim(std::string_view text) {
  const auto a = text.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  return text.substr(a, text.find_last_not_of(" \t\r\n") - a + 1);
}

}  // namespace reflectd
