#include "jobs/consolidation_decisions.hpp"

#include <optional>

#include "jobs/consolidation_text.hpp"
#include "jobs/conversation_decisions.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs::consolidation {

Decisions::Decisions(Run& run) : run_(run), decisions_(run.db), summary_marks_(run.db) {}

bool Decisions::from_message(const DecisionEvent& e) {
  if (e.kind == "commit_change") {
    if (const auto revert = read_revert(e.content)) return from_revert(e, *revert);
  }
  std::optional<ExtractedDecision> d;
  std::string source = "problem_solution";
  std::string signature;
  if (!e.fields.merge && (e.content.find("Solution:") != std::string::npos ||
                          e.content.find("Fix:") != std::string::npos)) {
    d = decision_from_message(e.kind, e.content, e.fields.files);
    if (d && is_routine_change(d->statement + " " + d->rationale)) d.reset();
    const std::string problem_line = labelled_line(e.content, "Problem:");
    signature =
        problem_signature(problem_line.empty() ? labelled_line(e.content, "Issue:") : problem_line);
  }
  if (!d && e.kind == "commit_change") {
    d = decision_from_commit(e.content, e.fields.merge, e.fields.files);
    source = "commit";
    signature.clear();
  }
  if (!d && (e.kind == "prompt" || e.kind == "conversation" || e.kind == "response")) {
    d = decision_from_turn(e.content, e.agent_id, e.ts_us);
    source = "conversation";
    signature.clear();
  }
  if (!d) return false;
  store::DecisionRecord record{
      .decision_id = "decision:" + e.event_id,
      .ns = e.ns,
      .target = e.target,
      .statement = std::move(d->statement),
      .rationale = std::move(d->rationale),
      .source = source,
      .problem_signature = signature,
      .subject = e.kind == "commit_change" ? first_line(e.content, 300) : "",
      .confidence = d->confidence,
      .source_seq = e.seq,
      .ts_us = e.ts_us,
      .evidence = {{e.seq, e.ts_us}}};
  if (decisions_.record(record, run_.now, kActor)) ++run_.totals.decisions_extracted;
  return true;
}

// The decisions `revert` undoes: by the reverted subject, else by the commit id it names, else
// the reverted change itself, recorded and falsified at once.
bool Decisions::from_revert(const DecisionEvent& e, const Revert& revert) {
  const std::string decision_id = "decision:" + e.event_id;
  int falsified = 0;
  if (!revert.subject.empty()) {
    falsified = decisions_.falsify_reverted(e.ns, revert.subject, e.seq, run_.now, kActor);
  }
  if (falsified == 0 && !revert.commit.empty()) {
    falsified = decisions_.falsify_commit(e.ns, revert.commit, e.seq, run_.now, kActor);
  }
  const std::string words =
      read_commit_subject(revert.subject.empty() ? revert.description : revert.subject, false).text;
  if (falsified == 0 && !words.empty()) {
    const store::DecisionRecord reverted{.decision_id = decision_id,
                                         .ns = e.ns,
                                         .target = e.target,
                                         .statement = words,
                                         .rationale = "Reverted: " + first_line(e.content, 280),
                                         .source = "revert",
                                         .problem_signature = "",
                                         .subject = "",
                                         .confidence = 0.5,
                                         .source_seq = e.seq,
                                         .ts_us = e.ts_us,
                                         .evidence = {{e.seq, e.ts_us}}};
    decisions_.record(reverted, run_.now, kActor);
    decisions_.falsify(decision_id, e.seq, run_.now, kActor);
    falsified = 1;
  }
  run_.totals.decisions_falsified += falsified;
  return falsified > 0;
}

void Decisions::from_trajectory(const std::string& ns, const Outcome& outcome,
                                const TrajectoryTask& task) {
  auto d = decision_from_trajectory(task.text, task.calls);
  if (!d) return;
  // The task's own words, not problem_signature(): it folds quoted names, and tasks differ
  // by them ('problem named "Katy"').
  std::string signature = "task: " + d->rationale;
  store::DecisionRecord record{.decision_id = "decision:" + ns + ":" + outcome.trajectory_id,
                               .ns = ns,
                               .target = outcome.target,
                               .statement = std::move(d->statement),
                               .rationale = std::move(d->rationale),
                               .source = "trajectory",
                               .problem_signature = std::move(signature),
                               .subject = "",
                               .confidence = d->confidence,
                               .source_seq = outcome.final_seq,
                               .ts_us = outcome.final_ts_us,
                               .evidence = {}};
  if (task.seq > 0) record.evidence.emplace_back(task.seq, task.ts_us);
  record.evidence.push_back(task.call_events[d->call_index]);
  record.evidence.emplace_back(outcome.final_seq, outcome.final_ts_us);
  if (decisions_.record(record, run_.now, kActor)) ++run_.totals.decisions_extracted;
  mark_changed_targets(ns);
}

void Decisions::mark_changed_targets(const std::string& ns) {
  for (const std::string& target : decisions_.take_changed_targets()) {
    summary_marks_.mark(ns, "module:" + target);
  }
}

}  // namespace reflectd::jobs::consolidation
