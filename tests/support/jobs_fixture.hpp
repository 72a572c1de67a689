#pragma once
// What the job tests on the real streams share: fixed times and the consolidation job's run
// and tables (tests/jobs/consolidation_test.cpp, decay_and_summaries_test.cpp).

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/consolidation.hpp"
#include "store/database.hpp"
#include "support/db_dump.hpp"

namespace reflectd::test {

inline constexpr std::int64_t kSecond = 1'000'000;
inline constexpr std::int64_t kDay = 86'400 * kSecond;
// 2026-11-21T00:00:00Z: after the last event of both streams.
inline constexpr std::int64_t kNow = 1'795'219'200 * kSecond;

inline std::string derived_tables(SQLite::Database& db) { return consolidation_tables(db); }

// Each recurring problem's totals as the consolidation job keeps them (migrations 15 and 22),
// and as counted from its stored occurrences: the two must always agree. The floor counted
// is the oldest occurrence with at most 200 at or after it.
inline std::string kept_pattern_totals(SQLite::Database& db) {
  return dump(db,
              "SELECT namespace, signature, occurrences, max_seq, last_ts_us, trajectories, "
              "newest_floor_seq FROM problem_patterns ORDER BY namespace, signature") +
         dump(db,
              "SELECT namespace, signature, target, occurrences FROM problem_pattern_targets "
              "ORDER BY namespace, signature, target");
}

inline std::string counted_pattern_totals(SQLite::Database& db) {
  return dump(db,
              "SELECT namespace, signature, count(*), max(seq), max(ts_us), count(DISTINCT "
              "trajectory_id), (SELECT min(seq) FROM problem_occurrences n WHERE n.namespace = "
              "o.namespace AND n.signature = o.signature AND (SELECT count(*) FROM "
              "problem_occurrences m WHERE m.namespace = n.namespace AND m.signature = "
              "n.signature AND m.seq >= n.seq) <= 200) FROM problem_occurrences o GROUP BY "
              "namespace, signature ORDER BY namespace, signature") +
         dump(db,
              "SELECT namespace, signature, target, count(*) FROM problem_occurrences WHERE "
              "target IS NOT NULL GROUP BY namespace, signature, target ORDER BY namespace, "
              "signature, target");
}

inline nlohmann::json consolidate(SQLite::Database& db, const Clock& clock,
                                  const jobs::ConsolidationParams& params,
                                  const std::string& ns = "", store::WriteGate* gate = nullptr) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, ns, "demand", 0, {}, gate};
  return jobs::run_consolidation(ctx, params);
}

inline jobs::ConsolidationParams default_params() {
  return daemon::consolidation_params(config::defaults());
}

}  // namespace reflectd::test
