#include "recall/event_rows.hpp"

#include <fmt/format.h>

#include <set>

#include "common/utf8.hpp"
#include "recall/query.hpp"
#include "store/columns.hpp"

namespace reflectd::recall {
namespace {

// The EventRow columns, in read()'s order. Knowledge is read by scalar subqueries: an event
// became at most one knowledge row, and a join would repeat the event if it ever were more.
std::string columns() {
  return fmt::format(R"sql(
e.seq, e.uid, e.kind, e.namespace, coalesce(e.agent_id, ''), coalesce(e.episode_id, ''),
e.sequence_number, e.ts_us, e.sensitivity,
coalesce((SELECT k.status FROM knowledge k WHERE k.source_event_seq = e.seq LIMIT 1), e.status),
{0} > ?20,
rd_salience(e.salience_base, e.salience_ref_us, e.received_us, e.decay_curve, e.half_life_s,
            e.min_salience, e.max_age_s, e.pinned, ?24),
CASE (SELECT k.vitality FROM knowledge k WHERE k.source_event_seq = e.seq LIMIT 1)
  WHEN 'decaying' THEN 0.75 WHEN 'dormant' THEN 0.5 ELSE 1.0 END,
CASE WHEN {0} > ?20 THEN ?23 ELSE e.content END, e.superseded_by IS NOT NULL)sql",
                     kSensitivityRankSql);
}
constexpr int kColumns = 15;
// Seed 002 hyper: a caller one level below it reads every row (hyper ones redacted).
constexpr int kHighestRank = 4;

// Filters ?11..?17 and the scope ?20..?22.
std::string filter() {
  return fmt::format(R"sql(
(?11 = '' OR e.namespace = ?11) AND (?17 = 1 OR e.status = 'active')
AND (json_array_length(?12) = 0 OR e.kind IN (SELECT value FROM json_each(?12)))
AND (?13 = '' OR e.agent_id = ?13) AND (?14 = '' OR e.episode_id = ?14)
AND (?15 IS NULL OR e.ts_us >= ?15) AND (?16 IS NULL OR e.ts_us < ?16)
AND {0} <= ?20 + 1 AND (?21 = 1 OR e.namespace IN (SELECT value FROM json_each(?22))))sql",
                     kSensitivityRankSql);
}

}  // namespace

EventRows::EventRows(SQLite::Database& db)
    : namespace_(db,
                 "SELECT 1 FROM event_namespaces WHERE namespace = ?1 "
                 "AND (?21 = 1 OR ?1 IN (SELECT value FROM json_each(?22)))"),
      // Entities the caller could not read in full prime nothing: their keys are text from
      // events above its clearance.
      entity_(db, fmt::format("SELECT entity_id, canonical_key, entity_type FROM entities e "
                              "WHERE namespace = ?1 AND canonical_key = ?2 AND is_active = 1 "
                              "AND {} <= ?20",
                              kSensitivityRankSql)),
      alias_(db, fmt::format("SELECT a.canonical_key FROM entity_aliases a JOIN entities e ON "
                             "e.namespace = a.namespace AND e.canonical_key = a.canonical_key "
                             "WHERE a.namespace = ?1 AND a.alias = ?2 AND e.is_active = 1 "
                             "AND {} <= ?20",
                             kSensitivityRankSql)),
      // The best matches first, reading only what ranks and filters them; the EventRow columns
      // (content, salience, knowledge) for those alone.
      lexical_(db, "SELECT " + columns() +
                       ", t.lex FROM (SELECT e.seq AS seq, -bm25(events_fts, 1.0, 0.0) AS lex "
                       "FROM events_fts JOIN events e ON e.seq = events_fts.rowid "
                       "WHERE events_fts MATCH ?1 AND " +
                       filter() +
                       " ORDER BY lex DESC, e.seq DESC LIMIT ?2) t JOIN events e ON e.seq = t.seq "
                       "ORDER BY t.lex DESC, e.seq DESC"),
      // Without filters a caller of full clearance may read every match: FTS5 alone ranks
      // them (no row of `events` read per match); the outer query still applies every rule.
      lexical_unfiltered_(
          db, "SELECT " + columns() +
                  ", t.lex FROM (SELECT rowid AS seq, -bm25(events_fts, 1.0, 0.0) AS lex "
                  "FROM events_fts WHERE events_fts MATCH ?1 ORDER BY lex DESC, rowid DESC "
                  "LIMIT ?2) t JOIN events e ON e.seq = t.seq WHERE " +
                  filter() + " ORDER BY t.lex DESC, e.seq DESC"),
      neighbours_(db, "SELECT " + columns() +
                          " FROM events e WHERE e.namespace = ?1 AND e.episode_id = ?2 "
                          "AND e.sequence_number BETWEEN ?3 - 1 AND ?3 + 1 AND " +
                          filter() + " ORDER BY e.sequence_number, e.seq"),
      entity_events_(db, "SELECT " + columns() +
                             " FROM event_entities ee JOIN events e ON e.seq = ee.seq "
                             "WHERE ee.entity_id = ?1 AND " +
                             filter() + " ORDER BY ee.seq DESC LIMIT ?2"),
      importance_(db,
                  "SELECT coalesce(max(n.importance_score), 0) FROM event_entities ee "
                  "JOIN entities n ON n.entity_id = ee.entity_id WHERE ee.seq = ?1"),
      summary_(db, fmt::format("SELECT CASE WHEN {0} > ?20 THEN ?23 ELSE summary_text END "
                               "FROM entities e WHERE entity_id = ?1 AND summary_text IS NOT NULL "
                               "AND {0} <= ?20 + 1 AND (?21 = 1 OR e.namespace IN "
                               "(SELECT value FROM json_each(?22)))",
                               kSensitivityRankSql)),
      vocab_(db, "SELECT doc FROM events_fts_vocab WHERE term = ?1 AND col = 'content'") {}

void EventRows::set_scope(const ReadScope& scope, std::int64_t now_us) {
  scope_ = scope;
  now_us_ = now_us;
}

namespace {
void bind_scope(SQLite::Statement& s, const ReadScope& scope, bool with_rows, std::int64_t now_us) {
  s.bind(21, scope.all_namespaces ? 1 : 0);
  s.bind(22, nlohmann::json(scope.namespaces).dump());
  if (with_rows) {
    s.bind(20, scope.clearance);
    s.bind(23, kRedacted);
    if (s.getBindParameterCount() >= 24) s.bind(24, now_us);
  }
}
}  // namespace

bool EventRows::namespace_visible(const std::string& ns) {
  namespace_.reset();
  namespace_.clearBindings();
  namespace_.bind(1, ns);
  bind_scope(namespace_, scope_, false, now_us_);
  const bool visible = namespace_.executeStep();
  namespace_.reset();
  return visible;
}

std::vector<PrimedEntity> EventRows::prime_entities(const std::string& ns,
                                                    const std::vector<std::string>& words) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].size() >= 2) names.push_back(words[i]);
    if (i + 1 < words.size()) names.push_back(words[i] + " " + words[i + 1]);
  }
  std::vector<PrimedEntity> out;
  std::set<std::int64_t> seen;
  std::set<std::string> agents;
  auto lookup = [&](const std::string& key, bool agent) {
    entity_.reset();
    entity_.bind(1, ns);
    entity_.bind(2, key);
    entity_.bind(20, scope_.clearance);
    if (entity_.executeStep()) {
      PrimedEntity p;
      p.entity_id = entity_.getColumn(0).getInt64();
      p.key = entity_.getColumn(1).getString();
      const std::string type = entity_.getColumn(2).getString();
      p.name = p.key.substr(p.key.find(':') + 1);
      p.speaker = agent || type == "agent";
      if (p.speaker) agents.insert(p.name);
      if (seen.insert(p.entity_id).second) out.push_back(std::move(p));
    }
    entity_.reset();
  };
  auto aliased = [&](const std::string& alias) {
    alias_.reset();
    alias_.bind(1, ns);
    alias_.bind(2, alias);
    alias_.bind(20, scope_.clearance);
    std::string key;
    if (alias_.executeStep()) key = alias_.getColumn(0).getString();
    alias_.reset();
    return key;
  };
  for (const std::string& name : names) {
    // An agent that speaks under its own name is one entity with that person
    // (text/entity_extraction.hpp): the person is the speaker.
    if (const std::string key = aliased("agent:" + name); !key.empty()) lookup(key, true);
    for (const char* type : {"agent:", "person:", "name:"}) lookup(type + name, false);
    if (const std::string key = aliased(name); !key.empty()) lookup(key, false);
  }
  // A person who is also an agent of the namespace is that speaker ("person:caroline" from a
  // "Caroline:" turn prefix, "agent:caroline" from agent_id).
  for (PrimedEntity& p : out) {
    if (!p.speaker && agents.contains(p.name)) p.speaker = true;
  }
  return out;
}

void EventRows::bind_filter(SQLite::Statement& s, const EventFilter& f) {
  s.bind(11, f.ns);
  s.bind(12, nlohmann::json(f.kinds).dump());
  s.bind(13, f.agent_id);
  s.bind(14, f.episode_id);
  if (f.since_us) {
    s.bind(15, *f.since_us);
  } else {
    s.bind(15);
  }
  if (f.until_us) {
    s.bind(16, *f.until_us);
  } else {
    s.bind(16);
  }
  s.bind(17, f.include_archived ? 1 : 0);
  bind_scope(s, scope_, true, now_us_);
}

namespace {
EventRow row_of(SQLite::Statement& s) {
  EventRow r;
  store::Columns(s) >> r.seq >> r.id >> r.kind >> r.ns >> r.agent_id >> r.episode_id >>
      r.sequence_number >> r.ts_us >> r.sensitivity >> r.status >> r.redacted >> r.salience >>
      r.vitality_factor >> r.content >> r.revised;
  return r;
}
}  // namespace

std::vector<EventRow> EventRows::read(SQLite::Statement& s) {
  std::vector<EventRow> out;
  while (s.executeStep()) out.push_back(row_of(s));
  s.reset();
  return out;
}

std::vector<LexicalRow> EventRows::lexical(const std::string& match, const EventFilter& filter,
                                           std::int64_t limit) {
  // FTS5 narrows to the namespace itself (fts_scoped_match); nothing else needs a row.
  const bool unfiltered = filter.kinds.empty() && filter.agent_id.empty() &&
                          filter.episode_id.empty() && !filter.since_us && !filter.until_us &&
                          scope_.all_namespaces && scope_.clearance >= kHighestRank - 1;
  SQLite::Statement& statement = unfiltered ? lexical_unfiltered_ : lexical_;
  statement.reset();
  statement.bind(1, fts_scoped_match(match, filter.ns));
  statement.bind(2, limit);
  bind_filter(statement, filter);
  std::vector<LexicalRow> out;
  while (statement.executeStep()) {
    LexicalRow hit{row_of(statement), 0};
    hit.bm25 = statement.getColumn(kColumns).getDouble();
    out.push_back(std::move(hit));
  }
  statement.reset();
  return out;
}

std::vector<EventRow> EventRows::episode_neighbours(const std::string& ns,
                                                    const std::string& episode,
                                                    std::int64_t sequence,
                                                    const EventFilter& filter) {
  neighbours_.reset();
  neighbours_.bind(1, ns);
  neighbours_.bind(2, episode);
  neighbours_.bind(3, sequence);
  bind_filter(neighbours_, filter);
  return read(neighbours_);
}

std::vector<EventRow> EventRows::entity_events(std::int64_t entity_id, std::int64_t limit,
                                               const EventFilter& filter) {
  entity_events_.reset();
  entity_events_.bind(1, entity_id);
  entity_events_.bind(2, limit);
  bind_filter(entity_events_, filter);
  return read(entity_events_);
}

double EventRows::importance(std::int64_t seq) {
  importance_.reset();
  importance_.bind(1, seq);
  double value = 0;
  if (importance_.executeStep()) value = importance_.getColumn(0).getDouble();
  importance_.reset();
  return value;
}

std::int64_t EventRows::term_documents(const std::string& term) {
  vocab_.reset();
  vocab_.bind(1, term);
  std::int64_t documents = 0;
  if (vocab_.executeStep()) documents = vocab_.getColumn(0).getInt64();
  vocab_.reset();
  return documents;
}

std::optional<std::string> EventRows::entity_summary(std::int64_t entity_id) {
  summary_.reset();
  summary_.clearBindings();
  summary_.bind(1, entity_id);
  bind_scope(summary_, scope_, true, now_us_);
  std::optional<std::string> out;
  if (summary_.executeStep()) out = summary_.getColumn(0).getString();
  summary_.reset();
  return out;
}

std::pair<std::string, bool> cut_content(std::string content, std::size_t max_bytes) {
  if (content.size() <= max_bytes) return {std::move(content), false};
  content.resize(utf8_boundary(content, max_bytes));
  return {std::move(content), true};
}

std::optional<std::string> string_field(const nlohmann::json& request, const char* key,
                                        std::string& out) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return std::string(key) + ": must be a string";
  out = it->get<std::string>();
  return std::nullopt;
}

std::optional<std::string> int_field(const nlohmann::json& request, const char* key,
                                     std::int64_t min, std::int64_t max, std::int64_t& out) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return std::nullopt;
  const std::string rule = std::string(key) + ": must be an integer from " + std::to_string(min) +
                           " to " + std::to_string(max);
  if (!it->is_number_integer()) return rule;
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    return rule;
  }
  const auto value = it->get<std::int64_t>();
  if (value < min || value > max) return rule;
  out = value;
  return std::nullopt;
}

}  // namespace reflectd::recall
