#include "jobs/medallion_decisions.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/ascii.hpp"
#include "jobs/medallion_text.hpp"

namespace reflectd::jobs {

double decision_importance(double confidence, std::int64_t files, std::int64_t later,
                           double standing_days) {
  const double breadth = std::min(
      1.0, std::log1p(static_cast<double>(std::max<std::int64_t>(0, files))) / std::log(21.0));
  const double built_on = std::min(
      1.0, std::log1p(static_cast<double>(std::max<std::int64_t>(0, later))) / std::log(51.0));
  const double standing = std::clamp(standing_days / 365.0, 0.0, 1.0);
  const double score =
      0.4 * std::clamp(confidence, 0.0, 1.0) + 0.2 * breadth + 0.2 * built_on + 0.2 * standing;
  return std::round(score * 1e9) / 1e9;
}

namespace medallion {
namespace {

using nlohmann::json;

// Each decision area's weighted events (seqs, ascending): the events after a decision's own
// build on it.
std::map<std::string, std::vector<std::int64_t>> area_events(
    SQLite::Database& db, const MedallionScope& scope, const std::vector<const Stream*>& chosen) {
  std::map<std::string, std::vector<std::int64_t>> area_seqs;
  for (const Stream* st : chosen) {
    if (!st->target.empty()) area_seqs.try_emplace(st->target);
  }
  if (area_seqs.empty()) return area_seqs;
  // Weighted events build on an area as they are evidence of it (docs/JOBS.md); the weight
  // term also lets SQLite read the area's own rows (index event_targets_contexts) instead
  // of the whole namespace's.
  SQLite::Statement area(db,
                         "SELECT seq FROM event_targets WHERE namespace = ?1 AND target = ?2 "
                         "AND weight > 0");
  for (auto& [target, seqs] : area_seqs) {
    area.reset();
    area.bind(1, scope.ns);
    area.bind(2, target);
    while (area.executeStep()) seqs.push_back(area.getColumn(0).getInt64());
    std::sort(seqs.begin(), seqs.end());
  }
  return area_seqs;
}

// The active decisions by importance, then id; each statement once; at most max_items.
std::vector<const Stream*> ranked_decisions(SQLite::Database& db, const MedallionScope& scope,
                                            const std::vector<Stream>& streams,
                                            std::int64_t newest_event_us, std::size_t max_items) {
  std::vector<const Stream*> chosen;
  for (const auto& st : streams) {
    if (st.kind == "decision" && st.status == "active") chosen.push_back(&st);
  }
  const auto area_seqs = area_events(db, scope, chosen);
  std::map<const Stream*, double> importance;
  for (const Stream* st : chosen) {
    std::int64_t later = 0;
    if (const auto it = area_seqs.find(st->target); it != area_seqs.end() && st->source_seq > 0) {
      later = static_cast<std::int64_t>(it->second.end() - std::upper_bound(it->second.begin(),
                                                                            it->second.end(),
                                                                            st->source_seq));
    }
    const double standing_days =
        static_cast<double>(std::max<std::int64_t>(0, newest_event_us - st->last_seen)) /
        static_cast<double>(kUsPerDay);
    importance[st] = decision_importance(st->confidence, st->files, later, standing_days);
  }
  std::stable_sort(chosen.begin(), chosen.end(), [&](const Stream* a, const Stream* b) {
    if (importance[a] != importance[b]) return importance[a] > importance[b];
    return a->id < b->id;
  });
  std::set<std::string> stated;
  std::vector<const Stream*> distinct;
  for (const Stream* st : chosen) {
    if (stated.insert(ascii_lower(st->title)).second) distinct.push_back(st);
  }
  if (distinct.size() > max_items) distinct.resize(max_items);
  return distinct;
}

}  // namespace

json decision_items(SQLite::Database& db, const std::string& medallion_id,
                    const MedallionScope& scope, const std::vector<Stream>& streams,
                    std::int64_t newest_event_us, std::size_t max_items) {
  json decisions = json::array();
  for (const Stream* st : ranked_decisions(db, scope, streams, newest_event_us, max_items)) {
    decisions.push_back({{"id", item_id(db, medallion_id, "D", st->id)},
                         {"statement", clip(st->title, 200)},
                         {"rationale", clip(st->rationale, 300)},
                         {"confidence", std::clamp(st->confidence, 0.0, 1.0)},
                         {"x_reflectd",
                          {{"source_id", st->id},
                           {"phase", st->phase},
                           {"evidence_event_ids", last_ids(st->evidence, 10)}}}});
  }
  return decisions;
}

}  // namespace medallion
}  // namespace reflectd::jobs
