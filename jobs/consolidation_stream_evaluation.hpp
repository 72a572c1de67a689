#pragma once
// Evaluating and writing the consolidation job's streams (jobs/consolidation.hpp, point 3):
// promotion and acceptance after each evidence event, and the knowledge rows written at a
// chunk's end from the running sums (model/formulas.hpp for every metric).
//
// Promotion and acceptance are decided after every evidence event, at the run's `now`, so the
// tables are as if the job had evaluated after every event, whatever the chunks and runs.
// Phases are never demoted and an acceptance is never revoked, so a stream is
// promoted/accepted when the rule holds at any prefix of its evidence (in seq order). An
// agent's record is promoted by the same rule but never accepted by the job: its status is
// the agent's (seed 000 AcceptProposalRequest is theirs to send).
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_state.hpp"

namespace reflectd::jobs::consolidation {

/// The newest evidence ids a job's stream lists (knowledge.evidence_event_ids).
inline constexpr std::size_t kMaxEvidenceIdsListed = 100;

class StreamEvaluator {
 public:
  /// Prepares the statements on run.db; `run` and `states` must outlive this object.
  StreamEvaluator(Run& run, StreamStates& states);

  /// Promotion and acceptance of `s` after one evidence event, at run.now: moves s.phase to
  /// next_phase() and, for a job's draft stream past the pattern phase whose acceptance score
  /// reaches accept_threshold, s.status to "accepted", each with its audit entry and counter;
  /// then records the vitality (and, for a job's stream, the confidence) evaluated. Nothing
  /// when `s` has no evidence, or is canonical and no longer a draft. O(1).
  void evaluate(Stream& s);

  /// Writes the job's stream `s` on `target` of `ns` with the target's `totals` at the end of
  /// a chunk: the metrics of its whole evidence from the running sums, the phase and status
  /// evaluate() decided, and what the row lists (newest evidence ids, latest line,
  /// "Solution:" lines, the target's latest procedure), each from an index query that reads
  /// only what it returns; then its running state.
  void write_proposal(const std::string& ns, const std::string& target, const Stream& s,
                      const TargetTotals& totals);

  /// Writes an agent's record `s` at the end of a chunk: the lifecycle columns only. Its
  /// title, rationale, consequences, evidence_event_ids, status and confidence are the agent's
  /// (the decay job decays confidence from confidence_base since last_seen_us).
  void write_agent_record(const Stream& s);

 private:
  Run& run_;
  StreamStates& states_;
  SQLite::Statement evidence_newest_;
  SQLite::Statement procedure_;
  SQLite::Statement proposal_update_;
  SQLite::Statement agent_update_;
};

}  // namespace reflectd::jobs::consolidation
