#include "cli/memory_commands.hpp"

#include <algorithm>
#include <array>
#include <iostream>
#include <stdexcept>

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kRationaleWidth = 60;

std::string joined(const json& list) {
  std::string out;
  for (const auto& item : list) {
    if (!out.empty()) out += ", ";
    out += item.is_string() ? item.get<std::string>() : item.dump();
  }
  return out.empty() ? "-" : out;
}

std::string kept_lines(const json& result) {
  std::string out;
  for (const auto& k : result.value("kept", json::array())) {
    out += "kept " + cell(k, "id") + ": " + cell(k, "reason") + '\n';
  }
  return out;
}

}  // namespace

json forget_request(const ForgetOptions& o) {
  json request = {{"cmd", "forget"},
                  {"mode", o.hard_delete ? "delete" : "archive"},
                  {"dry_run", o.dry_run},
                  {"wait", o.wait}};
  if (!o.rationale.empty()) request["rationale"] = o.rationale;
  if (!o.ids.empty()) {
    request["ids"] = o.ids;
    return request;
  }
  json filter = json::object();
  const std::array<std::pair<const char*, const std::string*>, 6> fields{{{"namespace", &o.ns},
                                                                          {"agent_id", &o.agent_id},
                                                                          {"kind", &o.kind},
                                                                          {"before", &o.before},
                                                                          {"after", &o.after},
                                                                          {"text", &o.text}}};
  for (const auto& [key, value] : fields) {
    if (!value->empty()) filter[key] = *value;
  }
  request["filter"] = std::move(filter);
  return request;
}

std::string format_forgotten(const json& reply) {
  const json result = reply.value("forgotten", json::object());
  if (result.value("dry_run", false)) {
    Table table({{"ID", Align::kLeft, kIdColumnWidth}, {"NAMESPACE"}, {"KIND"}, {"STATUS"}});
    const json events = result.value("events", json::array());
    for (const auto& e : events) {
      table.add({cell(e, "id"), cell(e, "namespace"), cell(e, "kind"), cell(e, "status")});
    }
    return table.render() + std::to_string(events.size()) + " events would be forgotten (" +
           cell(result, "mode") + "); nothing changed\n" + kept_lines(result);
  }
  if (cell(result, "mode") == "archive") {
    return "archived " + cell(result, "events_archived") + " events\n" + kept_lines(result);
  }
  std::string out;
  for (const char* key :
       {"events_deleted", "facts_deleted", "agent_decisions_deleted", "audit_rows_redacted",
        "derived_rows_cleared", "rebuild_runs", "wal_truncated"}) {
    out += std::string(key) + ":" + std::string(24 - std::string(key).size(), ' ') +
           cell(result, key) + '\n';
  }
  out += "namespaces:              " + joined(result.value("namespaces", json::array())) + '\n';
  if (result.contains("clear_ms")) {
    out += "took:                    clear " + cell(result, "clear_ms") + " ms in " +
           cell(result, "clear_transactions") + " transactions, delete " +
           cell(result, "delete_ms") + " ms, index optimization " + cell(result, "optimize_ms") +
           " ms\n";
  }
  return out + kept_lines(result);
}

int run_forget(const ForgetOptions& options) {
  return run_control_command({"forget", format_forgotten, {}}, options.control,
                             forget_request(options));
}

json event_state_request(const EventStateOptions& o) { return {{"cmd", o.cmd}, {"ids", o.ids}}; }

std::string format_event_state(const json& reply) {
  const json result = reply.value("result", json::object());
  return "changed:   " + joined(result.value("changed", json::array())) +
         "\nunchanged: " + joined(result.value("unchanged", json::array())) + '\n';
}

int run_event_state(const EventStateOptions& options) {
  return run_control_command({options.cmd, format_event_state, {}}, options.control,
                             event_state_request(options));
}

json revise_request(const ReviseOptions& o) {
  json request = {
      {"cmd", "revise"}, {"id", o.id}, {"content", o.content}, {"rationale", o.rationale}};
  if (!o.context_json.empty()) {
    json context = json::parse(o.context_json, nullptr, false);
    if (!context.is_object()) throw std::invalid_argument("--context: must be a JSON object");
    request["context"] = std::move(context);
  }
  if (!o.new_id.empty()) request["new_id"] = o.new_id;
  if (o.keep_timestamp) request["keep_timestamp"] = true;
  return request;
}

std::string format_revised(const json& reply) {
  const json result = reply.value("revised", json::object());
  const json revision = result.value("revision", json::object());
  return "revised " + cell(result, "id") + "\nrevision " + cell(revision, "id") + " (seq " +
         cell(revision, "seq") + ")\n";
}

int run_revise(const ReviseOptions& options) {
  json request;
  try {
    request = revise_request(options);
  } catch (const std::invalid_argument& error) {
    std::cerr << "reflectctl revise: " << error.what() << '\n';
    return 2;
  }
  return run_control_command({"revise", format_revised, {}}, options.control, request);
}

json proposal_request(const ProposalOptions& o) {
  return {{"cmd", "proposal"},
          {"action", o.action},
          {"proposal_id", o.proposal_id},
          {"rationale", o.rationale}};
}

std::string format_proposal(const json& reply) {
  const json result = reply.value("proposal", json::object());
  return cell(result, "proposal_id") + ": " + cell(result, "previous_status") + " -> " +
         cell(result, "status") + '\n';
}

int run_proposal(const ProposalOptions& options) {
  return run_control_command({"proposal", format_proposal, {}}, options.control,
                             proposal_request(options));
}

json merge_entities_request(const MergeEntitiesOptions& o) {
  json request = {
      {"cmd", "merge_entities"}, {"namespace", o.ns}, {"from", o.from}, {"into", o.into}};
  if (!o.rationale.empty()) request["rationale"] = o.rationale;
  return request;
}

std::string format_merged(const json& reply) {
  const json result = reply.value("merged", json::object());
  const json moved = result.value("moved", json::object());
  const auto count = [&](const char* field) { return moved.value(field, std::int64_t{0}); };
  return cell(result, "from") + " -> " + cell(result, "into") + " (" + cell(result, "namespace") +
         "): " + std::to_string(count("mentions_moved")) + " mentions moved, " +
         std::to_string(count("mentions_joined")) + " joined; " +
         std::to_string(count("edges_moved")) + " edges moved, " +
         std::to_string(count("edges_joined")) + " joined, " +
         std::to_string(count("edges_dropped")) + " dropped; " +
         std::to_string(count("facts_moved")) + " facts renamed\n";
}

int run_merge_entities(const MergeEntitiesOptions& options) {
  return run_control_command({"merge_entities", format_merged, {}}, options.control,
                             merge_entities_request(options));
}

json audit_request(const AuditOptions& o) {
  json request = {{"cmd", "audit"}, {"limit", o.limit}};
  if (!o.record_id.empty()) request["record_id"] = o.record_id;
  if (!o.ns.empty()) request["namespace"] = o.ns;
  if (!o.since.empty()) request["since"] = o.since;
  return request;
}

std::string format_audit_table(const json& reply) {
  Table table({{"AT"},
               {"ACTION"},
               {"ACTOR"},
               {"RECORD_TYPE"},
               {"RECORD_ID", Align::kLeft, kIdColumnWidth},
               {"NAMESPACE"},
               {"RATIONALE", Align::kLeft, kRationaleWidth}});
  for (const auto& row : reply.value("audit", json::array())) {
    table.add({cell(row, "at"), cell(row, "action"), cell(row, "actor"), cell(row, "record_type"),
               cell(row, "record_id"), cell(row, "namespace"), cell(row, "rationale")});
  }
  return table.empty() ? "no audit entries match\n" : table.render();
}

int run_audit(const AuditOptions& options) {
  return run_control_command({"audit", format_audit_table, {}}, options.control,
                             audit_request(options));
}

}  // namespace reflectd::cli
