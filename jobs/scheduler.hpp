#pragma once
// The one scheduler (osquery's scheduler, Bitcoin Core's scheduleEvery, Redis' serverCron):
// runs jobs one at a time on its own thread, off the bus thread, so ingestion never waits for
// a job and no job overlaps itself. The next interval run is scheduled when a run ends, at
// end + interval + a jitter that is a stable function of the job's name (the same across
// restarts). Other triggers: N new events in a namespace, the bus idle for T seconds with
// unprocessed events, and on-demand requests. Each run is a job_runs row written *before*
// the run starts, so a run the process died in is found and marked interrupted at the next
// start.
//
// Time comes from the injected Clock: tests call run_due() after advancing a FakeClock.
// Thread-safety: events_committed(), request(), reconfigure() and stop() are
// thread-safe; run_due() must not run concurrently with itself (start()
// runs it on the scheduler thread).

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "common/histogram.hpp"
#include "jobs/job.hpp"

namespace reflectd::jobs {

/// One job_runs row.
// nlohmann::json's destructor may allocate (it flattens nested values); a bad_alloc there
// ends the process, as it would anywhere else.
struct RunRecord {  // NOLINT(bugprone-exception-escape)
  std::int64_t run_id = 0;
  std::string job;
  std::string ns;
  std::string trigger;
  std::string status;  ///< running|ok|failed|timeout|interrupted|skipped.
  std::int64_t started_us = 0;
  std::int64_t finished_us = 0;
  nlohmann::json result;
  std::string error;
};

nlohmann::json to_json(const RunRecord& run);

/// The latest job_runs rows, newest first, read on `reader` (any connection not used by the
/// scheduler thread); `job` empty = every job.
std::vector<RunRecord> recent_runs(SQLite::Database& reader, int limit,
                                   const std::string& job = {});

/// The runs of one job (or one-off task) since the daemon started.
struct JobRunTally {
  std::string job;
  std::map<std::string, std::uint64_t> by_status;  ///< ok, skipped, failed, timeout, interrupted.
  HistogramSnapshot duration;                      ///< Every run, whatever its status.
};

class Scheduler {
 public:
  /// Publishes [topic, payload] on notify (thread-safe callable).
  using Publish = std::function<void(const std::string& topic, nlohmann::json payload)>;
  using RunDone = std::function<void(const RunRecord&)>;

  /// `db` is the jobs' connection, used only by the thread that calls run_due(). `gate`
  /// (may be null; not owned, must outlive the scheduler) is handed to every run's
  /// JobContext so that the jobs' write transactions give way to the writer.
  Scheduler(SQLite::Database& db, const Clock& clock, std::vector<Job> jobs, Publish publish,
            store::WriteGate* gate = nullptr);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Marks runs left `running` by a dead process as interrupted; returns how many.
  int recover_interrupted();
  /// Replaces the jobs' schedules and functions (SIGHUP); keeps counters and last run times.
  void reconfigure(std::vector<Job> jobs);
  /// The writer committed `count` new events in namespace `ns`; the idle trigger measures
  /// silence from the last such call.
  void events_committed(const std::string& ns, std::uint64_t count);
  /// Queues an on-demand run of `job` for namespace `ns` ("" = all). `done` (may be empty) is
  /// called when it ends, on the scheduler thread. Returns an error text for an unknown job.
  std::optional<std::string> request(const std::string& job, const std::string& ns, RunDone done);
  /// Queues a one-off run of `task`, a job that is not on the schedule (a forget, which must
  /// not overlap any job's run), behind the on-demand runs queued before it. It is recorded in
  /// job_runs under task.name with trigger "demand", times out after task.schedule.timeout_s,
  /// and `done` (may be empty) is called when it ends, on the scheduler thread.
  void request_task(Job task, const std::string& ns, RunDone done);

  /// Runs every run due now, one after another; returns how many ran.
  int run_due();
  /// Monotonic µs when the next run becomes due; nullopt when nothing is scheduled.
  std::optional<std::int64_t> next_due_us() const;

  /// Starts the scheduler thread; stop() interrupts a running job cooperatively and joins.
  void start();
  void stop();

  /// Names of the configured jobs.
  std::vector<std::string> job_names() const;
  /// Runs since start per job name (sorted by name); thread-safe.
  std::vector<JobRunTally> run_tallies() const;

  /// Stable jitter of `name`: a fraction in [0, 1) from SHA-256 of the name.
  static double jitter_fraction(const std::string& name);

 private:
  struct JobState {
    Job job;
    std::int64_t next_interval_us = 0;
    std::map<std::string, std::uint64_t> new_events;  // per namespace, since the last run
    std::uint64_t unprocessed = 0;
  };
  struct Due {
    std::size_t index;
    std::string ns;
    std::string trigger;
    RunDone done;
    std::shared_ptr<const Job> task;  ///< A one-off run (request_task); index unused.
  };

  std::optional<Due> take_due();
  void execute(const Due& due);
  std::int64_t interval_offset(const Job& job) const;

  SQLite::Database& db_;
  const Clock& clock_;
  Publish publish_;
  store::WriteGate* gate_;
  SQLite::Statement insert_run_;
  SQLite::Statement finish_run_;

  struct Tally {
    std::map<std::string, std::uint64_t> by_status;
    std::unique_ptr<Histogram> duration;
  };
  mutable std::mutex tally_mutex_;
  std::map<std::string, Tally> tallies_;  // guarded by tally_mutex_

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<JobState> jobs_;
  std::deque<Due> demands_;
  std::int64_t last_activity_us_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace reflectd::jobs
