#include "jobs/consolidation_pattern_walk.hpp"

#include <algorithm>

#include "common/sha256.hpp"
#include "jobs/consolidation_text.hpp"

namespace reflectd::jobs::consolidation {

std::int64_t walk_loaded_head(PatternState& s, std::int64_t min_occurrences,
                              std::int64_t min_trajectories) {
  std::int64_t seen = 0;
  std::vector<std::int32_t> walked;
  for (const Occurrence& o : s.head) {
    ++seen;
    if (static_cast<std::int64_t>(walked.size()) < min_trajectories &&
        std::find(walked.begin(), walked.end(), o.trajectory) == walked.end()) {
      walked.push_back(o.trajectory);
    }
    if (seen >= min_occurrences && static_cast<std::int64_t>(walked.size()) >= min_trajectories) {
      const std::int64_t ts = o.ts_us;
      s.head_bound = ts;
      s.head.erase(
          std::upper_bound(s.head.begin(), s.head.end(), ts,
                           [](std::int64_t t, const Occurrence& x) { return t < x.ts_us; }),
          s.head.end());
      return ts;
    }
  }
  return 0;
}

std::optional<std::vector<std::int64_t>> newest_from_list(EventJsonReader& reader,
                                                          const std::string& text,
                                                          std::int64_t count, std::int64_t max_seq,
                                                          std::int64_t newest_floor) {
  const auto expected = static_cast<std::size_t>(
      std::min<std::int64_t>(count, static_cast<std::int64_t>(kMaxSupportIdsListed)));
  // simdjson: nlohmann's parse of the 200 ids cost more than the rows it spares.
  const auto doc = reader.parse(text);
  simdjson::dom::array ids;
  if (expected == 0 || !doc || doc->get_array().get(ids) != simdjson::SUCCESS ||
      ids.size() != expected) {
    return std::nullopt;
  }
  std::vector<std::int64_t> newest;
  newest.reserve(expected);
  for (const simdjson::dom::element id : ids) {
    std::int64_t seq = 0;
    if (id.get_int64().get(seq) != simdjson::SUCCESS) return std::nullopt;
    if (!newest.empty() && seq <= newest.back()) return std::nullopt;
    newest.push_back(seq);
  }
  if (newest.back() != max_seq || newest.front() != newest_floor) return std::nullopt;
  return newest;
}

void trim_newest(std::vector<std::int64_t>& newest) {
  if (newest.size() > 2 * kMaxSupportIdsListed) {
    newest.erase(newest.begin(), newest.end() - static_cast<std::ptrdiff_t>(kMaxSupportIdsListed));
  }
}

std::int32_t most_frequent_target(const std::unordered_map<std::int32_t, std::int64_t>& targets,
                                  const Interner& strings) {
  std::int32_t best_target = -1;
  std::int64_t best = 0;
  for (const auto& [t, n] : targets) {
    if (n > best || (n == best && strings.text(t) < strings.text(best_target))) {
      best_target = t;
      best = n;
    }
  }
  return best_target;
}

std::string pattern_problem(const std::string& newest_content, const std::string& signature) {
  std::string problem = labelled_line(newest_content, "Problem:");
  if (problem.empty()) problem = newest_content;
  problem = first_line(problem, 200);
  if (problem.empty()) problem = signature.substr(0, 200);
  return problem;
}

std::string pattern_text(std::int64_t count, std::int64_t trajectories, const std::string& target,
                         const std::string& problem) {
  return "Seen " + std::to_string(count) + " times in " + std::to_string(trajectories) +
         " trajectories" + (target.empty() ? "" : ", mostly around " + target) +
         "; latest: " + problem;
}

std::string pattern_id(const std::string& ns, const std::string& signature) {
  return "pattern:" + ns + ":" + sha256_hex(signature).substr(0, 16);
}

}  // namespace reflectd::jobs::consolidation
