#include "memory_ops/request_fields.hpp"

namespace reflectd::memory_ops {

std::string required_text(const nlohmann::json& request, const char* cmd, const char* field,
                          std::size_t max_bytes, std::string& error) {
  const std::string prefix = std::string(cmd) + ": " + field + ": ";
  const auto it = request.find(field);
  if (it == request.end()) {
    error = prefix + "is required";
    return {};
  }
  if (!it->is_string()) {
    error = prefix + "must be a string";
    return {};
  }
  const auto& text = it->get_ref<const std::string&>();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    error = prefix + "must not be empty";
  } else if (text.size() > max_bytes) {
    error = prefix + "must be at most " + std::to_string(max_bytes) + " bytes";
  } else if (text.find('\0') != std::string::npos) {
    error = prefix + "must not contain NUL";
  }
  return error.empty() ? text : std::string();
}

}  // namespace reflectd::memory_ops
