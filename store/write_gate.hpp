#pragma once
// The in-process write gate: arbitrates SQLite's single write lock between the daemon's writer
// thread (ingest) and its jobs' thread, which use two connections of the same process.
// SQLite alone cannot do this well: its busy handler polls with sleeps and has no notion of
// priority, so a job that commits and immediately begins its next transaction keeps the lock
// and the writer times out (docs/PERFORMANCE.md, "Ingest under jobs"). Every write
// transaction of either side takes its turn here first, so the two never meet in SQLite's
// busy handler; other processes still do.
//
// Policy (the writer has priority, jobs still progress under a sustained flood):
// - The writer enters as soon as no job is inside. While it waits, a job inside sees
//   writer_waiting() and, once it has held the gate for `job_slice_ms`, ends its transaction
//   at its next step (jobs/job.hpp WriteTransaction::should_yield()).
// - A job enters only when the writer is neither inside nor waiting and has been out for at
//   least `job_slice_ms` (ingest that keeps coming every few ms keeps the gate), or, once it
//   has waited `job_max_wait_ms`, at the writer's next commit boundary: the writer then lets
//   the job in before its next transaction. Under a flood a job so gets about
//   slice / (max_wait + slice) of the write time (20 / 220 ≈ 9% with the defaults).
// - job_max_wait_ms = 0 turns the priority off: a job enters whenever the writer is out.
// Waits use the real monotonic clock (std::chrono::steady_clock), like SQLite's busy timeout:
// they bound real lock hold times, which an injected fake clock would not advance.
//
// Thread-safety: every member is thread-safe. One writer thread and one jobs thread are
// expected; the gate is not reentrant (a side must not enter twice).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

namespace reflectd::store {

/// Counters since start (relaxed reads).
struct WriteGateStats {
  std::atomic<std::uint64_t> job_turns{0};     ///< Job transactions let in.
  std::atomic<std::uint64_t> job_yields{0};    ///< Job transactions ended early for the writer.
  std::atomic<std::uint64_t> job_forced{0};    ///< Job turns taken after job_max_wait_ms.
  std::atomic<std::uint64_t> writer_waits{0};  ///< Writer transactions that waited for a job.
  std::atomic<std::uint64_t> writer_wait_max_us{0};  ///< Longest such wait, µs.
  std::atomic<std::uint64_t> writer_timeouts{0};     ///< Writer waits that gave up (timeout).
};

class WriteGate {
 public:
  /// `job_max_wait_ms` (>= 0) and `job_slice_ms` (>= 1): see the policy above; config keys
  /// jobs.write_wait_ms and jobs.write_slice_ms.
  WriteGate(std::int64_t job_max_wait_ms, std::int64_t job_slice_ms);
  WriteGate(const WriteGate&) = delete;
  WriteGate& operator=(const WriteGate&) = delete;

  /// Live settings (SIGHUP); they apply to the next wait.
  void set_policy(std::int64_t job_max_wait_ms, std::int64_t job_slice_ms);

  // --- writer side ---
  /// Waits until no job is inside, at most `timeout_ms`; true = the writer is inside and must
  /// call writer_exit(). false = a job kept the gate that long (nothing was entered).
  bool writer_enter(std::int64_t timeout_ms);
  void writer_exit();

  // --- job side ---
  /// Waits for a job turn (policy above). `cancelled` is polled at least every 50 ms; when it
  /// returns true the wait ends and false is returned (nothing entered). true = inside; call
  /// job_exit(yielded) after the transaction ended.
  bool job_enter(const std::function<bool()>& cancelled);
  /// `yielded`: the transaction was ended early because the writer waited (counted).
  void job_exit(bool yielded);
  /// True when the job inside should end its transaction at its next step: the writer waits
  /// and the job has had its slice. Cheap (one atomic load unless the writer waits).
  bool job_should_yield() const;

  const WriteGateStats& stats() const { return stats_; }

 private:
  using SteadyClock = std::chrono::steady_clock;
  enum class Holder { kNone, kWriter, kJob };

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  Holder holder_ = Holder::kNone;          // guarded by mutex_
  bool job_overdue_ = false;               // guarded: a job waited job_max_wait; writer lets it in
  SteadyClock::time_point writer_left_{};  // guarded: when the writer last exited
  std::atomic<std::int64_t> job_entered_ns_{0};  // steady_clock ns when the job inside entered
  std::atomic<bool> writer_waiting_{false};
  std::atomic<std::int64_t> job_max_wait_ms_;
  std::atomic<std::int64_t> job_slice_ms_;
  WriteGateStats stats_;
};

/// RAII writer turn: enters in the constructor (check entered()), exits on destruction.
class WriterTurn {
 public:
  WriterTurn(WriteGate* gate, std::int64_t timeout_ms)
      : gate_(gate), entered_(gate == nullptr || gate->writer_enter(timeout_ms)) {}
  ~WriterTurn() {
    if (gate_ != nullptr && entered_) gate_->writer_exit();
  }
  WriterTurn(const WriterTurn&) = delete;
  WriterTurn& operator=(const WriterTurn&) = delete;
  bool entered() const { return entered_; }

 private:
  WriteGate* gate_;
  bool entered_;
};

}  // namespace reflectd::store
