#include "common/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace reflectd {

Histogram::Histogram(std::vector<double> upper_bounds_s)
    : bounds_s_(std::move(upper_bounds_s)), buckets_(bounds_s_.size() + 1) {
  for (std::size_t i = 0; i < bounds_s_.size(); ++i) {
    if (!(bounds_s_[i] > 0) || (i > 0 && !(bounds_s_[i] > bounds_s_[i - 1]))) {
      throw std::invalid_argument("histogram bounds must be positive and strictly increasing");
    }
    bounds_us_.push_back(std::llround(bounds_s_[i] * 1e6));
  }
}

void Histogram::observe_us(std::int64_t us) {
  us = std::max<std::int64_t>(us, 0);
  // Prometheus buckets are "less than or equal to" their bound.
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(bounds_us_.begin(), bounds_us_.end(), us) - bounds_us_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(static_cast<std::uint64_t>(us), std::memory_order_relaxed);
}

HistogramSnapshot Histogram::snapshot() const {
  HistogramSnapshot out;
  out.upper_bounds_s = bounds_s_;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < bounds_s_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    out.cumulative.push_back(running);
  }
  out.count = running + buckets_[bounds_s_.size()].load(std::memory_order_relaxed);
  out.sum_s = static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6;
  return out;
}

std::vector<double> Histogram::latency_bounds_s() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01,
          0.025,   0.05,   0.1,     0.25,   0.5,   1,     2.5,   10};
}

std::vector<double> Histogram::job_bounds_s() {
  return {0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
}

}  // namespace reflectd
