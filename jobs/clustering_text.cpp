#include "jobs/clustering_text.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

#include "common/utf8.hpp"

namespace reflectd::jobs::clustering {

std::string summary_of(std::string_view text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size() && out.size() < kSummaryBytes) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string_view::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      if (!out.empty()) out += ' ';
      out.append(line);
    }
    start = end + 1;
  }
  if (out.size() > kSummaryBytes) {
    out.resize(utf8_boundary(out, kSummaryBytes));
  }
  return out;
}

std::string without_trailers(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kCommitTrailers{
      "signed-off-by:", "co-authored-by:", "reviewed-by:",       "acked-by:",
      "reported-by:",   "tested-by:",      "(cherry picked from"};
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t");
    bool trailer = false;
    if (a != std::string_view::npos) {
      for (const auto t : kCommitTrailers) {
        if (line.size() - a >= t.size() &&
            std::equal(t.begin(), t.end(), line.begin() + static_cast<std::ptrdiff_t>(a),
                       [](char x, char y) {
                         return x == (y >= 'A' && y <= 'Z' ? static_cast<char>(y - 'A' + 'a') : y);
                       })) {
          trailer = true;
        }
      }
    }
    if (!trailer) {
      out.append(line);
      out += '\n';
    }
    start = end + 1;
  }
  return out;
}

std::string vectorized_text(std::string_view content) {
  return without_trailers(content.substr(0, std::min(content.size(), kMaxVectorizedBytes)));
}

}  // namespace reflectd::jobs::clustering
