#include "store/write_gate.hpp"

#include <algorithm>

namespace reflectd::store {
namespace {

std::int64_t since_epoch_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

void raise_max(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  std::uint64_t seen = target.load(std::memory_order_relaxed);
  while (seen < value && !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// A job waiting for its turn re-checks its cancellation at least this often.
constexpr auto kCancelPoll = std::chrono::milliseconds(50);

}  // namespace

WriteGate::WriteGate(std::int64_t job_max_wait_ms, std::int64_t job_slice_ms)
    : job_max_wait_ms_(std::max<std::int64_t>(0, job_max_wait_ms)),
      job_slice_ms_(std::max<std::int64_t>(1, job_slice_ms)) {}

void WriteGate::set_policy(std::int64_t job_max_wait_ms, std::int64_t job_slice_ms) {
  job_max_wait_ms_ = std::max<std::int64_t>(0, job_max_wait_ms);
  job_slice_ms_ = std::max<std::int64_t>(1, job_slice_ms);
  changed_.notify_all();
}

bool WriteGate::writer_enter(std::int64_t timeout_ms) {
  std::unique_lock lock(mutex_);
  if (holder_ == Holder::kNone && !job_overdue_) {
    holder_ = Holder::kWriter;
    return true;
  }
  const auto start = SteadyClock::now();
  const auto deadline = start + std::chrono::milliseconds(std::max<std::int64_t>(0, timeout_ms));
  writer_waiting_ = true;
  // An overdue job goes first even when the gate is free: it has waited job_max_wait_ms.
  while (holder_ == Holder::kJob || job_overdue_) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        (holder_ == Holder::kJob || job_overdue_)) {
      writer_waiting_ = false;
      stats_.writer_timeouts.fetch_add(1, std::memory_order_relaxed);
      changed_.notify_all();
      return false;
    }
  }
  writer_waiting_ = false;
  holder_ = Holder::kWriter;
  stats_.writer_waits.fetch_add(1, std::memory_order_relaxed);
  raise_max(stats_.writer_wait_max_us,
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start)
                    .count()));
  return true;
}

void WriteGate::writer_exit() {
  {
    std::lock_guard lock(mutex_);
    holder_ = Holder::kNone;
    writer_left_ = SteadyClock::now();
  }
  changed_.notify_all();
}

bool WriteGate::job_enter(const std::function<bool()>& cancelled) {
  std::unique_lock lock(mutex_);
  const auto start = SteadyClock::now();
  for (;;) {
    if (cancelled && cancelled()) {
      job_overdue_ = false;
      lock.unlock();
      changed_.notify_all();
      return false;
    }
    const auto now = SteadyClock::now();
    const auto max_wait = std::chrono::milliseconds(job_max_wait_ms_.load());
    const auto slice = std::chrono::milliseconds(job_slice_ms_.load());
    if (holder_ == Holder::kNone) {
      // The writer is "quiet" once it has been out as long as a job's slice: ingest arriving
      // every few ms would otherwise be interrupted at every gap between two commits.
      const bool quiet = !writer_waiting_ && (max_wait.count() == 0 || now - writer_left_ >= slice);
      if (quiet || job_overdue_) break;
    }
    if (max_wait.count() > 0 && !job_overdue_ && now - start >= max_wait) {
      job_overdue_ = true;  // the writer lets us in before its next transaction
      continue;
    }
    auto wake = now + kCancelPoll;
    if (max_wait.count() > 0 && !job_overdue_) wake = std::min(wake, start + max_wait);
    if (holder_ == Holder::kNone && !writer_waiting_) wake = std::min(wake, writer_left_ + slice);
    changed_.wait_until(lock, wake);
  }
  if (job_overdue_) stats_.job_forced.fetch_add(1, std::memory_order_relaxed);
  job_overdue_ = false;
  holder_ = Holder::kJob;
  job_entered_ns_.store(since_epoch_ns(SteadyClock::now()), std::memory_order_relaxed);
  stats_.job_turns.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void WriteGate::job_exit(bool yielded) {
  {
    std::lock_guard lock(mutex_);
    holder_ = Holder::kNone;
  }
  if (yielded) stats_.job_yields.fetch_add(1, std::memory_order_relaxed);
  changed_.notify_all();
}

bool WriteGate::job_should_yield() const {
  if (!writer_waiting_.load(std::memory_order_relaxed)) return false;
  const auto slice_ns = job_slice_ms_.load(std::memory_order_relaxed) * 1'000'000;
  return since_epoch_ns(SteadyClock::now()) - job_entered_ns_.load(std::memory_order_relaxed) >=
         slice_ns;
}

}  // namespace reflectd::store
