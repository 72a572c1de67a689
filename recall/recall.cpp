#include "recall/recall.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "common/ascii.hpp"
#include "common/timestamp.hpp"
#include "recall/event_rows.hpp"
#include "recall/record_reads.hpp"
#include "store/fts_index.hpp"
#include "text/tokenizer.hpp"

namespace reflectd::recall {
namespace {

using nlohmann::json;

constexpr std::int64_t kMaxLimit = 100;
constexpr std::int64_t kMaxOffset = 1000;

// Whether `lower_content` holds a word that is `term` or the term's stem (one common English
// suffix off) with one such suffix on: only to say *why* a row matched (the index's porter
// stemmer decided the match itself). "bake" names "baked"; "go" does not name "gonna".
constexpr std::array<std::string_view, 10> kSuffixes{"ing", "ed", "es", "s",   "ly",
                                                     "d",   "e",  "er", "ers", "ion"};

std::string_view stem_of(std::string_view term) {
  for (const std::string_view suffix : kSuffixes) {
    if (term.size() >= suffix.size() + 3 && term.ends_with(suffix)) {
      return term.substr(0, term.size() - suffix.size());
    }
  }
  return term;
}

bool names_term(const std::string& lower_content, const std::string& term) {
  const std::string_view stem = stem_of(term);
  std::size_t at = 0;
  while ((at = lower_content.find(stem, at)) != std::string::npos) {
    const bool starts =
        at == 0 || std::isalnum(static_cast<unsigned char>(lower_content[at - 1])) == 0;
    std::size_t end = at + stem.size();
    while (end < lower_content.size() &&
           std::isalnum(static_cast<unsigned char>(lower_content[end])) != 0) {
      ++end;
    }
    const std::string_view rest(lower_content.data() + at + stem.size(), end - at - stem.size());
    if (starts &&
        (rest.empty() || std::find(kSuffixes.begin(), kSuffixes.end(), rest) != kSuffixes.end())) {
      return true;
    }
    at = end;
  }
  return false;
}

// A deferred read transaction for the scope, unless the caller already holds one.
class ReadTransaction {
 public:
  explicit ReadTransaction(SQLite::Database& db)
      : db_(db), began_(sqlite3_get_autocommit(db.getHandle()) != 0) {
    if (began_) db_.exec("BEGIN");
  }
  ~ReadTransaction() {
    if (began_ && sqlite3_get_autocommit(db_.getHandle()) == 0) {
      // A read transaction has nothing to keep: ending it cannot lose anything, and a
      // failure (the connection is closing) leaves nothing to undo.
      sqlite3_exec(db_.getHandle(), "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  SQLite::Database& db_;
  bool began_;
};

// One scored event of the pool.
struct Scored {
  EventRow row;
  double lexical = 0;
  double hop1 = 0;
  double hop2 = 0;
  double entity = 0;
  double semantic = 0;
  double speaker = 0;
  double temporal = 0;
  double score = 0;
  std::vector<std::string> entities;  // primed non-speaker entity keys it names
};

std::optional<std::int64_t> time_param(const json& value) {
  // Epoch milliseconds as the wire format takes them: years 1970-9999.
  constexpr std::int64_t kMaxEpochMs = 253'402'300'799'999;
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxEpochMs)) return std::nullopt;
    return value.get<std::int64_t>() * 1000;
  }
  if (value.is_number_integer()) {
    const auto ms = value.get<std::int64_t>();
    if (ms < 0 || ms > kMaxEpochMs) return std::nullopt;
    return ms * 1000;
  }
  if (value.is_string()) return parse_rfc3339_us(value.get<std::string>());
  return std::nullopt;
}

// Collection stop words need a collection: in a small store every term is in a large share.
constexpr double kMinStopWordEvents = 1000;

// Derived records read per kind and query: the most recently updated (entities: the most
// important). Bounded so that a namespace with many entities costs the same as a small one.
constexpr std::int64_t kDerivedPerKind = 200;
// Added to the BM25 score of a summary of an entity the question names (about the score of
// one matching rare term), so that it is returned even when no other word matches.
constexpr double kNamedEntityBonus = 1.0;

// BM25 (Robertson and Zaragoza 2009; k1 = 1.2, b = 0.75, FTS5's values) of `terms` (porter
// stems) over `docs` (each a list of porter stems). Returns one score per document.
std::vector<double> bm25_scores(const std::vector<std::vector<std::string>>& docs,
                                const std::vector<std::string>& terms) {
  constexpr double kK1 = 1.2;
  constexpr double kB = 0.75;
  std::vector<double> scores(docs.size(), 0.0);
  if (docs.empty()) return scores;
  double total = 0;
  for (const auto& d : docs) total += static_cast<double>(d.size());
  const double average = std::max(1.0, total / static_cast<double>(docs.size()));
  const auto n = static_cast<double>(docs.size());
  for (const std::string& t : terms) {
    double df = 0;
    for (const auto& d : docs) df += std::find(d.begin(), d.end(), t) != d.end() ? 1 : 0;
    if (df == 0) continue;
    // FTS5's IDF, floored as it floors it (a term in most documents still counts a little).
    const double idf = std::max(1e-6, std::log((n - df + 0.5) / (df + 0.5)));
    for (std::size_t i = 0; i < docs.size(); ++i) {
      const auto tf = static_cast<double>(std::count(docs[i].begin(), docs[i].end(), t));
      if (tf == 0) continue;
      const auto length = static_cast<double>(docs[i].size());
      scores[i] += idf * tf * (kK1 + 1) / (tf + kK1 * (1 - kB + kB * length / average));
    }
  }
  return scores;
}

using Pool = std::unordered_map<std::int64_t, Scored>;

// The question once its entities are primed: the speakers it names (lower case), the other
// entities it names, and the terms and phrases searched for.
struct QueryPlan {
  std::vector<PrimedEntity> primed;
  std::set<std::string> speakers;
  std::vector<const PrimedEntity*> topical;  // into `primed`
  std::vector<std::string> lexical_terms;
  std::vector<std::string> phrases;
};

// Collection stop words: a term in most of the store ranks little (BM25's IDF) and costs the
// most (its doclist is read whole). The two rarest terms are always kept.
void drop_collection_stop_words(EventRows& rows, text::PorterStemmer& stemmer,
                                double max_term_share, double indexed,
                                std::vector<std::string>& terms,
                                std::vector<std::string>& dropped_terms) {
  if (max_term_share >= 1 || terms.size() <= 2 || indexed < kMinStopWordEvents) return;
  std::vector<std::pair<std::int64_t, std::string>> by_documents;
  by_documents.reserve(terms.size());
  for (const std::string& t : terms)
    by_documents.emplace_back(rows.term_documents(stemmer.stem(t)), t);
  std::stable_sort(by_documents.begin(), by_documents.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::set<std::string> dropped;
  for (std::size_t i = 2; i < by_documents.size(); ++i) {
    if (static_cast<double>(by_documents[i].first) > max_term_share * indexed) {
      dropped.insert(by_documents[i].second);
    }
  }
  std::vector<std::string> kept;
  for (const std::string& t : terms) {
    if (dropped.contains(t)) {
      dropped_terms.push_back(t);
    } else {
      kept.push_back(t);
    }
  }
  terms = std::move(kept);
}

// 2. Entity priming: the speakers the question names are no search terms ("What did Caroline
// do?" searches "do"'s neighbours, not every turn Caroline spoke), other entities lead to the
// events that name them (stage 4).
QueryPlan plan_query(EventRows& rows, const RecallRequest& request, const ParsedQuery& query) {
  QueryPlan plan;
  if (!request.ns.empty()) plan.primed = rows.prime_entities(request.ns, query_words(request.text));
  for (const PrimedEntity& p : plan.primed) {
    if (p.speaker) {
      plan.speakers.insert(p.name);
    } else {
      plan.topical.push_back(&p);
    }
  }
  for (const std::string& t : query.terms) {
    if (!plan.speakers.contains(t)) plan.lexical_terms.push_back(t);
  }
  if (plan.lexical_terms.empty()) plan.lexical_terms = query.terms;  // "Who is Caroline?"
  for (const std::string& p : query.phrases) {
    const std::string first = p.substr(0, p.find(' '));
    const std::string second = p.substr(p.find(' ') + 1);
    if (!plan.speakers.contains(first) && !plan.speakers.contains(second)) {
      plan.phrases.push_back(p);
    }
  }
  return plan;
}

// 3. Lexical candidates, their BM25 scaled to [0, 1] by the best one. Returns that best BM25.
double add_lexical(Pool& pool, EventRows& rows, const QueryPlan& plan, const EventFilter& filter,
                   std::int64_t candidates) {
  double max_bm25 = 0;
  for (LexicalRow& hit :
       rows.lexical(fts_match(plan.lexical_terms, plan.phrases), filter, candidates)) {
    max_bm25 = std::max(max_bm25, hit.bm25);
    Scored s;
    s.lexical = hit.bm25;
    s.row = std::move(hit.row);
    pool.emplace(s.row.seq, std::move(s));
  }
  for (auto& [seq, s] : pool) s.lexical = max_bm25 > 0 ? s.lexical / max_bm25 : 0;
  return max_bm25;
}

// 3b. Related words: WordNet's synonyms and hyponyms of the lexical terms that the index
// holds, within the postings budget. Fills `related_terms` (term -> its words) and returns
// the words in the order found.
std::vector<std::string> related_words(
    EventRows& rows, text::PorterStemmer& stemmer, const RecallParams& params,
    const ParsedQuery& query, const QueryPlan& plan, double indexed,
    std::map<std::string, std::vector<std::string>>& related_terms) {
  std::vector<std::string> related;
  const WordNet* wordnet = params.wordnet ? params.wordnet->get() : nullptr;
  if (wordnet == nullptr || params.semantic_weight <= 0 || params.related_words <= 0) {
    return related;
  }
  std::set<std::string> taken;  // stems of the query's terms and of the words already added
  for (const std::string& t : query.terms) taken.insert(stemmer.stem(t));
  std::int64_t postings = 0;  // documents of the words taken
  HyponymLimits limits;
  limits.max_words = static_cast<std::size_t>(params.related_words);
  limits.max_depth = static_cast<std::size_t>(params.related_depth);
  for (const std::string& t : plan.lexical_terms) {
    for (const RelatedWord& r : wordnet->hyponyms(t, limits)) {
      if (text::Tokenizer::is_stop_word(r.word) || plan.speakers.contains(r.word)) continue;
      const std::string stem = stemmer.stem(r.word);
      if (taken.contains(stem)) continue;
      const std::int64_t documents = rows.term_documents(stem);
      if (documents == 0) continue;
      if (params.max_term_share < 1 && indexed >= kMinStopWordEvents &&
          static_cast<double>(documents) > params.max_term_share * indexed) {
        continue;
      }
      // The query reads every posting of every word: a budget bounds its cost at scale,
      // where a common related word ("work", "use") matches thousands of events.
      if (postings + documents > params.related_postings) continue;
      postings += documents;
      taken.insert(stem);
      related.push_back(r.word);
      related_terms[t].push_back(r.word);
    }
  }
  return related;
}

// The related words' candidates: one more FTS5 query, its BM25 on the lexical stage's scale.
void add_semantic(Pool& pool, EventRows& rows, const std::vector<std::string>& related,
                  const EventFilter& filter, std::int64_t candidates, double max_bm25) {
  if (related.empty()) return;
  std::vector<std::pair<std::int64_t, double>> semantic;
  double max_semantic = 0;
  for (LexicalRow& hit : rows.lexical(fts_match(related, {}), filter, candidates)) {
    max_semantic = std::max(max_semantic, hit.bm25);
    semantic.emplace_back(hit.row.seq, hit.bm25);
    auto [it, inserted] = pool.try_emplace(hit.row.seq);
    if (inserted) it->second.row = std::move(hit.row);
  }
  const double scale = max_bm25 > 0 ? max_bm25 : max_semantic;
  for (const auto& [seq, bm25] : semantic) pool[seq].semantic = scale > 0 ? bm25 / scale : 0;
}

// 4. Spreading activation, hop 1: from the best lexical hits to their episode neighbours.
void spread_hop1(Pool& pool, EventRows& rows, const RecallParams& params, const EventFilter& filter,
                 Spreading& spreading) {
  std::vector<const Scored*> by_lexical;
  by_lexical.reserve(pool.size());
  for (const auto& [seq, s] : pool) by_lexical.push_back(&s);
  std::sort(by_lexical.begin(), by_lexical.end(), [](const Scored* a, const Scored* b) {
    return a->lexical != b->lexical ? a->lexical > b->lexical : a->row.seq > b->row.seq;
  });
  if (static_cast<std::int64_t>(by_lexical.size()) > params.seeds) {
    by_lexical.resize(static_cast<std::size_t>(params.seeds));
  }
  struct Seed {
    std::int64_t seq;
    double lexical;
    std::string ns, episode;
    std::int64_t sequence_number;
  };
  std::vector<Seed> seeds;
  for (const Scored* s : by_lexical) {
    if (s->row.episode_id.empty() || !s->row.sequence_number || s->lexical <= 0) continue;
    seeds.push_back(
        {s->row.seq, s->lexical, s->row.ns, s->row.episode_id, *s->row.sequence_number});
  }
  spreading.seeds = static_cast<std::int64_t>(by_lexical.size());
  std::set<std::int64_t> reached;
  for (const Seed& seed : seeds) {
    for (EventRow& n :
         rows.episode_neighbours(seed.ns, seed.episode, seed.sequence_number, filter)) {
      if (n.seq == seed.seq) continue;
      auto [it, inserted] = pool.try_emplace(n.seq);
      if (inserted) it->second.row = std::move(n);
      it->second.hop1 += params.hop1_weight * seed.lexical;
      reached.insert(it->first);
    }
  }
  spreading.hop1_count = static_cast<std::int64_t>(reached.size());
}

// Entities named by the question lead to the events that name them; entity(e) is the share
// of those entities an event names.
void spread_entities(Pool& pool, EventRows& rows, const QueryPlan& plan,
                     std::int64_t events_per_entity, const EventFilter& filter,
                     Spreading& spreading) {
  for (const PrimedEntity* p : plan.topical) {
    ++spreading.entities_explored;
    for (EventRow& e : rows.entity_events(p->entity_id, events_per_entity, filter)) {
      auto [it, inserted] = pool.try_emplace(e.seq);
      if (inserted) it->second.row = std::move(e);
      it->second.entities.push_back(p->key);
    }
  }
  if (plan.topical.empty()) return;
  for (auto& [seq, s] : pool) {
    s.entity = static_cast<double>(s.entities.size()) / static_cast<double>(plan.topical.size());
  }
}

// Hop 2: the episode's best lexical score reaches every pooled event of the episode.
void spread_hop2(Pool& pool, double hop2_weight, Spreading& spreading) {
  std::map<std::pair<std::string, std::string>, double> episode_best;
  for (const auto& [seq, s] : pool) {
    if (s.row.episode_id.empty()) continue;
    double& best = episode_best[{s.row.ns, s.row.episode_id}];
    best = std::max(best, s.lexical);
  }
  spreading.episodes_explored = static_cast<std::int64_t>(episode_best.size());
  for (auto& [seq, s] : pool) {
    if (s.row.episode_id.empty()) continue;
    const double best = episode_best[{s.row.ns, s.row.episode_id}];
    if (best > 0) {
      s.hop2 = hop2_weight * best;
      ++spreading.hop2_count;
    }
  }
}

// 5-6. Time, speaker and fusion into each event's score.
void fuse(Pool& pool, const RecallParams& params, const QueryPlan& plan, const ParsedQuery& query,
          const std::optional<text::TimeRange>& temporal_range) {
  for (auto& [seq, s] : pool) {
    const EventRow& r = s.row;
    if (!plan.speakers.empty() && plan.speakers.contains(ascii_lower(r.agent_id))) s.speaker = 1;
    // A redacted event's entities are not the caller's to know.
    if (r.redacted) s.entity = 0;
    if (!r.redacted && (query.asks_when || temporal_range)) {
      const auto mentions = text::find_time_expressions(r.content, r.ts_us);
      if (query.asks_when && !mentions.empty()) s.temporal = 1;
      if (temporal_range) {
        const text::TimeRange& q = *temporal_range;
        if (r.ts_us >= q.from_us && r.ts_us < q.to_us) s.temporal = 1;
        for (const text::TimeMention& m : mentions) {
          if (m.range.from_us < q.to_us && m.range.to_us > q.from_us) s.temporal = 1;
        }
      }
    }
    const double base = s.lexical + s.hop1 + s.hop2 + params.entity_weight * s.entity +
                        params.semantic_weight * s.semantic;
    s.score = base * (1 + params.speaker_weight * s.speaker) *
              (1 + params.temporal_weight * s.temporal) *
              (1 - params.salience_weight + params.salience_weight * std::min(1.0, r.salience)) *
              r.vitality_factor;
  }
}

// A span question's answer needs both events: each side's best event (the best-ranked of
// the first kSideWindow whose content holds at least half of that side's words, by stem; the
// speakers' names left out, every turn of theirs holds them) moves to the front, in score
// order.
constexpr std::size_t kSideWindow = 100;
void promote_sides(std::vector<Scored*>& ranked, const ParsedQuery& query, const QueryPlan& plan,
                   text::PorterStemmer& stemmer) {
  if (query.sides.size() != 2) return;
  std::vector<std::set<std::string>> sides;
  for (const std::vector<std::string>& side : query.sides) {
    std::set<std::string> stems;
    for (const std::string& w : side) {
      if (!plan.speakers.contains(w)) stems.insert(stemmer.stem(w));
    }
    if (stems.empty()) return;
    sides.push_back(std::move(stems));
  }
  std::vector<std::size_t> best;
  for (const std::set<std::string>& side : sides) {
    const std::size_t need = (side.size() + 1) / 2;
    for (std::size_t i = 0; i < std::min(ranked.size(), kSideWindow); ++i) {
      if (ranked[i]->row.redacted) continue;
      std::set<std::string> held;
      for (const std::string& w : query_words(ranked[i]->row.content)) {
        if (const std::string stem = stemmer.stem(w); side.contains(stem)) held.insert(stem);
      }
      if (held.size() >= need) {
        best.push_back(i);
        break;
      }
    }
  }
  std::sort(best.begin(), best.end());
  best.erase(std::unique(best.begin(), best.end()), best.end());
  std::vector<Scored*> order;
  order.reserve(ranked.size());
  for (const std::size_t i : best) order.push_back(ranked[i]);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    if (std::find(best.begin(), best.end(), i) == best.end()) order.push_back(ranked[i]);
  }
  ranked = std::move(order);
}

// One ranked event as returned, with why it matched (nothing of a redacted one's content).
RecallHit hit_of(Scored& s, EventRows& rows, const std::vector<std::string>& lexical_terms,
                 const std::vector<std::string>& related, std::int64_t max_content_bytes) {
  RecallHit hit;
  EventRow& r = s.row;
  hit.seq = r.seq;
  hit.id = r.id;
  hit.kind = r.kind;
  hit.ns = r.ns;
  hit.agent_id = r.agent_id;
  hit.episode_id = r.episode_id;
  hit.sequence_number = r.sequence_number;
  hit.ts_us = r.ts_us;
  hit.sensitivity = r.sensitivity;
  hit.status = r.status;
  hit.redacted = r.redacted;
  hit.score = s.score;
  hit.components = {s.lexical,         s.entity,
                    s.hop1 + s.hop2,   s.temporal,
                    s.speaker,         std::min(1.0, r.salience),
                    r.vitality_factor, rows.importance(r.seq)};
  hit.components.semantic = s.semantic;
  if (!r.redacted) {
    const std::string lower = ascii_lower(r.content);
    for (const std::string& t : lexical_terms) {
      if (names_term(lower, t)) hit.why_terms.push_back(t);
    }
    for (const std::string& w : related) {
      if (names_term(lower, w)) hit.why_related.push_back(w);
    }
    if (s.speaker > 0) hit.why_entities.push_back("agent:" + ascii_lower(r.agent_id));
    hit.why_entities.insert(hit.why_entities.end(), s.entities.begin(), s.entities.end());
    hit.times = text::find_time_expressions(r.content, r.ts_us);
  }
  std::tie(hit.content, hit.truncated) =
      cut_content(std::move(r.content), static_cast<std::size_t>(max_content_bytes));
  return hit;
}

}  // namespace

std::variant<RecallRequest, RecallError> recall_request_from_json(const json& request) {
  RecallRequest r;
  const auto text = request.find("text");
  if (text == request.end() || !text->is_string()) {
    return RecallError{"text: is required (a string)"};
  }
  r.text = text->get<std::string>();
  if (r.text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return RecallError{"text: must not be empty"};
  }
  if (r.text.size() > kMaxQueryBytes) {
    return RecallError{"text: must be at most " + std::to_string(kMaxQueryBytes) + " bytes (got " +
                       std::to_string(r.text.size()) + ")"};
  }
  if (auto error = string_field(request, "namespace", r.ns)) return RecallError{*error};
  if (auto error = string_field(request, "agent_id", r.agent_id)) return RecallError{*error};
  if (auto error = string_field(request, "episode_id", r.episode_id)) return RecallError{*error};
  if (auto error = int_field(request, "limit", 1, kMaxLimit, r.limit)) return RecallError{*error};
  if (auto error = int_field(request, "offset", 0, kMaxOffset, r.offset)) {
    return RecallError{*error};
  }
  if (const auto kinds = request.find("kinds"); kinds != request.end()) {
    if (!kinds->is_array()) return RecallError{"kinds: must be an array of strings"};
    for (const json& k : *kinds) {
      if (!k.is_string()) return RecallError{"kinds: must be an array of strings"};
      r.kinds.push_back(k.get<std::string>());
    }
  }
  for (const char* key : {"since", "until", "as_of"}) {
    const auto it = request.find(key);
    if (it == request.end() || it->is_null()) continue;
    const auto us = time_param(*it);
    if (!us) {
      return RecallError{std::string(key) +
                         ": must be an RFC 3339 date-time with offset or epoch milliseconds"};
    }
    const std::string_view k(key);
    (k == "since" ? r.since_us : k == "until" ? r.until_us : r.as_of_us) = us;
  }
  if (r.since_us && r.until_us && *r.since_us >= *r.until_us) {
    return RecallError{"until: must be later than since"};
  }
  if (const auto archived = request.find("include_archived");
      archived != request.end() && !archived->is_null()) {
    if (!archived->is_boolean()) return RecallError{"include_archived: must be true or false"};
    r.include_archived = archived->get<bool>();
  }
  return r;
}

Recaller::Recaller(SQLite::Database& db, RecallParams params)
    : db_(db),
      params_(std::move(params)),
      rows_(db),
      derived_(db, derived_texts_sql()),
      facts_(db, entity_facts_sql()) {}

std::variant<RecallResponse, RecallError> Recaller::recall(const RecallRequest& request,
                                                           const ReadScope& scope,
                                                           std::int64_t now_us) {
  RecallResponse out;
  // One read transaction for the whole question: one snapshot, and one set of file locks
  // instead of one per statement (the related words' lookups run dozens).
  const ReadTransaction snapshot(db_);
  // Read first: the rows below come from the same snapshot.
  const store::FtsLag lag = store::read_fts_lag(db_);
  out.indexed_through_seq = lag.indexed_through_seq;
  out.lag_events = lag.lag_events;

  rows_.set_scope(scope, now_us);
  EventRows& rows = rows_;
  EventFilter filter{
      request.ns,       request.kinds,    request.agent_id,        request.episode_id,
      request.since_us, request.until_us, request.include_archived};
  if (!request.ns.empty() && !rows.namespace_visible(request.ns)) {
    return RecallError{"namespace: unknown namespace '" + request.ns + "'"};
  }

  const ParsedQuery query = parse_query(request.text, request.as_of_us.value_or(now_us));
  if (query.terms.empty()) {
    return RecallError{"text: has no word to search for (only stop words or one-letter words)"};
  }
  out.asks_when = query.asks_when;
  if (!query.time.empty()) out.temporal_range = covering_range(query.time);

  QueryPlan plan = plan_query(rows, request, query);
  out.primed_entities = plan.primed;
  const auto indexed = static_cast<double>(lag.indexed_through_seq);
  drop_collection_stop_words(rows, stemmer_, params_.max_term_share, indexed, plan.lexical_terms,
                             out.dropped_terms);
  out.expanded_terms = plan.lexical_terms;
  if (!request.ns.empty() && params_.derived_results > 0) {
    std::set<std::string> named;
    for (const PrimedEntity& p : plan.primed) named.insert(p.key);
    out.derived = recall_derived(request.ns, plan.lexical_terms, named, scope);
  }
  out.expanded_terms.insert(out.expanded_terms.end(), plan.phrases.begin(), plan.phrases.end());

  Pool pool;
  const double max_bm25 = add_lexical(pool, rows, plan, filter, params_.candidates);
  const std::vector<std::string> related =
      related_words(rows, stemmer_, params_, query, plan, indexed, out.related_terms);
  add_semantic(pool, rows, related, filter, params_.candidates / 4, max_bm25);
  spread_hop1(pool, rows, params_, filter, out.spreading);
  spread_entities(pool, rows, plan, params_.entity_events, filter, out.spreading);
  spread_hop2(pool, params_.hop2_weight, out.spreading);
  fuse(pool, params_, plan, query, out.temporal_range);
  out.candidates = static_cast<std::int64_t>(pool.size());

  std::vector<Scored*> ranked;
  ranked.reserve(pool.size());
  for (auto& [seq, s] : pool) {
    if (!s.row.revised) ranked.push_back(&s);  // only the newest revision is recalled
  }
  std::sort(ranked.begin(), ranked.end(), [](const Scored* a, const Scored* b) {
    return a->score != b->score ? a->score > b->score : a->row.seq > b->row.seq;
  });
  promote_sides(ranked, query, plan, stemmer_);
  const auto first = static_cast<std::size_t>(request.offset);
  const auto last = std::min(ranked.size(), first + static_cast<std::size_t>(request.limit));
  for (std::size_t i = first; i < last; ++i) {
    out.results.push_back(
        hit_of(*ranked[i], rows, plan.lexical_terms, related, params_.max_content_bytes));
  }
  return out;
}

std::vector<DerivedHit> Recaller::recall_derived(const std::string& ns,
                                                 const std::vector<std::string>& terms,
                                                 const std::set<std::string>& named,
                                                 const ReadScope& scope) {
  std::vector<DerivedText> texts = derived_texts(derived_, ns, scope, kDerivedPerKind);
  // The facts about the entities the question names (a person's dated statements) compete
  // with the other records on their words.
  for (DerivedText& fact :
       entity_facts(facts_, ns, {named.begin(), named.end()}, scope, kDerivedPerKind)) {
    texts.push_back(std::move(fact));
  }
  std::vector<std::string> stems;
  stems.reserve(terms.size());
  for (const std::string& t : terms) stems.push_back(stemmer_.stem(t));
  std::vector<std::vector<std::string>> docs;
  // An entity's summary quotes its events' salient lines, which the events' own results
  // already show: only the summaries of the entities the question names are candidates, and
  // they are, whatever their words (kNamedEntityBonus).
  std::vector<bool> named_entity;
  named_entity.reserve(texts.size());
  for (const DerivedText& d : texts) {
    named_entity.push_back(d.kind == "entity_summary" && named.contains(d.id));
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const DerivedText& d = texts[i];
    std::vector<std::string> doc;
    if (!d.redacted && (d.kind != "entity_summary" || named_entity[i])) {
      for (const std::string& w : query_words(d.title + " " + d.text + " " + d.keywords)) {
        if (w.size() >= 2 && !text::Tokenizer::is_stop_word(w)) doc.push_back(stemmer_.stem(w));
      }
    }
    docs.push_back(std::move(doc));
  }
  std::vector<double> scores = bm25_scores(docs, stems);
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (named_entity[i] && !texts[i].redacted) scores[i] += kNamedEntityBonus;
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (scores[i] > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : texts[a].id < texts[b].id;
  });
  if (static_cast<std::int64_t>(order.size()) > params_.derived_results) {
    order.resize(static_cast<std::size_t>(params_.derived_results));
  }
  std::vector<DerivedHit> out;
  for (const std::size_t i : order) {
    const DerivedText& d = texts[i];
    DerivedHit hit{d.kind, d.id, d.ns, d.title, d.text, d.sensitivity, scores[i], {}};
    for (std::size_t k = 0; k < terms.size(); ++k) {
      if (std::find(docs[i].begin(), docs[i].end(), stems[k]) != docs[i].end()) {
        hit.why_terms.push_back(terms[k]);
      }
    }
    out.push_back(std::move(hit));
  }
  return out;
}

json to_json(const RecallHit& hit) {
  json j = {
      {"id", hit.id},
      {"seq", hit.seq},
      {"kind", hit.kind},
      {"namespace", hit.ns},
      {"agent_id", hit.agent_id.empty() ? json() : json(hit.agent_id)},
      {"ts", format_rfc3339_us(hit.ts_us)},
      {"date", text::format_day(hit.ts_us)},
      {"episode_id", hit.episode_id.empty() ? json() : json(hit.episode_id)},
      {"sequence_number", hit.sequence_number ? json(*hit.sequence_number) : json()},
      {"sensitivity", hit.sensitivity},
      {"status", hit.status},
      {"score", hit.score},
      {"components",
       {{"lexical", hit.components.lexical},
        {"entity", hit.components.entity},
        {"graph", hit.components.graph},
        {"temporal", hit.components.temporal},
        {"speaker", hit.components.speaker},
        {"semantic", hit.components.semantic},
        {"salience", hit.components.salience},
        {"vitality", hit.components.vitality},
        {"importance", hit.components.importance}}},
      {"content", hit.content},
      {"truncated", hit.truncated},
      {"redacted", hit.redacted},
      {"why",
       {{"terms", hit.why_terms}, {"entities", hit.why_entities}, {"related", hit.why_related}}}};
  json times = json::array();
  for (const text::TimeMention& m : hit.times) {
    times.push_back({{"text", m.phrase},
                     {"date", m.range.label},
                     {"from", format_rfc3339_us(m.range.from_us)},
                     {"until", format_rfc3339_us(m.range.to_us)},
                     {"relative", m.relative}});
  }
  j["times"] = std::move(times);
  return j;
}

json to_json(const RecallResponse& response) {
  json results = json::array();
  for (const RecallHit& hit : response.results) results.push_back(to_json(hit));
  json derived = json::array();
  for (const DerivedHit& d : response.derived) {
    derived.push_back({{"kind", d.kind},
                       {"id", d.id},
                       {"namespace", d.ns},
                       {"title", d.title},
                       {"text", d.text},
                       {"sensitivity", d.sensitivity},
                       {"score", d.score},
                       {"why", {{"terms", d.why_terms}}}});
  }
  json primed = json::array();
  for (const PrimedEntity& p : response.primed_entities) primed.push_back(p.key);
  json range;
  if (response.temporal_range) {
    range = {{"from", format_rfc3339_us(response.temporal_range->from_us)},
             {"until", format_rfc3339_us(response.temporal_range->to_us)},
             {"label", response.temporal_range->label}};
  }
  return {{"ok", true},
          {"results", std::move(results)},
          {"derived", std::move(derived)},
          {"expanded_query",
           {{"primed_entities", primed},
            {"temporal_range", range},
            {"expanded_terms", response.expanded_terms},
            {"dropped_terms", response.dropped_terms},
            {"related_terms", response.related_terms},
            {"asks_when", response.asks_when}}},
          {"spreading",
           {{"seeds", response.spreading.seeds},
            {"hop1_count", response.spreading.hop1_count},
            {"hop2_count", response.spreading.hop2_count},
            {"entities_explored", response.spreading.entities_explored},
            {"episodes_explored", response.spreading.episodes_explored},
            {"candidates", response.candidates}}},
          {"indexed_through_seq", response.indexed_through_seq},
          {"lag_events", response.lag_events}};
}

}  // namespace reflectd::recall
