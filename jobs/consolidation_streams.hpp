#pragma once
// The job's proposal streams (jobs/consolidation.hpp, point 3): each event weighs for its
// target; a target whose weight reaches stream_weight_threshold, or with one commit, gets the
// stream "proposal:<namespace>:<target>" ("Changes in <target>"), whose evidence is every
// weighted event of the target. A target's totals (consolidation_targets) and its stream are
// read at the target's first event in a chunk and written at the chunk's end.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <string>
#include <string_view>

#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_evaluation.hpp"
#include "jobs/consolidation_stream_evidence.hpp"
#include "jobs/consolidation_stream_state.hpp"

namespace reflectd::jobs::consolidation {

/// Adds one weighted event of `kind` (`success`: a successful result) to a target's `totals`,
/// in seq order (the same doubles as the SQL `weight = weight + ?` it replaced), and marks
/// them dirty. Pure.
void add_to_totals(TargetTotals& totals, std::string_view kind, bool success, double weight);

class ProposalStreams {
 public:
  /// Prepares the statements on run.db; the arguments must outlive this object.
  ProposalStreams(Run& run, StreamStates& states, StreamEvidence& evidence,
                  StreamEvaluator& evaluator);

  /// Forgets the previous chunk's targets and streams.
  void begin_chunk();

  /// The totals of `target` in `ns` as of the chunk's events so far (read at the first call
  /// for the target in the chunk).
  TargetTotals& totals_of(const std::string& ns, const std::string& target);

  /// One weighted event `e` of `target` with its updated `totals`: makes it evidence of the
  /// target's stream, creating the stream when the totals first qualify, and evaluates it.
  void add_evidence(const std::string& ns, const std::string& target, const TargetTotals& totals,
                    const Evidence& e);

  /// Marks the stream of `target` to be written at the chunk's end (it shows its target's
  /// latest procedure), reading it when the chunk had not.
  void mark_dirty(const std::string& ns, const std::string& target);

  /// Writes the chunk's changed totals.
  void store_totals(const std::string& ns);
  /// Writes the chunk's changed active streams and their running state.
  void write_streams(const std::string& ns);

 private:
  Stream& stream_of(const std::string& ns, const std::string& target);
  void create(const std::string& ns, const std::string& target, Stream& s, double weight,
              std::int64_t ts_us);

  Run& run_;
  StreamStates& states_;
  StreamEvidence& evidence_;
  StreamEvaluator& evaluator_;
  SQLite::Statement totals_load_;
  SQLite::Statement totals_store_;
  SQLite::Statement create_;
  std::map<std::string, TargetTotals> totals_;  // by target, this chunk only
  std::map<std::string, Stream> streams_;       // by target, this chunk only
};

}  // namespace reflectd::jobs::consolidation
