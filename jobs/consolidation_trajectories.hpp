#pragma once
// The trajectories of the consolidation job (jobs/consolidation.hpp, points 1 and 2): which
// trajectory each event belongs to, the target it inherits from it, and the event_targets row
// that records both with the event's weight.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements;
// nlohmann::json::exception from a corrupt stored open trajectory.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace reflectd::jobs::consolidation {

/// The trajectory without an episode_id that the next event may continue, kept in job_state
/// ("open_trajectory") between chunks.
struct OpenTrajectory {
  std::string id;  ///< "tr:<seq of its first event>"; empty: none yet.
  std::int64_t last_ts_us = 0;
  std::string target;  ///< The target it had so far (inherited by its events); may be empty.
};

/// A trajectory's final result (a result event with context.exit_status or submission).
struct Outcome {
  std::string trajectory_id;
  std::string target;  ///< The final event's target; may be empty.
  bool success = false;
  std::int64_t final_seq = 0;
  std::int64_t final_ts_us = 0;
};

/// The stored form of `open` (job_state), {"id", "last_ts_us", "target"}. Pure.
std::string open_trajectory_json(const OpenTrajectory& open);
/// The open trajectory stored as `text` (std::nullopt: none yet). Missing keys read as empty
/// or 0. Throws nlohmann::json::exception on text that is not JSON.
OpenTrajectory parse_open_trajectory(const std::optional<std::string>& text);

/// True when an event without an episode_id of `kind` at `ts_us` starts a new trajectory after
/// `open`: there is none yet, it is a prompt or a task, or more than `gap_us` passed since the
/// open one's last event. Pure.
bool starts_trajectory(const OpenTrajectory& open, std::string_view kind, std::int64_t ts_us,
                       std::int64_t gap_us);

/// Where an event belongs.
struct Placement {
  std::string trajectory;  ///< "ep:<episode_id>" or the open trajectory's id.
  std::string target;      ///< Its own target, else the trajectory's so far; may be empty.
};

class Trajectories {
 public:
  /// Prepares the statements on `db`; `gap_us` is consolidation.gap_minutes in µs.
  Trajectories(SQLite::Database& db, std::int64_t gap_us);

  /// Starts a chunk of `ns` continuing from `open` (as stored after the previous chunk):
  /// forgets the episodes' targets the previous chunk read.
  void begin_chunk(const std::string& ns, OpenTrajectory open);

  /// Places event `seq` of `kind` at `ts_us` with `episode` (empty: none) and its own target
  /// `own` (own_target(); empty: none), in seq order. An episode's target so far is read from
  /// event_targets at its first event in the chunk; `own`, when set, becomes the trajectory's
  /// target for its later events.
  Placement place(std::int64_t seq, std::string_view kind, std::int64_t ts_us,
                  const std::string& episode, const std::string& own);

  /// Writes event `seq`'s event_targets row (a plain INSERT: each event is placed once).
  void record(std::int64_t seq, const Placement& placement, double weight);

  /// The open trajectory after the events placed so far (to store with the watermark).
  const OpenTrajectory& open() const { return open_; }

 private:
  std::string stored_target(const std::string& trajectory);

  std::int64_t gap_us_;
  std::string ns_;
  OpenTrajectory open_;
  std::map<std::string, std::string> episode_targets_;  // "ep:<id>" -> target, this chunk
  SQLite::Statement insert_target_;
  SQLite::Statement trajectory_target_;
};

}  // namespace reflectd::jobs::consolidation
