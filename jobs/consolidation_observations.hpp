#pragma once
// The consolidation job's observations (seed 003 MemoryMetaObservation): recurring problems
// (jobs/consolidation_patterns.hpp) and competences (jobs/consolidation_competence.hpp) are
// created and reinforced here, with their audit entries.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <span>
#include <string>

#include "jobs/consolidation_run.hpp"

namespace reflectd::jobs::consolidation {

/// One observation as it stands after the support known so far.
struct ObservationUpdate {
  const std::string& id;
  const std::string& ns;
  const std::string& type;  ///< "pattern" or "competence".
  const std::string& signature;
  const std::string& target;  ///< Empty: none (NULL).
  const std::string& title;
  const std::string& text;
  std::span<const std::int64_t> ids;  ///< The supporting event ids listed (newest, ascending).
  std::int64_t support = 0;
  std::int64_t trajectories = 0;
  std::int64_t successes = 0;
  /// When the support known so far first met the threshold (event time).
  std::int64_t first_us = 0;
  std::int64_t last_us = 0;  ///< The newest supporting event's time.
};

class Observations {
 public:
  /// Prepares the statements on run.db; `run` must outlive this object.
  explicit Observations(Run& run);

  /// Creates or reinforces `o`, unless its stored support is already o.support. Confidence
  /// min(0.95, 0.5 + 0.05 * support) and importance min(1, log10(1 + support) / 2) are ours;
  /// times_reinforced is support minus the type's threshold (pattern_min_occurrences or
  /// competence_min_successes). A later chunk can bring earlier events (timestamps are not in
  /// seq order), which can only move first_us earlier, so the stored value is the minimum of
  /// those written: the same however the events were chunked. Appends a "create" or
  /// "reinforce" audit entry at the clock's time and counts it in run.totals.
  void upsert(const ObservationUpdate& o);

 private:
  Run& run_;
  SQLite::Statement support_;
  SQLite::Statement upsert_;
};

}  // namespace reflectd::jobs::consolidation
