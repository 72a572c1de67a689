#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace reflectd::cli {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 30;

}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(bool enabled, std::uint64_t total_bytes)
    : enabled_(enabled), total_bytes_(total_bytes), start_(Clock::now()), last_draw_() {}

void Progress::update(std::uint64_t events_done, std::uint64_t bytes_done) {
  if (!enabled_) return;
  const auto now = Clock::now();
  if (drawn_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  draw(events_done, bytes_done);
}

void Progress::draw(std::uint64_t events_done, std::uint64_t bytes_done) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(events_done) / seconds : 0.0;
  std::string line = "\r\033[K";
  if (total_bytes_ > 0) {
    const double fraction =
        std::min(1.0, static_cast<double>(bytes_done) / static_cast<double>(total_bytes_));
    const int filled = static_cast<int>(fraction * kBarWidth);
    line +=
        fmt::format("[{}{}] {:3.0f}%  ", std::string(static_cast<std::size_t>(filled), '#'),
                    std::string(static_cast<std::size_t>(kBarWidth - filled), '.'), fraction * 100);
  }
  line += fmt::format("{} events  {:.0f} events/s", events_done, rate);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

}  // namespace reflectd::cli
