#include "cli/reinforce.hpp"

#include <algorithm>

#include "cli/table.hpp"

namespace reflectd::cli {

using json = nlohmann::json;

json reinforce_request(const ReinforceOptions& options) {
  return {{"cmd", "reinforce"}, {"id", options.id}, {"useful", options.useful}};
}

std::string format_reinforced(const json& reply) {
  const json record = reply.value("reinforced", json::object());
  if (!record.is_object() || record.empty()) return "reinforced\n";
  std::size_t width = 0;
  for (const auto& [key, value] : record.items()) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : record.items()) {
    out += key + ":" + std::string(width - key.size() + 1, ' ') + cell(record, key) + '\n';
  }
  return out;
}

int run_reinforce(const ReinforceOptions& options) {
  return run_control_command({"reinforce", format_reinforced, {}}, options.control,
                             reinforce_request(options));
}

}  // namespace reflectd::cli
