#pragma once
// `reflectctl run JOB [--namespace NS] [--wait]`: asks the daemon to run a job now
// ({"cmd":"run"}). Without --wait the daemon answers as soon as the run is queued; with it,
// when the run has ended, with the run's record (jobs::to_json: run_id, job, namespace,
// trigger, status, started_us, finished_us, result, error).
//
// Error policy: run_job() prints every problem to stderr and returns an exit status;
// the formatters never throw (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

/// Reply timeout of `run --wait` unless --timeout-ms is given: longer than a job may run
/// with the default jobs.<name>.timeout_s (600 s), so the daemon's verdict arrives first.
inline constexpr std::chrono::milliseconds kRunWaitTimeout{660000};

struct RunJobOptions {
  ControlOptions control;
  std::string job;
  std::string ns;  ///< Empty: every namespace.
  bool wait = false;
};

/// {"cmd":"run","job":…,"namespace":…,"wait":…}.
nlohmann::json run_request(const RunJobOptions& options);

/// The reply to a run without --wait: "queued JOB (namespace NS)".
std::string format_queued(const nlohmann::json& reply);

/// A run record ("run" of a --wait reply) as "label  value" lines: run id, job, namespace,
/// trigger, status, start, duration, error, then the result object's fields one per line.
std::string format_run(const nlohmann::json& run);

/// Runs the command. kExitOk when the run was queued (without --wait) or ended with status ok
/// or skipped; kExitFailed when the daemon refused it or the run failed, timed out or was
/// interrupted; kExitUsage or kExitUnreachable as for every control command.
int run_job(const RunJobOptions& options);

}  // namespace reflectd::cli
