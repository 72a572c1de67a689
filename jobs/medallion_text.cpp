#include "jobs/medallion_text.hpp"

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>

#include "common/timestamp.hpp"
#include "jobs/decision_extraction.hpp"

namespace reflectd::jobs::medallion {

using nlohmann::json;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, separator)) {
    const auto a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    out.push_back(item.substr(a, item.find_last_not_of(' ') - a + 1));
  }
  return out;
}

std::size_t utf8_chars(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string clip(const std::string& text, std::size_t max_chars) {
  if (utf8_chars(text) <= max_chars) return text;
  std::string out;
  std::size_t chars = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++chars > max_chars - 3) break;
    out.push_back(c);
  }
  // A whole sentence when one ends in the second half, else a word boundary.
  if (const auto stop = out.rfind(". "); stop != std::string::npos && stop > out.size() / 2) {
    out.resize(stop + 1);
    return out;
  }
  if (const auto space = out.find_last_of(' ');
      space != std::string::npos && space > out.size() / 2) {
    out.resize(space);
  }
  return out + "...";
}

std::string day(std::int64_t us) { return format_rfc3339_us(us).substr(0, 10); }

std::string first_text_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = std::string_view(text).substr(start, end - start);
    if (const auto a = line.find_first_not_of(" \t\r"); a != std::string_view::npos) {
      return std::string(line.substr(a, line.find_last_not_of(" \t\r") - a + 1));
    }
    start = end + 1;
  }
  return {};
}

std::string last_text_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const auto start = text.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    const auto line = std::string_view(text).substr(from, end - from);
    if (const auto a = line.find_first_not_of(" \t\r"); a != std::string_view::npos) {
      return std::string(line.substr(a, line.find_last_not_of(" \t\r") - a + 1));
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return {};
}

std::string problem_line(const std::string& text) {
  constexpr std::array<std::string_view, 2> kLabels{"Problem:", "Issue:"};
  return labelled_paragraph(text, kLabels);
}

json last_ids(const std::string& text, std::size_t n) {
  const json ids = json::parse(text, nullptr, false);
  json out = json::array();
  if (!ids.is_array()) return out;
  for (std::size_t i = ids.size() > n ? ids.size() - n : 0; i < ids.size(); ++i)
    out.push_back(ids[i]);
  return out;
}

}  // namespace reflectd::jobs::medallion
