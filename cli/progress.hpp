#pragma once
// A one-line progress display on stderr, drawn only when stderr is a terminal so logs and
// pipes never see control characters.
//
// Thread-safety: one Progress per thread.

#include <chrono>
#include <cstdint>

namespace reflectd::cli {

class Progress {
 public:
  /// `total_bytes` of input, or 0 when unknown (stdin): then no bar, counts only.
  /// `enabled` is normally stderr_is_terminal().
  Progress(bool enabled, std::uint64_t total_bytes);

  /// Redraws, at most 10 times a second. `bytes_done` counts input bytes settled.
  void update(std::uint64_t events_done, std::uint64_t bytes_done);

  /// Erases the line so the summary starts on a clean one.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::uint64_t events_done, std::uint64_t bytes_done);

  bool enabled_;
  bool drawn_ = false;
  std::uint64_t total_bytes_;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

/// True when stderr is a terminal.
bool stderr_is_terminal();

}  // namespace reflectd::cli
