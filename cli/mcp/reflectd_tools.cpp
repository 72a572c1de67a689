#include "cli/mcp/reflectd_tools.hpp"

#include <iostream>
#include <variant>

#include "common/version.hpp"

namespace reflectd::cli::mcp {
using json = nlohmann::json;

namespace {

constexpr const char* kMedallionScheme = "reflectd://medallion/";

// The daemon's reply object, or the text of what went wrong.
std::variant<json, std::string> ask(const McpOptions& o, const std::string& endpoint,
                                    const json& request) {
  std::optional<json> reply;
  try {
    reply = control_request(endpoint, request, o.control.timeout, o.control.curve);
  } catch (const std::exception& error) {
    return std::string(error.what());
  }
  if (!reply) {
    return "no reply from reflectd at " + endpoint + " within " +
           std::to_string(o.control.timeout.count()) + " ms; is it running?";
  }
  if (!reply->is_object()) return "reflectd answered something that is not JSON: " + reply->dump();
  return *reply;
}

// A control request answered {"ok":true,...}: that object; else the daemon's error.
std::variant<json, std::string> control(const McpOptions& o, const json& request) {
  auto reply = ask(o, o.control.endpoint, request);
  if (auto* r = std::get_if<json>(&reply); r != nullptr && !r->value("ok", false)) {
    return r->value("error", std::string("reflectd refused the request: ") + r->dump());
  }
  return reply;
}

std::string namespace_of(const McpOptions& o, const json& args) {
  return args.contains("namespace") ? args["namespace"].get<std::string>() : o.ns;
}

json without_ok(json reply) {
  reply.erase("ok");
  return reply;
}

json string_array() { return {{"type", "array"}, {"items", {{"type", "string"}}}}; }

ToolResult remember(const McpOptions& o, const json& args) {
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
  auto reply = ask(o, o.ingest_endpoint, event);
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

ToolResult recall(const McpOptions& o, const json& args) {
  json request = {{"cmd", "recall"}, {"text", args["query"]}, {"limit", args.value("limit", 10)}};
  if (const std::string ns = namespace_of(o, args); !ns.empty()) request["namespace"] = ns;
  for (const char* key :
       {"kinds", "agent_id", "episode_id", "since", "until", "offset", "include_archived"}) {
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

ToolResult context(const McpOptions& o, const json& args) {
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

ToolResult get(const McpOptions& o, const json& args) {
  auto reply = control(o, {{"cmd", "get"}, {"ids", args["ids"]}});
  if (auto* e = std::get_if<std::string>(&reply)) return ToolResult::error(*e);
  json structured = without_ok(std::get<json>(std::move(reply)));
  return {structured.dump(2), std::move(structured)};
}

ToolResult forget(const McpOptions& o, const json& args) {
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

ToolResult revise(const McpOptions& o, const json& args) {
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

ToolResult medallion(const McpOptions& o, const json& args) {
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

std::vector<Tool> reflectd_tools(const McpOptions& o) {
  const json ns_property = {{"type", "string"},
                            {"description",
                             "Namespace (a project, a conversation); default: reflectctl mcp "
                             "--namespace"}};
  std::vector<Tool> tools;
  tools.push_back(
      {"remember",
       "Remember",
       "Store one memory (an event) durably in reflectd; answers once it is committed. Kinds: "
       "observation (default), prompt, conversation, decision (needs context.title, "
       "context.target, context.rationale), task, call, result, error, learning, discovery, "
       "pattern and the others of reflectd's wire format.",
       {{"type", "object"},
        {"properties",
         {{"content", {{"type", "string"}, {"description", "What to remember, in words"}}},
          {"namespace", ns_property},
          {"kind", {{"type", "string"}, {"description", "Event kind; default observation"}}},
          {"id", {{"type", "string"}, {"description", "Event id; storing it again is a no-op"}}},
          {"agent_id", {{"type", "string"}}},
          {"episode_id", {{"type", "string"}}},
          {"sequence_number", {{"type", "integer"}}},
          {"timestamp", {{"type", "string"}, {"description", "RFC 3339; default now"}}},
          {"tags", string_array()},
          {"context", {{"type", "object"}}},
          {"sensitivity",
           {{"type", "string"}, {"enum", {"public", "low", "medium", "high", "hyper"}}}}}},
        {"required", {"content"}}},
       [o](const json& a) { return remember(o, a); }});
  tools.push_back(
      {"recall",
       "Recall",
       "Ask the memory a question in plain words; returns the stored events that answer it, "
       "best first, each whole, with its id, time, speaker and score.",
       {{"type", "object"},
        {"properties",
         {{"query", {{"type", "string"}, {"description", "The question or words to look for"}}},
          {"namespace", ns_property},
          {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}},
          {"offset", {{"type", "integer"}, {"minimum", 0}}},
          {"kinds", string_array()},
          {"agent_id", {{"type", "string"}}},
          {"episode_id", {{"type", "string"}}},
          {"since", {{"type", "string"}, {"description", "RFC 3339"}}},
          {"until", {{"type", "string"}, {"description", "RFC 3339"}}},
          {"include_archived",
           {{"type", "boolean"},
            {"description", "Also recall archived events (left out by default)"}}}}},
        {"required", {"query"}}},
       [o](const json& a) { return recall(o, a); }});
  tools.push_back(
      {"context",
       "Context",
       "Prompt-ready memory for a question within a token budget: the best events in full, "
       "their neighbours and entity summaries, then one-line pointers; dates absolute, each "
       "item tagged with its id.",
       {{"type", "object"},
        {"properties",
         {{"query", {{"type", "string"}}},
          {"namespace", ns_property},
          {"max_tokens", {{"type", "integer"}, {"minimum", 50}, {"maximum", 100000}}}}},
        {"required", {"query"}}},
       [o](const json& a) { return context(o, a); }});
  tools.push_back(
      {"get",
       "Get",
       "Events in full by id: content, context, tags, entities, lifecycle, "
       "salience now, status, access count.",
       {{"type", "object"}, {"properties", {{"ids", string_array()}}}, {"required", {"ids"}}},
       [o](const json& a) { return get(o, a); }});
  tools.push_back(
      {"forget",
       "Forget",
       "Forget events by ids or by a filter: archive them (default; restorable; reads still "
       "show them, marked archived) or delete them and everything derived from them (mode "
       "delete). dry_run lists what would go.",
       {{"type", "object"},
        {"properties",
         {{"ids", string_array()},
          {"filter",
           {{"type", "object"},
            {"properties",
             {{"namespace", {{"type", "string"}}},
              {"agent_id", {{"type", "string"}}},
              {"kind", {{"type", "string"}}},
              {"before", {{"type", "string"}}},
              {"after", {{"type", "string"}}},
              {"text", {{"type", "string"}}}}}}},
          {"mode", {{"type", "string"}, {"enum", {"archive", "delete"}}}},
          {"dry_run", {{"type", "boolean"}}},
          {"rationale", {{"type", "string"}}}}}},
       [o](const json& a) { return forget(o, a); }});
  tools.push_back(
      {"revise",
       "Revise",
       "Correct a stored memory: a new revision with the corrected content supersedes it (the "
       "old text stays, marked superseded, and is no longer recalled). rationale says why, for "
       "the audit log. Decisions and other ledger records are revised by publishing a new one "
       "with a resolution instead.",
       {{"type", "object"},
        {"properties",
         {{"id", {{"type", "string"}, {"description", "The event to revise"}}},
          {"content", {{"type", "string"}, {"description", "The corrected content, in full"}}},
          {"rationale", {{"type", "string"}, {"description", "Why it changed"}}},
          {"context", {{"type", "object"}, {"description", "New context; default: the old one"}}},
          {"keep_timestamp",
           {{"type", "boolean"},
            {"description",
             "Keep the event's time (a correction of what was said then); default: now"}}}}},
        {"required", {"id", "content", "rationale"}}},
       [o](const json& a) { return revise(o, a); }});
  tools.push_back(
      {"medallion",
       "Medallion",
       "The medallions: compact checkpoints of a project or conversation (summary, decisions, "
       "open questions, what to avoid) to resume work from. Read: action list (default), get "
       "(id), query (nodes, tags) or history (id). Write your own: create (medallion, "
       "evidence, namespace, supersedes?), update (id, medallion with the fields to replace, "
       "evidence), set_status (id, status, superseded_by with superseded, rationale).",
       {{"type", "object"},
        {"properties",
         {{"action",
           {{"type", "string"},
            {"enum", {"list", "get", "query", "history", "create", "update", "set_status"}}}},
          {"id", {{"type", "string"}, {"description", "e.g. med:<namespace>"}}},
          {"nodes", string_array()},
          {"tags", string_array()},
          {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}},
          {"namespace", ns_property},
          {"medallion",
           {{"type", "object"},
            {"description",
             "A seed 001 Medallion: scope {graph_nodes, tags}, summary {high_level (<= 300 "
             "characters), subsystems}, decisions [{id, statement, rationale, confidence}], "
             "open_questions [{id, question, blocked_on, priority}], affordances "
             "{recommended_entry_points, avoid_repeating, invariants}, meta {medallion_id?, "
             "model?}"}}},
          {"evidence",
           {{"type", "object"},
            {"description", "What the medallion is built from (seed 001 Evidence)"},
            {"properties",
             {{"session_summary", {{"type", "string"}}},
              {"transcripts", string_array()},
              {"artefacts", {{"type", "object"}}}}},
            {"required", {"session_summary"}}}},
          {"supersedes",
           {{"type", "string"}, {"description", "create: the medallion it replaces"}}},
          {"status", {{"type", "string"}, {"enum", {"active", "stale", "superseded"}}}},
          {"superseded_by", {{"type", "string"}}},
          {"rationale", {{"type", "string"}}},
          {"sensitivity",
           {{"type", "string"},
            {"enum", {"public", "low", "medium", "high", "hyper"}},
            {"description",
             "create, update: readers of lower clearance get it redacted (default public)"}}}}}},
       [o](const json& a) { return medallion(o, a); }});
  return tools;
}

Resources reflectd_resources(const McpOptions& o) {
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

int run_mcp(const McpOptions& options, std::istream& in, std::ostream& out) {
  Server server({"reflectd", "reflectd agent memory", kVersion,
                 "reflectd is this agent's long-term memory. Call recall (or context) with a "
                 "question before answering from memory, remember to store what should last, "
                 "and medallion to resume a project."},
                reflectd_tools(options), reflectd_resources(options));
  std::string line;
  while (std::getline(in, line)) {
    if (auto answer = server.handle_line(line)) out << *answer << '\n' << std::flush;
  }
  return 0;
}

}  // namespace reflectd::cli::mcp
