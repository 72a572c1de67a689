#pragma once
// The evidence of the consolidation job's streams (jobs/consolidation.hpp, point 3), shared by
// the job's proposal streams (jobs/consolidation_streams.hpp) and the agents' records
// (jobs/consolidation_agent_streams.hpp): a stream's knowledge_evidence rows and the running
// sums kept from them, O(log n) per evidence event.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>

#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_state.hpp"

namespace reflectd::jobs::consolidation {

class StreamEvidence {
 public:
  /// Prepares the statements on run.db; `run` must outlive this object.
  explicit StreamEvidence(Run& run);

  /// Makes `s` active at event `seq` of `target` in `ns`: makes every weighted event of the
  /// target in its window up to `seq` its evidence and computes the running state from all
  /// its evidence (an agent's record has its own event too). Once per stream (or once after
  /// an upgrade from a version without running state), so its O(E) read is not per chunk or
  /// run.
  void start(const std::string& ns, const std::string& target, Stream& s, std::int64_t seq);

  /// Adds `e` to the running state of the active stream `s` of `target`: its sums (at most
  /// two index probes, none when `e` is the latest), its "Solution:" candidates (a job's
  /// stream), and its contexts (one probe per trajectory and chunk). Counts a job's stream as
  /// reinforced once per chunk. False, with nothing changed, when `e` was its evidence
  /// already.
  bool append(const std::string& ns, const std::string& target, Stream& s, const Evidence& e);

 private:
  std::optional<std::int64_t> neighbour(SQLite::Statement& q, const std::string& id,
                                        std::int64_t ts, std::int64_t seq);
  void count_context(const std::string& ns, const std::string& target, Stream& s,
                     const Evidence& e);

  Run& run_;
  SQLite::Statement backfill_;
  SQLite::Statement all_;
  SQLite::Statement insert_;
  SQLite::Statement before_;
  SQLite::Statement after_;
  SQLite::Statement solutions_latest_;
  SQLite::Statement contexts_;
  SQLite::Statement context_seen_;
};

}  // namespace reflectd::jobs::consolidation
