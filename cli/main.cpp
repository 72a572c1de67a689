// reflectctl: thin entry point. Flags -> endpoints -> one command; the work lives in the
// reflectctl_core library.

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "cli/endpoints.hpp"
#include "cli/entities.hpp"
#include "cli/events.hpp"
#include "cli/exit_codes.hpp"
#include "cli/facts.hpp"
#include "cli/help_text.hpp"
#include "cli/jetstream.hpp"
#include "cli/jobs.hpp"
#include "cli/knowledge.hpp"
#include "cli/mcp/reflectd_tools.hpp"
#include "cli/medallion.hpp"
#include "cli/memory_commands.hpp"
#include "cli/observations.hpp"
#include "cli/publish.hpp"
#include "cli/recall.hpp"
#include "cli/reinforce.hpp"
#include "cli/run_job.hpp"
#include "cli/search.hpp"
#include "cli/status.hpp"
#include "common/version.hpp"
#include "common/zcert.hpp"

namespace {

using namespace reflectd::cli;

struct Commands {
  EndpointOptions endpoints;
  CLI::App* publish = nullptr;
  PublishOptions publish_options;
  std::size_t batch_events = 100;
  std::int64_t max_message_bytes = 0;  // 0: the configuration's bus.max_message_bytes.
  int publish_timeout_ms = 5000;
  CLI::App* status = nullptr;
  StatusOptions status_options;
  int status_timeout_ms = 3000;
  CLI::App* run = nullptr;
  RunJobOptions run_options;
  int run_timeout_ms = 3000;  // kRunWaitTimeout with --wait unless given.
  CLI::App* jobs = nullptr;
  JobsOptions jobs_options;
  int jobs_timeout_ms = 3000;
  CLI::App* knowledge = nullptr;
  KnowledgeOptions knowledge_options;
  int knowledge_timeout_ms = 3000;
  CLI::App* observations = nullptr;
  ObservationsOptions observations_options;
  int observations_timeout_ms = 3000;
  CLI::App* facts = nullptr;
  FactsOptions facts_options;
  CLI::App* search = nullptr;
  SearchOptions search_options;
  CLI::App* recall = nullptr;
  RecallOptions recall_options;
  CLI::App* context = nullptr;
  RecallOptions context_options;
  CLI::App* get = nullptr;
  GetOptions get_options;
  CLI::App* episode = nullptr;
  EpisodeOptions episode_options;
  CLI::App* reinforce = nullptr;
  ReinforceOptions reinforce_options;
  bool misleading = false;
  bool useful_flag = false;
  CLI::App* forget = nullptr;
  ForgetOptions forget_options;
  int forget_timeout_ms = 600000;
  std::map<std::string, CLI::App*> state_changes;  // restore, pin, unpin
  std::map<std::string, EventStateOptions> state_options;
  CLI::App* audit = nullptr;
  AuditOptions audit_options;
  CLI::App* revise = nullptr;
  ReviseOptions revise_options;
  CLI::App* proposal = nullptr;
  ProposalOptions proposal_options;
  CLI::App* merge_entities = nullptr;
  MergeEntitiesOptions merge_entities_options;
  CLI::App* mcp = nullptr;
  mcp::McpOptions mcp_options;
  int mcp_timeout_ms = 30000;
  CLI::App* events = nullptr;
  EventsOptions events_options;
  CLI::App* medallion = nullptr;
  MedallionOptions medallion_options;
  CLI::App* entities = nullptr;
  EntitiesOptions entities_options;
  CLI::App* clusters = nullptr;
  ClustersOptions clusters_options;
  int other_timeout_ms = 3000;  // search, reinforce, events, medallion, entities, clusters.
  std::string curve_key_file;   // --curve-key
  std::string server_key_file;  // --server-key
  CLI::App* jetstream = nullptr;
  CLI::App* jetstream_init = nullptr;
  CLI::App* jetstream_publish = nullptr;
  std::vector<std::string> nats_servers;  // --nats: overrides bus.jetstream.servers
  std::string nats_agent;                 // --nats-agent
  JetStreamOptions jetstream_options;
  reflectd::bus::StreamLayout stream_layout;
  std::vector<std::string> jetstream_files;
  std::int64_t jetstream_window = 256;
  CLI::App* keygen = nullptr;
  std::string keygen_path;
  bool keygen_force = false;
};

// --timeout-ms and --json, shared by every control command.
void add_control_options(CLI::App& cmd, int& timeout_ms, bool& json) {
  cmd.add_option("-t,--timeout-ms", timeout_ms,
                 "wait this long for the connection and the reply together")
      ->check(CLI::Range(1, 86400000))
      ->type_name("MS");
  cmd.add_flag("--json", json,
               "print the daemon's JSON reply (pretty-printed) instead of the table");
}

CLI::Option* add_limit(CLI::App& cmd, int& limit) {
  return cmd.add_option("-n,--limit", limit, "rows to show, at most")
      ->check(CLI::Range(1, 10000))
      ->type_name("N");
}

void add_global_options(CLI::App& app, Commands& c) {
  app.add_option("-c,--config", c.endpoints.config_path,
                 "reflectd's YAML configuration: endpoints (and the payload limit) are read "
                 "from it (default: reflectd's built-in defaults)")
      ->check(CLI::ExistingFile)
      ->type_name("FILE");
  app.add_option("--ingest", c.endpoints.ingest,
                 "ingest endpoint to connect to, e.g. tcp://127.0.0.1:7701 (overrides "
                 "bus.ingest)")
      ->type_name("EP");
  // Also --push, as asked of every command; after `publish` that name is its mode flag.
  app.add_option("--push-endpoint,--push", c.endpoints.push,
                 "push endpoint to connect to, e.g. tcp://127.0.0.1:7702 (overrides bus.push; "
                 "used by publish --push)")
      ->type_name("EP");
  app.add_option("--control", c.endpoints.control,
                 "control endpoint to connect to, e.g. tcp://127.0.0.1:7704 (overrides "
                 "bus.control)")
      ->type_name("EP");
  app.add_option("--curve-key", c.curve_key_file,
                 "connect with CURVE using this secret key file (zcert, from `reflectctl keygen`)")
      ->envname("REFLECTCTL_CURVE_KEY")
      ->type_name("FILE");
  app.add_option("--server-key", c.server_key_file,
                 "the daemon's public key file (its keygen .pub) for CURVE")
      ->envname("REFLECTCTL_SERVER_KEY")
      ->type_name("FILE");
  app.add_option("--nats", c.nats_servers,
                 "a NATS server URL, nats://host:4222 (repeatable): `jetstream` commands use it "
                 "instead of bus.jetstream.servers, and read commands go over NATS to the shard "
                 "of their --namespace; without --namespace (status, jobs, knowledge...) one "
                 "replica of every shard answers, each reply under its shard's name, and shards "
                 "silent for --timeout-ms are named (docs/CLUSTER.md)")
      ->allow_extra_args(false)
      ->type_name("URL");
  app.add_option("--nats-agent", c.nats_agent,
                 "with --nats, read as this agent (one subject token): requests go to "
                 "reflectd.agent-control.ID.<namespace>, and the node answers with the rights of "
                 "the authorized-keys entry whose agent_id is ID (its namespaces, its "
                 "max_sensitivity); without it, reads over NATS see the public level only "
                 "(docs/CLUSTER.md, \"Security\")")
      ->envname("REFLECTCTL_NATS_AGENT")
      ->type_name("ID");
  app.set_version_flag("-V,--version", std::string("reflectctl ") + reflectd::kVersion);
}

void add_publish(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("publish", reflectd::cli::kPublishDescription);
  cmd->footer(kPublishFooter);
  PublishOptions& o = c.publish_options;
  cmd->add_option("FILE", o.files,
                  "JSON Lines files, sent in order; - or none reads standard input");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("-b,--batch", c.batch_events,
                  "events per message (1 sends bare objects; a batch also stops before its "
                  "payload exceeds --max-message-bytes)")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  cmd->add_option("-w,--window", o.window, "messages sent and not yet acknowledged, at most")
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  cmd->add_option("-t,--timeout-ms", c.publish_timeout_ms,
                  "wait this long for a connection, and for each acknowledgement before "
                  "resending the message unchanged (push: for a send to be accepted)")
      ->check(CLI::Range(1, 3600000))
      ->type_name("MS");
  cmd->add_option("-r,--retries", o.retries,
                  "resends of an unacknowledged message before its events count as "
                  "unacknowledged")
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd->add_option("--max-message-bytes", c.max_message_bytes,
                  "largest batch payload to build (default: bus.max_message_bytes of the "
                  "configuration, 1048576 built in)")
      ->check(CLI::Range(std::int64_t{1024}, std::int64_t{64} << 20))
      ->type_name("BYTES")
      ->default_str("");
  cmd->add_flag("--push", o.push,
                "send over the fire-and-forget push socket instead: no acknowledgements, "
                "counts of events sent only");
  cmd->add_flag("--json", o.json, "print the summary as one JSON object");
  c.publish = cmd;
}

void add_status(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("status", kStatusDescription);
  cmd->footer(kStatusFooter);
  cmd->option_defaults()->always_capture_default();
  add_control_options(*cmd, c.status_timeout_ms, c.status_options.json);
  c.status = cmd;
}

void add_run(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("run", kRunDescription);
  cmd->footer(kRunFooter);
  RunJobOptions& o = c.run_options;
  cmd->add_option("JOB", o.job,
                  "the job to run, e.g. consolidate or decay (`reflectctl jobs` lists them)")
      ->required();
  cmd->add_option("-N,--namespace", o.ns, "run for this namespace only (default: every one)")
      ->type_name("NS");
  cmd->add_flag("-w,--wait", o.wait,
                "wait for the run to end and print its outcome (exit 1 unless ok or skipped)");
  add_control_options(*cmd, c.run_timeout_ms, o.control.json);
  cmd->get_option("--timeout-ms")
      ->default_str(fmt::format("3000; {} with --wait", kRunWaitTimeout.count()));
  c.run = cmd;
}

void add_jobs(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("jobs", kJobsDescription);
  cmd->footer(kJobsFooter);
  cmd->option_defaults()->always_capture_default();
  JobsOptions& o = c.jobs_options;
  cmd->add_option("-j,--job", o.job, "runs of this job only (default: every job)")
      ->type_name("JOB")
      ->default_str("");
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.jobs_timeout_ms, o.control.json);
  c.jobs = cmd;
}

void add_knowledge(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("knowledge", kKnowledgeDescription);
  cmd->footer(kKnowledgeFooter);
  cmd->option_defaults()->always_capture_default();
  KnowledgeOptions& o = c.knowledge_options;
  cmd->add_option("-N,--namespace", o.ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-p,--phase", o.phase, "rows in this lifecycle phase only")
      ->check(CLI::IsMember({"pattern", "emergent", "canonical"}))
      ->type_name("PHASE")
      ->default_str("");
  cmd->add_option("-s,--status", o.status, "rows with this status only")
      ->check(CLI::IsMember(
          {"active", "deprecated", "superseded", "draft", "accepted", "rejected", "falsified"}))
      ->type_name("STATUS")
      ->default_str("");
  cmd->add_option("-k,--kind", o.kind, "rows of this kind only")
      ->check(CLI::IsMember({"decision", "constraint", "assumption", "intervention", "proposal"}))
      ->type_name("KIND")
      ->default_str("");
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.knowledge_timeout_ms, o.control.json);
  c.knowledge = cmd;
}

void add_observations(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("observations", kObservationsDescription);
  cmd->footer(kObservationsFooter);
  cmd->option_defaults()->always_capture_default();
  ObservationsOptions& o = c.observations_options;
  cmd->add_option("-N,--namespace", o.ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-T,--type", o.type, "observations of this type only")
      ->check(CLI::IsMember({"pattern", "competence"}))
      ->type_name("TYPE")
      ->default_str("");
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.observations_timeout_ms, o.control.json);
  c.observations = cmd;
}

void add_facts(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("facts", kFactsDescription);
  cmd->footer(kFactsFooter);
  cmd->option_defaults()->always_capture_default();
  FactsOptions& o = c.facts_options;
  cmd->add_option("-N,--namespace", o.ns, "facts of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-e,--entity", o.entity,
                  "facts about this entity: a key (person:caroline) or a name (Caroline)")
      ->type_name("ENTITY")
      ->default_str("");
  cmd->add_option("-a,--attribute", o.attribute,
                  "facts of this attribute only (occupation, residence, favorite_book, ...)")
      ->type_name("ATTRIBUTE")
      ->default_str("");
  cmd->add_flag("--current", o.current, "leave out facts a later one superseded");
  cmd->add_option("--after-id", o.after_id, "facts after this id (the next page)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()))
      ->type_name("ID");
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.facts = cmd;
}

void add_namespace(CLI::App& cmd, std::string& ns) {
  cmd.add_option("-N,--namespace", ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
}

void add_search(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("search", kSearchDescription);
  cmd->footer(kSearchFooter);
  cmd->option_defaults()->always_capture_default();
  SearchOptions& o = c.search_options;
  cmd->add_option("TEXT", o.text, "words to look for (every word must match)")->required();
  add_namespace(*cmd, o.ns);
  cmd->add_option("-k,--kind", o.kind, "events of this kind only")->type_name("K")->default_str("");
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.search = cmd;
}

void add_recall(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("recall", kRecallDescription);
  cmd->footer(kRecallFooter);
  cmd->option_defaults()->always_capture_default();
  RecallOptions& o = c.recall_options;
  cmd->add_option("TEXT", o.text, "the question, in plain words")->required();
  add_namespace(*cmd, o.ns);
  cmd->add_option("-n,--limit", o.limit, "results to show, at most")
      ->check(CLI::Range(1, 100))
      ->type_name("N");
  cmd->add_option("--offset", o.offset, "results to skip first (paging)")
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd->add_flag("--include-archived", o.include_archived,
                "also recall archived events (forget's archive, the decay job's auto_prune)");
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.recall = cmd;

  cmd = app.add_subcommand("context", kContextDescription);
  cmd->footer(kContextFooter);
  cmd->option_defaults()->always_capture_default();
  RecallOptions& x = c.context_options;
  cmd->add_option("TEXT", x.text, "the question, in plain words")->required();
  add_namespace(*cmd, x.ns);
  cmd->add_option("-m,--max-tokens", x.max_tokens, "token budget of the text")
      ->check(CLI::Range(50, 32000))
      ->type_name("N");
  cmd->add_flag("--include-archived", x.include_archived,
                "also use archived events (forget's archive, the decay job's auto_prune)");
  add_control_options(*cmd, c.other_timeout_ms, x.control.json);
  c.context = cmd;

  cmd = app.add_subcommand("get", kGetDescription);
  cmd->footer(kGetFooter);
  cmd->add_option("ID", c.get_options.ids, "event ids, as published (1 to 100)")
      ->required()
      ->expected(1, 100);
  add_control_options(*cmd, c.other_timeout_ms, c.get_options.control.json);
  c.get = cmd;

  cmd = app.add_subcommand("episode", kEpisodeDescription);
  cmd->footer(kEpisodeFooter);
  cmd->option_defaults()->always_capture_default();
  EpisodeOptions& e = c.episode_options;
  cmd->add_option("EPISODE_ID", e.episode_id, "the episode_id its events were published with")
      ->required();
  add_namespace(*cmd, e.ns);
  cmd->add_option("-n,--limit", e.limit, "events to show, at most")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  add_control_options(*cmd, c.other_timeout_ms, e.control.json);
  c.episode = cmd;
}

void add_reinforce(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("reinforce", kReinforceDescription);
  cmd->footer(kReinforceFooter);
  cmd->option_defaults()->always_capture_default();
  ReinforceOptions& o = c.reinforce_options;
  cmd->add_option("ID", o.id, "the event or knowledge id")->required();
  CLI::Option* useful = cmd->add_flag("--useful", c.useful_flag, "the record helped (the default)");
  cmd->add_flag("--misleading", c.misleading, "the record misled")->excludes(useful);
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.reinforce = cmd;
}

void add_memory_commands(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("forget", kForgetDescription);
  cmd->footer(kForgetFooter);
  cmd->option_defaults()->always_capture_default();
  ForgetOptions& f = c.forget_options;
  CLI::Option* ids = cmd->add_option("ID", f.ids, "event ids to forget (or a filter below)");
  auto filter = [&](const char* name, std::string& value, const char* what, const char* type) {
    cmd->add_option(name, value, what)->type_name(type)->default_str("")->excludes(ids);
  };
  filter("-N,--namespace", f.ns, "events of this namespace (a filter without one needs admin)",
         "NS");
  filter("--agent-id", f.agent_id, "events published by this agent", "AGENT");
  filter("-k,--kind", f.kind, "events of this kind", "K");
  filter("--before", f.before, "events whose timestamp is before this RFC 3339 date-time", "T");
  filter("--after", f.after, "events whose timestamp is after this RFC 3339 date-time", "T");
  filter("--text", f.text, "events whose content contains this text (ASCII case-insensitive)",
         "TEXT");
  cmd->add_flag("--delete", f.hard_delete,
                "delete the events and everything derived from them (default: archive)");
  cmd->add_flag("--dry-run", f.dry_run, "list what would be forgotten; change nothing");
  cmd->add_flag("--wait", f.wait, "with --delete: answer once the jobs rebuilt what they derive");
  cmd->add_option("--rationale", f.rationale, "why, for the audit log")
      ->type_name("TEXT")
      ->default_str("");
  add_control_options(*cmd, c.forget_timeout_ms, f.control.json);
  c.forget = cmd;

  for (const auto& [name, description] :
       {std::pair{"restore", kRestoreDescription}, std::pair{"pin", kPinDescription},
        std::pair{"unpin", kUnpinDescription}}) {
    cmd = app.add_subcommand(name, description);
    cmd->footer(kEventStateFooter);
    EventStateOptions& o = c.state_options[name];
    o.cmd = name;
    cmd->add_option("ID", o.ids, "event ids")->required();
    add_control_options(*cmd, c.other_timeout_ms, o.control.json);
    c.state_changes[name] = cmd;
  }

  cmd = app.add_subcommand("revise", kReviseDescription);
  cmd->footer(kReviseFooter);
  cmd->option_defaults()->always_capture_default();
  ReviseOptions& r = c.revise_options;
  cmd->add_option("ID", r.id, "the event to revise")->required();
  cmd->add_option("--content", r.content, "the revision's content")->type_name("TEXT")->required();
  cmd->add_option("--rationale", r.rationale, "why, for the audit log (seed 002: required)")
      ->type_name("TEXT")
      ->required();
  cmd->add_option("--context", r.context_json,
                  "the revision's context, a JSON object (default: the old event's)")
      ->type_name("JSON")
      ->default_str("");
  cmd->add_option("--new-id", r.new_id,
                  "the revision's id (default: derived from the content, old id and time)")
      ->type_name("ID")
      ->default_str("");
  cmd->add_flag("--keep-timestamp", r.keep_timestamp,
                "the revision keeps the event's timestamp (a correction of what was said "
                "then; default: the time of the revision)");
  add_control_options(*cmd, c.other_timeout_ms, r.control.json);
  c.revise = cmd;

  cmd = app.add_subcommand("proposal", kProposalDescription);
  cmd->footer(kProposalFooter);
  ProposalOptions& p = c.proposal_options;
  cmd->add_option("ACTION", p.action, "accept, reject or falsify")
      ->required()
      ->check(CLI::IsMember({"accept", "reject", "falsify"}));
  cmd->add_option("ID", p.proposal_id, "the proposal's id (knowledge decision_id)")->required();
  cmd->add_option("--rationale", p.rationale, "why, for the audit log (required)")
      ->type_name("TEXT")
      ->required();
  add_control_options(*cmd, c.other_timeout_ms, p.control.json);
  c.proposal = cmd;

  cmd = app.add_subcommand("merge-entities", kMergeEntitiesDescription);
  cmd->footer(kMergeEntitiesFooter);
  MergeEntitiesOptions& m = c.merge_entities_options;
  cmd->add_option("FROM", m.from, "the entity merged away: canonical key or display name")
      ->required();
  cmd->add_option("INTO", m.into, "the entity it becomes: canonical key or display name")
      ->required();
  cmd->add_option("--namespace", m.ns, "the entities' namespace (required)")
      ->type_name("NS")
      ->required();
  cmd->add_option("--rationale", m.rationale, "why, for the audit log")
      ->type_name("TEXT")
      ->default_str("merged by <actor>");
  add_control_options(*cmd, c.other_timeout_ms, m.control.json);
  c.merge_entities = cmd;

  cmd = app.add_subcommand("audit", kAuditDescription);
  cmd->footer(kAuditFooter);
  cmd->option_defaults()->always_capture_default();
  AuditOptions& a = c.audit_options;
  cmd->add_option("--record-id", a.record_id,
                  "entries about this record (event, knowledge, "
                  "medallion id) only")
      ->type_name("ID")
      ->default_str("");
  add_namespace(*cmd, a.ns);
  cmd->add_option("--since", a.since, "entries at or after this RFC 3339 date-time")
      ->type_name("T")
      ->default_str("");
  add_limit(*cmd, a.limit);
  add_control_options(*cmd, c.other_timeout_ms, a.control.json);
  c.audit = cmd;
}

void add_mcp(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("mcp", kMcpDescription);
  cmd->footer(kMcpFooter);
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("-N,--namespace", c.mcp_options.ns,
                  "namespace of the tools' calls that name none (default: none: remember "
                  "then needs one, reads span every namespace the key may read)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-t,--timeout-ms", c.mcp_timeout_ms,
                  "wait this long for the daemon's reply to each tool call")
      ->check(CLI::Range(1, 86400000))
      ->type_name("MS");
  c.mcp = cmd;
}

void add_events(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("events", kEventsDescription);
  cmd->footer(kEventsFooter);
  cmd->require_subcommand(1);
  CLI::App* tail = cmd->add_subcommand("tail", "print the latest events; -f: follow new ones");
  tail->option_defaults()->always_capture_default();
  EventsOptions& o = c.events_options;
  add_namespace(*tail, o.ns);
  tail->add_option("-k,--kind", o.kind, "events of this kind only")
      ->type_name("K")
      ->default_str("");
  tail->add_option("-n,--lines", o.limit, "latest events to print (and per poll with -f)")
      ->check(CLI::Range(1, 10000))
      ->type_name("N");
  tail->add_flag("-f,--follow", o.follow,
                 "keep polling every 500 ms for new events until interrupted (exit 0)");
  add_control_options(*tail, c.other_timeout_ms, o.control.json);
  c.events = cmd;
}

void add_medallion(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("medallion", kMedallionDescription);
  cmd->footer(kMedallionFooter);
  cmd->require_subcommand(1);
  MedallionOptions& o = c.medallion_options;
  CLI::App* get = cmd->add_subcommand("get", "print one medallion");
  get->add_option("ID", o.id, "the medallion id")->required();
  add_control_options(*get, c.other_timeout_ms, o.control.json);
  CLI::App* query = cmd->add_subcommand("query", "medallions covering every node and some tag");
  query->add_option("--node", o.nodes, "a graph node the medallion must cover (repeatable)")
      ->type_name("N");
  query->add_option("--tag", o.tags, "a tag the medallion may carry (repeatable)")->type_name("T");
  add_control_options(*query, c.other_timeout_ms, o.control.json);
  CLI::App* history = cmd->add_subcommand("history", "earlier versions of a medallion");
  history->add_option("ID", o.id, "the medallion id")->required();
  add_limit(*history, o.limit);
  add_control_options(*history, c.other_timeout_ms, o.control.json);
  CLI::App* list = cmd->add_subcommand("list", "every medallion: id, status, summary");
  add_control_options(*list, c.other_timeout_ms, o.control.json);
  const auto add_evidence = [&o](CLI::App& sub) {
    sub.add_option("--file", o.file, "the medallion JSON (seed 001), - for stdin")
        ->required()
        ->type_name("FILE");
    sub.add_option("--evidence", o.evidence, "Evidence.session_summary: what happened")
        ->required()
        ->type_name("TEXT");
    sub.add_option("--transcript", o.transcripts,
                   "Evidence.transcripts: an important segment (repeatable)")
        ->type_name("TEXT");
    sub.add_option("--sensitivity", o.sensitivity,
                   "its seed 002 level: readers below it get it redacted (create: default "
                   "public; update: default unchanged)")
        ->check(CLI::IsMember({"public", "low", "medium", "high", "hyper"}))
        ->type_name("LEVEL");
  };
  CLI::App* create = cmd->add_subcommand("create", "write a new medallion (an agent's)");
  create->add_option("--namespace", o.ns, "the namespace it belongs to")
      ->required()
      ->type_name("NS");
  create->add_option("--id", o.id, "its id (default: meta.medallion_id, else m-<hex>)")
      ->type_name("ID");
  add_evidence(*create);
  create
      ->add_option("--supersedes", o.supersedes,
                   "mark this medallion (same namespace and scope) superseded by the new one")
      ->type_name("ID");
  add_control_options(*create, c.other_timeout_ms, o.control.json);
  CLI::App* update = cmd->add_subcommand("update", "a new version of an agent's medallion");
  update->add_option("ID", o.id, "the medallion id")->required();
  add_evidence(*update);
  add_control_options(*update, c.other_timeout_ms, o.control.json);
  CLI::App* set_status = cmd->add_subcommand("set-status",
                                             "mark a medallion active, stale or "
                                             "superseded");
  set_status->add_option("ID", o.id, "the medallion id")->required();
  set_status->add_option("STATUS", o.status, "active, stale or superseded")
      ->required()
      ->check(CLI::IsMember({"active", "stale", "superseded"}));
  set_status
      ->add_option("--superseded-by", o.superseded_by,
                   "the newer medallion on the same scope (with superseded)")
      ->type_name("ID");
  set_status->add_option("--rationale", o.rationale, "why (kept in the audit log)")
      ->required()
      ->type_name("TEXT");
  add_control_options(*set_status, c.other_timeout_ms, o.control.json);
  c.medallion = cmd;
}

void add_entities(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("entities", kEntitiesDescription);
  cmd->footer(kEntitiesFooter);
  cmd->option_defaults()->always_capture_default();
  EntitiesOptions& o = c.entities_options;
  add_namespace(*cmd, o.ns);
  cmd->add_option("--top", o.top, "entities to show, most important first")
      ->check(CLI::Range(1, 10000))
      ->type_name("K");
  cmd->add_option("-T,--type", o.type, "entities of this type only")
      ->type_name("T")
      ->default_str("");
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.entities = cmd;
}

void add_clusters(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("clusters", kClustersDescription);
  cmd->footer(kClustersFooter);
  cmd->option_defaults()->always_capture_default();
  ClustersOptions& o = c.clusters_options;
  add_namespace(*cmd, o.ns);
  add_limit(*cmd, o.limit);
  add_control_options(*cmd, c.other_timeout_ms, o.control.json);
  c.clusters = cmd;
}

void add_jetstream(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("jetstream", kJetStreamDescription);
  cmd->footer(kJetStreamFooter);
  cmd->require_subcommand(1);
  const auto common = [&c](CLI::App& sub) {
    sub.option_defaults()->always_capture_default();
    sub.add_option("-t,--timeout-ms", c.jetstream_options.timeout_ms,
                   "wait this long to connect, and for each JetStream reply")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{3600000}))
        ->type_name("MS");
    sub.add_flag("--json", c.jetstream_options.json, "print the result as one JSON object");
  };
  CLI::App* init = cmd->add_subcommand("init", "create a shard's stream (or check it exists)");
  common(*init);
  reflectd::bus::StreamLayout& layout = c.stream_layout;
  init->add_option("--stream", layout.name,
                   "the stream's name (default: bus.jetstream.stream of --config, REFLECTD)")
      ->type_name("NAME");
  init->add_option("--namespace", layout.namespaces,
                   "a namespace of the shard: subject reflectd.events.<NS> (repeatable; none: "
                   "every namespace, reflectd.events.>)")
      ->allow_extra_args(false)
      ->type_name("NS");
  init->add_option("--replicas", layout.replicas,
                   "Raft replicas of the stream (3 survives the loss of one server)")
      ->check(CLI::Range(1, 5))
      ->type_name("N");
  init->add_option("--max-bytes", layout.max_bytes, "limit on the stream's size; -1 = none")
      ->type_name("BYTES");
  init->add_option("--max-age-s", layout.max_age_s,
                   "messages older than this are removed; 0 = kept forever")
      ->check(CLI::NonNegativeNumber)
      ->type_name("S");
  init->add_option("--duplicate-window-s", layout.duplicate_window_s,
                   "how long JetStream remembers a Nats-Msg-Id to drop a resend")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{86400}))
      ->type_name("S");
  CLI::App* publish = cmd->add_subcommand("publish", "publish JSON Lines events into JetStream");
  common(*publish);
  publish->add_option("FILE", c.jetstream_files,
                      "JSON Lines files, sent in order; - or none reads standard input");
  publish
      ->add_option("-w,--window", c.jetstream_window,
                   "messages published and not yet acknowledged, at most")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}))
      ->type_name("N");
  publish
      ->add_option("--agent", c.jetstream_options.agent,
                   "publish as this agent, on reflectd.agents.<ID>.<namespace>: the nodes give "
                   "the events the rights of the authorized-keys entry with agent_id ID (NATS "
                   "permissions must let only that agent's user publish there)")
      ->check([](const std::string& id) {
        return id.find_first_of(".*> \t") == std::string::npos
                   ? std::string()
                   : std::string("an agent id on a subject has no '.', '*', '>' or spaces");
      })
      ->type_name("ID");
  c.jetstream = cmd;
  c.jetstream_init = init;
  c.jetstream_publish = publish;
}

void add_keygen(CLI::App& app, Commands& c) {
  CLI::App* cmd = app.add_subcommand("keygen", kKeygenDescription);
  cmd->footer(kKeygenFooter);
  cmd->add_option("PATH", c.keygen_path, "the secret key file; the public one is PATH.pub")
      ->required();
  cmd->add_flag("-f,--force", c.keygen_force, "replace existing files");
  c.keygen = cmd;
}

int run_keygen(const Commands& c) {
  const reflectd::CurveCert cert = reflectd::generate_cert();
  try {
    reflectd::write_cert_pair(c.keygen_path, cert, c.keygen_force);
  } catch (const std::runtime_error& error) {
    std::cerr << "reflectctl keygen: " << error.what() << '\n';
    const bool exists =
        std::string_view(error.what()).find("exists; not overwriting") != std::string_view::npos;
    return exists ? kExitUsage : kExitFailed;
  }
  std::cout << "secret key: " << c.keygen_path << " (mode 0600)\n"
            << "public key: " << c.keygen_path << ".pub\n"
            << "public_key: \"" << cert.public_key << "\"\n";
  return kExitOk;
}

// Fills a control command's endpoint, timeout and CURVE keys.
void resolve_control(ControlOptions& options, const Commands& c,
                     const reflectd::config::Config& config, int timeout_ms) {
  options.endpoint = resolve_endpoint(c.endpoints, config, Role::kControl);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  options.curve = load_curve_client(c.curve_key_file, c.server_key_file);
  options.nats = c.nats_servers;
  options.nats_agent = c.nats_agent;
  if (!options.nats_agent.empty() && options.nats.empty()) {
    throw std::runtime_error("--nats-agent: needs --nats URL (it names who reads over NATS)");
  }
  if (options.nats_agent.find_first_of(". *>\t") != std::string::npos) {
    throw std::runtime_error(
        "--nats-agent: must be one subject token (no '.', '*', '>' or "
        "spaces), got \"" +
        options.nats_agent + "\"");
  }
}

// Resolves endpoints and limits; throws std::runtime_error (or config::ConfigError).
// The restore / pin / unpin subcommand given, if any.
std::optional<std::string> chosen_state_change(const Commands& c) {
  for (const auto& [name, cmd] : c.state_changes) {
    if (*cmd) return name;
  }
  return std::nullopt;
}

void resolve(Commands& c) {
  const reflectd::config::Config config = load_client_config(c.endpoints);
  if (*c.jetstream) {
    c.jetstream_options.connection = config.bus.jetstream;
    if (!c.nats_servers.empty()) c.jetstream_options.connection.servers = c.nats_servers;
    if (c.jetstream_options.connection.servers.empty()) {
      throw std::runtime_error(
          "jetstream: no NATS server: pass --nats URL, or --config FILE with "
          "bus.jetstream.servers");
    }
    if (c.stream_layout.name.empty()) c.stream_layout.name = config.bus.jetstream.stream;
  } else if (*c.publish) {
    PublishOptions& o = c.publish_options;
    o.endpoint = resolve_endpoint(c.endpoints, config, o.push ? Role::kPush : Role::kIngest);
    o.timeout = std::chrono::milliseconds(c.publish_timeout_ms);
    o.curve = load_curve_client(c.curve_key_file, c.server_key_file);
    o.batch.max_events = c.batch_events;
    o.batch.max_bytes = static_cast<std::size_t>(
        c.max_message_bytes > 0 ? c.max_message_bytes : config.bus.max_message_bytes);
  } else if (*c.status) {
    resolve_control(c.status_options, c, config, c.status_timeout_ms);
  } else if (*c.run) {
    const bool timeout_given = c.run->count("--timeout-ms") > 0;
    const int timeout_ms = timeout_given || !c.run_options.wait
                               ? c.run_timeout_ms
                               : static_cast<int>(kRunWaitTimeout.count());
    resolve_control(c.run_options.control, c, config, timeout_ms);
  } else if (*c.jobs) {
    resolve_control(c.jobs_options.control, c, config, c.jobs_timeout_ms);
  } else if (*c.knowledge) {
    resolve_control(c.knowledge_options.control, c, config, c.knowledge_timeout_ms);
  } else if (*c.observations) {
    resolve_control(c.observations_options.control, c, config, c.observations_timeout_ms);
  } else if (*c.facts) {
    resolve_control(c.facts_options.control, c, config, c.other_timeout_ms);
  } else if (*c.search) {
    resolve_control(c.search_options.control, c, config, c.other_timeout_ms);
  } else if (*c.recall) {
    resolve_control(c.recall_options.control, c, config, c.other_timeout_ms);
  } else if (*c.context) {
    resolve_control(c.context_options.control, c, config, c.other_timeout_ms);
  } else if (*c.get) {
    resolve_control(c.get_options.control, c, config, c.other_timeout_ms);
  } else if (*c.episode) {
    resolve_control(c.episode_options.control, c, config, c.other_timeout_ms);
  } else if (*c.reinforce) {
    c.reinforce_options.useful = !c.misleading;
    resolve_control(c.reinforce_options.control, c, config, c.other_timeout_ms);
  } else if (*c.mcp) {
    resolve_control(c.mcp_options.control, c, config, c.mcp_timeout_ms);
    c.mcp_options.ingest_endpoint = resolve_endpoint(c.endpoints, config, Role::kIngest);
  } else if (*c.forget) {
    resolve_control(c.forget_options.control, c, config, c.forget_timeout_ms);
  } else if (*c.audit) {
    resolve_control(c.audit_options.control, c, config, c.other_timeout_ms);
  } else if (*c.revise) {
    resolve_control(c.revise_options.control, c, config, c.other_timeout_ms);
  } else if (*c.proposal) {
    resolve_control(c.proposal_options.control, c, config, c.other_timeout_ms);
  } else if (*c.merge_entities) {
    resolve_control(c.merge_entities_options.control, c, config, c.other_timeout_ms);
  } else if (const auto change = chosen_state_change(c)) {
    resolve_control(c.state_options[*change].control, c, config, c.other_timeout_ms);
  } else if (*c.events) {
    resolve_control(c.events_options.control, c, config, c.other_timeout_ms);
  } else if (*c.medallion) {
    MedallionOptions& o = c.medallion_options;
    for (CLI::App* sub : c.medallion->get_subcommands()) o.action = sub->get_name();
    if (o.action == "set-status") o.action = "set_status";
    o.limit_given = o.action == "history";
    resolve_control(o.control, c, config, c.other_timeout_ms);
  } else if (*c.entities) {
    resolve_control(c.entities_options.control, c, config, c.other_timeout_ms);
  } else {
    resolve_control(c.clusters_options.control, c, config, c.other_timeout_ms);
  }
}

int dispatch(const Commands& c) {
  if (*c.jetstream_init) return run_jetstream_init(c.jetstream_options, c.stream_layout);
  if (*c.jetstream_publish) {
    return run_jetstream_publish(c.jetstream_options, c.jetstream_files, c.jetstream_window);
  }
  if (*c.publish) return run_publish(c.publish_options);
  if (*c.status) return run_status(c.status_options);
  if (*c.run) return run_job(c.run_options);
  if (*c.jobs) return run_jobs(c.jobs_options);
  if (*c.knowledge) return run_knowledge(c.knowledge_options);
  if (*c.observations) return run_observations(c.observations_options);
  if (*c.facts) return run_facts(c.facts_options);
  if (*c.search) return run_search(c.search_options);
  if (*c.recall) return run_recall(c.recall_options);
  if (*c.context) return run_context(c.context_options);
  if (*c.get) return run_get(c.get_options);
  if (*c.episode) return run_episode(c.episode_options);
  if (*c.reinforce) return run_reinforce(c.reinforce_options);
  if (*c.mcp) return mcp::run_mcp(c.mcp_options, std::cin, std::cout);
  if (*c.forget) return run_forget(c.forget_options);
  if (*c.audit) return run_audit(c.audit_options);
  if (*c.revise) return run_revise(c.revise_options);
  if (*c.proposal) return run_proposal(c.proposal_options);
  if (*c.merge_entities) return run_merge_entities(c.merge_entities_options);
  if (const auto change = chosen_state_change(c)) {
    return run_event_state(c.state_options.at(*change));
  }
  if (*c.events) return run_events_tail(c.events_options);
  if (*c.medallion) return run_medallion(c.medallion_options);
  if (*c.entities) return run_entities(c.entities_options);
  return run_clusters(c.clusters_options);
}

int run(int argc, char** argv) {
  CLI::App app{kMainDescription, "reflectctl"};
  app.footer(kMainFooter);
  app.require_subcommand(1);
  app.fallthrough();
  Commands commands;
  add_global_options(app, commands);
  add_publish(app, commands);
  add_status(app, commands);
  add_run(app, commands);
  add_jobs(app, commands);
  add_knowledge(app, commands);
  add_observations(app, commands);
  add_facts(app, commands);
  add_search(app, commands);
  add_recall(app, commands);
  add_reinforce(app, commands);
  add_memory_commands(app, commands);
  add_mcp(app, commands);
  add_events(app, commands);
  add_medallion(app, commands);
  add_entities(app, commands);
  add_clusters(app, commands);
  add_jetstream(app, commands);
  add_keygen(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitOk : kExitUsage;
  }
  if (*commands.keygen) {
    try {
      return run_keygen(commands);
    } catch (const std::exception& error) {
      std::cerr << "reflectctl keygen: " << error.what() << '\n';
      return kExitFailed;
    }
  }

  try {
    resolve(commands);
  } catch (const std::exception& error) {
    std::cerr << "reflectctl: " << error.what() << '\n';
    return kExitUsage;
  }
  try {
    return dispatch(commands);
  } catch (const std::exception& error) {
    std::cerr << "reflectctl: " << error.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // run() handles every expected error; this only keeps e.g. std::bad_alloc from aborting.
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "reflectctl: %s\n", error.what());
  } catch (...) {
    std::fputs("reflectctl: unexpected error\n", stderr);
  }
  return kExitFailed;
}
