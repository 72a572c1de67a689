#include "mcp/tools.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <variant>

#include "common/version.hpp"
#include "model/commands.hpp"

namespace reflectd::mcp {
using json = nlohmann::json;

namespace {

constexpr const char* kMedallionScheme = "reflectd://medallion/";

// A control request answered {"ok":true,...}: that object; else the daemon's error.
std::variant<json, std::string> control(const Backend& o, const json& request) {
  auto reply = o.control(request);
  if (auto* r = std::get_if<json>(&reply); r != nullptr && !r->value("ok", false)) {
    return r->value("error", std::string("reflectd refused the request: ") + r->dump());
  }
  return reply;
}

std::string namespace_of(const Backend& o, const json& args) {
  return args.contains("namespace") ? args["namespace"].get<std::string>() : o.ns;
}

json without_ok(json reply) {
  reply.erase("ok");
  return reply;
}

ToolResult remember(const Backend& o, const json& args) {
  const std::string ns = namespace_of(o, args);
  if (ns.empty()) {
    return ToolResult::error(
        "remember: namespace: is required (or start reflectctl mcp with --namespace)");
  }
  json event = {
      {"kind", args.value("kind", "observation")}, {"namespace", ns}, {"content", args["content"]}};
  for (const char* key : {"id", "agent_id", "episode_id", "sequence_number", "timestamp", "tags",
                          "context", "sensitivity", "importance", "salience"}) {
    if (args.contains(key)) event[key] = args[key];
  }
  auto reply = o.ingest(event);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error("remember: " + *e);
  const json& r = std::get<json>(reply);
  const json results = r.value("results", json::array());
  if (results.empty()) {
    return ToolResult::error("remember: " + r.value("error", std::string("no result")));
  }
  const json& result = results[0];
  const std::string status = result.value("status", "");
  if (status != "stored" && status != "duplicate") {
    return ToolResult::error("remember: " + result.value("error", status));
  }
  json structured = {{"id", result.value("id", "")},
                     {"seq", result.value("seq", 0)},
                     {"status", status},
                     {"namespace", ns}};
  const std::string text =
      status == "stored"
          ? "Stored event " + structured["id"].get<std::string>() + " in " + ns + "."
          : "Already stored: event " + structured["id"].get<std::string>() + " in " + ns + ".";
  return {text, std::move(structured)};
}

ToolResult recall(const Backend& o, const json& args) {
  json request = {{"cmd", "recall"}, {"text", args["query"]}, {"limit", args.value("limit", 10)}};
  if (const std::string ns = namespace_of(o, args); !ns.empty()) request["namespace"] = ns;
  for (const char* key : {"kinds", "agent_id", "episode_id", "since", "until", "as_of", "offset",
                          "include_archived"}) {
    if (args.contains(key)) request[key] = args[key];
  }
  auto reply = control(o, request);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = without_ok(std::get<json>(std::move(reply)));
  std::string text;
  int n = 0;
  for (const json& hit : structured.value("results", json::array())) {
    text += std::to_string(++n) + ". [" + hit.value("id", "") + "] " + hit.value("ts", "") + " " +
            (hit.value("agent_id", json()).is_string() ? hit["agent_id"].get<std::string>() + " "
                                                       : "") +
            "(" + hit.value("kind", "") + ", " + hit.value("namespace", "") +
            "): " + hit.value("content", "") + "\n";
  }
  if (text.empty()) text = "No stored memory matches the query.";
  return {text, std::move(structured)};
}

ToolResult context(const Backend& o, const json& args) {
  json request = {
      {"cmd", "context"}, {"text", args["query"]}, {"max_tokens", args.value("max_tokens", 1000)}};
  if (const std::string ns = namespace_of(o, args); !ns.empty()) request["namespace"] = ns;
  auto reply = control(o, request);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = without_ok(std::get<json>(std::move(reply)));
  std::string text = structured.value("context_text", "");
  if (text.empty()) text = "No stored memory matches the query.";
  return {text, std::move(structured)};
}

ToolResult get(const Backend& o, const json& args) {
  auto reply = control(o, {{"cmd", "get"}, {"ids", args["ids"]}});
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = without_ok(std::get<json>(std::move(reply)));
  return {structured.dump(2), std::move(structured)};
}

ToolResult forget(const Backend& o, const json& args) {
  json request = {{"cmd", "forget"}};
  for (const char* key : {"ids", "filter", "mode", "dry_run", "rationale"}) {
    if (args.contains(key)) request[key] = args[key];
  }
  if (request.contains("filter") && !request["filter"].contains("namespace") && !o.ns.empty()) {
    request["filter"]["namespace"] = o.ns;
  }
  auto reply = control(o, request);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = std::get<json>(std::move(reply)).value("forgotten", json::object());
  std::string text;
  if (structured.value("dry_run", false)) {
    text = std::to_string(structured["events"].size()) + " events would be forgotten: ";
    for (const json& e : structured["events"]) text += e.value("id", "") + " ";
  } else if (structured.value("mode", "") == "delete") {
    text = "Deleted " + std::to_string(structured.value("events_deleted", 0)) +
           " events and what was derived from them.";
  } else {
    text = "Archived " + std::to_string(structured.value("events_archived", 0)) +
           " events (restorable).";
  }
  for (const json& k : structured.value("kept", json::array())) {
    text += "\nKept " + k.value("id", "") + ": " + k.value("reason", "");
  }
  return {text, std::move(structured)};
}

ToolResult revise(const Backend& o, const json& args) {
  json request = {{"cmd", "revise"}};
  for (const char* key : {"id", "content", "rationale", "context", "keep_timestamp"}) {
    if (args.contains(key)) request[key] = args[key];
  }
  auto reply = control(o, request);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = std::get<json>(std::move(reply)).value("revised", json::object());
  const json revision = structured.value("revision", json::object());
  std::string text = "Revised " + structured.value("id", std::string()) + ": the revision is " +
                     revision.value("id", std::string()) +
                     "; the old text is kept, marked superseded, and no longer recalled.";
  return {text, std::move(structured)};
}

ToolResult medallion(const Backend& o, const json& args) {
  const std::string action = args.value("action", "list");
  json request = {{"cmd", "medallion"}, {"action", action}};
  for (const char* key : {"id", "nodes", "tags", "limit", "medallion", "evidence", "supersedes",
                          "status", "superseded_by", "rationale", "sensitivity"}) {
    if (args.contains(key)) request[key] = args[key];
  }
  if (action == "create") request["namespace"] = namespace_of(o, args);
  auto reply = control(o, request);
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = without_ok(std::get<json>(std::move(reply)));
  return {structured.dump(2), std::move(structured)};
}

}  // namespace

std::string medallion_uri(const std::string& id) { return kMedallionScheme + id; }

std::vector<Tool> reflectd_tools(const Backend& o) {
  using Call = ToolResult (*)(const Backend&, const json&);
  // Each tool's name, title, description and input schema come from its command's entry in
  // the command table (model/commands.cpp); only the calls are here.
  // tools/list keeps the order agents have seen since the first release.
  const std::vector<std::pair<std::string_view, Call>> calls{
      {"remember", remember}, {"recall", recall}, {"context", context},    {"get", get},
      {"forget", forget},     {"revise", revise}, {"medallion", medallion}};
  std::vector<Tool> tools;
  for (const auto& [name, call] : calls) {
    const model::CommandSpec* spec = model::find_command(name);
    if (spec == nullptr || !spec->mcp) {
      throw std::logic_error("mcp: tool " + std::string(name) + " is not in the command table");
    }
    tools.push_back({std::string(spec->mcp->name), std::string(spec->mcp->title),
                     std::string(spec->mcp->description), model::input_schema(spec->mcp->input),
                     [o, call = call](const json& a) { return call(o, a); }});
  }
  // Every tool of the table is served.
  const auto served = static_cast<std::size_t>(
      std::count_if(model::command_table().begin(), model::command_table().end(),
                    [](const model::CommandSpec& spec) { return spec.mcp.has_value(); }));
  if (served != tools.size()) throw std::logic_error("mcp: a table tool has no call");
  return tools;
}

Resources reflectd_resources(const Backend& o) {
  Resources r;
  r.list = [o] {
    std::vector<Resource> out;
    auto reply = control(o, {{"cmd", "medallion"}, {"action", "list"}, {"limit", 1000}});
    if (auto* list = std::get_if<json>(&reply)) {
      for (const json& m : list->value("medallions", json::array())) {
        const std::string id = m.value("id", "");
        out.push_back(
            {medallion_uri(id), id, "Medallion " + id,
             m.value("high_level", json()).is_string() ? m["high_level"].get<std::string>() : "",
             "application/json"});
      }
    }
    return out;
  };
  r.read = [o](const std::string& uri) -> std::optional<std::string> {
    if (uri.rfind(kMedallionScheme, 0) != 0) return std::nullopt;
    auto reply = control(o, {{"cmd", "medallion"},
                             {"action", "get"},
                             {"id", uri.substr(std::string(kMedallionScheme).size())}});
    if (auto* m = std::get_if<json>(&reply)) return m->value("medallion", json()).dump(2);
    return std::nullopt;
  };
  r.mime_type = [](const std::string&) { return std::string("application/json"); };
  r.templates.push_back({std::string(kMedallionScheme) + "{id}", "medallion", "Medallion",
                         "A medallion by id (med:<namespace> for a namespace's)",
                         "application/json"});
  return r;
}

ServerInfo reflectd_server_info() {
  return {"reflectd", "reflectd agent memory", kVersion,
          "reflectd is this agent's long-term memory. Call recall (or context) with a question "
          "before answering from memory, remember to store what should last, and medallion to "
          "resume a project."};
}

}  // namespace reflectd::mcp
