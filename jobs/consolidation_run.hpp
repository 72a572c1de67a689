#pragma once
// What the consolidation job's steps (jobs/consolidation_*.hpp) share during one run: the
// job's context and parameters, the audit log, the run's counters, its clock reading, the
// strings it interns and the event contents it quotes. The orchestrator (jobs/consolidation.cpp)
// owns one Run and hands it by reference to each step object it owns.
//
// Thread-safety: none; a Run and its steps are used by the job's thread alone. Errors:
// SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "jobs/consolidation.hpp"
#include "jobs/job.hpp"
#include "store/audit_log.hpp"

namespace reflectd::jobs::consolidation {

/// The actor of every audit entry and extracted decision the job writes.
inline constexpr const char* kActor = "job:consolidate";

/// The run's counters, reported by run_consolidation().
struct Totals {
  std::int64_t events_processed = 0;
  std::int64_t observations_created = 0;
  std::int64_t observations_reinforced = 0;
  std::int64_t streams_created = 0;
  std::int64_t streams_reinforced = 0;
  std::int64_t streams_promoted = 0;
  std::int64_t proposals_accepted = 0;
  std::int64_t procedures_distilled = 0;
  std::int64_t competences = 0;
  std::int64_t decisions_extracted = 0;
  std::int64_t decisions_falsified = 0;
  std::int64_t agent_records_reinforced = 0;
  std::int64_t agent_records_promoted = 0;
};

/// The job's result object (jobs/consolidation.hpp run_consolidation()) for `totals`: every
/// counter, "skipped" when no event was processed, with "skip_reason" "no new events" (null
/// otherwise). Pure.
nlohmann::json result_json(const Totals& totals);

/// Strings (targets, trajectories) as small integers, so that the per-run caches of
/// competences and recurring problems hold 4 bytes per occurrence instead of a string. Ids
/// are dense, from 0, in order of first intern().
class Interner {
 public:
  /// The id of `text`, giving it the next id on its first call.
  std::int32_t intern(const std::string& text);
  /// The text of an id intern() returned (undefined for any other).
  const std::string& text(std::int32_t id) const { return strings_[static_cast<std::size_t>(id)]; }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
  std::vector<std::string> strings_;
};

/// The state every step of one run reads or adds to.
struct Run {
  Run(JobContext& job, const ConsolidationParams& parameters);

  /// The content of event `seq`; empty when there is no such event.
  std::string event_content(std::int64_t seq);

  JobContext& ctx;
  const ConsolidationParams& params;
  SQLite::Database& db;
  store::AuditLog audit;
  Totals totals;
  std::int64_t now = 0;  ///< The run's "now": every evaluation of the run uses it.
  Interner strings;

 private:
  SQLite::Statement event_content_;
};

}  // namespace reflectd::jobs::consolidation
