#pragma once
// The agents' records on a target (jobs/consolidation.hpp, point 3): knowledge of provenance
// 'external' (decisions, constraints, assumptions, interventions, proposals) is evaluated like
// the job's streams over the weighted events of its target from its own event up to
// knowledge.ended_seq (the event that superseded or deprecated it): phase and metrics only,
// never an acceptance. A target's records are read at its first event in a chunk (rows cannot
// appear during a chunk: ingest waits for its transaction) and written at the chunk's end.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <string>
#include <vector>

#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_evaluation.hpp"
#include "jobs/consolidation_stream_evidence.hpp"
#include "jobs/consolidation_stream_state.hpp"

namespace reflectd::jobs::consolidation {

class AgentStreams {
 public:
  /// Prepares the statements on run.db; the arguments must outlive this object.
  AgentStreams(Run& run, StreamStates& states, StreamEvidence& evidence,
               StreamEvaluator& evaluator);

  /// Forgets the previous chunk's records.
  void begin_chunk();

  /// One weighted event `e` of `target`: evidence of every agent's record on the target whose
  /// window holds it, each evaluated (and counted as reinforced once per chunk).
  void add_evidence(const std::string& ns, const std::string& target, const Evidence& e);

  /// Writes the chunk's changed active records, in decision_id order.
  void write_records();

 private:
  std::vector<Stream*>& records_of(const std::string& ns, const std::string& target);

  Run& run_;
  StreamStates& states_;
  StreamEvidence& evidence_;
  StreamEvaluator& evaluator_;
  SQLite::Statement records_;
  // Agents' records by decision_id, and those of each target touched, this chunk only.
  std::map<std::string, Stream> streams_;
  std::map<std::string, std::vector<Stream*>> targets_;
};

}  // namespace reflectd::jobs::consolidation
