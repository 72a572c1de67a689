#include "cli/search.hpp"

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kPreviewWidth = 72;

}  // namespace

json search_request(const SearchOptions& options) {
  return {{"cmd", "search"},
          {"text", options.text},
          {"namespace", options.ns},
          {"kind", options.kind},
          {"limit", options.limit}};
}

std::string format_search_table(const json& reply) {
  Table table({{"SCORE", Align::kRight},
               {"KIND"},
               {"STATUS"},
               {"ID", Align::kLeft, kIdColumnWidth},
               {"PREVIEW", Align::kLeft, kPreviewWidth}});
  for (const json& row : reply.value("results", json::array())) {
    table.add({fixed(row, "score", 2), cell(row, "kind"), cell(row, "status"), cell(row, "id"),
               cell(row, "preview")});
  }
  std::string out = table.empty() ? "no events match\n" : table.render();
  // Search covers what the background indexer reached; say so when it trails.
  const auto lag = reply.value("lag_events", std::int64_t{0});
  if (lag > 0) {
    out += "(search complete through seq " +
           std::to_string(reply.value("indexed_through_seq", std::int64_t{0})) + "; " +
           std::to_string(lag) + " newer events not indexed yet)\n";
  }
  return out;
}

int run_search(const SearchOptions& options) {
  return run_control_command({"search", format_search_table, {}}, options.control,
                             search_request(options));
}

}  // namespace reflectd::cli
