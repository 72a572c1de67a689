#include "cli/entities.hpp"

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kKeyWidth = 40;
constexpr std::size_t kTextWidth = 56;

}  // namespace

json entities_request(const EntitiesOptions& options) {
  return {
      {"cmd", "entities"}, {"namespace", options.ns}, {"type", options.type}, {"top", options.top}};
}

std::string format_entities_table(const json& reply) {
  Table table({{"NAMESPACE"},
               {"TYPE"},
               {"NAME", Align::kLeft, kKeyWidth},
               {"IMPORTANCE", Align::kRight},
               {"MENTIONS", Align::kRight},
               {"LAST_SEEN"},
               {"SUMMARY", Align::kLeft, kTextWidth}});
  for (const json& row : reply.value("entities", json::array())) {
    const auto last = row.find("last_seen_us");
    table.add({cell(row, "namespace"), cell(row, "entity_type"), cell(row, "display_name"),
               fixed(row, "importance_score", 3), cell(row, "mention_count"),
               last != row.end() && last->is_number_integer()
                   ? rfc3339_utc(last->get<std::int64_t>())
                   : std::string("-"),
               cell(row, "summary_text")});
  }
  return table.empty() ? "no entities match\n" : table.render();
}

int run_entities(const EntitiesOptions& options) {
  return run_control_command({"entities", format_entities_table, {}}, options.control,
                             entities_request(options));
}

json clusters_request(const ClustersOptions& options) {
  return {{"cmd", "clusters"}, {"namespace", options.ns}, {"limit", options.limit}};
}

std::string format_clusters_table(const json& reply) {
  Table table({{"CLUSTER", Align::kRight},
               {"NAMESPACE"},
               {"MEMBERS", Align::kRight},
               {"DUPLICATES", Align::kRight},
               {"LABEL", Align::kLeft, kKeyWidth},
               {"SUMMARY", Align::kLeft, kTextWidth}});
  for (const json& row : reply.value("clusters", json::array())) {
    table.add({cell(row, "cluster_id"), cell(row, "namespace"), cell(row, "member_count"),
               cell(row, "duplicate_count"), cell(row, "label"), cell(row, "summary_text")});
  }
  return table.empty() ? "no clusters match\n" : table.render();
}

int run_clusters(const ClustersOptions& options) {
  return run_control_command({"clusters", format_clusters_table, {}}, options.control,
                             clusters_request(options));
}

}  // namespace reflectd::cli
