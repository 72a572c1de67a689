#include "model/commands.hpp"

#include <algorithm>
#include <iterator>

#include "model/command_help.hpp"

namespace reflectd::model {

namespace {

using namespace help;
using T = JsonType;

constexpr std::string_view kNamespaceHelp =
    "Namespace (a project, a conversation); default: reflectctl mcp --namespace";
const std::vector<std::string_view> kSensitivities{"public", "low", "medium", "high", "hyper"};

Field mcp_namespace() { return {.name = "namespace", .description = kNamespaceHelp}; }

// The MCP tools' arguments: the names agents know (query, not text), mapped onto the wire
// request by mcp/tools.cpp.
McpTool remember_tool() {
  return {"remember",
          "Remember",
          "Store one memory (an event) durably in reflectd; answers once it is committed. Kinds: "
          "observation (default), prompt, conversation, decision (needs context.title, "
          "context.target, context.rationale), task, call, result, error, learning, discovery, "
          "pattern and the others of reflectd's wire format.",
          {{.name = "content", .required = true, .description = "What to remember, in words"},
           mcp_namespace(),
           {.name = "kind", .description = "Event kind; default observation"},
           {.name = "id", .description = "Event id; storing it again is a no-op"},
           {.name = "agent_id"},
           {.name = "episode_id"},
           {.name = "sequence_number", .type = T::kInteger},
           {.name = "timestamp", .description = "RFC 3339; default now"},
           {.name = "tags", .type = T::kStringArray},
           {.name = "context", .type = T::kObject},
           {.name = "sensitivity", .one_of = kSensitivities}}};
}

McpTool recall_tool() {
  return {"recall",
          "Recall",
          "Ask the memory a question in plain words; returns the stored events that answer it, "
          "best first, each whole, with its id, time, speaker and score.",
          {{.name = "query", .required = true, .description = "The question or words to look for"},
           mcp_namespace(),
           {.name = "limit", .type = T::kInteger, .minimum = 1, .maximum = 100},
           {.name = "offset", .type = T::kInteger, .minimum = 0},
           {.name = "kinds", .type = T::kStringArray},
           {.name = "agent_id"},
           {.name = "episode_id"},
           {.name = "since", .description = "RFC 3339"},
           {.name = "until", .description = "RFC 3339"},
           {.name = "as_of",
            .description = "RFC 3339: the day relative dates in the question count from "
                           "(default: now)"},
           {.name = "include_archived",
            .type = T::kBoolean,
            .description = "Also recall archived events (left out by default)"}}};
}

McpTool context_tool() {
  return {"context",
          "Context",
          "Prompt-ready memory for a question within a token budget: the best events in full, "
          "their neighbours and entity summaries, then one-line pointers; dates absolute, each "
          "item tagged with its id.",
          {{.name = "query", .required = true},
           mcp_namespace(),
           {.name = "max_tokens", .type = T::kInteger, .minimum = 50, .maximum = 100000}}};
}

McpTool get_tool() {
  return {"get",
          "Get",
          "Events in full by id: content, context, tags, entities, lifecycle, "
          "salience now, status, access count.",
          {{.name = "ids", .type = T::kStringArray, .required = true}}};
}

McpTool forget_tool() {
  return {"forget",
          "Forget",
          "Forget events by ids or by a filter: archive them (default; restorable; reads still "
          "show them, marked archived) or delete them and everything derived from them (mode "
          "delete). dry_run lists what would go.",
          {{.name = "ids", .type = T::kStringArray},
           {.name = "filter",
            .schema = R"json({"type":"object","properties":{"namespace":{"type":"string"},
              "agent_id":{"type":"string"},"kind":{"type":"string"},"before":{"type":"string"},
              "after":{"type":"string"},"text":{"type":"string"}}})json"},
           {.name = "mode", .one_of = {"archive", "delete"}},
           {.name = "dry_run", .type = T::kBoolean},
           {.name = "rationale"}}};
}

McpTool revise_tool() {
  return {
      "revise",
      "Revise",
      "Correct a stored memory: a new revision with the corrected content supersedes it (the "
      "old text stays, marked superseded, and is no longer recalled). rationale says why, "
      "for the audit log. Decisions and other ledger records are revised by publishing a new "
      "one with a resolution instead.",
      {{.name = "id", .required = true, .description = "The event to revise"},
       {.name = "content", .required = true, .description = "The corrected content, in full"},
       {.name = "rationale", .required = true, .description = "Why it changed"},
       {.name = "context", .type = T::kObject, .description = "New context; default: the old one"},
       {.name = "keep_timestamp",
        .type = T::kBoolean,
        .description =
            "Keep the event's time (a correction of what was said then); default: now"}}};
}

McpTool medallion_tool() {
  return {"medallion",
          "Medallion",
          "The medallions: compact checkpoints of a project or conversation (summary, decisions, "
          "open questions, what to avoid) to resume work from. Read: action list (default), get "
          "(id), query (nodes, tags) or history (id). Write your own: create (medallion, "
          "evidence, namespace, supersedes?), update (id, medallion with the fields to replace, "
          "evidence), set_status (id, status, superseded_by with superseded, rationale).",
          {{.name = "action",
            .one_of = {"list", "get", "query", "history", "create", "update", "set_status"}},
           {.name = "id", .description = "e.g. med:<namespace>"},
           {.name = "nodes", .type = T::kStringArray},
           {.name = "tags", .type = T::kStringArray},
           {.name = "limit", .type = T::kInteger, .minimum = 1, .maximum = 1000},
           mcp_namespace(),
           {.name = "medallion",
            .type = T::kObject,
            .description =
                "A seed 001 Medallion: scope {graph_nodes, tags}, summary {high_level (<= 300 "
                "characters), subsystems}, decisions [{id, statement, rationale, confidence}], "
                "open_questions [{id, question, blocked_on, priority}], affordances "
                "{recommended_entry_points, avoid_repeating, invariants}, meta {medallion_id?, "
                "model?}"},
           {.name = "evidence", .schema = R"json({"type":"object",
          "description":"What the medallion is built from (seed 001 Evidence)",
          "properties":{"session_summary":{"type":"string"},
            "transcripts":{"type":"array","items":{"type":"string"}},
            "artefacts":{"type":"object"}},
          "required":["session_summary"]})json"},
           {.name = "supersedes", .description = "create: the medallion it replaces"},
           {.name = "status", .one_of = {"active", "stale", "superseded"}},
           {.name = "superseded_by"},
           {.name = "rationale"},
           {.name = "sensitivity",
            .description =
                "create, update: readers of lower clearance get it redacted (default public)",
            .one_of = kSensitivities}}};
}

Field text(std::string_view name, bool required = false) {
  return {.name = name, .required = required};
}
Field integer(std::string_view name) { return {.name = name, .type = T::kInteger}; }
Field boolean(std::string_view name) { return {.name = name, .type = T::kBoolean}; }
Field strings(std::string_view name) { return {.name = name, .type = T::kStringArray}; }
Field limit() { return {.name = "limit", .type = T::kInteger, .minimum = 1, .maximum = 10000}; }

// publish to reinforce: the first commands of the known list.
std::vector<CommandSpec> first_entries() {
  [[maybe_unused]] const auto C = Answerer::kControl;
  [[maybe_unused]] const auto R = Answerer::kRead;
  [[maybe_unused]] const auto K = Answerer::kClient;
  return {
      {.name = "publish",
       .answerer = K,
       .cli_usage = "publish [FILE...|-]",
       .summary = "send events, wait for every acknowledgement, print a summary",
       .description = kPublishDescription,
       .footer = kPublishFooter},
      {.name = "remember", .answerer = K, .mcp = remember_tool()},
      {.name = "status",
       .answerer = C,
       .cli_usage = "status",
       .summary = "show the daemon's counters, database and endpoints",
       .description = kStatusDescription,
       .footer = kStatusFooter},
      {.name = "run",
       .answerer = C,
       .admin = true,
       .cli_usage = "run JOB",
       .summary = "run a job (e.g. consolidate, decay) now; --wait for its outcome",
       .description = kRunDescription,
       .footer = kRunFooter,
       .request = {text("job", true), text("namespace"), boolean("wait")}},
      {.name = "jobs",
       .answerer = C,
       .cli_usage = "jobs",
       .summary = "list the latest job runs and their results",
       .description = kJobsDescription,
       .footer = kJobsFooter,
       .request = {text("job"), limit()}},
      {.name = "knowledge",
       .answerer = R,
       .cli_usage = "knowledge",
       .summary = "list knowledge streams (phase, status, vitality, confidence)",
       .description = kKnowledgeDescription,
       .footer = kKnowledgeFooter,
       .request = {text("namespace"), text("kind"), text("phase"), text("status"), limit()}},
      {.name = "observations",
       .answerer = R,
       .cli_usage = "observations",
       .summary = "list recurring patterns and competences found by consolidation",
       .description = kObservationsDescription,
       .footer = kObservationsFooter,
       .request = {text("namespace"), text("type"), limit()}},
      {.name = "reinforce",
       .answerer = C,
       .admin = true,
       .cli_usage = "reinforce ID",
       .summary = "mark an event or knowledge record useful (or --misleading)",
       .description = kReinforceDescription,
       .footer = kReinforceFooter,
       .request = {text("id", true), boolean("useful"), text("agent_id")}},
  };
}

// The reads, search to clusters.
std::vector<CommandSpec> read_entries() {
  [[maybe_unused]] const auto C = Answerer::kControl;
  [[maybe_unused]] const auto R = Answerer::kRead;
  [[maybe_unused]] const auto K = Answerer::kClient;
  return {
      {.name = "search",
       .answerer = R,
       .cli_usage = "search TEXT",
       .summary = "full-text search of the events, best match first",
       .description = kSearchDescription,
       .footer = kSearchFooter,
       .request = {text("text"), text("namespace"), text("kind"), limit()}},
      {.name = "recall",
       .answerer = R,
       .cli_usage = "recall TEXT",
       .summary = "the events that answer a question in plain words, each whole",
       .description = kRecallDescription,
       .footer = kRecallFooter,
       .request = {text("text"), text("namespace"), limit(), integer("offset"), strings("kinds"),
                   text("agent_id"), text("episode_id"), text("since"), text("until"),
                   text("as_of"), boolean("include_archived")},
       .mcp = recall_tool()},
      {.name = "context",
       .answerer = R,
       .cli_usage = "context TEXT",
       .summary = "prompt-ready memory for a question within a token budget",
       .description = kContextDescription,
       .footer = kContextFooter,
       .request = {text("text"), text("namespace"), integer("max_tokens")},
       .mcp = context_tool()},
      {.name = "get",
       .answerer = R,
       .cli_usage = "get ID...",
       .summary = "events in full, by id",
       .description = kGetDescription,
       .footer = kGetFooter,
       .request = {strings("ids")},
       .mcp = get_tool()},
      {.name = "episode",
       .answerer = R,
       .cli_usage = "episode EPISODE_ID",
       .summary = "an episode's events in sequence order",
       .description = kEpisodeDescription,
       .footer = kEpisodeFooter,
       .request = {text("episode_id"), text("namespace"), limit()}},
      {.name = "events",
       .answerer = R,
       .cli_usage = "events tail",
       .summary = "print the latest events; -f follows new ones",
       .description = kEventsDescription,
       .footer = kEventsFooter,
       .request = {text("namespace"), text("kind"), text("agent_id"), text("episode_id"), limit(),
                   integer("after_seq"), integer("before_seq")}},
      {.name = "medallion",
       .answerer = R,
       .cli_usage = "medallion ACTION",
       .summary = "get, query, history or list the medallions; create or update an agent's",
       .description = kMedallionDescription,
       .footer = kMedallionFooter,
       .request = {text("action"), text("id"), strings("nodes"), strings("tags"), limit()},
       .mcp = medallion_tool()},
      {.name = "entities",
       .answerer = R,
       .cli_usage = "entities",
       .summary = "list the most important entities",
       .description = kEntitiesDescription,
       .footer = kEntitiesFooter,
       .request = {text("namespace"), integer("top"), text("type"), boolean("edges")}},
      {.name = "clusters",
       .answerer = R,
       .cli_usage = "clusters",
       .summary = "list the largest clusters of similar events",
       .description = kClustersDescription,
       .footer = kClustersFooter,
       .request = {text("namespace"), limit()}},
  };
}

// facts to the end: more reads, the memory operations, the test hook, the client commands.
std::vector<CommandSpec> last_entries() {
  [[maybe_unused]] const auto C = Answerer::kControl;
  [[maybe_unused]] const auto R = Answerer::kRead;
  [[maybe_unused]] const auto K = Answerer::kClient;
  return {
      {.name = "facts",
       .answerer = R,
       .cli_usage = "facts",
       .summary = "list the facts kept about people and things, with their dates",
       .description = kFactsDescription,
       .footer = kFactsFooter,
       .request = {text("namespace"), text("entity"), text("attribute"), boolean("current"),
                   limit(), integer("after_id")}},
      {.name = "audit",
       .answerer = R,
       .cli_usage = "audit",
       .summary = "the audit log of memory operations, newest first",
       .description = kAuditDescription,
       .footer = kAuditFooter,
       .request = {text("record_id"), text("namespace"), text("since"), limit()}},
      {.name = "forget",
       .answerer = C,
       .cli_usage = "forget ID...",
       .summary = "archive events (restorable), or --delete them and what was derived",
       .description = kForgetDescription,
       .footer = kForgetFooter,
       .request = {strings("ids"),
                   {.name = "filter", .type = T::kObject},
                   text("mode"),
                   boolean("dry_run"),
                   boolean("wait"),
                   text("rationale")},
       .mcp = forget_tool()},
      {.name = "restore",
       .answerer = C,
       .cli_usage = "restore ID...",
       .summary = "bring archived events back",
       .description = kRestoreDescription,
       .footer = kEventStateFooter,
       .request = {strings("ids")}},
      {.name = "pin",
       .answerer = C,
       .cli_usage = "pin ID...",
       .summary = "keep events from decay and archiving",
       .description = kPinDescription,
       .footer = kEventStateFooter,
       .request = {strings("ids")}},
      {.name = "unpin",
       .answerer = C,
       .cli_usage = "unpin ID...",
       .summary = "let pinned events decay again",
       .description = kUnpinDescription,
       .footer = kEventStateFooter,
       .request = {strings("ids")}},
      {.name = "revise",
       .answerer = C,
       .cli_usage = "revise ID",
       .summary = "supersede an event with a corrected revision (--content, --rationale)",
       .description = kReviseDescription,
       .footer = kReviseFooter,
       .request = {text("id", true),
                   text("content", true),
                   text("rationale", true),
                   {.name = "context", .type = T::kObject},
                   boolean("keep_timestamp")},
       .mcp = revise_tool()},
      {.name = "proposal",
       .answerer = C,
       .cli_usage = "proposal VERDICT ID",
       .summary = "accept, reject or falsify a proposal, with a rationale",
       .description = kProposalDescription,
       .footer = kProposalFooter,
       .request = {text("action", true), text("proposal_id", true), text("rationale")}},
      {.name = "merge_entities",
       .answerer = C,
       .cli_usage = "merge-entities FROM INTO",
       .summary = "count one entity's mentions, edges and facts for another",
       .description = kMergeEntitiesDescription,
       .footer = kMergeEntitiesFooter,
       .request = {text("namespace", true), text("from", true), text("into", true),
                   text("rationale")}},
      {.name = "test_stall",
       .answerer = C,
       .admin = true,
       .test_hook = true,
       .request = {integer("ms")}},
      {.name = "mcp",
       .answerer = K,
       .cli_usage = "mcp",
       .summary = "serve the memory to an agent over MCP (stdio)",
       .description = kMcpDescription,
       .footer = kMcpFooter},
      {.name = "keygen",
       .answerer = K,
       .cli_usage = "keygen PATH",
       .summary = "write a CURVE keypair: PATH (secret, mode 0600) and PATH.pub",
       .description = kKeygenDescription,
       .footer = kKeygenFooter},
      {.name = "jetstream",
       .answerer = K,
       .cli_usage = "jetstream init|publish",
       .summary = "create a shard's NATS JetStream stream; publish events into it",
       .description = kJetStreamDescription,
       .footer = kJetStreamFooter},
  };
}

// Table order is the daemon's "known:" order; reflectctl --help lists the subcommands in it.
std::vector<CommandSpec> build_table() {
  std::vector<CommandSpec> table = first_entries();
  std::vector<CommandSpec> reads = read_entries();
  std::vector<CommandSpec> last = last_entries();
  table.insert(table.end(), std::make_move_iterator(reads.begin()),
               std::make_move_iterator(reads.end()));
  table.insert(table.end(), std::make_move_iterator(last.begin()),
               std::make_move_iterator(last.end()));
  return table;
}

std::string join_daemon_commands(bool test_hooks, bool admin_only) {
  std::string out;
  for (const CommandSpec& spec : command_table()) {
    if (!spec.daemon_command() || (spec.test_hook && !test_hooks)) continue;
    if (admin_only && !spec.admin) continue;
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

const char* type_name(JsonType type) {
  switch (type) {
    case JsonType::kString: return "string";
    case JsonType::kInteger: return "integer";
    case JsonType::kBoolean: return "boolean";
    case JsonType::kObject: return "object";
    case JsonType::kStringArray: return "array";
  }
  return "string";
}

bool has_type(const nlohmann::json& value, JsonType type) {
  switch (type) {
    case JsonType::kString: return value.is_string();
    case JsonType::kInteger: return value.is_number_integer();
    case JsonType::kBoolean: return value.is_boolean();
    case JsonType::kObject: return value.is_object();
    case JsonType::kStringArray: return value.is_array();
  }
  return false;
}

nlohmann::json field_schema(const Field& field) {
  if (!field.schema.empty()) return nlohmann::json::parse(field.schema);
  nlohmann::json out = {{"type", type_name(field.type)}};
  if (field.type == JsonType::kStringArray) out["items"] = {{"type", "string"}};
  if (!field.description.empty()) out["description"] = field.description;
  if (field.minimum) out["minimum"] = *field.minimum;
  if (field.maximum) out["maximum"] = *field.maximum;
  if (!field.one_of.empty()) out["enum"] = field.one_of;
  return out;
}

}  // namespace

std::string_view CommandSpec::cli_name() const {
  return cli_usage.substr(0, std::min(cli_usage.find(' '), cli_usage.size()));
}

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> kTable = build_table();
  return kTable;
}

const CommandSpec* find_command(std::string_view name) {
  const auto& table = command_table();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const CommandSpec& spec) { return spec.name == name; });
  return it == table.end() ? nullptr : &*it;
}

std::string known_commands(bool test_hooks) { return join_daemon_commands(test_hooks, false); }

std::string admin_commands(bool test_hooks) { return join_daemon_commands(test_hooks, true); }

std::string admin_refusal(std::string_view cmd, std::string_view agent_id, bool test_hooks) {
  return std::string(cmd) + ": not allowed for agent '" + std::string(agent_id) +
         "': admin commands (" + admin_commands(test_hooks) +
         ") need admin: true in the authorized keys";
}

std::vector<std::string> read_commands() {
  std::vector<std::string> out;
  for (const CommandSpec& spec : command_table()) {
    if (spec.answerer == Answerer::kRead) out.emplace_back(spec.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string help_command_list() {
  constexpr std::size_t kWidth = 24;
  std::string out;
  for (const CommandSpec& spec : command_table()) {
    if (spec.cli_usage.empty()) continue;
    std::string line = "  " + std::string(spec.cli_usage);
    line += line.size() < kWidth ? std::string(kWidth - line.size(), ' ') : std::string("  ");
    out += line + std::string(spec.summary) + "\n";
  }
  return out;
}

std::string markdown_command_list() {
  std::string out;
  for (const CommandSpec& spec : command_table()) {
    if (spec.cli_usage.empty()) continue;
    out += "- `" + std::string(spec.cli_usage) + "`: " + std::string(spec.summary);
    if (spec.admin) out += " (admin)";
    out += "\n";
  }
  return out;
}

nlohmann::json input_schema(const std::vector<Field>& fields) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const Field& field : fields) {
    properties[std::string(field.name)] = field_schema(field);
    if (field.required) required.push_back(field.name);
  }
  nlohmann::json out = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) out["required"] = std::move(required);
  return out;
}

std::optional<std::string> missing_field(const CommandSpec& spec, const nlohmann::json& request) {
  for (const Field& field : spec.request) {
    if (!field.required) continue;
    const auto it = request.find(std::string(field.name));
    // An empty string counts as absent, as text_param() reads it.
    if (it == request.end() || !has_type(*it, field.type) ||
        (it->is_string() && it->get_ref<const std::string&>().empty())) {
      return std::string(spec.name) + ": \"" + std::string(field.name) + "\" (" +
             type_name(field.type) + ") is required";
    }
  }
  return std::nullopt;
}

}  // namespace reflectd::model
