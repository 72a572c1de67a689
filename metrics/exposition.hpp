#pragma once
// The Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): one `# HELP` and one `# TYPE`
// line per metric family, then its samples; label values and help texts escaped as the format
// says. Families are written in the order they are added; each name must be added once.
//
// Thread-safety: none (build one per scrape).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/histogram.hpp"

namespace reflectd::metrics {

/// Label name and value pairs of one sample, in the order written.
using Labels = std::vector<std::pair<std::string, std::string>>;

class TextExposition {
 public:
  /// A counter family `name` (which ends in `_total`, by the naming conventions) and its
  /// samples, one per label set.
  void counter(std::string_view name, std::string_view help,
               const std::vector<std::pair<Labels, double>>& samples);
  /// A gauge family: values that go up and down (bytes, queue depth, seconds).
  void gauge(std::string_view name, std::string_view help,
             const std::vector<std::pair<Labels, double>>& samples);
  /// A histogram family `name` (in seconds): `name_bucket{le=…}`, `name_sum`, `name_count` per
  /// label set.
  void histogram(std::string_view name, std::string_view help,
                 const std::vector<std::pair<Labels, HistogramSnapshot>>& samples);

  /// The exposition so far; ends with a newline when not empty.
  const std::string& text() const { return text_; }

  /// The Content-Type the format is served with.
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  void header(std::string_view name, std::string_view help, std::string_view type);
  void sample(std::string_view name, const Labels& labels, double value);
  std::string text_;
};

/// `value` as the format writes floats: shortest round-trip form, "+Inf", "-Inf", "NaN".
std::string format_value(double value);

}  // namespace reflectd::metrics
