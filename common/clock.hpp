#pragma once
// The time seam. Every component that needs "now" takes a Clock&, so tests drive time with
// FakeClock instead of sleeping (the Envoy TimeSource pattern).

#include <atomic>
#include <chrono>
#include <cstdint>

namespace reflectd {

/// Source of wall-clock and monotonic time. Implementations must be thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  /// Wall-clock time as microseconds since the Unix epoch (UTC).
  virtual std::int64_t now_us() const = 0;
  /// Monotonic time in microseconds from an arbitrary origin; never goes backwards.
  virtual std::int64_t monotonic_us() const = 0;
};

/// The real clock: std::chrono::system_clock and steady_clock.
class SystemClock final : public Clock {
 public:
  std::int64_t now_us() const override;
  std::int64_t monotonic_us() const override;
};

/// A clock that moves only when told to. Thread-safe (atomics).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::int64_t start_us = 1'700'000'000'000'000) : now_(start_us), mono_(0) {}
  std::int64_t now_us() const override { return now_.load(); }
  std::int64_t monotonic_us() const override { return mono_.load(); }
  /// Moves both clocks forward by `delta_us` microseconds.
  void advance_us(std::int64_t delta_us) {
    now_ += delta_us;
    mono_ += delta_us;
  }
  void set_now_us(std::int64_t us) { now_ = us; }

 private:
  std::atomic<std::int64_t> now_;
  std::atomic<std::int64_t> mono_;
};

}  // namespace reflectd
