#include "memory_ops/retention.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include "memory_ops/forget.hpp"

namespace reflectd::memory_ops {

using json = nlohmann::json;

RetentionRule parse_retention_rule(const std::string& text) {
  RetentionRule rule;
  bool has_age = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    const std::string part = text.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    const auto eq = part.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("'" + part + "': expected key=value");
    }
    const std::string key = part.substr(0, eq);
    const std::string value = part.substr(eq + 1);
    if (key == "namespace") {
      rule.ns = value;
    } else if (key == "kind") {
      rule.kind = value;
    } else if (key == "max_age_days") {
      std::size_t used = 0;
      try {
        rule.max_age_days = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || !std::isfinite(rule.max_age_days) || rule.max_age_days <= 0) {
        throw std::invalid_argument("max_age_days: must be a number of days above 0");
      }
      has_age = true;
    } else {
      throw std::invalid_argument("'" + key +
                                  "': unknown key; known: max_age_days, namespace, kind");
    }
  }
  if (!has_age) throw std::invalid_argument("max_age_days: is required");
  return rule;
}

json run_retention(jobs::JobContext& ctx, const std::vector<RetentionRule>& rules) {
  json result = {{"rules", rules.size()}, {"events_deleted", 0}};
  if (rules.empty()) return result;
  const std::int64_t now = ctx.clock.now_us();
  std::vector<SelectedEvent> due;
  {
    SQLite::Statement query(
        ctx.db,
        "SELECT seq, uid, namespace, kind, status, deletion_policy, pinned FROM events "
        "WHERE ts_us < ?1 AND (?2 = '' OR namespace = ?2) AND (?3 = '' OR kind = ?3) "
        "AND deletion_policy != 'never' AND pinned = 0 ORDER BY seq LIMIT ?4");
    std::set<std::int64_t> seen;
    for (const RetentionRule& rule : rules) {
      if (ctx.ns.size() > 0 && !rule.ns.empty() && rule.ns != ctx.ns) continue;
      query.reset();
      query.bind(1, now - static_cast<std::int64_t>(rule.max_age_days * 86'400'000'000.0));
      query.bind(2, rule.ns.empty() ? ctx.ns : rule.ns);
      query.bind(3, rule.kind);
      query.bind(4, static_cast<std::int64_t>(kMaxSelectedEvents - due.size()));
      while (query.executeStep() && due.size() < kMaxSelectedEvents) {
        const std::int64_t seq = query.getColumn(0).getInt64();
        if (!seen.insert(seq).second) continue;
        due.push_back({seq, query.getColumn(1).getString(), query.getColumn(2).getString(),
                       query.getColumn(3).getString(), query.getColumn(4).getString(),
                       query.getColumn(5).getString(), false});
      }
      query.reset();
    }
  }
  ctx.cancel.check();
  if (due.empty()) return result;
  const DeleteOutcome outcome =
      forget_events(ctx, due, "job:retention", "older than its retention rule (retention.rules)");
  result.update(outcome.to_json());
  result["rules"] = rules.size();
  return result;
}

}  // namespace reflectd::memory_ops
