#include "bus/control_request.hpp"

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

}  // namespace reflectd::bus
