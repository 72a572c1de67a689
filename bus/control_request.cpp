#include "bus/control_request.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace reflectd::bus {

ParsedControlRequest parse_control_request(std::size_t frame_count, std::string_view payload,
                                           std::size_t max_message_bytes) {
  ParsedControlRequest parsed;
  if (frame_count < 2) {
    parsed.error = "request: expected [routing id, JSON]";
    return parsed;
  }
  if (payload.size() > max_message_bytes) {
    parsed.error = "request: larger than bus.max_message_bytes";
    return parsed;
  }
  auto request = nlohmann::json::parse(payload, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    parsed.error = R"(request: must be a JSON object such as {"cmd":"status"})";
    return parsed;
  }
  parsed.request = std::move(request);
  return parsed;
}

std::string text_param(const nlohmann::json& request, const char* key) {
  const auto it = request.find(key);
  return it != request.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

int limit_param(const nlohmann::json& request, int fallback, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || !it->is_number_integer()) return fallback;
  // Clamp in 64 bits: get<int>() of 4294967297 would wrap to 1.
  if (it->is_number_unsigned()) {
    return static_cast<int>(std::clamp<std::uint64_t>(it->get<std::uint64_t>(), 1, 10000));
  }
  return static_cast<int>(std::clamp<std::int64_t>(it->get<std::int64_t>(), 1, 10000));
}

std::vector<std::string> string_list(const nlohmann::json& request, const char* key) {
  std::vector<std::string> out;
  const auto it = request.find(key);
  if (it == request.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

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

}  // namespace reflectd::bus
