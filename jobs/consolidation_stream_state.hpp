#pragma once
// A proposal stream or an agent's record as a chunk of the consolidation job sees it
// (jobs/consolidation.hpp, point 3): its knowledge row and its running state (table
// consolidation_streams), read at its first event of the chunk and written at its end. The
// tables are the truth between chunks, so a failed or cancelled chunk loses nothing.
//
// Thread-safety: the values and pure functions are plain; StreamStates is one per job run.
// Errors: SQLite::Exception from the statements; nlohmann::json::exception from corrupt
// stored solutions.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/formulas.hpp"

namespace reflectd::jobs::consolidation {

/// A target's evidence totals (consolidation_targets), read once per chunk and written at its
/// end.
struct TargetTotals {
  double weight = 0;
  std::int64_t events = 0;
  std::int64_t commits = 0;
  std::int64_t errors = 0;
  std::int64_t successes = 0;
  bool dirty = false;
};

/// The newest "Solution:" candidates a job's stream lists.
inline constexpr std::size_t kSolutions = 5;

struct Stream {
  std::string id;         ///< "proposal:<namespace>:<target>", or an agent's decision_id.
  bool external = false;  ///< An agent's record: evaluated, never accepted by the job.
  /// An agent's record's evidence window [from_seq, end_seq): its own event up to the event
  /// that ended it (knowledge.ended_seq). A job's stream takes every event of its target.
  std::int64_t from_seq = 0;
  std::int64_t end_seq = std::numeric_limits<std::int64_t>::max();
  bool exists = false;  ///< The knowledge row exists.
  bool active = false;  ///< It has running state: its evidence is complete up to the event.
  model::EvidenceSums sums;
  std::int64_t last_seq = 0;  ///< Seq of the latest evidence in (ts_us, event_seq) order.
  /// The newest <= kSolutions (ts, seq) mentioning a solution, newest first; job streams only.
  std::vector<std::pair<std::int64_t, std::int64_t>> solutions;
  std::int64_t unique_contexts = 0;
  model::Phase phase = model::Phase::kPattern;
  std::string status = "draft";
  model::Scope scope = model::Scope::kLocal;
  model::StreamUse use;
  // As of the last evaluation (the audit entries' "previous").
  std::string vitality = "active";
  double confidence = 1.0;
  bool dirty = false;       ///< To be written at the chunk's end.
  bool reinforced = false;  ///< Got evidence in this chunk while active (counted once).
  std::set<std::string> chunk_contexts;  ///< Trajectories already counted or seen this chunk.
};

/// One weighted event of a target. The pointers stay valid while the event is added.
struct Evidence {
  std::int64_t seq;
  std::int64_t ts_us;
  double weight;
  const std::string* trajectory;
  const std::string* content;
};

/// The id of the job's stream on `target` of `ns`: "proposal:<ns>:<target>". Pure.
std::string stream_id(const std::string& ns, const std::string& target);

/// Adds (ts, seq) to `top`, keeping the kSolutions largest pairs in descending order. Pure.
void add_solution(std::vector<std::pair<std::int64_t, std::int64_t>>& top, std::int64_t ts,
                  std::int64_t seq);

/// A 128-bit sum of squared gaps as its two stored limbs: hi = floor(v / 2^64) and lo = v mod
/// 2^64 as its int64 bit pattern; join_limbs() is its inverse. Pure.
std::pair<std::int64_t, std::int64_t> split_limbs(model::GapSquares v);
model::GapSquares join_limbs(std::int64_t hi, std::int64_t lo);

/// Reads and writes a stream's knowledge row fields and running state.
class StreamStates {
 public:
  /// Prepares the statements on `db`.
  explicit StreamStates(SQLite::Database& db);

  /// Fills `s` from the knowledge row of s.id and its running state, when they exist
  /// (s.exists, s.active); leaves `s` as it is otherwise.
  void load(Stream& s);

  /// Writes the running state of `s` (consolidation_streams), with `solutions` (a JSON array
  /// of [ts, seq]): what the next chunk or run continues from.
  void store(const Stream& s, const nlohmann::json& solutions);

 private:
  SQLite::Statement load_;
  SQLite::Statement store_;
};

}  // namespace reflectd::jobs::consolidation
