#include "jobs/decay.hpp"

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

}  // namespace

nlohmann::json run_decay(JobContext& ctx, const VitalityParams& /*params*/) {
  SQLite::Database& db = ctx.db;
  const std::int64_t now = ctx.clock.now_us();
  const std::string ns = ctx.ns;
  ctx.cancel.check();
  WriteTransaction transaction(ctx);
  const std::string in_scope = "(?2 = '' OR namespace = ?2)";
  const std::string new_vitality = std::string("rd_vitality(") + kLastActivity + ", ?1)";

  const std::int64_t scored =
      count(db, "SELECT count(*) FROM knowledge WHERE ?1 = ?1 AND " + in_scope, now, ns);
  const std::int64_t decaying =
      count(db,
            "SELECT count(*) FROM knowledge WHERE " + in_scope +
                " AND vitality != " + new_vitality + " AND " + new_vitality + " = 'decaying'",
            now, ns);
  const std::int64_t dormant =
      count(db,
            "SELECT count(*) FROM knowledge WHERE " + in_scope +
                " AND vitality != " + new_vitality + " AND " + new_vitality + " = 'dormant'",
            now, ns);
  const std::int64_t reactivated =
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
  ctx.cancel.check();

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
  const int archived_audited = audit_events.exec();
  SQLite::Statement archive(db,
                            "UPDATE events SET status = 'archived' WHERE archive_at_us <= ?1 "
                            "AND status = 'active' AND " +
                                in_scope);
  archive.bind(1, static_cast<std::int64_t>(now));
  archive.bind(2, ns);
  const int archived = archive.exec();
  (void)archived_audited;
  ctx.cancel.check();

  // Entity edges: their strength is a function of (strength_base, strength_ref_us) evaluated
  // by whoever reads it (edge_strength_at), so nothing here depends on the edge count; only the
  // flags of the edges reinforced since the previous sweep are cleared (partial index).
  const std::int64_t edges_reinforced = count(
      db, "SELECT count(*) FROM entity_relationships WHERE ?1 = ?1 AND unswept = 1 AND " + in_scope,
      now, ns);
  SQLite::Statement edges(
      db, "UPDATE entity_relationships SET unswept = 0 WHERE unswept = 1 AND " + in_scope);
  edges.bind(2, ns);
  edges.exec();
  ctx.cancel.check();
  transaction.commit();

  return {{"facts_scored", scored},
          {"facts_marked_stale", decaying + dormant + archived},
          {"edges_reinforced", edges_reinforced},
          {"merges_executed", 0},
          {"events_archived", archived},
          {"knowledge_decaying", decaying},
          {"knowledge_dormant", dormant},
          {"knowledge_reactivated", reactivated}};
}

}  // namespace reflectd::jobs
