#include "jobs/consolidation_outcomes.hpp"

#include "jobs/consolidation_text.hpp"

namespace reflectd::jobs::consolidation {

using nlohmann::json;

void ProcedureBuilder::add(std::int64_t seq, const std::string& kind, const std::string& content,
                           const json& context, std::int64_t ts_us) {
  if (kind == "task" && task_.empty()) {
    task_ = first_line(content, 200);
    task_text_ = content;
    task_seq_ = seq;
    task_ts_ = ts_us;
  }
  if ((kind == "result" || kind == "error") && awaiting_outcome_ && !calls_.empty()) {
    calls_.back().succeeded = kind == "result" && truthy(context, "success");
  }
  if (kind == "call") {
    calls_.push_back(
        {string_field(context, "tool"), content, string_field(context, "thought"), false});
    call_events_.emplace_back(seq, ts_us);
    const std::string tool = string_field(context, "tool");
    if (!tool.empty() && (tools_.empty() || tools_.back() != tool)) tools_.push_back(tool);
    steps_.push_back({{"action", first_line(content, 200)},
                      {"rationale", first_line(string_field(context, "thought"), 300)},
                      {"expected_outcome", nullptr}});
    awaiting_outcome_ = true;
  } else if ((kind == "result" || kind == "error") && awaiting_outcome_) {
    steps_.back()["expected_outcome"] = first_line(content, 200);
    awaiting_outcome_ = false;
  }
}

std::string ProcedureBuilder::tool_sequence() const {
  std::string sequence;
  for (const auto& tool : tools_) sequence += (sequence.empty() ? "" : ">") + tool;
  return sequence;
}

json procedural_content(const Outcome& outcome, const ProcedureBuilder& procedure) {
  return {{"steps", procedure.steps()},
          {"target_task", procedure.task_line().empty() ? outcome.target : procedure.task_line()},
          {"success_evidence_ids", json::array({outcome.final_seq})}};
}

Outcomes::Outcomes(Run& run, Competences& competences, Decisions& decisions)
    : run_(run),
      competences_(competences),
      decisions_(decisions),
      steps_(run.db,
             "SELECT e.seq, e.kind, e.content, e.context, e.ts_us FROM event_targets t "
             "JOIN events e ON e.seq = t.seq WHERE t.namespace = ?1 AND "
             "t.trajectory_id = ?2 AND t.seq <= ?3 ORDER BY t.seq"),
      previous_(run.db,
                "SELECT success, tool_sequence, final_seq FROM trajectory_outcomes "
                "WHERE namespace = ?1 AND trajectory_id = ?2"),
      upsert_(run.db,
              "INSERT OR REPLACE INTO trajectory_outcomes (namespace, trajectory_id, "
              "target, success, tool_sequence, procedural, final_seq, final_ts_us) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)") {}

void Outcomes::record(const std::string& ns, const Outcome& outcome) {
  const ProcedureBuilder procedure = read_steps(ns, outcome);
  const std::string sequence = procedure.tool_sequence();
  json procedural;
  if (outcome.success) {
    procedural = procedural_content(outcome, procedure);
    ++run_.totals.procedures_distilled;
  }
  forget_previous(ns, outcome);
  upsert(ns, outcome, sequence, procedural);
  if (outcome.success) {
    decisions_.from_trajectory(ns, outcome,
                               {.text = procedure.task_text(),
                                .seq = procedure.task_seq(),
                                .ts_us = procedure.task_ts_us(),
                                .calls = procedure.calls(),
                                .call_events = procedure.call_events()});
  }
  if (outcome.success && !sequence.empty()) {
    competences_.record_success(ns, sequence, outcome.final_ts_us, outcome.final_seq,
                                outcome.target);
  }
}

ProcedureBuilder Outcomes::read_steps(const std::string& ns, const Outcome& outcome) {
  SQLite::Statement& steps = steps_;
  steps.reset();
  steps.bind(1, ns);
  steps.bind(2, outcome.trajectory_id);
  steps.bind(3, static_cast<std::int64_t>(outcome.final_seq));
  ProcedureBuilder procedure;
  while (steps.executeStep()) {
    const std::string kind = steps.getColumn(1).getString();
    const std::string content = steps.getColumn(2).getString();
    const json context = steps.getColumn(3).isNull()
                             ? json()
                             : json::parse(steps.getColumn(3).getString(), nullptr, false);
    procedure.add(steps.getColumn(0).getInt64(), kind, content, context,
                  steps.getColumn(4).getInt64());
  }
  steps.reset();
  return procedure;
}

// A trajectory whose outcome is recorded again (a later final result) leaves the successful
// runs of the sequence it had.
void Outcomes::forget_previous(const std::string& ns, const Outcome& outcome) {
  SQLite::Statement& previous = previous_;
  previous.reset();
  previous.bind(1, ns);
  previous.bind(2, outcome.trajectory_id);
  if (previous.executeStep() && previous.getColumn(0).getInt() == 1) {
    competences_.forget_run(ns, previous.getColumn(1).getString(),
                            previous.getColumn(2).getInt64());
  }
  previous.reset();
}

void Outcomes::upsert(const std::string& ns, const Outcome& outcome, const std::string& sequence,
                      const json& procedural) {
  SQLite::Statement& upsert = upsert_;
  upsert.reset();
  upsert.bind(1, ns);
  upsert.bind(2, outcome.trajectory_id);
  if (outcome.target.empty()) {
    upsert.bind(3);
  } else {
    upsert.bind(3, outcome.target);
  }
  upsert.bind(4, outcome.success ? 1 : 0);
  upsert.bind(5, sequence);
  if (procedural.is_null()) {
    upsert.bind(6);
  } else {
    upsert.bind(6, procedural.dump());
  }
  upsert.bind(7, static_cast<std::int64_t>(outcome.final_seq));
  upsert.bind(8, outcome.final_ts_us);
  upsert.exec();
  upsert.reset();
}

}  // namespace reflectd::jobs::consolidation
