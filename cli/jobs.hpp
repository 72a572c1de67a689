#pragma once
// `reflectctl jobs [--job J] [--limit N]`: the latest job runs ({"cmd":"jobs"}), newest
// first, as a table: run id, job, namespace ("*" = every namespace), trigger, status, start
// time (RFC 3339 UTC), duration in ms, a one-line result summary, and the error if any.
//
// Error policy: run_jobs() prints every problem to stderr and returns an exit status; the
// formatters never throw (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct JobsOptions {
  ControlOptions control;
  std::string job;  ///< Empty: every job.
  int limit = 20;
};

/// {"cmd":"jobs","job":…,"limit":…}.
nlohmann::json jobs_request(const JobsOptions& options);

/// The keys of a run's result object in display order: seed 003's headline counters
/// (events_processed, observations_created, observations_reinforced, facts_scored,
/// facts_marked_stale, events_archived) first, then the others alphabetically.
std::vector<std::string> result_keys(const nlohmann::json& result);

/// A run's result object on one line, at most `max_width` code points: "skipped: REASON" for
/// a skipped run, then its non-zero counters as key=value (events_processed,
/// observations_created and observations_reinforced first); "-" when there is nothing.
std::string result_summary(const nlohmann::json& result, std::size_t max_width);

/// The reply's "runs" as a table, then the configured job names.
std::string format_jobs_table(const nlohmann::json& reply);

/// Runs the command: kExitOk, kExitFailed, kExitUsage or kExitUnreachable.
int run_jobs(const JobsOptions& options);

}  // namespace reflectd::cli
