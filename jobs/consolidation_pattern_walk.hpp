#pragma once
// What the consolidation job knows of a recurring problem (jobs/consolidation.hpp, point 4;
// jobs/consolidation_patterns.hpp keeps it in the tables), and the pure computations on it:
// the qualifying walk over its occurrences, the newest ids it lists, its most frequent target
// and the words it is shown in. Nothing here touches the database.
//
// Thread-safety: plain values and pure functions, except newest_from_list(), which uses the
// caller's EventJsonReader (one per thread). Nothing throws but std::bad_alloc.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "jobs/consolidation_run.hpp"
#include "jobs/event_json.hpp"

namespace reflectd::jobs::consolidation {

/// The newest supporting event ids an observation lists.
inline constexpr std::size_t kMaxSupportIdsListed = 200;

/// One problem occurrence, its trajectory interned (Run::strings).
struct Occurrence {
  std::int64_t ts_us;
  std::int64_t seq;
  std::int32_t trajectory;
  bool operator<(const Occurrence& o) const {
    return ts_us != o.ts_us ? ts_us < o.ts_us : seq < o.seq;
  }
};

/// What this run knows of a signature's occurrences: the totals the observation reports,
/// never the whole history. The first touch in a run reads the totals kept in
/// problem_patterns (migration 15); every touch adds the occurrences above max_seq (its
/// chunk's) and writes the totals back.
struct PatternState {
  std::string id;  ///< The observation's.
  std::int64_t count = 0;
  std::int64_t max_seq = 0;  ///< Every occurrence up to it is counted.
  std::int64_t last_ts = 0;  ///< The largest ts_us.
  std::unordered_map<std::int32_t, std::int64_t> targets;  ///< Interned target -> occurrences.
  std::vector<std::int32_t> changed_targets;               ///< Since the totals were last written.
  std::vector<std::int64_t> newest;  ///< Ascending; its last kMaxSupportIdsListed are listed.
  /// As stored (problem_patterns.newest_floor_seq): the oldest of the newest
  /// min(count, kMaxSupportIdsListed) occurrences; 0 when not known.
  std::int64_t newest_floor = 0;
  std::int64_t trajectory_count = 0;  ///< Distinct trajectories.
  /// Every trajectory of the signature, when the run has seen its whole history (it had none
  /// before the run, as in a full cycle): then no probe asks SQLite whether one is new.
  bool trajectories_known = false;
  std::unordered_set<std::int32_t> trajectories;
  /// The qualifying time (0: not known to qualify). Adding occurrences can only move it
  /// earlier: each prefix of the (ts_us, seq) order keeps the occurrences it had and may gain
  /// some, so the prefix that qualified still does. Hence it changes only when an occurrence
  /// arrives before it, and the walk needs only the occurrences with ts_us <= it.
  std::int64_t qualified_at = 0;
  bool head_loaded = false;
  std::int64_t head_bound = 0;   ///< head holds every occurrence with ts_us <= head_bound.
  std::vector<Occurrence> head;  ///< Sorted by (ts_us, seq).
};

/// The event time at which the occurrences in s.head (loaded, sorted), in (ts_us, seq) order,
/// first number `min_occurrences` in `min_trajectories` distinct trajectories; 0 when they
/// never do. On success the head is cut to the occurrences at or before that time and
/// head_bound set to it: later occurrences cannot matter again, the time only moves earlier.
std::int64_t walk_loaded_head(PatternState& s, std::int64_t min_occurrences,
                              std::int64_t min_trajectories);

/// The newest ids an observation listed as `text`, when they are exactly the newest
/// min(count, kMaxSupportIdsListed) occurrences now counted: a JSON array of that many
/// integers in strictly ascending order, ending at `max_seq` and starting at `newest_floor`.
/// std::nullopt otherwise (a list an earlier version wrote in another order, or stale).
std::optional<std::vector<std::int64_t>> newest_from_list(EventJsonReader& reader,
                                                          const std::string& text,
                                                          std::int64_t count, std::int64_t max_seq,
                                                          std::int64_t newest_floor);

/// Keeps `newest` (ascending) from growing without bound: past 2 * kMaxSupportIdsListed ids
/// only the last kMaxSupportIdsListed are kept.
void trim_newest(std::vector<std::int64_t>& newest);

/// The most frequent of `targets` (interned in `strings`); among equals the first in byte
/// order; -1 when there is none.
std::int32_t most_frequent_target(const std::unordered_map<std::int32_t, std::int64_t>& targets,
                                  const Interner& strings);

/// The problem as readers see it: the "Problem:" line of its newest occurrence's content,
/// else that content, as its first line (≤ 200 bytes), else the signature's first 200 bytes;
/// never the signature's placeholders when the content has words.
std::string pattern_problem(const std::string& newest_content, const std::string& signature);

/// The observation's text: "Seen <count> times in <trajectories> trajectories[, mostly around
/// <target>]; latest: <problem>".
std::string pattern_text(std::int64_t count, std::int64_t trajectories, const std::string& target,
                         const std::string& problem);

/// The observation's id for `signature` in `ns`: "pattern:<ns>:" and the first 16 hex digits
/// of the signature's SHA-256.
std::string pattern_id(const std::string& ns, const std::string& signature);

}  // namespace reflectd::jobs::consolidation
