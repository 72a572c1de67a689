#include "memory_ops/derived_state.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace reflectd::memory_ops {
namespace {

// One step of a clear: the rows of `table` that `where` selects (?1 = namespace), or, when
// `table` is null, a statement run once (`where` is then the whole statement). `keys`, when
// set, selects the doomed rows' keys itself (a join where a WHERE on `table` alone would be a
// correlated scan per row); its columns are the table's primary key, or rowid.
//
// `cursor`, when set, is an integer column the chunks advance along (?3: the largest value the
// previous chunk deleted; >=, since a value may have rows left, and the rows deleted are gone),
// so that each chunk starts where the last one ended instead of
// scanning again the rows the step keeps (the audit log's other rows) or reaching its rows in
// an order that scatters the table's pages (the mentions, in seq order).
struct ClearStep {
  const char* table;
  const char* where;
  const char* keys = nullptr;
  const char* cursor = nullptr;
};

// Children before parents (the foreign keys), and entity_relationships before
// entity_summary_dirty (its delete trigger marks the source entity dirty). Every step is
// idempotent, so that a clear interrupted anywhere (a crash, a cancelled run) may run again
// from its first step with the same result; the order keeps what a step selects by (the
// audit rows' records, the medallions' scopes) until after the steps that need it.
constexpr std::array<ClearStep, 39> kSteps{{
    // The jobs' audit rows about the namespace's derived records: their rationales and ids
    // quote targets, titles and entity names (a forget marks itself in forget_in_progress,
    // which migration 28's trigger requires).
    {"audit_log",
     "actor LIKE 'job:%' AND record_type != 'event' AND ("
     "record_id IN (SELECT decision_id FROM knowledge WHERE namespace = ?1) OR record_id IN "
     "(SELECT observation_id FROM observations WHERE namespace = ?1) "
     "OR record_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1) "
     "OR substr(record_id, 1, length(?1) + 10) = 'proposal:' || ?1 || ':' "
     "OR record_id = 'med:' || ?1 "
     "OR (record_type = 'entity' AND json_extract(previous, '$.namespace') = ?1) "
     "OR (record_type = 'observation' AND instr(record_id, ':' || ?1 || ':') > 0 AND "
     "substr(record_id, 1, instr(record_id, ':' || ?1 || ':') - 1) IN "
     "('pattern', 'competence', 'community', 'trend')))",
     nullptr, "audit_id"},
    // Consolidation: the job's knowledge. Agents' own records (provenance 'external') stay as
    // their events made them: their own event as evidence, the lifecycle columns as
    // knowledge_store.cpp inserts them; the rebuild evaluates them again. Driven from the
    // namespace's knowledge rows: a WHERE on knowledge_evidence alone ran its subquery once
    // per evidence row (720,000 rows x 5,000 records at 1M events: minutes).
    {"knowledge_evidence", nullptr,
     "SELECT ke.decision_id, ke.event_seq FROM knowledge k JOIN knowledge_evidence ke ON "
     "ke.decision_id = k.decision_id WHERE k.namespace = ?1 AND (k.provenance = 'internal' OR "
     "k.source_event_seq IS NULL OR k.source_event_seq != ke.event_seq)"},
    {"consolidation_streams",
     "decision_id IN (SELECT decision_id FROM knowledge WHERE namespace = ?1)"},
    {nullptr,
     "UPDATE knowledge SET phase = 'pattern', vitality = 'active', confidence = "
     "confidence_base, frequency = 1, "
     "unique_contexts = 1, stability_score = 0.0, reinforcement_density = 0.0, coverage = 0.0, "
     "lifetime_days = 0.0, estimated_removal_cost = 0.0, estimated_utility = 0.0, "
     "acceptance_score = NULL, first_seen_us = coalesce((SELECT e.ts_us FROM events e WHERE "
     "e.seq = knowledge.source_event_seq), first_seen_us), last_seen_us = coalesce((SELECT "
     "e.ts_us FROM events e WHERE e.seq = knowledge.source_event_seq), last_seen_us) WHERE "
     "namespace = ?1 AND provenance = 'external'"},
    {"extracted_decisions", "namespace = ?1"},
    {"knowledge", "namespace = ?1 AND provenance = 'internal'"},
    {"community_members",
     "observation_id IN (SELECT observation_id FROM observations WHERE namespace = ?1)"},
    {"observations", "namespace = ?1"},
    {"consolidation_targets", "namespace = ?1"},
    {"event_targets", "namespace = ?1"},
    {"problem_occurrences", "namespace = ?1"},
    {"problem_patterns", "namespace = ?1"},
    {"problem_pattern_targets", "namespace = ?1"},
    {"trajectory_outcomes", "namespace = ?1"},
    {"unanswered_questions", "namespace = ?1"},
    // Clusters.
    {"event_clusters", "+cluster_id IN (SELECT cluster_id FROM clusters WHERE namespace = ?1)",
     nullptr, "seq"},
    {"cluster_entities", "cluster_id IN (SELECT cluster_id FROM clusters WHERE namespace = ?1)"},
    {"cluster_postings", "namespace = ?1"},
    {"cluster_terms", "namespace = ?1"},
    {"clusters", "namespace = ?1"},
    // Entities, their edges, importance and summaries. event_entities' delete trigger stands
    // aside during a forget (migration 36): what it maintains row by row (mention weights,
    // importance, dirty summaries) is cleared below, and the clear counts itself once in
    // entity_summary_epoch when its mark goes (migration 36's derived_clears_done).
    {"entity_relationships", "namespace = ?1"},
    {"event_entities", "+entity_id IN (SELECT entity_id FROM entities WHERE namespace = ?1)",
     nullptr, "seq"},
    {"entity_mention_weights",
     "entity_id IN (SELECT entity_id FROM entities WHERE namespace = ?1)"},
    {"entity_summary_dirty", "entity_id IN (SELECT entity_id FROM entities WHERE namespace = ?1)"},
    {"entity_summary_state", "entity_id IN (SELECT entity_id FROM entities WHERE namespace = ?1)"},
    {"entity_aliases", "namespace = ?1"},
    {"entities", "namespace = ?1"},
    // The job's medallions and their history (a version may quote a forgotten event), found by
    // their scope rows, which go last. Agents' medallions stay.
    {"medallion_items",
     "medallion_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1 AND "
     "medallion_id NOT IN (SELECT medallion_id FROM agent_medallions))"},
    {"medallion_nodes",
     "medallion_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1 AND "
     "medallion_id NOT IN (SELECT medallion_id FROM agent_medallions))"},
    {"medallion_tags",
     "medallion_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1 AND "
     "medallion_id NOT IN (SELECT medallion_id FROM agent_medallions))"},
    {"medallion_history",
     "medallion_id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1 AND "
     "medallion_id NOT IN (SELECT medallion_id FROM agent_medallions))"},
    {"medallions",
     "id IN (SELECT medallion_id FROM medallion_scopes WHERE namespace = ?1 AND "
     "medallion_id NOT IN (SELECT medallion_id FROM agent_medallions))"},
    {"medallion_scopes",
     "namespace = ?1 AND medallion_id NOT IN (SELECT medallion_id FROM agent_medallions)"},
    {"medallion_spans", "namespace = ?1"},
    // Watermarks.
    {"importance_state", "namespace = ?1"},
    {"entity_summary_watermarks", "namespace = ?1"},
    {"decay_edge_watermarks", "namespace = ?1"},
    {"job_state", "namespace = ?1"},
    {nullptr, "DELETE FROM derived_clears WHERE namespace = ?1"},
}};

// The key columns of `table`: its primary key when it has no rowid, else rowid.
std::string key_columns(SQLite::Database& db, const char* table) {
  SQLite::Statement without_rowid(
      db, "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1");
  without_rowid.bind(1, table);
  if (!without_rowid.executeStep() || without_rowid.getColumn(0).getInt() == 0) return "rowid";
  without_rowid.reset();
  SQLite::Statement pk(db, "SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk");
  pk.bind(1, table);
  std::string keys;
  while (pk.executeStep()) {
    if (!keys.empty()) keys += ", ";
    keys += pk.getColumn(0).getString();
  }
  return keys;
}

// The statement of one step; ?2 bounds the rows one execution deletes (-1: no bound).
std::string step_sql(SQLite::Database& db, const ClearStep& step) {
  if (step.table == nullptr) return step.where;
  const std::string keys = key_columns(db, step.table);
  if (step.cursor != nullptr) {
    const std::string cursor = step.cursor;
    return "DELETE FROM " + std::string(step.table) + " WHERE (" + keys + ") IN (SELECT " + keys +
           " FROM " + step.table + " WHERE " + cursor + " >= ?3 AND (" + step.where +
           ") ORDER BY " + cursor + " LIMIT ?2) RETURNING " + cursor;
  }
  const std::string select =
      step.keys != nullptr ? std::string(step.keys)
                           : "SELECT " + keys + " FROM " + step.table + " WHERE " + step.where;
  return "DELETE FROM " + std::string(step.table) + " WHERE (" + keys + ") IN (" + select +
         " LIMIT ?2)";
}

// Opens one write transaction of a clear: marked in forget_in_progress (the audit log's and
// event_entities' triggers read it).
void begin_clear(SQLite::Database& db) {
  db.exec("INSERT OR IGNORE INTO forget_in_progress (id) VALUES (1)");
}

void end_clear(SQLite::Database& db) { db.exec("DELETE FROM forget_in_progress"); }

// Runs `statement` (step_sql() of `step`) once for `ns`, deleting at most `limit` rows (-1: all
// of them) past `cursor` (a step with a cursor column; advanced to the last row deleted).
// Returns the rows deleted (0 for a step without a table).
std::int64_t run_step(SQLite::Statement& statement, const ClearStep& step, const std::string& ns,
                      std::int64_t limit, std::int64_t& cursor) {
  statement.reset();
  statement.bind(1, ns);
  if (step.table == nullptr) {
    statement.exec();
    return 0;
  }
  statement.bind(2, static_cast<std::int64_t>(limit));
  if (step.cursor == nullptr) return statement.exec();
  statement.bind(3, static_cast<std::int64_t>(cursor));
  std::int64_t deleted = 0;
  while (statement.executeStep()) {
    ++deleted;
    cursor = std::max(cursor, statement.getColumn(0).getInt64());
  }
  statement.reset();
  return deleted;
}

}  // namespace

void mark_for_clear(SQLite::Database& db, const std::string& ns, std::int64_t now_us) {
  SQLite::Statement mark(db,
                         "INSERT OR IGNORE INTO derived_clears (namespace, requested_us) "
                         "VALUES (?1, ?2)");
  mark.bind(1, ns);
  mark.bind(2, static_cast<std::int64_t>(now_us));
  mark.exec();
}

std::vector<std::string> pending_clears(SQLite::Database& db) {
  std::vector<std::string> out;
  SQLite::Statement pending(db, "SELECT namespace FROM derived_clears ORDER BY namespace");
  while (pending.executeStep()) out.push_back(pending.getColumn(0).getString());
  return out;
}

std::int64_t run_pending_clears(jobs::JobContext& ctx, std::set<std::string>& cleared,
                                std::int64_t* transactions) {
  std::int64_t deleted = 0;
  for (const std::string& ns : pending_clears(ctx.db)) {
    std::vector<SQLite::Statement> statements;
    statements.reserve(kSteps.size());
    for (const ClearStep& step : kSteps) statements.emplace_back(ctx.db, step_sql(ctx.db, step));
    std::size_t next = 0;
    std::int64_t cursor = std::numeric_limits<std::int64_t>::min();
    while (next < kSteps.size()) {
      ctx.cancel.check();
      jobs::WriteTransaction transaction(ctx);
      begin_clear(ctx.db);
      bool yield = false;
      while (next < kSteps.size() && !yield) {
        const std::int64_t n =
            run_step(statements[next], kSteps[next], ns, kClearChunkRows, cursor);
        deleted += n;
        if (kSteps[next].table == nullptr || n < kClearChunkRows) {
          ++next;
          cursor = std::numeric_limits<std::int64_t>::min();
        }
        yield = transaction.should_yield();
      }
      end_clear(ctx.db);
      transaction.commit();
      if (transactions != nullptr) ++*transactions;
    }
    cleared.insert(ns);
  }
  return deleted;
}

}  // namespace reflectd::memory_ops
