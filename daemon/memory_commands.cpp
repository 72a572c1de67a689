// Wiring of the memory operations (memory_ops/): forget, restore, pin, unpin, revise,
// proposal verdicts, agents' medallions and entity merges.
// State changes and dry runs go to the writer thread; a hard delete and an entity merge run on
// the jobs' thread (Scheduler::request_task), never beside a job; a delete then asks the jobs
// to rebuild the namespaces it touched.

#include <spdlog/fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "daemon/daemon.hpp"
#include "memory_ops/derived_state.hpp"
#include "memory_ops/entity_merges.hpp"
#include "memory_ops/event_state.hpp"
#include "memory_ops/forget.hpp"
#include "memory_ops/medallions.hpp"
#include "memory_ops/proposals.hpp"
#include "memory_ops/revise.hpp"
#include "model/request_params.hpp"
#include "store/writer.hpp"

namespace reflectd::daemon {
using json = nlohmann::json;

namespace {

using model::text_param;

/// A forget's timeout (the chunked clear, the delete transaction and the index optimization), s.
constexpr std::int64_t kForgetTimeoutS = 3600;

memory_ops::WriteScope write_scope(const json& request, const bus::Principal& caller) {
  // An authenticated caller is its key's agent_id in the audit rows, whatever the request says.
  std::string actor = !caller.is_local_operator()               ? caller.agent_id
                      : text_param(request, "agent_id").empty() ? "control"
                                                                : text_param(request, "agent_id");
  return {std::move(actor), caller.all_namespaces, caller.namespaces, caller.admin,
          caller.clearance};
}

// Resolves and applies the policies; throws std::invalid_argument with the precise error.
std::vector<memory_ops::SelectedEvent> select(SQLite::Database& db,
                                              const memory_ops::EventSelection& selection,
                                              const memory_ops::WriteScope& scope,
                                              const std::string& cmd, bool forgetting, json& kept) {
  std::string error;
  auto events = memory_ops::resolve_event_selection(db, selection, scope, cmd, error);
  if (!events) throw std::invalid_argument(error);
  if (!forgetting) return std::move(*events);
  auto allowed = memory_ops::forgettable(std::move(*events), !selection.filter, cmd, kept, error);
  if (!allowed) throw std::invalid_argument(error);
  if (allowed->empty()) {
    throw std::invalid_argument(cmd + ": every matching event is kept by its policy (see kept)");
  }
  return std::move(*allowed);
}

// The runs that rebuild `namespaces` (memory_ops::kRebuildJobs, those configured), in order:
// {job, namespace}.
std::vector<std::pair<std::string, std::string>> rebuild_runs(
    const jobs::Scheduler& scheduler, const std::set<std::string>& namespaces) {
  const auto names = scheduler.job_names();
  std::vector<std::pair<std::string, std::string>> runs;
  for (const auto& ns : namespaces) {
    for (const auto job : memory_ops::kRebuildJobs) {
      if (std::find(names.begin(), names.end(), job) != names.end()) {
        runs.emplace_back(std::string(job), ns);
      }
    }
  }
  return runs;
}

// Queues `runs`; `last_done` (may be empty) is called when the last one ends.
void queue_runs(jobs::Scheduler& scheduler,
                const std::vector<std::pair<std::string, std::string>>& runs,
                jobs::Scheduler::RunDone last_done) {
  if (runs.empty()) return;
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    scheduler.request(runs[i].first, runs[i].second, {});
  }
  scheduler.request(runs.back().first, runs.back().second, std::move(last_done));
}

}  // namespace

void Daemon::resume_interrupted_clears() {
  const auto pending = memory_ops::pending_clears(*jobs_db_);
  if (pending.empty()) return;
  // A namespace is marked by a forget (its clear interrupted by a crash) or by a migration
  // whose ids changed (migration 42, store/migrations_20_to_44.cpp); either way the events are all
  // still there.
  spdlog::warn(
      "the derived state of {} is marked for a clear (a forget that was interrupted, or an "
      "upgrade that renumbers derived ids): finishing the clear, then the jobs rebuild it from "
      "the events (an interrupted forget did not delete its events: repeat it)",
      fmt::join(pending, ", "));
  jobs::Job task;
  task.name = "forget";
  task.schedule.timeout_s = kForgetTimeoutS;
  auto* scheduler = scheduler_.get();
  task.run = [scheduler](jobs::JobContext& ctx) {
    const std::set<std::string> cleared = memory_ops::finish_pending_clears(ctx);
    const auto runs = rebuild_runs(*scheduler, cleared);
    queue_runs(*scheduler, runs, {});
    return json{{"resumed", true}, {"namespaces", cleared}, {"rebuild_runs", runs.size()}};
  };
  scheduler_->request_task(std::move(task), "", {});
}

void Daemon::control_memory_op(const std::string& cmd, const json& request,
                               const bus::Principal& caller, const bus::ControlReply& reply) {
  std::string error;
  auto selection = memory_ops::parse_event_selection(request, cmd, error);
  if (!selection) return reply({{"ok", false}, {"error", error}});
  const memory_ops::WriteScope scope = write_scope(request, caller);
  const bool forgetting = cmd == "forget";
  const std::string mode = forgetting ? request.value("mode", std::string("archive")) : "";
  if (forgetting && mode != "archive" && mode != "delete") {
    return reply({{"ok", false}, {"error", R"(forget: mode: must be "archive" or "delete")"}});
  }
  const bool dry_run = request.value("dry_run", false);
  const std::string rationale =
      text_param(request, "rationale").empty()
          ? (forgetting ? "forgotten (" + mode + ") by " + scope.actor : cmd + " by " + scope.actor)
          : text_param(request, "rationale");
  const std::int64_t now = clock_.now_us();

  if (forgetting && mode == "delete" && !dry_run) {
    jobs::Job task;
    task.name = "forget";
    task.schedule.timeout_s = kForgetTimeoutS;
    auto* scheduler = scheduler_.get();
    const bool wait = request.value("wait", false);
    task.run = [selection = *selection, scope, rationale, scheduler, wait,
                reply](jobs::JobContext& ctx) {
      json kept = json::array();
      const auto events = select(ctx.db, selection, scope, "forget", true, kept);
      const memory_ops::DeleteOutcome outcome =
          memory_ops::forget_events(ctx, events, scope.actor, rationale);
      json result = outcome.to_json();
      result["mode"] = "delete";
      result["kept"] = std::move(kept);
      // The jobs rebuild each namespace from its first event; with "wait", the answer comes
      // when the last of those runs ended.
      const auto runs = rebuild_runs(*scheduler, outcome.namespaces);
      result["rebuild_runs"] = runs.size();
      queue_runs(*scheduler, runs,
                 wait ? jobs::Scheduler::RunDone([reply, result](const jobs::RunRecord&) {
                   reply({{"ok", true}, {"forgotten", result}});
                 })
                      : jobs::Scheduler::RunDone());
      if (wait && runs.empty()) reply({{"ok", true}, {"forgotten", result}});
      return result;
    };
    scheduler_->request_task(std::move(task), "", [reply, wait](const jobs::RunRecord& run) {
      if (run.status != "ok") {
        return reply({{"ok", false}, {"error", run.error.empty() ? run.status : run.error}});
      }
      if (!wait) reply({{"ok", true}, {"forgotten", run.result}});
    });
    return;
  }

  store::WriteRequest write;
  write.apply = [cmd, selection = *selection, scope, mode, dry_run, rationale, now,
                 forgetting](SQLite::Database& db) {
    json kept = json::array();
    const auto events = select(db, selection, scope, cmd, forgetting, kept);
    json result;
    if (dry_run) {
      result = {{"dry_run", true}, {"events", memory_ops::to_json(events)}};
      if (forgetting) result["mode"] = mode;
    } else if (forgetting) {
      result = {
          {"mode", "archive"},
          {"events_archived", memory_ops::archive_events(db, events, scope.actor, now, rationale)}};
    } else {
      const auto change = cmd == "restore" ? memory_ops::StateChange::kRestore
                          : cmd == "pin"   ? memory_ops::StateChange::kPin
                                           : memory_ops::StateChange::kUnpin;
      result = memory_ops::change_event_state(db, events, change, scope.actor, now);
    }
    if (forgetting) result["kept"] = std::move(kept);
    return result.dump();
  };
  write.on_done = [reply, forgetting](store::WriteResult&& result) {
    if (!result.storage_error.empty())
      return reply({{"ok", false}, {"error", result.storage_error}});
    if (!result.apply_error.empty()) return reply({{"ok", false}, {"error", result.apply_error}});
    reply({{"ok", true}, {forgetting ? "forgotten" : "result", json::parse(result.apply_result)}});
  };
  if (!writer_->submit(std::move(write))) {
    reply({{"ok", false}, {"error", "writer busy or stopping: retry"}});
  }
}

void Daemon::control_write_op(const std::string& cmd, const json& request,
                              const bus::Principal& caller, const bus::ControlReply& reply) {
  std::string error;
  store::WriteRequest write;
  const memory_ops::WriteScope scope = write_scope(request, caller);
  const std::int64_t now = clock_.now_us();
  std::string answer;
  if (cmd == "revise") {
    auto revision = memory_ops::parse_revision(request, error);
    if (!revision) return reply({{"ok", false}, {"error", error}});
    write.apply = [revision = std::move(*revision), scope, now](SQLite::Database& db) {
      return memory_ops::revise_event(db, revision, scope, now).dump();
    };
    answer = "revised";
  } else if (cmd == "medallion") {
    auto medallion = memory_ops::parse_medallion_write(request, error);
    if (!medallion) return reply({{"ok", false}, {"error", error}});
    write.apply = [medallion = std::move(*medallion), scope, now](SQLite::Database& db) {
      return memory_ops::write_medallion(db, medallion, scope, now).dump();
    };
    answer = "written";
  } else {
    auto verdict = memory_ops::parse_proposal_verdict(request, error);
    if (!verdict) return reply({{"ok", false}, {"error", error}});
    write.apply = [verdict = std::move(*verdict), scope, now](SQLite::Database& db) {
      return memory_ops::judge_proposal(db, verdict, scope, now).dump();
    };
    answer = "proposal";
  }
  write.on_done = [this, reply, answer](store::WriteResult&& result) {
    if (!result.storage_error.empty())
      return reply({{"ok", false}, {"error", result.storage_error}});
    if (!result.apply_error.empty()) return reply({{"ok", false}, {"error", result.apply_error}});
    json body = json::parse(result.apply_result);
    if (answer == "written" && body.contains("version")) {
      // Subscribers learn of an agent's medallion as of the job's (jobs/medallion.hpp).
      json payload = {
          {"id", body["id"]},
          {"scope", body["scope"]},
          {"updated_at", body["updated_at"]},
          {"reason", body["version"] == 1 ? "created by an agent" : "updated by an agent"}};
      boost::asio::post(io_, [this, payload = std::move(payload)]() mutable {
        if (!stopping_) bus_->publish("medallion.updated", std::move(payload));
      });
    }
    reply({{"ok", true}, {answer, std::move(body)}});
  };
  if (!writer_->submit(std::move(write))) {
    reply({{"ok", false}, {"error", "writer busy or stopping: retry"}});
  }
}

void Daemon::control_merge_entities(const json& request, const bus::Principal& caller,
                                    const bus::ControlReply& reply) {
  std::string error;
  auto merge = memory_ops::parse_entity_merge(request, error);
  if (!merge) return reply({{"ok", false}, {"error", error}});
  const memory_ops::WriteScope scope = write_scope(request, caller);
  const auto half_life_s =
      static_cast<std::int64_t>(config_.entities.edge_half_life_days * 86400.0);
  jobs::Job task;
  task.name = "merge_entities";
  task.schedule.timeout_s = kForgetTimeoutS;
  task.run = [merge = std::move(*merge), scope, half_life_s](jobs::JobContext& ctx) {
    jobs::WriteTransaction transaction(ctx);
    json result = memory_ops::merge_entities(ctx.db, merge, scope, half_life_s, ctx.clock.now_us());
    transaction.commit();
    return result;
  };
  scheduler_->request_task(std::move(task), "", [reply](const jobs::RunRecord& run) {
    if (run.status != "ok") {
      return reply({{"ok", false}, {"error", run.error.empty() ? run.status : run.error}});
    }
    reply({{"ok", true}, {"merged", run.result}});
  });
}

}  // namespace reflectd::daemon
