#pragma once
// Recurring problems (jobs/consolidation.hpp, point 4): error texts and "Problem:" lines fold
// into signatures (model::problem_signature()); one seen pattern_min_occurrences times in
// pattern_min_trajectories trajectories is a `pattern` observation, reinforced by each later
// occurrence. A chunk costs what it adds: the history before it is read as kept totals
// (problem_patterns, problem_pattern_targets), the chunk's occurrences one by one
// (jobs/consolidation_pattern_walk.hpp holds the state and the pure parts).
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "jobs/consolidation_observations.hpp"
#include "jobs/consolidation_pattern_walk.hpp"
#include "jobs/consolidation_run.hpp"
#include "jobs/event_json.hpp"

namespace reflectd::jobs::consolidation {

class Patterns {
 public:
  /// Prepares the statements on run.db; `run` and `observations` must outlive this object.
  Patterns(Run& run, Observations& observations);

  /// Forgets the signatures the previous chunk touched.
  void begin_chunk() { touched_.clear(); }

  /// Event `seq` of `trajectory` with `target` (empty: none) at `ts_us` states `problem`
  /// (EventEvidence::problem; empty: none): stores the occurrence of its signature, when it
  /// has one, in problem_occurrences; `change` is true for a commit (kind commit_change).
  void record(const std::string& ns, const std::string& problem, std::int64_t seq,
              const std::string& trajectory, const std::string& target, std::int64_t ts_us,
              bool change);

  /// Updates the totals and the observation of every signature the chunk touched, in
  /// signature order.
  void finish_chunk(const std::string& ns);

 private:
  void update(const std::string& ns, const std::string& signature, std::int64_t earliest_ts);
  void load(const std::string& ns, const std::string& signature, PatternState& s);
  void read_newest(const std::string& ns, const std::string& signature, PatternState& s);
  void extend(const std::string& ns, const std::string& signature, PatternState& s);
  void save(const std::string& ns, const std::string& signature, PatternState& s);
  std::int64_t qualifying_time(const std::string& ns, const std::string& signature,
                               PatternState& s);
  std::int64_t walk_head(const std::string& ns, const std::string& signature, PatternState& s);

  Run& run_;
  Observations& observations_;
  SQLite::Statement insert_;
  SQLite::Statement rows_;
  SQLite::Statement totals_;
  SQLite::Statement targets_;
  SQLite::Statement newest_;
  SQLite::Statement trajectory_seen_;
  SQLite::Statement save_;
  SQLite::Statement save_target_;
  SQLite::Statement head_;
  SQLite::Statement observation_first_;
  std::map<std::string, std::int64_t> touched_;  // signature -> earliest ts_us in the chunk
  std::unordered_map<std::string, PatternState> patterns_;  // ns + '\n' + signature, this run
  EventJsonReader id_lists_;
};

}  // namespace reflectd::jobs::consolidation
