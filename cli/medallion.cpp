#include "cli/medallion.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <iterator>

#include "cli/exit_codes.hpp"
#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kTextWidth = 64;

std::string text_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "-";
  return value.dump();
}

std::string str(const json& object, const char* key) {
  return object.is_object() ? cell(object, key) : std::string("-");
}

std::string format_list_table(const json& reply) {
  Table table({{"ID", Align::kLeft, kIdColumnWidth},
               {"STATUS"},
               {"UPDATED"},
               {"HIGH_LEVEL", Align::kLeft, kTextWidth}});
  for (const json& row : reply.value("medallions", json::array())) {
    table.add(
        {cell(row, "id"), cell(row, "status"), cell(row, "updated_at"), cell(row, "high_level")});
  }
  return table.empty() ? "no medallions\n" : table.render();
}

std::string format_history_table(const json& reply) {
  Table table({{"VERSION", Align::kRight}, {"UPDATED"}, {"HIGH_LEVEL", Align::kLeft, kTextWidth}});
  for (const json& row : reply.value("versions", json::array())) {
    const json medallion = row.value("medallion", json::object());
    const json summary =
        medallion.is_object() ? medallion.value("summary", json::object()) : json::object();
    table.add({cell(row, "version"), cell(row, "updated_at"), str(summary, "high_level")});
  }
  return table.empty() ? "no earlier versions of " + cell(reply, "id") + "\n" : table.render();
}

void section(std::string& out, const char* title) { out += fmt::format("\n{}\n", title); }

}  // namespace

json medallion_request(const MedallionOptions& options, const json& medallion) {
  json request = {{"cmd", "medallion"}, {"action", options.action}};
  if (options.action == "get" || options.action == "history" || options.action == "update" ||
      options.action == "set_status") {
    request["id"] = options.id;
  }
  if (options.action == "create" || options.action == "update") {
    json m = medallion.is_object() ? medallion : json::object();
    if (options.action == "create") {
      request["namespace"] = options.ns;
      if (!options.id.empty()) m["meta"]["medallion_id"] = options.id;
      if (!options.supersedes.empty()) request["supersedes"] = options.supersedes;
    }
    request["medallion"] = std::move(m);
    request["evidence"] = {{"session_summary", options.evidence}};
    if (!options.transcripts.empty()) request["evidence"]["transcripts"] = options.transcripts;
    if (!options.sensitivity.empty()) request["sensitivity"] = options.sensitivity;
  }
  if (options.action == "set_status") {
    request["status"] = options.status;
    if (!options.superseded_by.empty()) request["superseded_by"] = options.superseded_by;
    request["rationale"] = options.rationale;
  }
  if (options.action == "query") {
    request["nodes"] = options.nodes;
    request["tags"] = options.tags;
  }
  if (options.action == "history" || options.limit_given) request["limit"] = options.limit;
  return request;
}

std::string format_medallion(const json& reply) {
  const json m = reply.value("medallion", json::object());
  if (!m.is_object()) return text_of(m) + '\n';
  const json meta = m.value("meta", json::object());
  const json x = meta.is_object() ? meta.value("x_reflectd", json::object()) : json::object();
  // The job's medallions say how many events they cover; an agent's who wrote which version.
  const std::string origin =
      x.contains("written_by")
          ? fmt::format("written by {}  version {}", str(x, "written_by"), str(x, "version"))
          : fmt::format("events {}", str(x, "events"));
  std::string out =
      fmt::format("{}  status {}  namespace {}  updated {}  {}\n", str(meta, "medallion_id"),
                  str(meta, "status"), str(x, "namespace"), str(meta, "updated_at"), origin);
  if (x.contains("superseded_by")) out += "superseded by " + str(x, "superseded_by") + '\n';
  const json scope = m.value("scope", json::object());
  if (scope.is_object()) {
    out += fmt::format("scope: nodes {}  tags {}\n", str(scope, "graph_nodes"), str(scope, "tags"));
  }
  const json summary = m.value("summary", json::object());
  section(out, "HIGH LEVEL");
  out += "  " + str(summary, "high_level") + '\n';
  const json subsystems =
      summary.is_object() ? summary.value("subsystems", json::array()) : json::array();
  if (subsystems.is_array() && !subsystems.empty()) {
    section(out, "SUBSYSTEMS");
    for (const json& s : subsystems) {
      out += fmt::format("  {}  [{}]  {}\n", str(s, "name"), str(s, "status"), str(s, "notes"));
    }
  }
  const json decisions = m.value("decisions", json::array());
  if (decisions.is_array() && !decisions.empty()) {
    section(out, "DECISIONS");
    for (const json& d : decisions) {
      out += fmt::format("  {}  (confidence {})  {}\n", str(d, "id"), fixed(d, "confidence", 2),
                         str(d, "statement"));
      if (d.is_object() && d.contains("rationale") && d["rationale"].is_string() &&
          !d["rationale"].get<std::string>().empty()) {
        out += "      because: " + clip(d["rationale"].get<std::string>(), 200) + '\n';
      }
    }
  }
  const json questions = m.value("open_questions", json::array());
  if (questions.is_array() && !questions.empty()) {
    section(out, "OPEN QUESTIONS");
    for (const json& q : questions) {
      out += fmt::format("  {}  (priority {})  {}\n", str(q, "id"), str(q, "priority"),
                         str(q, "question"));
    }
  }
  const json evidence = reply.value("evidence", json());
  if (evidence.is_object()) {
    section(out, "EVIDENCE");
    out += "  " + clip(str(evidence, "session_summary"), 300) + '\n';
  }
  const json affordances = m.value("affordances", json::object());
  if (affordances.is_object() && !affordances.empty()) {
    section(out, "AFFORDANCES");
    for (const auto& [key, value] : affordances.items()) {
      if (value.is_null()) continue;
      out += "  " + key + ":\n";
      if (value.is_array()) {
        for (const json& item : value) out += "    - " + clip(text_of(item), 160) + '\n';
      } else {
        out += "    " + clip(text_of(value), 160) + '\n';
      }
    }
  }
  return out;
}

std::string format_medallion_write(const json& reply) {
  const json w = reply.value("written", json::object());
  if (w.contains("changed")) {
    if (!w.value("changed", false)) {
      return fmt::format("{} is already {}; nothing changed\n", str(w, "id"), str(w, "status"));
    }
    std::string line =
        fmt::format("{}: {} -> {}", str(w, "id"), str(w, "previous_status"), str(w, "status"));
    if (w.contains("superseded_by") && w["superseded_by"].is_string()) {
      line += " (superseded by " + w["superseded_by"].get<std::string>() + ")";
    }
    return line + '\n';
  }
  std::string line =
      fmt::format("{} version {} in namespace {}, {}, updated {}", str(w, "id"), str(w, "version"),
                  str(w, "namespace"), str(w, "status"), str(w, "updated_at"));
  if (w.contains("superseded") && w["superseded"].is_string()) {
    line += "; " + w["superseded"].get<std::string>() + " is now superseded by it";
  }
  return line + '\n';
}

int run_medallion(const MedallionOptions& options) {
  ReplyFormatter format = format_list_table;
  if (options.action == "get") format = format_medallion;
  if (options.action == "history") format = format_history_table;
  json medallion;
  if (options.action == "create" || options.action == "update" || options.action == "set_status") {
    format = format_medallion_write;
  }
  if (options.action == "create" || options.action == "update") {
    std::string text;
    if (options.file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream in(options.file, std::ios::binary);
      if (!in) {
        std::cerr << "reflectctl medallion: --file: cannot read " << options.file << '\n';
        return kExitUsage;
      }
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    medallion = json::parse(text, nullptr, false);
    if (medallion.is_discarded() || !medallion.is_object()) {
      std::cerr << "reflectctl medallion: --file: " << options.file
                << " does not hold a JSON object (a seed 001 Medallion)\n";
      return kExitUsage;
    }
  }
  return run_control_command({"medallion", format, {}}, options.control,
                             medallion_request(options, medallion));
}

}  // namespace reflectd::cli
