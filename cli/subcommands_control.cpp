// reflectctl's control commands that change or run something: status, run, jobs, reinforce and
// the memory operations.

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "cli/jobs.hpp"
#include "cli/memory_commands.hpp"
#include "cli/reinforce.hpp"
#include "cli/run_job.hpp"
#include "cli/status.hpp"
#include "cli/subcommands.hpp"

namespace reflectd::cli {

namespace {

void add_status(Registry& r) {
  CLI::App* cmd = r.add("status");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<StatusOptions>();
  r.control(cmd, *o, kControlTimeoutMs, [o] { return run_status(*o); });
}

void add_run(Registry& r) {
  CLI::App* cmd = r.add("run");
  auto o = std::make_shared<RunJobOptions>();
  cmd->add_option("JOB", o->job,
                  "the job to run, e.g. consolidate or decay (`reflectctl jobs` lists them)")
      ->required();
  cmd->add_option("-N,--namespace", o->ns, "run for this namespace only (default: every one)")
      ->type_name("NS");
  cmd->add_flag("-w,--wait", o->wait,
                "wait for the run to end and print its outcome (exit 1 unless ok or skipped)");
  auto timeout = r.timeout(kControlTimeoutMs);  // kRunWaitTimeout with --wait unless given.
  add_control_options(*cmd, *timeout, o->control.json);
  cmd->get_option("--timeout-ms")
      ->default_str(fmt::format("3000; {} with --wait", kRunWaitTimeout.count()));
  r.on(
      cmd,
      [&r, cmd, o, timeout](const config::Config& config) {
        const bool timeout_given = cmd->count("--timeout-ms") > 0;
        const int timeout_ms =
            timeout_given || !o->wait ? *timeout : static_cast<int>(kRunWaitTimeout.count());
        r.resolve_control(o->control, config, timeout_ms);
      },
      [o] { return run_job(*o); });
}

void add_jobs(Registry& r) {
  CLI::App* cmd = r.add("jobs");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<JobsOptions>();
  cmd->add_option("-j,--job", o->job, "runs of this job only (default: every job)")
      ->type_name("JOB")
      ->default_str("");
  add_limit(*cmd, o->limit);
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_jobs(*o); });
}

void add_reinforce(Registry& r) {
  CLI::App* cmd = r.add("reinforce");
  cmd->option_defaults()->always_capture_default();
  struct Reinforce {
    ReinforceOptions options;
    bool misleading = false;
    bool useful_flag = false;
  };
  auto o = std::make_shared<Reinforce>();
  cmd->add_option("ID", o->options.id, "the event or knowledge id")->required();
  CLI::Option* useful =
      cmd->add_flag("--useful", o->useful_flag, "the record helped (the default)");
  cmd->add_flag("--misleading", o->misleading, "the record misled")->excludes(useful);
  r.control(cmd, o->options.control, kControlTimeoutMs, [o] {
    o->options.useful = !o->misleading;
    return run_reinforce(o->options);
  });
}

void add_forget(Registry& r) {
  CLI::App* cmd = r.add("forget");
  cmd->option_defaults()->always_capture_default();
  auto f = std::make_shared<ForgetOptions>();
  CLI::Option* ids = cmd->add_option("ID", f->ids, "event ids to forget (or a filter below)");
  auto filter = [&](const char* name, std::string& value, const char* what, const char* type) {
    cmd->add_option(name, value, what)->type_name(type)->default_str("")->excludes(ids);
  };
  filter("-N,--namespace", f->ns, "events of this namespace (a filter without one needs admin)",
         "NS");
  filter("--agent-id", f->agent_id, "events published by this agent", "AGENT");
  filter("-k,--kind", f->kind, "events of this kind", "K");
  filter("--before", f->before, "events whose timestamp is before this RFC 3339 date-time", "T");
  filter("--after", f->after, "events whose timestamp is after this RFC 3339 date-time", "T");
  filter("--text", f->text, "events whose content contains this text (ASCII case-insensitive)",
         "TEXT");
  cmd->add_flag("--delete", f->hard_delete,
                "delete the events and everything derived from them (default: archive)");
  cmd->add_flag("--dry-run", f->dry_run, "list what would be forgotten; change nothing");
  cmd->add_flag("--wait", f->wait, "with --delete: answer once the jobs rebuilt what they derive");
  cmd->add_option("--rationale", f->rationale, "why, for the audit log")
      ->type_name("TEXT")
      ->default_str("");
  r.control(cmd, f->control, 600000, [f] { return run_forget(*f); });
}

void add_event_states(Registry& r) {
  for (const char* name : {"restore", "pin", "unpin"}) {
    CLI::App* cmd = r.add(name);
    auto o = std::make_shared<EventStateOptions>();
    o->cmd = name;
    cmd->add_option("ID", o->ids, "event ids")->required();
    r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_event_state(*o); });
  }
}

void add_revise(Registry& r) {
  CLI::App* cmd = r.add("revise");
  cmd->option_defaults()->always_capture_default();
  auto o = std::make_shared<ReviseOptions>();
  cmd->add_option("ID", o->id, "the event to revise")->required();
  cmd->add_option("--content", o->content, "the revision's content")->type_name("TEXT")->required();
  cmd->add_option("--rationale", o->rationale, "why, for the audit log (seed 002: required)")
      ->type_name("TEXT")
      ->required();
  cmd->add_option("--context", o->context_json,
                  "the revision's context, a JSON object (default: the old event's)")
      ->type_name("JSON")
      ->default_str("");
  cmd->add_option("--new-id", o->new_id,
                  "the revision's id (default: derived from the content, old id and time)")
      ->type_name("ID")
      ->default_str("");
  cmd->add_flag("--keep-timestamp", o->keep_timestamp,
                "the revision keeps the event's timestamp (a correction of what was said "
                "then; default: the time of the revision)");
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_revise(*o); });
}

void add_proposal(Registry& r) {
  CLI::App* cmd = r.add("proposal");
  auto o = std::make_shared<ProposalOptions>();
  cmd->add_option("ACTION", o->action, "accept, reject or falsify")
      ->required()
      ->check(CLI::IsMember({"accept", "reject", "falsify"}));
  cmd->add_option("ID", o->proposal_id, "the proposal's id (knowledge decision_id)")->required();
  cmd->add_option("--rationale", o->rationale, "why, for the audit log (required)")
      ->type_name("TEXT")
      ->required();
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_proposal(*o); });
}

void add_merge_entities(Registry& r) {
  CLI::App* cmd = r.add("merge-entities");
  auto o = std::make_shared<MergeEntitiesOptions>();
  cmd->add_option("FROM", o->from, "the entity merged away: canonical key or display name")
      ->required();
  cmd->add_option("INTO", o->into, "the entity it becomes: canonical key or display name")
      ->required();
  cmd->add_option("--namespace", o->ns, "the entities' namespace (required)")
      ->type_name("NS")
      ->required();
  cmd->add_option("--rationale", o->rationale, "why, for the audit log")
      ->type_name("TEXT")
      ->default_str("merged by <actor>");
  r.control(cmd, o->control, kControlTimeoutMs, [o] { return run_merge_entities(*o); });
}

}  // namespace

void add_control_commands(Registry& registry) {
  add_status(registry);
  add_run(registry);
  add_jobs(registry);
  add_reinforce(registry);
  add_forget(registry);
  add_event_states(registry);
  add_revise(registry);
  add_proposal(registry);
  add_merge_entities(registry);
}

}  // namespace reflectd::cli
