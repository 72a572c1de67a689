#pragma once
// The consolidation job (LedgerMind's reflection cycle, Arandu's L2/L3 consolidation), exact
// and without an LLM. Per namespace, over the events after its watermark, in chunks that each
// commit their results with the watermark (one transaction):
//
// 1. Trajectories: an event with an episode_id belongs to "ep:<episode_id>"; otherwise a
//    trajectory starts at each prompt or task event, or after a silence longer than
//    consolidation.gap_minutes, and is named "tr:<seq of its first event>".
// 2. Targets: context.target; else a conventional-commit scope ("fix(socket): ..."); else the
//    most common top-level directory of context.files and file: entities; else the target
//    the trajectory had so far (inheritance). Targets shorter than 3 characters are ignored
//    (seed 000 TargetStr).
// 3. Evidence: each event weighs for its target by kind (consolidation.weight.*, ANCHORS §1);
//    a Problem:/Solution: message adds weight.problem_solution. A target whose weight reaches
//    stream_weight_threshold, or with one commit, gets the proposal stream
//    "proposal:<namespace>:<target>" ("Changes in <target>"), whose evidence is every
//    weighted event of the target. Its metrics, confidence, removal cost, utility, phase and
//    acceptance come from model/formulas.hpp, from exact running sums of its evidence times
//    (table consolidation_streams; O(log n) per evidence event). Promotion and acceptance are
//    decided after every evidence event, in seq order, at the run's clock, and never revoked
//    (docs/JOBS.md "Evaluation rule"); a chunk ends early when ingest waits at the write gate.
//    An agent's record on the target (knowledge of provenance 'external') is evaluated the
//    same way over the weighted events from its own event up to knowledge.ended_seq (the
//    event that superseded or deprecated it): phase and metrics only, never an acceptance.
// 4. Recurring problems: error texts and "Problem:" lines fold into signatures
//    (problem_signature()); one seen pattern_min_occurrences times in pattern_min_trajectories
//    trajectories is a `pattern` observation, reinforced by each later occurrence.
// 5. Procedures: a trajectory whose final result (one with context.exit_status or
//    context.submission) succeeded yields seed 000 ProceduralContent (its calls as steps, the
//    thought as rationale, the next observation as expected outcome), attached to its
//    target's stream; the same tool sequence succeeding competence_min_successes times is a
//    `competence` observation (seed 002) with its success count.
// 6. Decisions: a "Problem:"/"Solution:" message (not a merge) and a successful trajectory
//    become knowledge rows of kind decision (jobs/decision_extraction.hpp for the rules,
//    store/extracted_decisions.hpp for supersession by the same problem and falsification by
//    a revert); the module entities whose decisions change are marked for a new summary.
// 7. Questions: a prompt, task or conversation turn ending in "?" stays in
//    unanswered_questions (the newest per trajectory) until a later event of its trajectory
//    comes from another agent or is a result or a decision.
//
// Every derived row is a function of the events and the clock, independent of how the events
// were split into runs or chunks, so a rerun after a crash yields the same tables.

#include <nlohmann/json.hpp>

#include <cstdint>

#include "jobs/job.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs {

// The jobs compute in the memory model's terms (model/formulas.hpp: phases, vitality, salience).
using namespace model;  // NOLINT(google-build-using-namespace)

struct ConsolidationParams {
  std::int64_t gap_us = 30LL * 60 * 1'000'000;
  double weight_decision = 1.0;
  double weight_commit_change = 2.0;
  double weight_error = 0.5;
  double weight_result_success = 1.0;
  double weight_result_other = 0.2;
  double weight_call = 0.3;
  double weight_task = 0.3;
  double weight_prompt = 0.2;
  double weight_problem_solution = 1.0;
  double stream_weight_threshold = 1.0;
  MetricParams metrics;
  double accept_threshold = 0.7;
  std::int64_t pattern_min_occurrences = 3;
  std::int64_t pattern_min_trajectories = 2;
  std::int64_t competence_min_successes = 2;
  VitalityParams vitality;
  /// Events per transaction. Each touched recurring problem's observation is rewritten once
  /// per chunk, and each commit writes the pages the chunk dirtied in large indexes: at 1M
  /// events 5,000-event chunks spent ~40% of the job there. A
  /// chunk still ends at the next event when ingest waits at the write gate.
  std::int64_t chunk_events = 20000;
};

/// Runs one consolidation pass. Returns seed 003 ConsolidationResult (events_processed,
/// observations_created, observations_reinforced, skipped, skip_reason) plus streams_created,
/// streams_reinforced, streams_promoted, proposals_accepted, procedures_distilled,
/// competences, decisions_extracted, decisions_falsified, agent_records_reinforced and
/// agent_records_promoted. Throws JobCancelled (via ctx.cancel) or SQLite::Exception.
nlohmann::json run_consolidation(JobContext& ctx, const ConsolidationParams& params);

}  // namespace reflectd::jobs
