#pragma once
// The read library's SQL over events and the tables the jobs derive from them (entities,
// aliases, mentions, knowledge): every statement prepared once per connection, every one
// with the caller's scope in its WHERE clause (docs/SECURITY.md): ?20 clearance rank,
// ?21 every namespace, ?22 the caller's namespaces (JSON array), ?23 the redaction text,
// ?24 now (µs, for salience).
//
// Thread-safety: an EventRows belongs to the thread of its connection.
// Errors: SQLite failures throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "recall/read_scope.hpp"

namespace reflectd::recall {

/// SQL ranking `e.sensitivity` (seed 000's levels public < low < medium < high, then
/// anything else) as 0-4, for comparisons with a caller's clearance in a WHERE clause.
inline constexpr const char* kSensitivityRankSql =
    "(CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 "
    "WHEN 'high' THEN 3 ELSE 4 END)";

/// What a recall stage reads of an event.
struct EventRow {
  std::int64_t seq = 0;
  std::string id, kind, ns, agent_id, episode_id, sensitivity, status;
  std::optional<std::int64_t> sequence_number;
  std::int64_t ts_us = 0;
  bool redacted = false;       ///< One level above the caller's clearance: content replaced.
  bool revised = false;        ///< Superseded by a revision (memory_ops/revise.hpp).
  double salience = 0;         ///< Salience now (seed 002 curves, model::salience_at).
  double vitality_factor = 1;  ///< 1 / 0.75 / 0.5 for active / decaying / dormant knowledge.
  std::string content;
};

/// Filters of a read (empty / nullopt: no filter).
struct EventFilter {
  std::string ns;
  std::vector<std::string> kinds;
  std::string agent_id;
  std::string episode_id;
  std::optional<std::int64_t> since_us;
  std::optional<std::int64_t> until_us;
  bool include_archived = false;  ///< Else events of status 'archived' are left out.
};

struct LexicalRow {
  EventRow row;
  double bm25 = 0;  ///< -bm25(events_fts): higher is better, > 0.
};

/// An entity of the namespace named by the question.
struct PrimedEntity {
  std::int64_t entity_id = 0;
  std::string key;       ///< canonical "type:name"
  std::string name;      ///< the part after the type
  bool speaker = false;  ///< An agent (or a person who is also an agent) of the namespace.
};

class EventRows {
 public:
  /// Prepares the statements on `db` (migrated; outlives this object).
  explicit EventRows(SQLite::Database& db);

  /// Binds the caller's scope and the time for the reads that follow.
  void set_scope(const ReadScope& scope, std::int64_t now_us);

  /// True when `ns` has events and is in the caller's scope.
  bool namespace_visible(const std::string& ns);

  /// Active entities of `ns` whose key is "agent:", "person:" or "name:" + a word of `words`
  /// (ASCII lower case) or + two adjacent words, or an alias of one, that the caller may read
  /// in full (their keys are text from their events); one row per entity, in the words' order.
  std::vector<PrimedEntity> prime_entities(const std::string& ns,
                                           const std::vector<std::string>& words);

  /// The `limit` best FTS5 BM25 matches (content column) of `match` (an FTS5 expression
  /// built by recall::fts_match) that pass `filter`, best first (ties: newer first).
  std::vector<LexicalRow> lexical(const std::string& match, const EventFilter& filter,
                                  std::int64_t limit);

  /// The events of episode (`ns`, `episode`) with sequence_number within 1 of `sequence`.
  std::vector<EventRow> episode_neighbours(const std::string& ns, const std::string& episode,
                                           std::int64_t sequence, const EventFilter& filter);

  /// The newest `limit` events naming entity `entity_id` (event_entities).
  std::vector<EventRow> entity_events(std::int64_t entity_id, std::int64_t limit,
                                      const EventFilter& filter);

  /// The summary of entity `entity_id` (entities.summary_text) when it has one and the
  /// caller may read it in full (rows one level above come back as kRedacted).
  std::optional<std::string> entity_summary(std::int64_t entity_id);

  /// The events whose content holds `term` (a porter stem, events_fts_vocab), 0 when none.
  std::int64_t term_documents(const std::string& term);

  /// The highest importance_score of the entities event `seq` names (0 when none).
  double importance(std::int64_t seq);

 private:
  void bind_filter(SQLite::Statement& statement, const EventFilter& filter);
  std::vector<EventRow> read(SQLite::Statement& statement);

  ReadScope scope_;
  std::int64_t now_us_ = 0;
  SQLite::Statement namespace_;
  SQLite::Statement entity_;
  SQLite::Statement alias_;
  SQLite::Statement lexical_;
  SQLite::Statement lexical_unfiltered_;
  SQLite::Statement neighbours_;
  SQLite::Statement entity_events_;
  SQLite::Statement importance_;
  SQLite::Statement summary_;
  SQLite::Statement vocab_;
};

/// `content` cut to at most `max_bytes` at a UTF-8 character boundary; second: whether it
/// was cut.
std::pair<std::string, bool> cut_content(std::string content, std::size_t max_bytes);

/// Reads optional request field `key` as a string into `out`; an error ("key: must be a
/// string") when present with another type.
std::optional<std::string> string_field(const nlohmann::json& request, const char* key,
                                        std::string& out);

/// Reads optional integer field `key` into `out`; an error naming the field and the range
/// [min, max] when present and not an integer in it.
std::optional<std::string> int_field(const nlohmann::json& request, const char* key,
                                     std::int64_t min, std::int64_t max, std::int64_t& out);

}  // namespace reflectd::recall
