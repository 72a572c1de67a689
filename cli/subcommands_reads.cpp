// reflectctl's reads: each one request to the daemon's read thread, printed as a table.

#include <cstdint>
#include <limits>
#include <memory>

#include "cli/entities.hpp"
#include "cli/events.hpp"
#include "cli/facts.hpp"
#include "cli/knowledge.hpp"
#include "cli/medallion.hpp"
#include "cli/memory_commands.hpp"
#include "cli/observations.hpp"
#include "cli/recall.hpp"
#include "cli/search.hpp"
#include "cli/subcommands.hpp"

namespace reflectd::cli {

namespace {

void add_knowledge(Registry& r) {
  CLI::App* cmd = r.add("knowledge");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<KnowledgeOptions>();
  cmd->add_option("-N,--namespace", o->ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-p,--phase", o->phase, "rows in this lifecycle phase only")
      ->check(CLI::IsMember({"pattern", "emergent", "canonical"}))
      ->type_name("PHASE")
      ->default_str("");
  cmd->add_option("-s,--status", o->status, "rows with this status only")
      ->check(CLI::IsMember(
          {"active", "deprecated", "superseded", "draft", "accepted", "rejected", "falsified"}))
      ->type_name("STATUS")
      ->default_str("");
  cmd->add_option("-k,--kind", o->kind, "rows of this kind only")
      ->check(CLI::IsMember({"decision", "constraint", "assumption", "intervention", "proposal"}))
      ->type_name("KIND")
      ->default_str("");
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_knowledge(*o); });
}

void add_observations(Registry& r) {
  CLI::App* cmd = r.add("observations");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<ObservationsOptions>();
  cmd->add_option("-N,--namespace", o->ns, "rows of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-T,--type", o->type, "observations of this type only")
      ->check(CLI::IsMember({"pattern", "competence"}))
      ->type_name("TYPE")
      ->default_str("");
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_observations(*o); });
}

void add_facts(Registry& r) {
  CLI::App* cmd = r.add("facts");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<FactsOptions>();
  cmd->add_option("-N,--namespace", o->ns, "facts of this namespace only (default: every one)")
      ->type_name("NS")
      ->default_str("");
  cmd->add_option("-e,--entity", o->entity,
                  "facts about this entity: a key (person:caroline) or a name (Caroline)")
      ->type_name("ENTITY")
      ->default_str("");
  cmd->add_option("-a,--attribute", o->attribute,
                  "facts of this attribute only (occupation, residence, favorite_book, ...)")
      ->type_name("ATTRIBUTE")
      ->default_str("");
  cmd->add_flag("--current", o->current, "leave out facts a later one superseded");
  cmd->add_option("--after-id", o->after_id, "facts after this id (the next page)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()))
      ->type_name("ID");
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_facts(*o); });
}

void add_search(Registry& r) {
  CLI::App* cmd = r.add("search");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<SearchOptions>();
  cmd->add_option("TEXT", o->text, "words to look for (every word must match)")->required();
  add_namespace(*cmd, o->ns);
  cmd->add_option("-k,--kind", o->kind, "events of this kind only")
      ->type_name("K")
      ->default_str("");
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_search(*o); });
}

void add_recall(Registry& r) {
  CLI::App* cmd = r.add("recall");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<RecallOptions>();
  cmd->add_option("TEXT", o->text, "the question, in plain words")->required();
  add_namespace(*cmd, o->ns);
  cmd->add_option("-n,--limit", o->limit, "results to show, at most")
      ->check(CLI::Range(1, 100))
      ->type_name("N");
  cmd->add_option("--offset", o->offset, "results to skip first (paging)")
      ->check(CLI::Range(0, 1000))
      ->type_name("N");
  cmd->add_flag("--include-archived", o->include_archived,
                "also recall archived events (forget's archive, the decay job's auto_prune)");
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_recall(*o); });
}

void add_context(Registry& r) {
  CLI::App* cmd = r.add("context");
  cmd->option_defaults()->always_capture_default();
  auto x = std::make_shared<RecallOptions>();
  cmd->add_option("TEXT", x->text, "the question, in plain words")->required();
  add_namespace(*cmd, x->ns);
  cmd->add_option("-m,--max-tokens", x->max_tokens, "token budget of the text")
      ->check(CLI::Range(50, 32000))
      ->type_name("N");
  cmd->add_flag("--include-archived", x->include_archived,
                "also use archived events (forget's archive, the decay job's auto_prune)");
  r.control(cmd, x->control, kControlTimeoutMs, [x] { return run_context(*x); });
}

void add_get(Registry& r) {
  CLI::App* cmd = r.add("get");
  auto o = std::make_shared<GetOptions>();
  cmd->add_option("ID", o->ids, "event ids, as published (1 to 100)")->required()->expected(1, 100);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_get(*o); });
}

void add_episode(Registry& r) {
  CLI::App* cmd = r.add("episode");
  cmd->option_defaults()->always_capture_default();
  auto e = std::make_shared<EpisodeOptions>();
  cmd->add_option("EPISODE_ID", e->episode_id, "the episode_id its events were published with")
      ->required();
  add_namespace(*cmd, e->ns);
  cmd->add_option("-n,--limit", e->limit, "events to show, at most")
      ->check(CLI::Range(1, 1000))
      ->type_name("N");
  r.control(cmd, e->control, kControlTimeoutMs, [e] { return run_episode(*e); });
}

void add_audit(Registry& r) {
  CLI::App* cmd = r.add("audit");
  cmd->option_defaults()->always_capture_default();
  auto a = std::make_shared<AuditOptions>();
  cmd->add_option("--record-id", a->record_id,
                  "entries about this record (event, knowledge, "
                  "medallion id) only")
      ->type_name("ID")
      ->default_str("");
  add_namespace(*cmd, a->ns);
  cmd->add_option("--since", a->since, "entries at or after this RFC 3339 date-time")
      ->type_name("T")
      ->default_str("");
  add_limit(*cmd, a->limit);
  r.control(cmd, a->control, kControlTimeoutMs, [a] { return run_audit(*a); });
}

void add_events(Registry& r) {
  CLI::App* cmd = r.add("events");
  cmd->require_subcommand(1);
  CLI::App* tail = cmd->add_subcommand("tail", "print the latest events; -f: follow new ones");
  tail->option_defaults()->always_capture_default();
  auto o = std::make_shared<EventsOptions>();
  add_namespace(*tail, o->ns);
  tail->add_option("-k,--kind", o->kind, "events of this kind only")
      ->type_name("K")
      ->default_str("");
  tail->add_option("--agent", o->agent_id, "events of this agent_id only")
      ->type_name("AGENT")
      ->default_str("");
  tail->add_option("--episode", o->episode_id, "events of this episode_id only")
      ->type_name("EPISODE")
      ->default_str("");
  tail->add_option("-n,--lines", o->limit, "latest events to print (and per poll with -f)")
      ->check(CLI::Range(1, 10000))
      ->type_name("N");
  tail->add_flag("-f,--follow", o->follow,
                 "keep polling every 500 ms for new events until interrupted (exit 0)");
  auto timeout = r.timeout(kControlTimeoutMs);
  add_control_options(*tail, *timeout, o->control.json);
  r.on(
      cmd,
      [&r, o, timeout](const config::Config& config) {
        r.resolve_control(o->control, config, *timeout);
      },
      [o] { return run_events_tail(*o); });
}

void add_medallion_writes(CLI::App& cmd, MedallionOptions& o, int& timeout) {
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
  CLI::App* create = cmd.add_subcommand("create", "write a new medallion (an agent's)");
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
  add_control_options(*create, timeout, o.control.json);
  CLI::App* update = cmd.add_subcommand("update", "a new version of an agent's medallion");
  update->add_option("ID", o.id, "the medallion id")->required();
  add_evidence(*update);
  add_control_options(*update, timeout, o.control.json);
  CLI::App* set_status = cmd.add_subcommand("set-status",
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
  add_control_options(*set_status, timeout, o.control.json);
}

void add_medallion(Registry& r) {
  CLI::App* cmd = r.add("medallion");
  cmd->require_subcommand(1);
  auto o = std::make_shared<MedallionOptions>();
  auto timeout = r.timeout(kControlTimeoutMs);
  CLI::App* get = cmd->add_subcommand("get", "print one medallion");
  get->add_option("ID", o->id, "the medallion id")->required();
  add_control_options(*get, *timeout, o->control.json);
  CLI::App* query = cmd->add_subcommand("query", "medallions covering every node and some tag");
  query->add_option("--node", o->nodes, "a graph node the medallion must cover (repeatable)")
      ->type_name("N");
  query->add_option("--tag", o->tags, "a tag the medallion may carry (repeatable)")->type_name("T");
  add_control_options(*query, *timeout, o->control.json);
  CLI::App* history = cmd->add_subcommand("history", "earlier versions of a medallion");
  history->add_option("ID", o->id, "the medallion id")->required();
  add_limit(*history, o->limit);
  add_control_options(*history, *timeout, o->control.json);
  CLI::App* list = cmd->add_subcommand("list", "every medallion: id, status, summary");
  add_control_options(*list, *timeout, o->control.json);
  add_medallion_writes(*cmd, *o, *timeout);
  r.on(
      cmd,
      [&r, cmd, o, timeout](const config::Config& config) {
        for (CLI::App* sub : cmd->get_subcommands()) o->action = sub->get_name();
        if (o->action == "set-status") o->action = "set_status";
        o->limit_given = o->action == "history";
        r.resolve_control(o->control, config, *timeout);
      },
      [o] { return run_medallion(*o); });
}

void add_entities(Registry& r) {
  CLI::App* cmd = r.add("entities");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<EntitiesOptions>();
  add_namespace(*cmd, o->ns);
  cmd->add_option("--top", o->top, "entities to show, most important first")
      ->check(CLI::Range(1, 10000))
      ->type_name("K");
  cmd->add_option("-T,--type", o->type, "entities of this type only")
      ->type_name("T")
      ->default_str("");
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_entities(*o); });
}

void add_clusters(Registry& r) {
  CLI::App* cmd = r.add("clusters");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<ClustersOptions>();
  add_namespace(*cmd, o->ns);
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_clusters(*o); });
}

}  // namespace

void add_read_commands(Registry& registry) {
  add_knowledge(registry);
  add_observations(registry);
  add_facts(registry);
  add_search(registry);
  add_recall(registry);
  add_context(registry);
  add_get(registry);
  add_episode(registry);
  add_audit(registry);
  add_events(registry);
  add_medallion(registry);
  add_entities(registry);
  add_clusters(registry);
}

}  // namespace reflectd::cli
