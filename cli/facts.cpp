#include "cli/facts.hpp"

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kEntityWidth = 24;
constexpr std::size_t kStatementWidth = 80;

// A date as given; a date-time to the minute ("2023-05-08T13:57:00.000000Z" -> "2023-05-08
// 13:57"): the table is read by people, --json keeps the microseconds.
std::string short_time(std::string text) {
  if (text.size() > 16 && text[10] == 'T') {
    text[10] = ' ';
    text.resize(16);
  }
  return text;
}

// "2023-05-07", "2023-05-07 .. 2023-05-13", "2023-05-08 13:57 .." (still valid).
std::string validity(const json& row) {
  const std::string from = short_time(cell(row, "valid_from"));
  const json to = row.value("valid_to", json());
  if (!to.is_string()) return from + " ..";
  const std::string end = short_time(to.get<std::string>());
  return end == from ? from : from + " .. " + end;
}

}  // namespace

json facts_request(const FactsOptions& options) {
  json request = {{"cmd", "facts"},
                  {"namespace", options.ns},
                  {"entity", options.entity},
                  {"attribute", options.attribute},
                  {"current", options.current},
                  {"limit", options.limit}};
  if (options.after_id > 0) request["after_id"] = options.after_id;
  return request;
}

std::string format_facts_table(const json& reply) {
  Table table({{"ID", Align::kRight},
               {"ENTITY", Align::kLeft, kEntityWidth},
               {"ATTRIBUTE"},
               {"VALID"},
               {"STATEMENT", Align::kLeft, kStatementWidth}});
  for (const json& row : reply.value("facts", json::array())) {
    std::string statement = cell(row, "statement");
    if (row.value("is_stale", false)) statement = "(superseded) " + statement;
    table.add(
        {cell(row, "id"), cell(row, "entity"), cell(row, "attribute"), validity(row), statement});
  }
  return table.empty() ? "no facts match\n" : table.render();
}

int run_facts(const FactsOptions& options) {
  return run_control_command({"facts", format_facts_table, {}}, options.control,
                             facts_request(options));
}

}  // namespace reflectd::cli
