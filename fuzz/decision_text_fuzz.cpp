// Fuzz target: the decision extraction rules (jobs/decision_extraction.hpp and
// jobs/commit_decisions.hpp) over arbitrary messages, tasks and trajectories.
// Checks: statements and rationales are bounded (≤ 300 bytes and "...", a solution with its problem
// prefixed ≤ 303 + 2 + 303) and valid UTF-8 whenever the input is; confidence is in [0,1] and one
// of the documented values; the chosen call is a call before the last submission; a labelled
// paragraph never holds a line break.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.hpp"
#include "jobs/commit_decisions.hpp"
#include "jobs/decision_extraction.hpp"

namespace {

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xE  ? 3
                    : (c >> 3) == 0x1E ? 4
                                       : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto end = s.find(sep, start);
    out.push_back(
        s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

void check_decision(const reflectd::jobs::ExtractedDecision& d, bool utf8) {
  FUZZ_CHECK(!d.statement.empty() && !d.rationale.empty(), "empty statement or rationale");
  FUZZ_CHECK(d.statement.size() <= 608 && d.rationale.size() <= 303, "texts of %zu and %zu bytes",
             d.statement.size(), d.rationale.size());
  FUZZ_CHECK(
      d.confidence == 0.5 || d.confidence == 0.6 || d.confidence == 0.7 || d.confidence == 0.8,
      "confidence %f", d.confidence);
  if (utf8) {
    FUZZ_CHECK(valid_utf8(d.statement) && valid_utf8(d.rationale), "invalid UTF-8 out of valid");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reflectd::jobs;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool utf8 = valid_utf8(text);

  constexpr std::array<std::string_view, 2> kLabels{"Problem:", "Issue:"};
  const std::string paragraph = labelled_paragraph(text, kLabels);
  FUZZ_CHECK(paragraph.find('\n') == std::string::npos, "line break in a paragraph");
  FUZZ_CHECK(paragraph.size() <= 303, "paragraph of %zu bytes", paragraph.size());

  // The first byte picks the kind and whether the message changed a test file.
  const std::vector<std::string> files = (data[0] & 1) != 0
                                             ? std::vector<std::string>{"tests/test_x.cpp"}
                                             : std::vector<std::string>{"src/x.cpp"};
  if (const auto d = decision_from_message((data[0] & 2) != 0 ? "commit_change" : "observation",
                                           text, files)) {
    check_decision(*d, utf8);
  }
  // Commit subjects and reverts (jobs/commit_decisions.hpp): bounded texts, valid UTF-8 kept.
  const bool merge = (data[0] & 4) != 0;
  if (const auto d = decision_from_commit(text, merge, files)) {
    FUZZ_CHECK(!d->statement.empty(), "empty statement");
    FUZZ_CHECK(d->statement.size() <= 303 && d->rationale.size() <= 303,
               "texts of %zu and %zu bytes", d->statement.size(), d->rationale.size());
    FUZZ_CHECK(d->confidence >= 0.5 && d->confidence <= 0.8, "confidence %f", d->confidence);
    if (utf8) {
      FUZZ_CHECK(valid_utf8(d->statement) && valid_utf8(d->rationale),
                 "invalid UTF-8 out of valid");
    }
  }
  if (const auto r = read_revert(text)) {
    FUZZ_CHECK(r->commit.size() <= 40, "commit id of %zu bytes", r->commit.size());
    FUZZ_CHECK(!r->subject.empty() || !r->commit.empty() || !r->description.empty(),
               "a revert that names nothing");
  }
  const std::string problem = task_problem(text);
  FUZZ_CHECK(problem.size() <= 303, "task problem of %zu bytes", problem.size());

  // A trajectory: records separated by 0x1e, each "tool\x1fcommand\x1fthought"; the first
  // record is the task.
  const auto records = split(text, '\x1e');
  std::vector<TrajectoryCall> calls;
  for (std::size_t i = 1; i < records.size(); ++i) {
    const auto fields = split(records[i], '\x1f');
    calls.push_back({std::string(fields[0]), fields.size() > 1 ? std::string(fields[1]) : "",
                     fields.size() > 2 ? std::string(fields[2]) : "", (i & 1) != 0});
  }
  if (const auto d = decision_from_trajectory(records[0], calls)) {
    check_decision(*d, utf8);
    FUZZ_CHECK(d->call_index < calls.size(), "call %zu of %zu", d->call_index, calls.size());
    FUZZ_CHECK(calls[d->call_index].tool != "submit" || d->call_index + 1 < calls.size(),
               "the submission itself chosen");
  }
  return 0;
}
