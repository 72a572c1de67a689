#include "cli/knowledge.hpp"

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kTargetWidth = 24;
constexpr std::size_t kTitleWidth = 48;

}  // namespace

json knowledge_request(const KnowledgeOptions& options) {
  return {{"cmd", "knowledge"},       {"namespace", options.ns}, {"phase", options.phase},
          {"status", options.status}, {"kind", options.kind},    {"limit", options.limit}};
}

std::string format_knowledge_table(const json& reply) {
  Table table({{"DECISION_ID", Align::kLeft, kIdColumnWidth},
               {"PHASE"},
               {"STATUS"},
               {"VITALITY"},
               {"CONFIDENCE", Align::kRight},
               {"FREQUENCY", Align::kRight},
               {"TARGET", Align::kLeft, kTargetWidth},
               {"TITLE", Align::kLeft, kTitleWidth}});
  for (const json& row : reply.value("knowledge", json::array())) {
    table.add({cell(row, "decision_id"), cell(row, "phase"), cell(row, "status"),
               cell(row, "vitality"), fixed(row, "confidence", 3), cell(row, "frequency"),
               cell(row, "target"), cell(row, "title")});
  }
  return table.empty() ? "no knowledge matches\n" : table.render();
}

int run_knowledge(const KnowledgeOptions& options) {
  return run_control_command({"knowledge", format_knowledge_table, {}}, options.control,
                             knowledge_request(options));
}

}  // namespace reflectd::cli
