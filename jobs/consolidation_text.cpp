#include "jobs/consolidation_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "common/utf8.hpp"

namespace reflectd::jobs::consolidation {

std::string integer_array_json(std::span<const std::int64_t> ids) {
  std::string out = "[";
  out.reserve(2 + ids.size() * 21);
  std::array<char, 24> digits{};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    const auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), ids[i]);
    out.append(digits.data(), end);
  }
  out += ']';
  return out;
}

std::string first_line(std::string_view text, std::size_t max_bytes) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string_view::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      return std::string(utf8_prefix(line, max_bytes));
    }
    start = end + 1;
  }
  return {};
}

std::string labelled_line(std::string_view text, std::string_view label) {
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    if (line.starts_with(label)) return first_line(line.substr(label.size()), 300);
    start = end + 1;
  }
  return {};
}

std::string string_field(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

bool truthy(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return false;
  const auto it = object.find(key);
  if (it == object.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() > 0.7;
  return false;
}

bool mentions_solution(std::string_view content) {
  constexpr std::string_view kNeedle = "solution:";
  const auto it = std::search(
      content.begin(), content.end(), kNeedle.begin(), kNeedle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
      });
  return it != content.end();
}

}  // namespace reflectd::jobs::consolidation
