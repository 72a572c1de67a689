#include "jobs/decay.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/entity_merge.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs {
namespace {

// The last evidence or use of a knowledge row.
constexpr const char* kLastActivity = "max(last_seen_us, coalesce(last_hit_us, 0))";

std::int64_t count(SQLite::Database& db, const std::string& sql, std::int64_t now,
                   const std::string& ns) {
  SQLite::Statement query(db, sql);
  query.bind(1, static_cast<std::int64_t>(now));
  query.bind(2, ns);
  query.executeStep();
  return query.getColumn(0).getInt64();
}

// The scope clause of every statement here: ?2 is the job's namespace, '' for all of them.
constexpr const char* kInScope = "(?2 = '' OR namespace = ?2)";

// How many knowledge rows a sweep scored and moved into each vitality.
struct KnowledgeSweep {
  std::int64_t scored = 0;
  std::int64_t decaying = 0;
  std::int64_t dormant = 0;
  std::int64_t reactivated = 0;
};

// Vitality and confidence of the knowledge rows in scope brought to `now` (LedgerMind's
// vitality, as the rd_vitality and rd_confidence SQL functions compute it; jobs/decay.hpp),
// each change audited.
KnowledgeSweep decay_knowledge(SQLite::Database& db, std::int64_t now, const std::string& ns) {
  const std::string in_scope = kInScope;
  const std::string new_vitality = std::string("rd_vitality(") + kLastActivity + ", ?1)";
  KnowledgeSweep sweep;
  sweep.scored = count(db, "SELECT count(*) FROM knowledge WHERE ?1 = ?1 AND " + in_scope, now, ns);
  sweep.decaying = count(db,
                         "SELECT count(*) FROM knowledge WHERE " + in_scope + " AND vitality != " +
                             new_vitality + " AND " + new_vitality + " = 'decaying'",
                         now, ns);
  sweep.dormant = count(db,
                        "SELECT count(*) FROM knowledge WHERE " + in_scope + " AND vitality != " +
                            new_vitality + " AND " + new_vitality + " = 'dormant'",
                        now, ns);
  sweep.reactivated =
      count(db,
            "SELECT count(*) FROM knowledge WHERE " + in_scope +
                " AND vitality != " + new_vitality + " AND " + new_vitality + " = 'active'",
            now, ns);

  SQLite::Statement audit_knowledge(
      db,
      "INSERT INTO audit_log (record_type, record_id, action, actor, at_us, rationale, previous) "
      "SELECT 'knowledge', decision_id, 'decay', 'job:decay', ?1, 'vitality ' || vitality || "
      "' -> ' || " +
          new_vitality +
          ", json_object('vitality', vitality, 'confidence', confidence) "
          "FROM knowledge WHERE " +
          in_scope + " AND vitality != " + new_vitality + " ORDER BY decision_id");
  audit_knowledge.bind(1, static_cast<std::int64_t>(now));
  audit_knowledge.bind(2, ns);
  audit_knowledge.exec();
  SQLite::Statement update_knowledge(db, "UPDATE knowledge SET vitality = " + new_vitality +
                                             ", confidence = rd_confidence("
                                             "confidence_base, " +
                                             kLastActivity + ", ?1), updated_us = ?1 WHERE " +
                                             in_scope + " AND (vitality != " + new_vitality +
                                             " OR confidence != rd_confidence(confidence_base, " +
                                             kLastActivity + ", ?1))");
  update_knowledge.bind(1, static_cast<std::int64_t>(now));
  update_knowledge.bind(2, ns);
  update_knowledge.exec();
  return sweep;
}

// Events in scope whose archive time has come (salience below its floor and older than its
// age limit) become archived, each audited. Returns how many.
std::int64_t archive_due_events(SQLite::Database& db, std::int64_t now, const std::string& ns) {
  const std::string in_scope = kInScope;
  SQLite::Statement audit_events(
      db,
      "INSERT INTO audit_log (record_type, record_id, action, actor, at_us, rationale, previous) "
      "SELECT 'event', uid, 'archive', 'job:decay', ?1, 'salience ' || printf('%.4f', rd_salience("
      "salience_base, salience_ref_us, received_us, decay_curve, half_life_s, min_salience, "
      "max_age_s, pinned, ?1)) || ' below the floor ' || min_salience || ' and older than ' || "
      "max_age_s || ' s', json_object('status', status, 'seq', seq) FROM events "
      // Without INDEXED BY the planner walks the whole table in seq order to skip the sort
      // (SCAN events: O(stored events) per run); the partial index reads only the due rows.
      "INDEXED BY events_archive_at "
      "WHERE archive_at_us <= ?1 AND status = 'active' AND " +
          in_scope + " ORDER BY seq");
  audit_events.bind(1, static_cast<std::int64_t>(now));
  audit_events.bind(2, ns);
  audit_events.exec();
  SQLite::Statement archive(db,
                            "UPDATE events SET status = 'archived' WHERE archive_at_us <= ?1 "
                            "AND status = 'active' AND " +
                                in_scope);
  archive.bind(1, static_cast<std::int64_t>(now));
  archive.bind(2, ns);
  const int archived = archive.exec();
  return archived;
}

// Entity edges: their strength is a function of (strength_base, strength_ref_us) evaluated
// by whoever reads it (edge_strength_at), so no sweep rewrites them. The edges reinforced
// since the previous sweep are those whose newest evidence is above the watermark that sweep
// left for their namespace: the cluster job reads a namespace's events once each, in seq
// order, and sets last_evidence_seq to the reinforcing event's (migration 17). One pass over
// the edges, no write per edge. Returns how many edges were reinforced.
std::int64_t sweep_edges(SQLite::Database& db, const std::string& ns) {
  const std::string in_scope = kInScope;
  struct EdgeSweep {
    std::string ns;
    std::int64_t through = 0;
    std::int64_t reinforced = 0;
    std::int64_t newest = 0;
  };
  std::vector<EdgeSweep> sweeps;  // a handful of namespaces: a linear search beats a map
  SQLite::Statement watermarks(db,
                               "SELECT namespace, through_seq FROM decay_edge_watermarks WHERE "
                               "?1 = '' OR namespace = ?1");
  watermarks.bind(1, ns);
  while (watermarks.executeStep()) {
    sweeps.push_back({watermarks.getColumn(0).getString(), watermarks.getColumn(1).getInt64()});
  }
  // The OR keeps the planner on the table (the namespace index would add a row lookup each).
  SQLite::Statement edges(
      db, "SELECT namespace, last_evidence_seq FROM entity_relationships WHERE " + in_scope);
  edges.bind(2, ns);
  EdgeSweep* current = nullptr;
  while (edges.executeStep()) {
    const std::string_view edge_ns(edges.getColumn(0).getText(),
                                   static_cast<std::size_t>(edges.getColumn(0).getBytes()));
    if (current == nullptr || current->ns != edge_ns) {
      const auto found = std::find_if(sweeps.begin(), sweeps.end(),
                                      [&](const EdgeSweep& e) { return e.ns == edge_ns; });
      current =
          found != sweeps.end() ? &*found : &sweeps.emplace_back(EdgeSweep{std::string(edge_ns)});
    }
    const std::int64_t last = edges.getColumn(1).getInt64();
    if (last > current->through) ++current->reinforced;
    current->newest = std::max(current->newest, last);
  }
  std::int64_t edges_reinforced = 0;
  SQLite::Statement save(db,
                         "INSERT INTO decay_edge_watermarks (namespace, through_seq) VALUES (?1, "
                         "?2) ON CONFLICT (namespace) DO UPDATE SET through_seq = "
                         "excluded.through_seq");
  for (const EdgeSweep& sweep : sweeps) {
    edges_reinforced += sweep.reinforced;
    if (sweep.reinforced == 0) continue;
    store::exec_bound(save, sweep.ns, sweep.newest);
  }
  return edges_reinforced;
}

}  // namespace

nlohmann::json run_decay(JobContext& ctx, const VitalityParams& /*params*/,
                         std::int64_t edge_half_life_s) {
  SQLite::Database& db = ctx.db;
  const std::int64_t now = ctx.clock.now_us();
  const std::string ns = ctx.ns;
  ctx.cancel.check();
  WriteTransaction transaction(ctx);
  const KnowledgeSweep knowledge = decay_knowledge(db, now, ns);
  ctx.cancel.check();
  const std::int64_t archived = archive_due_events(db, now, ns);
  ctx.cancel.check();
  const std::int64_t edges_reinforced = sweep_edges(db, ns);
  const std::int64_t merges = execute_pending_merges(db, ns, edge_half_life_s, "job:decay", now);
  ctx.cancel.check();
  transaction.commit();

  return {{"facts_scored", knowledge.scored},
          {"facts_marked_stale", knowledge.decaying + knowledge.dormant + archived},
          {"edges_reinforced", edges_reinforced},
          {"merges_executed", merges},
          {"events_archived", archived},
          {"knowledge_decaying", knowledge.decaying},
          {"knowledge_dormant", knowledge.dormant},
          {"knowledge_reactivated", knowledge.reactivated}};
}

}  // namespace reflectd::jobs
