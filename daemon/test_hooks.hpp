#pragma once
// Test hooks: off unless REFLECTD_TEST_HOOKS=1 is in reflectd's environment at startup (a test
// build and a production build are the same binary; systemd never sets the variable).
//
//   {"cmd":"test_stall","ms":N}  blocks the event loop for N ms (<= 60000): the watchdog test
//                                shows WATCHDOG=1 stops while the loop is stuck.
//   REFLECTD_TEST_NOW_US=<us>    pins the wall clock (monotonic time stays real), so a crash
//                                test can compare the derived tables of two runs made seconds
//                                apart.
//
// See docs/RELIABILITY.md.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/clock.hpp"

namespace reflectd::daemon {

/// True when REFLECTD_TEST_HOOKS=1.
inline bool test_hooks_from_env() {
  const char* value = std::getenv("REFLECTD_TEST_HOOKS");
  return value != nullptr && std::string_view(value) == "1";
}

/// Wall time fixed at one instant; monotonic time from the system (timers keep working).
class PinnedWallClock final : public Clock {
 public:
  explicit PinnedWallClock(std::int64_t now_us) : now_us_(now_us) {}
  std::int64_t now_us() const override { return now_us_; }
  std::int64_t monotonic_us() const override { return system_.monotonic_us(); }

 private:
  std::int64_t now_us_;
  SystemClock system_;
};

}  // namespace reflectd::daemon
