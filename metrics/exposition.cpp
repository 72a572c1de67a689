#include "metrics/exposition.hpp"

#include <fmt/format.h>

#include <cmath>

namespace reflectd::metrics {
namespace {

// HELP text: backslash and line feed escaped. Label values: also the double quote.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

void TextExposition::header(std::string_view name, std::string_view help, std::string_view type) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void TextExposition::sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += labels[i].first;
      text_ += "=\"";
      append_escaped(text_, labels[i].second, true);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += format_value(value);
  text_ += '\n';
}

void TextExposition::counter(std::string_view name, std::string_view help,
                             const std::vector<std::pair<Labels, double>>& samples) {
  header(name, help, "counter");
  for (const auto& [labels, value] : samples) sample(name, labels, value);
}

void TextExposition::gauge(std::string_view name, std::string_view help,
                           const std::vector<std::pair<Labels, double>>& samples) {
  header(name, help, "gauge");
  for (const auto& [labels, value] : samples) sample(name, labels, value);
}

void TextExposition::histogram(std::string_view name, std::string_view help,
                               const std::vector<std::pair<Labels, HistogramSnapshot>>& samples) {
  header(name, help, "histogram");
  const std::string bucket = std::string(name) + "_bucket";
  for (const auto& [labels, snapshot] : samples) {
    for (std::size_t i = 0; i < snapshot.upper_bounds_s.size(); ++i) {
      Labels with_le = labels;
      with_le.emplace_back("le", format_value(snapshot.upper_bounds_s[i]));
      sample(bucket, with_le, static_cast<double>(snapshot.cumulative[i]));
    }
    Labels with_inf = labels;
    with_inf.emplace_back("le", "+Inf");
    sample(bucket, with_inf, static_cast<double>(snapshot.count));
    sample(std::string(name) + "_sum", labels, snapshot.sum_s);
    sample(std::string(name) + "_count", labels, static_cast<double>(snapshot.count));
  }
}

}  // namespace reflectd::metrics
