#include "model/request_params.hpp"

#include <algorithm>
#include <cstdint>

namespace reflectd::model {

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

}  // namespace reflectd::model
