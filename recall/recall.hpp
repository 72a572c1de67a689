#pragma once
// `recall`: a question in plain words -> the stored events that answer it, best first
// (seed 003 ExpandedQuery, SpreadingActivationResult; seed 000 SearchResultItem).
// Deterministic, no LLM, no network. Every stage, formula and default is in docs/RECALL.md:
//
//   1. Query (recall/query.hpp): terms, phrases, time expressions, asks_when.
//   2. Entity priming: terms (and adjacent pairs) that name an entity of the namespace
//      (entities: "agent:", "person:", "name:" keys and entity_aliases). A primed agent or
//      person is a speaker: an event whose agent_id is that name is about them (a
//      first-person turn); such names leave the lexical query, whose IDF they would distort.
//   3. Lexical: FTS5 BM25 over events_fts (porter), the `candidates` best in scope; terms in
//      more than `max_term_share` of the indexed events are left out (the two rarest stay);
//      lexical(e) = bm25(e) / max bm25 over the candidates, in [0,1].
//  3b. Related words (recall/wordnet.hpp): WordNet's synonyms and hyponyms of each lexical
//      term ("activities" -> pottery, swimming) that the index holds, searched in a second
//      FTS5 query; semantic(e) = its bm25(e) / the lexical stage's max bm25.
//   4. Spreading activation from the `seeds` best lexical hits: hop 1 reaches the events
//      right before and after a seed in its episode (activation hop1_weight x lexical(seed)),
//      hop 2 the seed's whole episode (hop2_weight x the episode's best lexical score), and
//      events naming a primed non-speaker entity (event_entities, newest first, at most
//      `entity_events` each) get entity(e) = the share of those entities they name.
//      graph(e) = hop 1 + hop 2 activation.
//   5. Time: temporal(e) = 1 when the question asks "when" and the event's content holds a
//      time expression, or when the question names a time and the event (its timestamp or a
//      date its content resolves to) falls in that temporal_range; else 0.
//   6. Fusion (a linear blend, then multipliers):
//        base  = lexical + graph + entity_weight x entity + semantic_weight x semantic
//        score = base x (1 + speaker_weight x speaker) x (1 + temporal_weight x temporal)
//                x (1 - salience_weight + salience_weight x min(1, salience now))
//                x vitality factor (1 / 0.75 / 0.5 for active / decaying / dormant knowledge)
//      ties: newer seq first.
//   7. Derived records of the namespace (knowledge, observations, entity summaries, medallion
//      summaries) are scored by BM25 over their own texts and returned beside the events
//      (`derived`).
//
// Access control is in the SQL of every stage (as `search`): rows more than one level above
// the caller's clearance are never read; one level above, their content is replaced by
// "[redacted: above your clearance]" and their `why` is empty.
//
// Thread-safety: a Recaller belongs to the thread of its connection. The connection must
// have jobs::register_sql_functions() (rd_salience) registered.
// Errors: bad requests come back as RecallError (field and rule); SQLite failures throw
// SQLite::Exception (the caller answers "storage unavailable").

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "recall/event_rows.hpp"
#include "recall/query.hpp"
#include "recall/read_scope.hpp"
#include "recall/wordnet.hpp"
#include "text/porter_stemmer.hpp"

namespace reflectd::recall {

/// Weights and sizes (config keys recall.*; defaults documented in docs/RECALL.md).
struct RecallParams {
  std::int64_t candidates = 200;           ///< Lexical candidates read per query.
  std::int64_t seeds = 50;                 ///< Best lexical hits activation spreads from.
  std::int64_t entity_events = 100;        ///< Events read per primed entity.
  double hop1_weight = 0.5;                ///< Episode neighbours (sequence_number +-1).
  double hop2_weight = 0.3;                ///< The episode's best lexical score.
  double entity_weight = 0.3;              ///< Share of primed non-speaker entities named.
  double speaker_weight = 1.0;             ///< The event's agent_id is a primed speaker.
  double temporal_weight = 0.5;            ///< Time signal.
  double salience_weight = 0.5;            ///< Share of the score that salience scales.
  std::int64_t max_content_bytes = 16384;  ///< Content returned in full up to this size.
  /// Collection stop words: a term in more than this share of the indexed events leaves the
  /// lexical query (the two rarest terms always stay). 1 keeps every term.
  double max_term_share = 0.1;
  /// Derived records (knowledge, observations, entity summaries) returned beside the events.
  std::int64_t derived_results = 3;
  /// Related words (stage 3b), loaded at the first question; null leaves the stage out.
  std::shared_ptr<const WordNetLoader> wordnet;
  double semantic_weight = 0.3;     ///< Weight of semantic(e) in the base score.
  std::int64_t related_words = 64;  ///< Related words looked up per lexical term.
  std::int64_t related_depth = 3;   ///< Hyponym levels below a term's senses.
  /// Most documents (FTS5 postings) the related words may match together, nearest words
  /// first; a word that would pass it is skipped.
  std::int64_t related_postings = 5000;
};

struct RecallRequest {
  std::string text;
  std::string ns;           ///< Empty: every namespace in the caller's scope.
  std::int64_t limit = 10;  ///< [1, 100]
  std::int64_t offset = 0;  ///< [0, 1000]
  std::vector<std::string> kinds;
  std::string agent_id;
  std::string episode_id;
  std::optional<std::int64_t> since_us;  ///< Events with ts_us >= since_us only.
  std::optional<std::int64_t> until_us;  ///< Events with ts_us < until_us only.
  /// The day the question's relative dates count from ("last week", "in May"): the
  /// caller's clock when unset. Salience and vitality still count from the clock.
  std::optional<std::int64_t> as_of_us;
  /// Archived events (seed 002: out of active retrieval; `forget` mode archive, the decay
  /// job's auto_prune) are left out unless asked for; `get` reads one by id either way.
  bool include_archived = false;
};

/// A request that cannot be answered: `message` names the field and the rule.
struct RecallError {
  std::string message;
};

/// The parts of a result's score (all >= 0; see the header comment).
struct ScoreComponents {
  double lexical = 0, entity = 0, graph = 0, temporal = 0, speaker = 0;
  double semantic = 0;    ///< BM25 of the related words, on the lexical scale.
  double salience = 0;    ///< Salience now, in [0, 1] after the min.
  double vitality = 1;    ///< 1, 0.75 or 0.5.
  double importance = 0;  ///< The highest importance_score of the entities it names.
};

struct RecallHit {
  std::int64_t seq = 0;
  std::string id, kind, ns, agent_id, episode_id, sensitivity, status;
  std::optional<std::int64_t> sequence_number;
  std::int64_t ts_us = 0;
  double score = 0;
  ScoreComponents components;
  std::string content;  ///< In full up to max_content_bytes (then cut at a UTF-8 boundary).
  bool truncated = false;
  bool redacted = false;
  std::vector<std::string> why_terms;     ///< Query terms the content holds (stemmed match).
  std::vector<std::string> why_entities;  ///< Primed entity keys it names or speaks as.
  std::vector<std::string> why_related;   ///< Related words (stage 3b) the content holds.
  /// The time expressions of its content resolved against its own timestamp ("yesterday" in
  /// a turn of 8 May 2023 -> 7 May 2023); empty when redacted.
  std::vector<text::TimeMention> times;
};

/// A derived record that answers the question (seed 003: knowledge, observations and entity
/// summaries are recallable too), scored by BM25 (k1 1.2, b 0.75) over the namespace's
/// derived records with the same terms and porter stems as the events.
struct DerivedHit {
  /// "knowledge", "observation", "entity_summary", "medallion" or "fact" (a fact about an
  /// entity the question names; id its fact_id).
  std::string kind;
  std::string id, ns, title, text, sensitivity;
  double score = 0;
  std::vector<std::string> why_terms;
};

struct Spreading {
  std::int64_t seeds = 0;
  std::int64_t hop1_count = 0;  ///< Events activated by hop 1 (new or already candidates).
  std::int64_t hop2_count = 0;  ///< Events activated by hop 2.
  std::int64_t entities_explored = 0;
  std::int64_t episodes_explored = 0;
};

struct RecallResponse {
  std::vector<RecallHit> results;
  std::vector<DerivedHit> derived;  ///< Best first; only with a namespace.
  std::vector<PrimedEntity> primed_entities;
  std::vector<std::string> expanded_terms;  ///< Terms and phrases searched.
  std::vector<std::string> dropped_terms;   ///< Collection stop words left out of the query.
  /// Lexical term -> the related words searched for it (stage 3b; only words the index holds).
  std::map<std::string, std::vector<std::string>> related_terms;
  std::optional<text::TimeRange> temporal_range;
  bool asks_when = false;
  Spreading spreading;
  std::int64_t candidates = 0;  ///< Events scored.
  std::int64_t indexed_through_seq = 0;
  std::int64_t lag_events = 0;
};

class Recaller {
 public:
  /// `db` must be migrated and outlive this object.
  Recaller(SQLite::Database& db, RecallParams params);

  /// Answers one request at `now_us` (µs, UTC: salience and relative question times).
  std::variant<RecallResponse, RecallError> recall(const RecallRequest& request,
                                                   const ReadScope& scope, std::int64_t now_us);

  /// The best `derived_results` derived records of `ns` for `terms` (stage 8); entity
  /// summaries only of the entities in `named` (canonical keys the question primed).
  std::vector<DerivedHit> recall_derived(const std::string& ns,
                                         const std::vector<std::string>& terms,
                                         const std::set<std::string>& named,
                                         const ReadScope& scope);

  /// The statements recall() read with, still bound to its last scope and time.
  EventRows& rows() { return rows_; }

 private:
  SQLite::Database& db_;
  RecallParams params_;
  EventRows rows_;
  SQLite::Statement derived_;  // recall/record_reads.hpp derived_texts_sql()
  SQLite::Statement facts_;    // recall/record_reads.hpp entity_facts_sql()
  text::PorterStemmer stemmer_;
};

/// Parses the `recall` control request's fields (text, namespace, limit, offset, kinds,
/// agent_id, episode_id, since, until as RFC 3339 or epoch ms). Errors name the field.
std::variant<RecallRequest, RecallError> recall_request_from_json(const nlohmann::json& request);

/// The reply body: {"ok":true,"results":[...],"expanded_query":{...},"spreading":{...},
/// "indexed_through_seq","lag_events"}.
nlohmann::json to_json(const RecallResponse& response);

/// One hit as JSON (also used by `context`'s sources).
nlohmann::json to_json(const RecallHit& hit);

}  // namespace reflectd::recall
