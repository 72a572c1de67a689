#pragma once
// The retention job: deletes, on schedule, the events older than their rule's
// maximum age, as a hard forget does (memory_ops/forget.hpp: the content leaves every table
// and file; the namespace's derived state is cleared and the jobs' next runs rebuild it), with
// one audit row per event (actor job:retention). Policies hold: `never` and pinned events are
// kept.
//
// A rule (config `retention.rules`, one string each): "max_age_days=<N>[;namespace=<ns>]
// [;kind=<kind>]": events of that namespace and kind (any when absent) whose timestamp (ts, when
// it happened) is more than N days before now. At most memory_ops::kMaxSelectedEvents per run.
//
// Result: rules, events_deleted, facts_deleted, derived_rows_cleared, namespaces,
// wal_truncated. Errors: SQLite::Exception, JobCancelled. Thread-safety: the scheduler's thread.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/job.hpp"

namespace reflectd::memory_ops {

struct RetentionRule {
  std::string ns;    ///< Empty: every namespace.
  std::string kind;  ///< Empty: every kind.
  double max_age_days = 0;
};

/// Parses one rule; throws std::invalid_argument naming the part that is wrong.
RetentionRule parse_retention_rule(const std::string& text);

/// Runs the job once.
nlohmann::json run_retention(jobs::JobContext& ctx, const std::vector<RetentionRule>& rules);

}  // namespace reflectd::memory_ops
