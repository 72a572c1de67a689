#pragma once
// Competences (jobs/consolidation.hpp, point 5; seed 002): the same tool sequence succeeding
// in competence_min_successes trajectories is a `competence` observation with its success
// count. A sequence's successful runs are read from trajectory_outcomes at its first touch in
// a run, then kept as outcomes are recorded (jobs/consolidation_outcomes.hpp), so an outcome
// does not re-read every success of the sequence (quadratic in its successes otherwise).
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "jobs/consolidation_observations.hpp"
#include "jobs/consolidation_run.hpp"

namespace reflectd::jobs::consolidation {

/// A successful run of a tool sequence, in the competence's (event time, seq) order.
struct SuccessfulRun {
  std::int64_t ts_us;
  std::int64_t final_seq;
  std::int32_t target;  ///< Interned (Run::strings); -1: none.
  bool operator<(const SuccessfulRun& o) const {
    return ts_us != o.ts_us ? ts_us < o.ts_us : final_seq < o.final_seq;
  }
};

/// What a competence observation says of its runs.
struct CompetenceSummary {
  std::vector<std::int64_t> ids;  ///< Every run's final_seq, in (time, seq) order.
  std::int32_t target = -1;       ///< The last run's target that names one; -1: none.
  std::int64_t first_us = 0;      ///< The time of the run that met the threshold.
  std::int64_t last_us = 0;       ///< The newest run's time.
};

/// The summary of `runs` (sorted by (time, seq)), or std::nullopt when there are fewer than
/// `min_successes` (>= 1) of them. Pure.
std::optional<CompetenceSummary> summarize_competence(std::span<const SuccessfulRun> runs,
                                                      std::int64_t min_successes);

/// The competence observation's id for `sequence` in `ns`: "competence:<ns>:" and the first 16
/// hex digits of the sequence's SHA-256. Pure.
std::string competence_id(const std::string& ns, const std::string& sequence);

class Competences {
 public:
  /// Prepares the statements on run.db; `run` and `observations` must outlive this object.
  Competences(Run& run, Observations& observations);

  /// A trajectory whose earlier successful outcome (its run ending at `final_seq`) with the
  /// tool sequence `sequence` is recorded again: the sequence, when known to the run, loses
  /// that run.
  void forget_run(const std::string& ns, const std::string& sequence, std::int64_t final_seq);

  /// A successful outcome with a non-empty tool `sequence`, its row already written: adds the
  /// run to the sequence when known to the run (a sequence not known yet is read whole, with
  /// this row), then writes the competence observation when the sequence has enough runs.
  void record_success(const std::string& ns, const std::string& sequence, std::int64_t ts_us,
                      std::int64_t final_seq, const std::string& target);

 private:
  void update(const std::string& ns, const std::string& sequence);

  Run& run_;
  Observations& observations_;
  SQLite::Statement runs_;
  // ns + '\n' + tool sequence -> its successful runs in (ts, seq) order, this run
  std::unordered_map<std::string, std::vector<SuccessfulRun>> competences_;
};

}  // namespace reflectd::jobs::consolidation
