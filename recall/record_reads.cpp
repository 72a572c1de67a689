#include "recall/record_reads.hpp"

#include <fmt/format.h>

#include "common/timestamp.hpp"
#include "model/request_params.hpp"
#include "recall/read_sql.hpp"
#include "store/columns.hpp"
#include "store/fts_index.hpp"
#include "text/entity_extraction.hpp"
#include "text/fact_extraction.hpp"
#include "text/fts_query.hpp"

namespace reflectd::recall {

// Request parameters are read by the same pure helpers the control fuzz target drives.
using model::limit_param;
using model::string_list;
using model::text_param;
using text::fts_query;

// Derived records (migration 8) are read like events: rank r of the record's sensitivity,
// rows more than one level above the caller's clearance never read, rows one level above with
// their text replaced by kRedacted (?23) and their content lists nulled; `redacted` says which.
// read_sql::hidden(col) and read_sql::redacted_text(col) build those columns over an inner
// query's `r`.
namespace {

// Observations are ranked when read, from their sources (consolidation rewrites them at every
// chunk, so triggers there were costly; they are few): a pattern from its problem occurrences,
// a community from its member entities and clusters (whose level can rise after it was
// detected), any other type from the events it lists as support. `o` names the table.
std::string observation_rank_sql(const char* o) {
  const std::string event = read_sql::rank_sql("e.sensitivity");
  return fmt::format(
      "(CASE {0}.observation_type "
      "WHEN 'pattern' THEN coalesce((SELECT max({1}) FROM problem_occurrences p JOIN events e ON "
      "e.seq = p.seq "
      "WHERE p.namespace = {0}.namespace AND p.signature = {0}.signature), 0) "
      "WHEN 'community' THEN max("
      "coalesce((SELECT max({2}) FROM community_members cm JOIN entities n ON n.entity_id = "
      "cm.member_id "
      "WHERE cm.observation_id = {0}.observation_id AND cm.member_type = 'entity'), 0), "
      "coalesce((SELECT max({3}) FROM community_members cm JOIN clusters c ON c.cluster_id = "
      "cm.member_id "
      "WHERE cm.observation_id = {0}.observation_id AND cm.member_type = 'cluster'), 0)) "
      "ELSE coalesce((SELECT max({1}) FROM json_each({0}.supporting_event_ids) j JOIN events e ON "
      "e.seq = j.value), 0) "
      "END)",
      o, event, read_sql::rank_sql("n.sensitivity"), read_sql::rank_sql("c.sensitivity"));
}

}  // namespace

nlohmann::json read_knowledge(SQLite::Database& db, const nlohmann::json& request,
                              const ReadScope& caller) {
  SQLite::Statement query(db,
                          R"sql(
SELECT decision_id, namespace, kind, )sql" +
                              read_sql::hidden("target") + ", " + read_sql::redacted_text("title") +
                              ", " + read_sql::redacted_text("rationale") +
                              R"sql(, scope, status, phase, vitality,
       provenance, sensitivity, r > ?20 AS redacted, )sql" +
                              read_sql::hidden("keywords", "keywords_json") + ", " +
                              read_sql::hidden("evidence_event_ids", "evidence_event_ids_json") +
                              ", " + read_sql::hidden("consequences", "consequences_json") + R"sql(,
       supersedes AS supersedes_json, superseded_by, )sql" +
                              read_sql::hidden("procedural", "procedural_json") + R"sql(,
       frequency, unique_contexts, hit_count, confidence,
       stability_score, reinforcement_density, coverage, lifetime_days, estimated_removal_cost,
       estimated_utility, acceptance_score, first_seen_us, last_seen_us, updated_us
FROM (SELECT *, )sql" + read_sql::rank_sql("sensitivity") +
                              R"sql( AS r FROM knowledge
      WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR phase = ?2) AND (?3 = '' OR status = ?3)
        AND (?5 = '' OR kind = ?5) AND )sql" +
                              read_sql::scope_sql("namespace") +
                              R"sql()
WHERE r <= ?20 + 1
ORDER BY CASE phase WHEN 'canonical' THEN 0 WHEN 'emergent' THEN 1 ELSE 2 END, frequency DESC,
         last_seen_us DESC, decision_id
LIMIT ?4)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "phase"));
  query.bind(3, text_param(request, "status"));
  query.bind(4, limit_param(request, 50));
  query.bind(5, text_param(request, "kind"));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"knowledge", read_sql::rows(query)}};
}

nlohmann::json read_observations(SQLite::Database& db, const nlohmann::json& request,
                                 const ReadScope& caller) {
  SQLite::Statement query(db, R"sql(
SELECT observation_id, namespace, observation_type, )sql" +
                                  read_sql::hidden("target") + ", " +
                                  read_sql::redacted_text("title") + ", " +
                                  read_sql::redacted_text("text") + ", " +
                                  read_sql::level_sql("r") +
                                  R"sql( AS sensitivity, r > ?20 AS redacted,
       )sql" + read_sql::hidden("supporting_event_ids", "supporting_event_ids_json") +
                                  R"sql(, support_count, trajectory_count,
       success_count, confidence, importance, times_reinforced, first_detected_us,
       last_reinforced_us
FROM (SELECT o.*, )sql" + observation_rank_sql("o") +
                                  R"sql( AS r FROM observations o
      WHERE (?1 = '' OR o.namespace = ?1) AND (?2 = '' OR o.observation_type = ?2) AND o.is_active = 1
        AND )sql" + read_sql::scope_sql("o.namespace") +
                                  R"sql()
WHERE r <= ?20 + 1
ORDER BY support_count DESC, observation_id
LIMIT ?3)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "type"));
  query.bind(3, limit_param(request, 50));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"observations", read_sql::rows(query)}};
}

namespace {

// The canonical keys of `entities` (rows of read_entities) that are not redacted.
nlohmann::json listed_keys(const nlohmann::json& entities) {
  nlohmann::json keys = nlohmann::json::array();
  for (const nlohmann::json& e : entities) {
    if (e.value("redacted", 0) == 0 && e["canonical_key"].is_string()) {
      keys.push_back(e["canonical_key"]);
    }
  }
  return keys;
}

// The current relationships (valid_to_us null) among `entities` (rows of read_entities, the
// redacted ones left out), strongest first, at most 500: what a graph of them draws.
nlohmann::json entity_edges(SQLite::Database& db, const std::string& ns,
                            const nlohmann::json& entities) {
  const nlohmann::json keys = listed_keys(entities);
  SQLite::Statement query(db, R"sql(
SELECT s.canonical_key AS source, t.canonical_key AS target, r.rel_type, r.strength,
       r.mention_count
FROM entity_relationships r
JOIN entities s ON s.entity_id = r.source_id
JOIN entities t ON t.entity_id = r.target_id
WHERE r.namespace = ?1 AND r.valid_to_us IS NULL
  AND s.canonical_key IN (SELECT value FROM json_each(?2))
  AND t.canonical_key IN (SELECT value FROM json_each(?2))
  AND s.namespace = ?1 AND t.namespace = ?1
ORDER BY r.strength DESC, s.canonical_key, t.canonical_key, r.rel_type
LIMIT 500)sql");
  query.bind(1, ns);
  query.bind(2, keys.dump());
  return read_sql::rows(query);
}

// The communities (the cluster job's community observations) that `entities` belong to: one
// row per membership, {canonical_key, community}, in key order.
nlohmann::json entity_communities(SQLite::Database& db, const std::string& ns,
                                  const nlohmann::json& entities) {
  SQLite::Statement query(db, R"sql(
SELECT e.canonical_key, cm.observation_id AS community
FROM community_members cm
JOIN entities e ON e.entity_id = cm.member_id
WHERE cm.member_type = 'entity' AND e.namespace = ?1
  AND e.canonical_key IN (SELECT value FROM json_each(?2))
ORDER BY e.canonical_key, cm.observation_id)sql");
  query.bind(1, ns);
  query.bind(2, listed_keys(entities).dump());
  return read_sql::rows(query);
}

}  // namespace

// {"cmd":"entities","namespace":NS,"top":K,"type":T,"edges":B}: the most important entities,
// with `edges` (in a namespace) the relationships among them. A redacted
// entity keeps its canonical key's type but not the key: the key is text from its events.
nlohmann::json read_entities(SQLite::Database& db, const nlohmann::json& request,
                             const ReadScope& caller) {
  const int top = limit_param(request, limit_param(request, 20), "top");
  SQLite::Statement query(db, R"sql(
SELECT namespace, )sql" + read_sql::redacted_text("canonical_key") +
                                  ", " + read_sql::redacted_text("display_name") + R"sql(,
       entity_type, importance_score, mention_count, first_seen_us, last_seen_us,
       )sql" + read_sql::redacted_text("summary_text") +
                                  R"sql(, sensitivity, r > ?20 AS redacted
FROM (SELECT *, )sql" + read_sql::rank_sql("sensitivity") +
                                  R"sql( AS r FROM entities
      WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR entity_type = ?2) AND is_active = 1
        AND )sql" + read_sql::scope_sql("namespace") +
                                  R"sql()
WHERE r <= ?20 + 1
ORDER BY round(importance_score, 9) DESC, mention_count DESC, namespace, canonical_key
LIMIT ?3)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "type"));
  query.bind(3, top);
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  nlohmann::json out = {{"ok", true}, {"entities", read_sql::rows(query)}};
  if (request.value("edges", false) && !text_param(request, "namespace").empty()) {
    out["edges"] = entity_edges(db, text_param(request, "namespace"), out["entities"]);
    out["communities"] = entity_communities(db, text_param(request, "namespace"), out["entities"]);
  }
  return out;
}

// {"cmd":"clusters","namespace":NS,"limit":N}: the largest clusters.
nlohmann::json read_clusters(SQLite::Database& db, const nlohmann::json& request,
                             const ReadScope& caller) {
  SQLite::Statement query(db, R"sql(
SELECT cluster_id, namespace, )sql" +
                                  read_sql::redacted_text("label") + ", " +
                                  read_sql::redacted_text("summary_text") +
                                  R"sql(,
       member_count, duplicate_count, )sql" +
                                  read_sql::hidden("medoid_seq") + R"sql(,
       first_seq, last_seq, first_seen_us, last_seen_us, sensitivity, r > ?20 AS redacted
FROM (SELECT *, )sql" + read_sql::rank_sql("sensitivity") +
                                  R"sql( AS r FROM clusters
      WHERE (?1 = '' OR namespace = ?1) AND is_active = 1
        AND )sql" + read_sql::scope_sql("namespace") +
                                  R"sql()
WHERE r <= ?20 + 1
ORDER BY member_count + duplicate_count DESC, cluster_id
LIMIT ?2)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, limit_param(request, 20));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"clusters", read_sql::rows(query)}};
}

nlohmann::json read_search(SQLite::Database& db, const nlohmann::json& request,
                           const ReadScope& caller, std::int64_t now_us) {
  const std::string query = fts_query(text_param(request, "text"));
  if (query.empty()) return {{"ok", false}, {"error", "search: \"text\" must contain a word"}};
  // score = bm25 relevance (negated: higher is better) x salience weight x vitality weight:
  // (0.5 + 0.5 * min(1, salience now)) and, for events behind a knowledge row, 1 / 0.75 / 0.5
  // for ACTIVE / DECAYING / DORMANT. Fields follow seed 000 SearchResultItem.
  // Clearance in the WHERE clause: rows more than one level above it are never read; rows
  // one level above come back with the preview replaced by kRedacted.
  const std::string rank = read_sql::rank_sql("e.sensitivity");
  SQLite::Statement search(db, R"sql(
SELECT e.uid AS id, e.seq, e.kind, e.namespace, e.sensitivity,
       coalesce(k.status, e.status) AS status,
       -bm25(events_fts, 1.0, 0.0) * (0.5 + 0.5 * min(1.0, rd_salience(e.salience_base, e.salience_ref_us,
           e.received_us, e.decay_curve, e.half_life_s, e.min_salience, e.max_age_s, e.pinned, ?4)))
         * CASE k.vitality WHEN 'decaying' THEN 0.75 WHEN 'dormant' THEN 0.5 ELSE 1.0 END AS score,
       CASE WHEN )sql" + rank + R"sql( > ?20 THEN ?23
            ELSE snippet(events_fts, 0, '[', ']', '...', 24) END AS preview,
       )sql" + rank + R"sql( > ?20 AS redacted
FROM events_fts JOIN events e ON e.seq = events_fts.rowid
LEFT JOIN knowledge k ON k.source_event_seq = e.seq
WHERE events_fts MATCH 'content : (' || ?1 || ')' AND (?2 = '' OR e.namespace = ?2) AND (?3 = '' OR e.kind = ?3)
  AND )sql" + rank + R"sql( <= ?20 + 1 AND )sql" +
                                   read_sql::scope_sql("e.namespace") + R"sql(
ORDER BY score DESC, e.seq DESC
LIMIT ?5)sql");
  search.bind(1, query);
  search.bind(2, text_param(request, "namespace"));
  search.bind(3, text_param(request, "kind"));
  search.bind(4, static_cast<std::int64_t>(now_us));
  search.bind(5, limit_param(request, 10));
  read_sql::bind_scope(search, caller, true);
  search.bind(23, kRedacted);
  // Read first: the results below come from the same or a later snapshot, so they are
  // complete at least through indexed_through_seq.
  const store::FtsLag lag = store::read_fts_lag(db);
  return {{"ok", true},
          {"query", query},
          {"indexed_through_seq", lag.indexed_through_seq},
          {"lag_events", lag.lag_events},
          {"results", read_sql::rows(search)}};
}

namespace {

// A fact's time as its reader wants it: a date when it came from one (the exclusive end shown
// as the last day), else an RFC 3339 instant.
nlohmann::json fact_time(const SQLite::Column& column, bool whole_days, bool is_end) {
  if (column.isNull()) return nullptr;
  constexpr std::int64_t kDayUs = 86'400'000'000;
  std::int64_t us = column.getInt64();
  if (whole_days && us % kDayUs == 0) {
    if (is_end) us -= kDayUs;
    return format_rfc3339_us(us).substr(0, 10);
  }
  return format_rfc3339_us(us);
}

}  // namespace

nlohmann::json read_facts(SQLite::Database& db, const nlohmann::json& request,
                          const ReadScope& caller) {
  const auto after = request.find("after_id");
  if (after != request.end() && !after->is_number_integer()) {
    return {{"ok", false}, {"error", "after_id: must be an integer (a fact id)"}};
  }
  const std::int64_t after_id = after != request.end() ? after->get<std::int64_t>() : 0;
  std::string entity = text_param(request, "entity");
  std::string entity_name;
  if (!entity.empty() && entity.find(':') == std::string::npos) {
    entity_name = std::move(entity);
    entity.clear();
  } else if (!entity.empty()) {
    entity = text::canonical_key(entity).value_or(entity);
  }
  const auto current = request.find("current");
  const bool only_current =
      current != request.end() && current->is_boolean() && current->get<bool>();
  SQLite::Statement query(db, R"sql(
SELECT f.fact_id, f.namespace, f.entity_key, f.entity_name, f.attribute_key,
       CASE WHEN f.r > ?20 THEN ?23 ELSE f.fact_text END, f.confidence, f.valid_from_us,
       f.valid_to_us, f.whole_days, e.uid, f.supersedes_fact_id, f.is_stale, f.times_retrieved,
       f.sensitivity, f.r > ?20,
       CASE WHEN f.r > ?20 THEN NULL ELSE (SELECT json_group_array(json_object('key', l.entity_key,
         'name', l.entity_name)) FROM fact_entity_links l
         WHERE l.fact_id = f.fact_id AND l.is_primary = 0) END
FROM (SELECT *, )sql" + read_sql::rank_sql("sensitivity") +
                                  R"sql( AS r FROM facts
      WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR entity_key = ?2)
        AND (?3 = '' OR entity_name = ?3 COLLATE NOCASE) AND (?4 = '' OR attribute_key = ?4)
        AND (?5 = 0 OR is_stale = 0) AND fact_id > ?6 AND )sql" +
                                  read_sql::scope_sql("namespace") + R"sql() f
JOIN events e ON e.seq = f.source_seq
WHERE f.r <= ?20 + 1
ORDER BY f.fact_id
LIMIT ?7)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, entity);
  query.bind(3, entity_name);
  query.bind(4, text_param(request, "attribute"));
  query.bind(5, only_current ? 1 : 0);
  query.bind(6, after_id);
  query.bind(7, limit_param(request, 50));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  nlohmann::json facts = nlohmann::json::array();
  while (query.executeStep()) {
    const bool whole_days = query.getColumn(9).getInt() != 0;
    facts.push_back({
        {"id", query.getColumn(0).getInt64()},
        {"namespace", query.getColumn(1).getString()},
        {"entity", query.getColumn(2).getString()},
        {"entity_name", query.getColumn(3).getString()},
        {"attribute", read_sql::column_value(query.getColumn(4))},
        {"statement", query.getColumn(5).getString()},
        {"confidence", query.getColumn(6).getDouble()},
        {"valid_from", fact_time(query.getColumn(7), whole_days, false)},
        {"valid_to", fact_time(query.getColumn(8), whole_days, true)},
        {"evidence_ids", nlohmann::json::array({query.getColumn(10).getString()})},
        {"supersedes_fact_id", read_sql::column_value(query.getColumn(11))},
        {"is_stale", query.getColumn(12).getInt() != 0},
        {"times_retrieved", query.getColumn(13).getInt64()},
        {"sensitivity", query.getColumn(14).getString()},
        {"redacted", query.getColumn(15).getInt() != 0},
        {"linked_entities", query.getColumn(16).isNull()
                                ? nlohmann::json()
                                : nlohmann::json::parse(query.getColumn(16).getString())},
    });
  }
  return {{"ok", true}, {"facts", std::move(facts)}};
}

nlohmann::json read_events(SQLite::Database& db, const nlohmann::json& request,
                           const ReadScope& caller) {
  const auto seq_param = [&request](const char* name) -> std::int64_t {
    const auto it = request.find(name);
    return it != request.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
  };
  // With after_seq: the first `limit` events after it; otherwise the last `limit` events
  // (before before_seq when given). Either way returned oldest first, so a page reads down.
  // Clearance and namespace scope in the WHERE clause (see read_search).
  const std::string rank = read_sql::rank_sql("sensitivity");
  SQLite::Statement query(db, R"sql(
SELECT * FROM (
  SELECT seq, uid AS id, namespace, kind, source, agent_id, episode_id, ts_us, status,
         sensitivity,
         CASE WHEN )sql" + rank + R"sql( > ?20 THEN ?23 ELSE substr(content, 1, 200) END AS preview,
         )sql" + rank + R"sql( > ?20 AS redacted
  FROM events
  WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR kind = ?2) AND (?3 < 0 OR seq > ?3)
    AND (?5 < 0 OR seq < ?5) AND (?6 = '' OR agent_id = ?6) AND (?7 = '' OR episode_id = ?7)
    AND )sql" + rank + R"sql( <= ?20 + 1 AND )sql" +
                                  read_sql::scope_sql("namespace") + R"sql(
  ORDER BY CASE WHEN ?3 < 0 THEN -seq ELSE seq END
  LIMIT ?4)
ORDER BY seq)sql");
  query.bind(1, text_param(request, "namespace"));
  query.bind(2, text_param(request, "kind"));
  query.bind(3, static_cast<std::int64_t>(seq_param("after_seq")));
  query.bind(4, limit_param(request, 20));
  query.bind(5, static_cast<std::int64_t>(seq_param("before_seq")));
  query.bind(6, text_param(request, "agent_id"));
  query.bind(7, text_param(request, "episode_id"));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"events", read_sql::rows(query)}};
}

namespace {

// A medallion is in the caller's scope when its scope's namespace is (medallion_scopes); a
// scope over every namespace only for callers with every namespace.
std::string medallion_scope_sql(const char* id_column) {
  return fmt::format(
      "(?21 = 1 OR EXISTS (SELECT 1 FROM medallion_scopes s WHERE s.medallion_id = {} "
      "AND s.namespace IN (SELECT value FROM json_each(?22))))",
      id_column);
}

// A medallion is derived from the decisions, questions and facts it lists (medallion_items:
// knowledge, pattern observations, facts as "fact:<fact_id>"): its rank is theirs when read. An
// item whose source is gone counts as the highest level. An agent's medallion has its own level
// too (agent_medallions), and reads at the higher of the two.
std::string medallion_rank_sql(const char* id_column) {
  return fmt::format(
      "max(coalesce((SELECT max(CASE WHEN k.decision_id IS NOT NULL THEN {0} WHEN "
      "o.observation_id IS NOT NULL THEN {1} WHEN f.fact_id IS NOT NULL THEN {4} ELSE 4 END) "
      "FROM medallion_items i LEFT JOIN knowledge k ON k.decision_id = i.source_id LEFT JOIN "
      "observations o ON o.observation_id = i.source_id LEFT JOIN facts f ON i.item_kind = 'F' "
      "AND f.fact_id = CAST(substr(i.source_id, 6) AS INTEGER) WHERE i.medallion_id = {2}), 0), "
      "coalesce((SELECT {3} FROM agent_medallions a WHERE a.medallion_id = {2}), 0))",
      read_sql::rank_sql("k.sensitivity"), observation_rank_sql("o"), id_column,
      read_sql::rank_sql("a.sensitivity"), read_sql::rank_sql("f.sensitivity"));
}

}  // namespace

namespace {

// "get": the medallion as stored, its status and level marked in; redacted above the
// caller's clearance; an agent's medallion with the evidence of its version.
nlohmann::json medallion_get(SQLite::Database& db, const nlohmann::json& request,
                             const ReadScope& caller) {
  const std::string id = text_param(request, "id");
  SQLite::Statement query(db, "SELECT content_json, status, r, " + read_sql::level_sql("r") +
                                  " FROM (SELECT m.*, " + medallion_rank_sql("m.id") +
                                  " AS r FROM medallions m WHERE id = ?1 AND " +
                                  medallion_scope_sql("m.id") + ") WHERE r <= ?20 + 1");
  query.bind(1, id);
  read_sql::bind_scope(query, caller, true);
  if (!query.executeStep()) return {{"ok", false}, {"error", "no medallion '" + id + "'"}};
  if (query.getColumn(2).getInt() > caller.clearance) {
    return {{"ok", true},
            {"medallion",
             {{"id", id},
              {"redacted", 1},
              {"sensitivity", query.getColumn(3).getString()},
              {"summary", {{"high_level", kRedacted}}},
              {"meta", {{"status", query.getColumn(1).getString()}}}}}};
  }
  auto medallion = nlohmann::json::parse(query.getColumn(0).getString());
  medallion["meta"]["status"] = query.getColumn(1).getString();  // stale is marked in place
  medallion["meta"]["x_reflectd_sensitivity"] = query.getColumn(3).getString();
  nlohmann::json reply = {{"ok", true}, {"medallion", std::move(medallion)}};
  // An agent's medallion (memory_ops/medallions.hpp) comes with the evidence of its version.
  SQLite::Statement evidence(db,
                             "SELECT evidence_json FROM medallion_evidence WHERE medallion_id "
                             "= ?1 ORDER BY version DESC LIMIT 1");
  evidence.bind(1, id);
  if (evidence.executeStep()) {
    reply["evidence"] = nlohmann::json::parse(evidence.getColumn(0).getString());
  }
  return reply;
}

// "history": every version, newest first, each with its evidence.
nlohmann::json medallion_history(SQLite::Database& db, const nlohmann::json& request,
                                 const ReadScope& caller) {
  const std::string id = text_param(request, "id");
  // Versions are ranked by the medallion's items as they are now (sources only rise).
  SQLite::Statement query(
      db, "SELECT h.version, h.updated_at, h.content_json, " + medallion_rank_sql("?1") +
              " AS r, e.evidence_json FROM medallion_history h LEFT JOIN medallion_evidence e "
              "ON e.medallion_id = h.medallion_id AND e.version = h.version WHERE "
              "h.medallion_id = ?1 AND " +
              medallion_scope_sql("?1") + " AND r <= ?20 + 1 ORDER BY h.version DESC LIMIT ?2");
  query.bind(1, id);
  query.bind(2, limit_param(request, 20));
  read_sql::bind_scope(query, caller, true);
  nlohmann::json versions = nlohmann::json::array();
  while (query.executeStep()) {
    const bool redacted = query.getColumn(3).getInt() > caller.clearance;
    nlohmann::json& version = versions.emplace_back(nlohmann::json(
        {{"version", query.getColumn(0).getInt64()},
         {"updated_at", query.getColumn(1).getString()},
         {"medallion", redacted ? nlohmann::json{{"id", id},
                                                 {"redacted", 1},
                                                 {"summary", {{"high_level", kRedacted}}}}
                                : nlohmann::json::parse(query.getColumn(2).getString())}}));
    if (!redacted && !query.getColumn(4).isNull()) {
      version["evidence"] = nlohmann::json::parse(query.getColumn(4).getString());
    }
  }
  return {{"ok", true}, {"id", id}, {"versions", std::move(versions)}};
}

// "query": the medallions whose scope holds every node asked for and one of the tags.
nlohmann::json medallion_query(SQLite::Database& db, const nlohmann::json& request,
                               const ReadScope& caller) {
  // Seed 001 semantics in SQL: every query node is a node of the medallion, and the tags
  // overlap (no tag filter when the query has none).
  const auto nodes = string_list(request, "nodes");
  const auto tags = string_list(request, "tags");
  SQLite::Statement query(db, R"sql(
SELECT id, status, updated_at, scope_graph_nodes, scope_tags,
     json_extract(content_json, '$.meta.x_reflectd.superseded_by') AS superseded_by,
     CASE WHEN r > ?20 THEN ?23 ELSE json_extract(content_json, '$.summary.high_level') END AS high_level,
     )sql" + read_sql::level_sql("r") +
                                  R"sql( AS sensitivity, r > ?20 AS redacted
FROM (SELECT m.*, )sql" + medallion_rank_sql("m.id") +
                                  R"sql( AS r FROM medallions m
    WHERE (SELECT count(*) FROM medallion_nodes n, json_each(?1) q
           WHERE n.medallion_id = m.id AND n.node = q.value) = json_array_length(?1)
      AND (json_array_length(?2) = 0 OR EXISTS (SELECT 1 FROM medallion_tags t, json_each(?2) q
           WHERE t.medallion_id = m.id AND t.tag = q.value))
      AND )sql" + medallion_scope_sql("m.id") +
                                  R"sql()
WHERE r <= ?20 + 1
ORDER BY updated_at DESC, id
LIMIT ?3)sql");
  std::vector<std::string> unique_nodes = nodes;
  std::sort(unique_nodes.begin(), unique_nodes.end());
  unique_nodes.erase(std::unique(unique_nodes.begin(), unique_nodes.end()), unique_nodes.end());
  query.bind(1, nlohmann::json(unique_nodes).dump());
  query.bind(2, nlohmann::json(tags).dump());
  query.bind(3, limit_param(request, 50));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  nlohmann::json found = nlohmann::json::array();
  while (query.executeStep()) {
    found.push_back({{"id", query.getColumn(0).getString()},
                     {"status", query.getColumn(1).getString()},
                     {"updated_at", query.getColumn(2).getString()},
                     {"scope",
                      {{"graph_nodes", nlohmann::json::parse(query.getColumn(3).getString())},
                       {"tags", nlohmann::json::parse(query.getColumn(4).getString())}}},
                     {"superseded_by", query.getColumn(5).isNull()
                                           ? nlohmann::json()
                                           : nlohmann::json(query.getColumn(5).getString())},
                     {"high_level", query.getColumn(6).getString()},
                     {"sensitivity", query.getColumn(7).getString()},
                     {"redacted", query.getColumn(8).getInt()}});
  }
  return {{"ok", true}, {"medallions", std::move(found)}};
}

// "list": every medallion in the caller's scope, by id.
nlohmann::json medallion_list(SQLite::Database& db, const nlohmann::json& request,
                              const ReadScope& caller) {
  SQLite::Statement query(
      db,
      "SELECT id, status, json_extract(content_json, '$.meta.x_reflectd.superseded_by') AS "
      "superseded_by, updated_at, CASE WHEN r > ?20 THEN ?23 ELSE "
      "json_extract(content_json, '$.summary.high_level') END AS high_level, " +
          read_sql::level_sql("r") + " AS sensitivity, r > ?20 AS redacted FROM (SELECT m.*, " +
          medallion_rank_sql("m.id") + " AS r FROM medallions m WHERE " +
          medallion_scope_sql("m.id") + ") WHERE r <= ?20 + 1 ORDER BY id LIMIT ?1");
  query.bind(1, limit_param(request, 100));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  return {{"ok", true}, {"medallions", read_sql::rows(query)}};
}

}  // namespace

nlohmann::json read_medallion(SQLite::Database& db, const nlohmann::json& request,
                              const ReadScope& caller) {
  const std::string action = text_param(request, "action");
  if (action == "get") return medallion_get(db, request, caller);
  if (action == "history") return medallion_history(db, request, caller);
  if (action == "query") return medallion_query(db, request, caller);
  if (action == "list" || action.empty()) return medallion_list(db, request, caller);
  return {{"ok", false},
          {"error",
           "medallion: \"action\" must be get, query, history or list (reads) or create, "
           "update or set_status (writes)"}};
}

// An observation's or a medallion's level is computed from its sources when read (costly for a
// recurring problem with thousands of occurrences); a caller of hyper clearance reads every
// level in full, so for it the CASE skips that work.
std::string derived_texts_sql() {
  return R"sql(
SELECT 'knowledge', decision_id, namespace, )sql" +
         read_sql::redacted_text("title") + ", " + read_sql::redacted_text("rationale") +
         ", sensitivity, r > ?20" +
         R"sql(
FROM (SELECT *, )sql" +
         read_sql::rank_sql("sensitivity") +
         R"sql( AS r FROM knowledge
      WHERE namespace = ?1 AND status = 'active' ORDER BY last_seen_us DESC, decision_id LIMIT ?2)
WHERE r <= ?20 + 1 AND )sql" +
         read_sql::scope_sql("namespace") +
         R"sql(
UNION ALL
SELECT 'observation', observation_id, namespace, )sql" +
         read_sql::redacted_text("title") + ", " + read_sql::redacted_text("text") + ", " +
         read_sql::level_sql("r") + ", r > ?20" +
         R"sql(
FROM (SELECT o.*, CASE WHEN ?20 >= 4 THEN 0 ELSE )sql" +
         observation_rank_sql("o") +
         R"sql( END AS r FROM observations o
      WHERE o.namespace = ?1 AND o.is_active = 1 ORDER BY o.last_reinforced_us DESC, o.observation_id LIMIT ?2)
WHERE r <= ?20 + 1 AND )sql" +
         read_sql::scope_sql("namespace") +
         R"sql(
UNION ALL
SELECT 'entity_summary', canonical_key, namespace, )sql" +
         read_sql::redacted_text("display_name") + ", " + read_sql::redacted_text("summary_text") +
         ", sensitivity, r > ?20" +
         R"sql(
FROM (SELECT *, )sql" +
         read_sql::rank_sql("sensitivity") +
         R"sql( AS r FROM entities
      WHERE namespace = ?1 AND is_active = 1 AND summary_text IS NOT NULL
      ORDER BY round(importance_score, 9) DESC, canonical_key LIMIT ?2)
WHERE r <= ?20 + 1 AND )sql" +
         read_sql::scope_sql("namespace") +
         R"sql(
UNION ALL
SELECT 'medallion', id, ?1, id, )sql" +
         read_sql::redacted_text("high_level") + ", " + read_sql::level_sql("r") + ", r > ?20" +
         R"sql(
FROM (SELECT m.id, json_extract(m.content_json, '$.summary.high_level') AS high_level,
             CASE WHEN ?20 >= 4 THEN 0 ELSE )sql" +
         medallion_rank_sql("m.id") +
         R"sql( END AS r
      FROM medallions m WHERE m.id IN (SELECT medallion_id FROM medallion_scopes
                                       WHERE namespace = ?1)
        AND m.status != 'superseded' AND )sql" +
         medallion_scope_sql("m.id") + R"sql(
      ORDER BY m.knowledge_max_ts DESC, m.id LIMIT ?2)
WHERE r <= ?20 + 1 AND high_level IS NOT NULL)sql";
}

std::vector<DerivedText> derived_texts(SQLite::Statement& query, const std::string& ns,
                                       const ReadScope& caller, std::int64_t per_kind) {
  query.reset();
  query.bind(1, ns);
  query.bind(2, per_kind);
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  std::vector<DerivedText> out;
  while (query.executeStep()) {
    DerivedText d;
    store::Columns(query) >> d.kind >> d.id >> d.ns >> d.title >> d.text >> d.sensitivity >>
        d.redacted;
    out.push_back(std::move(d));
  }
  query.reset();
  return out;
}

std::string entity_facts_sql() {
  return R"sql(
SELECT fact_id, namespace, entity_name || ', ' || strftime('%Y-%m-%d', valid_from_us / 1000000,
       'unixepoch'), )sql" +
         read_sql::redacted_text("fact_text") +
         R"sql(, sensitivity, r > ?20, coalesce(attribute_key, '')
FROM (SELECT *, )sql" +
         read_sql::rank_sql("sensitivity") + R"sql( AS r FROM facts INDEXED BY facts_entity
      WHERE namespace = ?1 AND entity_key IN (SELECT value FROM json_each(?2)) AND is_stale = 0)
WHERE r <= ?20 + 1 AND )sql" +
         read_sql::scope_sql("namespace") + R"sql(
ORDER BY fact_id DESC
LIMIT ?3)sql";
}

std::vector<DerivedText> entity_facts(SQLite::Statement& query, const std::string& ns,
                                      const std::vector<std::string>& keys, const ReadScope& caller,
                                      std::int64_t limit) {
  std::vector<DerivedText> out;
  if (keys.empty()) return out;
  query.reset();
  query.bind(1, ns);
  query.bind(2, nlohmann::json(keys).dump());
  query.bind(3, limit);
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  while (query.executeStep()) {
    DerivedText d;
    d.kind = "fact";
    d.id = std::to_string(query.getColumn(0).getInt64());
    d.ns = query.getColumn(1).getString();
    d.title = query.getColumn(2).getString();
    d.text = query.getColumn(3).getString();
    d.sensitivity = query.getColumn(4).getString();
    d.redacted = query.getColumn(5).getInt() != 0;
    if (!d.redacted) d.keywords = text::attribute_keywords(query.getColumn(6).getString());
    out.push_back(std::move(d));
  }
  query.reset();
  return out;
}

}  // namespace reflectd::recall
