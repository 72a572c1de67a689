#pragma once
// A job is data: a name, its schedule and a run function. One Scheduler runs them all
// (jobs/scheduler.hpp). A run function reads what it needs, writes its results together with
// its progress marker (watermark) in one transaction, and returns a seed 003 result object.
//
// Error policy: a run function may throw; the scheduler records the run as failed with the
// exception's text. It must call `cancel.check()` between steps: that throws JobCancelled once
// the run timed out or the daemon is stopping, and the open transaction rolls back.

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/clock.hpp"
#include "store/write_gate.hpp"

namespace reflectd::jobs {

/// Thrown by CancelToken::check(); never escapes the scheduler.
class JobCancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Cooperative cancellation of one run. Thread-safe.
class CancelToken {
 public:
  CancelToken(const Clock& clock, std::int64_t deadline_us, const std::atomic<bool>& stopping)
      : clock_(clock), deadline_us_(deadline_us), stopping_(stopping) {}
  /// True once the clock's monotonic time passed the run's deadline.
  bool timed_out() const { return clock_.monotonic_us() >= deadline_us_; }
  bool stopping() const { return stopping_.load(); }
  /// Throws JobCancelled when the run must end.
  void check() const {
    if (stopping()) throw JobCancelled("interrupted: the daemon is stopping");
    if (timed_out()) throw JobCancelled("timed out");
  }

 private:
  const Clock& clock_;
  std::int64_t deadline_us_;
  const std::atomic<bool>& stopping_;
};

/// Page cache of the jobs' connection, KiB (PRAGMA cache_size = -N). SQLite's default of
/// 2 MiB made the cluster job re-read the pages of its indexes (postings, terms, entities)
/// from the OS for most events: ~10% of its time in pread. 64 MiB holds them at 1M events
/// and stays well inside the daemon's 300 MB budget (docs/PERFORMANCE.md).
constexpr int kJobsCacheKiB = 64 * 1024;

/// Applies the jobs' connection settings (kJobsCacheKiB) to `db`. Errors: SQLite::Exception.
inline void configure_jobs_connection(SQLite::Database& db) {
  db.exec("PRAGMA cache_size = -" + std::to_string(kJobsCacheKiB));
}

/// Page cache of a job's read-only second connection (open_read_only_twin()), KiB: what a
/// worker's share of one job's reads touches, not the jobs' 64 MiB.
constexpr int kTwinCacheKiB = 16 * 1024;
/// Busy timeout of that connection, ms (a reader waits only on a WAL recovery).
constexpr int kTwinBusyTimeoutMs = 5000;

/// A second, read-only connection to the file of `db` (its main database), for a job's worker
/// thread to read beside the job's own; nullopt when `db` has no file (in memory, temporary)
/// or the file cannot be opened, and the job then reads on `db` alone, with the same results.
/// The caller gives it to one thread at a time. What it reads is the latest committed state:
/// the same as `db` sees only while no other connection can commit (`db` holds the write
/// lock) or for tables no other connection writes.
inline std::optional<SQLite::Database> open_read_only_twin(SQLite::Database& db) {
  const char* file = sqlite3_db_filename(db.getHandle(), "main");
  if (file == nullptr || *file == '\0') return std::nullopt;
  try {
    std::optional<SQLite::Database> twin;
    twin.emplace(file, SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX, kTwinBusyTimeoutMs);
    twin->exec("PRAGMA cache_size = -" + std::to_string(kTwinCacheKiB));
    return twin;
  } catch (const SQLite::Exception&) {
    return std::nullopt;
  }
}

/// What a run function gets.
struct JobContext {
  SQLite::Database& db;  ///< The jobs' own connection (write-capable, WAL).
  const Clock& clock;    ///< All "now" comes from here.
  const CancelToken& cancel;
  std::string ns;           ///< Namespace asked for; empty = every namespace.
  std::string trigger;      ///< interval|events|idle|demand.
  std::int64_t run_id = 0;  ///< job_runs.run_id.
  /// Publishes [topic, payload] on the notify socket (may be empty in tests).
  std::function<void(const std::string& topic, nlohmann::json payload)> publish;
  /// Shared with the writer (store/write_gate.hpp); nullptr = no arbitration (tests, tools).
  store::WriteGate* gate = nullptr;
};

/// A job's write transaction: takes the job's turn at ctx.gate (waiting while ingest keeps
/// the writer busy, see store/write_gate.hpp), then BEGIN IMMEDIATE. Rolls back and leaves
/// the gate on destruction unless committed.
///
/// Chunked jobs call should_yield() after each step (one event) and, when it is true, end the
/// chunk there: write its results and watermark and commit(). Results must not depend on
/// where chunks end (jobs_test proves it for both chunked jobs), so yielding never changes
/// them. Errors: JobCancelled when the run is cancelled while waiting for the turn;
/// SQLite::Exception from BEGIN/COMMIT.
class WriteTransaction {
 public:
  /// Throws std::logic_error when a statement of ctx.db is still on a row (a bug of the
  /// caller, checked in every build): such a statement keeps its read transaction, on the
  /// snapshot before, open past any COMMIT (WAL), so this BEGIN IMMEDIATE would fail with
  /// SQLITE_BUSY_SNAPSHOT ("database is locked") whenever the writer has committed since, that
  /// is only under ingest. Reset statements once their row is read.
  explicit WriteTransaction(JobContext& ctx)
      : turn_(without_pending_statements(ctx)),
        transaction_(ctx.db, SQLite::TransactionBehavior::IMMEDIATE) {}
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

  /// True when the writer waits for the lock and this transaction has had its slice.
  bool should_yield() {
    if (turn_.gate != nullptr && turn_.gate->job_should_yield()) turn_.yielded = true;
    return turn_.yielded;
  }
  void commit() { transaction_.commit(); }

 private:
  static JobContext& without_pending_statements(JobContext& ctx) {
    sqlite3* handle = ctx.db.getHandle();
    for (sqlite3_stmt* s = sqlite3_next_stmt(handle, nullptr); s != nullptr;
         s = sqlite3_next_stmt(handle, s)) {
      if (sqlite3_stmt_busy(s) != 0) {
        throw std::logic_error(std::string("a statement is still on a row before a job's write "
                                           "transaction (reset it): ") +
                               sqlite3_sql(s));
      }
    }
    return ctx;
  }

  struct Turn {
    explicit Turn(JobContext& ctx) : gate(ctx.gate) {
      if (gate == nullptr) return;
      const CancelToken& cancel = ctx.cancel;
      if (!gate->job_enter([&cancel] { return cancel.stopping() || cancel.timed_out(); })) {
        gate = nullptr;
        cancel.check();
        throw JobCancelled("cancelled while waiting for the write lock");
      }
    }
    ~Turn() {
      if (gate != nullptr) gate->job_exit(yielded);
    }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    store::WriteGate* gate;
    bool yielded = false;
  };
  Turn turn_;  // entered first, left last (after the rollback)
  SQLite::Transaction transaction_;
};

/// When a job runs (config `jobs.<name>.*`).
struct JobSchedule {
  bool enabled = true;
  std::int64_t interval_s = 3600;
  std::int64_t jitter_pct = 0;
  std::int64_t timeout_s = 600;
  std::int64_t after_events = 0;  ///< 0 = trigger off.
  std::int64_t idle_s = 0;        ///< 0 = trigger off.
};

/// A result object with "skipped": true is recorded as status skipped.
using JobFunction = std::function<nlohmann::json(JobContext&)>;

struct Job {
  std::string name;
  JobSchedule schedule;
  JobFunction run;
};

}  // namespace reflectd::jobs
