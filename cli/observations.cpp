#include "cli/observations.hpp"

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kObservationTargetWidth = 24;
constexpr std::size_t kObservationTitleWidth = 64;

}  // namespace

json observations_request(const ObservationsOptions& options) {
  return {{"cmd", "observations"},
          {"namespace", options.ns},
          {"type", options.type},
          {"limit", options.limit}};
}

std::string format_observations_table(const json& reply) {
  Table table({{"TYPE"},
               {"SUPPORT", Align::kRight},
               {"TRAJECTORIES", Align::kRight},
               {"TARGET", Align::kLeft, kObservationTargetWidth},
               {"TITLE", Align::kLeft, kObservationTitleWidth}});
  for (const json& row : reply.value("observations", json::array())) {
    table.add({cell(row, "observation_type"), cell(row, "support_count"),
               cell(row, "trajectory_count"), cell(row, "target"), cell(row, "title")});
  }
  return table.empty() ? "no observations match\n" : table.render();
}

int run_observations(const ObservationsOptions& options) {
  return run_control_command({"observations", format_observations_table, {}}, options.control,
                             observations_request(options));
}

}  // namespace reflectd::cli
