#pragma once
// A latency histogram with fixed bucket bounds, for the Prometheus exposition (metrics/).
//
// The shape is Prometheus's (https://prometheus.io/docs/concepts/metric_types/#histogram):
// cumulative counts per upper bound in seconds, a +Inf bucket, the count and the sum. Values are
// recorded in microseconds and kept as integers, so a snapshot's sum is exact.
//
// Thread-safety: observe() and snapshot() may be called from any thread at any time (relaxed
// atomics; a snapshot taken during observe() calls may lag by those calls, and its count is the
// sum of its buckets, so it is always consistent with itself).

#include <atomic>
#include <cstdint>
#include <vector>

namespace reflectd {

/// What a Histogram held at one moment.
struct HistogramSnapshot {
  std::vector<double> upper_bounds_s;     ///< Bucket upper bounds, seconds, increasing.
  std::vector<std::uint64_t> cumulative;  ///< Observations ≤ each bound (same length).
  std::uint64_t count = 0;                ///< All observations (the +Inf bucket).
  double sum_s = 0;                       ///< Sum of the observed values, seconds.
};

class Histogram {
 public:
  /// `upper_bounds_s`: bucket upper bounds in seconds, strictly increasing and positive;
  /// throws std::invalid_argument otherwise (a programming error caught at startup).
  explicit Histogram(std::vector<double> upper_bounds_s);

  /// Records one value of `us` microseconds (negative values count as 0).
  void observe_us(std::int64_t us);
  HistogramSnapshot snapshot() const;

  /// Bounds for request and commit latencies: 50 µs to 10 s.
  static std::vector<double> latency_bounds_s();
  /// Bounds for job run durations: 1 ms to 1 h.
  static std::vector<double> job_bounds_s();

 private:
  std::vector<double> bounds_s_;
  std::vector<std::int64_t> bounds_us_;
  std::vector<std::atomic<std::uint64_t>> buckets_;  // bounds_s_.size() + 1 (+Inf); never resized
  std::atomic<std::uint64_t> sum_us_{0};
};

}  // namespace reflectd
