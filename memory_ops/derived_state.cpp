#include "memory_ops/derived_state.hpp"

#include <array>

namespace reflectd::memory_ops {
namespace {

// Children before parents (the foreign keys), and entity_relationships before
// entity_summary_dirty (its delete trigger marks the source entity dirty). ?1 = namespace.
constexpr std::array kClear{
    // The jobs' audit rows about the namespace's derived records: their rationales and ids
    // quote targets, titles and entity names (a forget marks itself in forget_in_progress,
    // which migration 28's trigger requires).
    "DELETE FROM audit_log WHERE actor LIKE 'job:%' AND record_type != 'event' AND ("
    "record_id IN (SELECT decision_id FROM knowledge WHERE namespace = ?1) OR record_id IN (SELECT "
    "observation_id FROM observations WHERE namespace = ?1) "
    "OR record_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1) "
    "OR substr(record_id, 1, length(?1) + 10) = 'proposal:' || ?1 || ':' "
    "OR record_id = 'med:' || ?1 "
    "OR (record_type = 'entity' AND json_extract(previous, '$.namespace') = ?1) "
    "OR (record_type = 'observation' AND instr(record_id, ':' || ?1 || ':') > 0 AND "
    "substr(record_id, 1, instr(record_id, ':' || ?1 || ':') - 1) IN "
    "('pattern', 'competence', 'community', 'trend')))",
    // Consolidation: the job's knowledge. Agents' own records (provenance 'external') stay as
    // their events made them: their own event as evidence, the lifecycle columns as
    // knowledge_store.cpp inserts them; the rebuild evaluates them again.
    "DELETE FROM knowledge_evidence WHERE decision_id IN (SELECT decision_id FROM knowledge "
    "WHERE namespace = ?1 AND (provenance = 'internal' OR source_event_seq IS NULL OR "
    "source_event_seq != knowledge_evidence.event_seq))",
    "DELETE FROM consolidation_streams WHERE decision_id IN (SELECT decision_id FROM knowledge "
    "WHERE namespace = ?1)",
    "UPDATE knowledge SET phase = 'pattern', vitality = 'active', confidence = "
    "confidence_base, frequency = 1, "
    "unique_contexts = 1, stability_score = 0.0, reinforcement_density = 0.0, coverage = 0.0, "
    "lifetime_days = 0.0, estimated_removal_cost = 0.0, estimated_utility = 0.0, "
    "acceptance_score = NULL, first_seen_us = coalesce((SELECT e.ts_us FROM events e WHERE "
    "e.seq = knowledge.source_event_seq), first_seen_us), last_seen_us = coalesce((SELECT "
    "e.ts_us FROM events e WHERE e.seq = knowledge.source_event_seq), last_seen_us) WHERE "
    "namespace = ?1 AND provenance = 'external'",
    "DELETE FROM extracted_decisions WHERE namespace = ?1",
    "DELETE FROM knowledge WHERE namespace = ?1 AND provenance = 'internal'",
    "DELETE FROM community_members WHERE observation_id IN (SELECT observation_id FROM "
    "observations WHERE namespace = ?1)",
    "DELETE FROM observations WHERE namespace = ?1",
    "DELETE FROM consolidation_targets WHERE namespace = ?1",
    "DELETE FROM event_targets WHERE namespace = ?1",
    "DELETE FROM problem_occurrences WHERE namespace = ?1",
    "DELETE FROM problem_patterns WHERE namespace = ?1",
    "DELETE FROM problem_pattern_targets WHERE namespace = ?1",
    "DELETE FROM trajectory_outcomes WHERE namespace = ?1",
    "DELETE FROM unanswered_questions WHERE namespace = ?1",
    // Clusters.
    "DELETE FROM event_clusters WHERE cluster_id IN (SELECT cluster_id FROM clusters WHERE "
    "namespace = ?1)",
    "DELETE FROM cluster_entities WHERE cluster_id IN (SELECT cluster_id FROM clusters WHERE "
    "namespace = ?1)",
    "DELETE FROM cluster_postings WHERE namespace = ?1",
    "DELETE FROM cluster_terms WHERE namespace = ?1",
    "DELETE FROM clusters WHERE namespace = ?1",
    // Entities, their edges, importance and summaries.
    "DELETE FROM entity_relationships WHERE namespace = ?1",
    "DELETE FROM event_entities WHERE entity_id IN (SELECT entity_id FROM entities WHERE "
    "namespace = ?1)",
    "DELETE FROM entity_mention_weights WHERE entity_id IN (SELECT entity_id FROM entities "
    "WHERE namespace = ?1)",
    "DELETE FROM entity_summary_dirty WHERE entity_id IN (SELECT entity_id FROM entities WHERE "
    "namespace = ?1)",
    "DELETE FROM entity_summary_state WHERE entity_id IN (SELECT entity_id FROM entities WHERE "
    "namespace = ?1)",
    "DELETE FROM entity_aliases WHERE namespace = ?1",
    "DELETE FROM entities WHERE namespace = ?1",
    // The job's medallions and their history (a version may quote a forgotten event); their
    // scope rows last, after the medallions that reference them. Agents' medallions stay.
    "CREATE TEMP TABLE IF NOT EXISTS cleared_medallions (id TEXT PRIMARY KEY)",
    "INSERT OR IGNORE INTO temp.cleared_medallions (id) SELECT medallion_id FROM "
    "medallion_scopes WHERE namespace = ?1 AND medallion_id NOT IN (SELECT medallion_id FROM "
    "agent_medallions)",
    "DELETE FROM medallion_items WHERE medallion_id IN (SELECT id FROM temp.cleared_medallions)",
    "DELETE FROM medallion_nodes WHERE medallion_id IN (SELECT id FROM temp.cleared_medallions)",
    "DELETE FROM medallion_tags WHERE medallion_id IN (SELECT id FROM temp.cleared_medallions)",
    "DELETE FROM medallion_history WHERE medallion_id IN (SELECT id FROM "
    "temp.cleared_medallions)",
    "DELETE FROM medallion_scopes WHERE medallion_id IN (SELECT id FROM "
    "temp.cleared_medallions)",
    "DELETE FROM medallions WHERE id IN (SELECT id FROM temp.cleared_medallions)",
    "DELETE FROM temp.cleared_medallions",
    "DELETE FROM medallion_spans WHERE namespace = ?1",
    // Watermarks.
    "DELETE FROM importance_state WHERE namespace = ?1",
    "DELETE FROM entity_summary_watermarks WHERE namespace = ?1",
    "DELETE FROM decay_edge_watermarks WHERE namespace = ?1",
    "DELETE FROM job_state WHERE namespace = ?1",
};

}  // namespace

std::int64_t clear_derived_state(SQLite::Database& db, const std::string& ns) {
  std::int64_t deleted = 0;
  for (const char* sql : kClear) {
    SQLite::Statement statement(db, sql);
    if (statement.getBindParameterCount() > 0) statement.bind(1, ns);
    deleted += statement.exec();
  }
  return deleted;
}

}  // namespace reflectd::memory_ops
