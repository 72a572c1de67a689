#include "text/fts_query.hpp"

#include <cctype>

namespace reflectd::text {

std::string fts_query(std::string_view text) {
  std::string query;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    query += (query.empty() ? "\"" : " \"") + word + "\"";
    word.clear();
  };
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || (byte & 0x80) != 0 || c == '_') {
      word.push_back(c);
    } else {
      flush();
    }
  }
  flush();
  return query;
}

}  // namespace reflectd::text
