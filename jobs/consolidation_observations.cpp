#include "jobs/consolidation_observations.hpp"

#include "jobs/consolidation_text.hpp"

namespace reflectd::jobs::consolidation {

Observations::Observations(Run& run)
    : run_(run),
      support_(run.db, "SELECT support_count FROM observations WHERE observation_id = ?1"),
      upsert_(run.db, R"sql(
INSERT INTO observations (observation_id, namespace, observation_type, signature, target, title, text,
  supporting_event_ids, support_count, trajectory_count, success_count, confidence, importance,
  times_reinforced, first_detected_us, last_reinforced_us)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, min(0.95, 0.5 + 0.05 * ?9),
  min(1.0, log10(1 + ?9) / 2.0), ?12, ?13, ?14)
ON CONFLICT (observation_id) DO UPDATE SET target = excluded.target, title = excluded.title,
  text = excluded.text,
  supporting_event_ids = excluded.supporting_event_ids, support_count = excluded.support_count,
  trajectory_count = excluded.trajectory_count, success_count = excluded.success_count,
  confidence = excluded.confidence, importance = excluded.importance,
  times_reinforced = excluded.times_reinforced, last_reinforced_us = excluded.last_reinforced_us,
  first_detected_us = min(first_detected_us, excluded.first_detected_us))sql") {}

void Observations::upsert(const ObservationUpdate& o) {
  SQLite::Statement& before = support_;
  before.reset();
  before.bind(1, o.id);
  const bool exists = before.executeStep();
  const std::int64_t previous_support = exists ? before.getColumn(0).getInt64() : 0;
  before.reset();
  if (exists && previous_support == o.support) return;
  const ConsolidationParams& p = run_.params;
  const std::int64_t threshold =
      o.type == "pattern" ? p.pattern_min_occurrences : p.competence_min_successes;
  SQLite::Statement& upsert = upsert_;
  upsert.reset();
  upsert.bind(1, o.id);
  upsert.bind(2, o.ns);
  upsert.bind(3, o.type);
  upsert.bind(4, o.signature);
  if (o.target.empty()) {
    upsert.bind(5);
  } else {
    upsert.bind(5, o.target);
  }
  upsert.bind(6, o.title);
  upsert.bind(7, o.text);
  upsert.bind(8, integer_array_json(o.ids));
  upsert.bind(9, static_cast<std::int64_t>(o.support));
  upsert.bind(10, static_cast<std::int64_t>(o.trajectories));
  upsert.bind(11, static_cast<std::int64_t>(o.successes));
  upsert.bind(12, static_cast<std::int64_t>(o.support - threshold));
  upsert.bind(13, static_cast<std::int64_t>(o.first_us));
  upsert.bind(14, static_cast<std::int64_t>(o.last_us));
  upsert.exec();
  const std::int64_t now = run_.ctx.clock.now_us();
  if (exists) {
    run_.audit.append(
        "observation", o.id, "reinforce", kActor, now,
        "support " + std::to_string(previous_support) + " -> " + std::to_string(o.support));
    ++run_.totals.observations_reinforced;
  } else {
    run_.audit.append("observation", o.id, "create", kActor, now, o.title);
    ++run_.totals.observations_created;
  }
}

}  // namespace reflectd::jobs::consolidation
