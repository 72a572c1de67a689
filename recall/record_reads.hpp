#pragma once
// The list reads of the control socket (docs/COMMANDS.md): events, full-text search, and
// the records the jobs derived (knowledge, observations, entities, clusters, medallions). Each
// applies the caller's namespaces and clearance in its SQL (docs/SECURITY.md): rows more than
// one level above the clearance are never read; rows one level above come back with their text
// replaced by "[redacted: above your clearance]", their content lists nulled, "redacted": 1.
//
// Each takes the request object as parsed by bus::parse_control_request() (parameters of the
// wrong type read as absent) and returns the reply body ({"ok":true,...}).
//
// Thread-safety: use a connection from one thread at a time. The connection must have
// jobs::register_sql_functions() registered (read_search uses rd_salience).
// Errors: SQLite failures throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "recall/read_scope.hpp"

namespace reflectd::recall {

/// {"cmd":"knowledge","namespace","phase","status","limit"}: DecisionStream rows.
nlohmann::json read_knowledge(SQLite::Database& db, const nlohmann::json& request,
                              const ReadScope& caller);
/// {"cmd":"observations","namespace","type","limit"}: pattern, competence, community rows.
nlohmann::json read_observations(SQLite::Database& db, const nlohmann::json& request,
                                 const ReadScope& caller);
/// {"cmd":"entities","namespace","top","type"}: the most important entities.
nlohmann::json read_entities(SQLite::Database& db, const nlohmann::json& request,
                             const ReadScope& caller);
/// {"cmd":"clusters","namespace","limit"}: the largest clusters.
nlohmann::json read_clusters(SQLite::Database& db, const nlohmann::json& request,
                             const ReadScope& caller);
/// {"cmd":"search","text","namespace","kind","limit"}: every word must match (FTS5, content
/// column); score = -bm25 x salience weight x vitality weight, at `now_us` (µs, UTC).
nlohmann::json read_search(SQLite::Database& db, const nlohmann::json& request,
                           const ReadScope& caller, std::int64_t now_us);
/// {"cmd":"events","namespace","kind","agent_id","episode_id","limit","after_seq","before_seq"}:
/// the latest `limit` events (before `before_seq` when given), or the first ones after
/// `after_seq`, oldest first, with 200-character previews and their agent and episode ids.
nlohmann::json read_events(SQLite::Database& db, const nlohmann::json& request,
                           const ReadScope& caller);
/// {"cmd":"facts","namespace","entity","attribute","current","limit","after_id"}: the fact
/// ledger (seed 003 MemoryFact; jobs/facts.hpp) in fact_id order after `after_id`. `entity`
/// is a canonical key ("person:caroline") or a name ("Caroline", matched case-insensitively);
/// `current` true leaves out superseded facts. Each fact: id, entity, entity_name, attribute,
/// statement, confidence, valid_from / valid_to (ISO 8601 dates when the fact came from a date,
/// valid_to then the last day it held, inclusive; RFC 3339 date-times otherwise; valid_to null
/// while it holds), evidence_ids (the events' ids as published), linked_entities,
/// supersedes_fact_id, is_stale, times_retrieved, sensitivity, redacted. Errors: a reply
/// {"ok":false,"error"} for an after_id that is not an integer.
nlohmann::json read_facts(SQLite::Database& db, const nlohmann::json& request,
                          const ReadScope& caller);
/// {"cmd":"audit","record_id","namespace","since" (RFC 3339),"limit"} (audit_reads.cpp): audit_log
/// rows, newest first: audit_id, record_type, record_id, namespace (of the record; null when it is
/// gone and did not say), action, actor, at_us, at (RFC 3339), rationale, previous, redacted.
/// Scoped by the record's namespace and level. Errors: a reply {"ok":false,"error"} for a bad
/// since.
nlohmann::json read_audit(SQLite::Database& db, const nlohmann::json& request,
                          const ReadScope& caller);
/// {"cmd":"medallion","action":"get|query|history|list",...}: seed 001 medallions. get adds
/// "evidence" (the current version's) for an agent's medallion, history each version's; list
/// and query rows carry "superseded_by" (null unless an agent marked the medallion superseded:
/// memory_ops/medallions.hpp).
nlohmann::json read_medallion(SQLite::Database& db, const nlohmann::json& request,
                              const ReadScope& caller);

/// A record the jobs derived, as recall scores it (RecallResponse::derived).
struct DerivedText {
  std::string kind;  ///< "knowledge", "observation", "entity_summary", "medallion" or "fact".
  std::string id;    ///< decision_id, observation_id, the entity's canonical key, medallion id.
  std::string ns;
  std::string title;  ///< knowledge title, observation title, entity display name.
  std::string text;   ///< rationale, observation text, entity summary.
  std::string sensitivity;
  bool redacted = false;  ///< One level above the clearance: title and text are kRedacted.
  /// Words it matches besides its title and text (a fact's attribute_keywords()); not shown.
  std::string keywords;
};

/// The derived records of namespace `ns` recall searches: active knowledge (title, rationale),
/// active observations (title, text), entity summaries (display name, summary) and the
/// medallions scoped to it but superseded ones (id, summary.high_level), the `per_kind` newest
/// of each (knowledge by last_seen_us, observations by last_reinforced_us, medallions by the
/// newest event they cover; entities by importance_score), ties by id, within the caller's
/// scope. Every key is a function of the events, so each replica gives the same records.
/// `query` must be prepared from derived_texts_sql() (once per connection).
std::vector<DerivedText> derived_texts(SQLite::Statement& query, const std::string& ns,
                                       const ReadScope& caller, std::int64_t per_kind);

/// The statement derived_texts() runs: ?1 namespace, ?2 per kind, the scope ?20-?23.
std::string derived_texts_sql();

/// The current facts (jobs/facts.hpp) of namespace `ns` about the entities `keys` (canonical
/// keys), newest first, at most `limit`, within the caller's scope, as derived records of
/// kind "fact": id the fact_id, title "<entity name>, <valid_from as YYYY-MM-DD>", text the
/// statement. `query` must be prepared from entity_facts_sql() (once per connection).
std::vector<DerivedText> entity_facts(SQLite::Statement& query, const std::string& ns,
                                      const std::vector<std::string>& keys, const ReadScope& caller,
                                      std::int64_t limit);

/// The statement entity_facts() runs: ?1 namespace, ?2 keys (JSON array), ?3 limit, the scope.
std::string entity_facts_sql();

}  // namespace reflectd::recall
