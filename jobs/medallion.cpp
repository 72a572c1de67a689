#include "jobs/medallion.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/ascii.hpp"
#include "common/sha256.hpp"
#include "common/timestamp.hpp"
#include "jobs/decision_extraction.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/follow_ups.hpp"
#include "jobs/job_state.hpp"
#include "jobs/medallion_people.hpp"
#include "store/audit_log.hpp"
#include "store/medallion_store.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr std::int64_t kUsPerDay = 86'400'000'000;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, separator)) {
    const auto a = item.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    out.push_back(item.substr(a, item.find_last_not_of(' ') - a + 1));
  }
  return out;
}

std::size_t utf8_chars(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Cuts to at most `max_chars` code points: at the end of a sentence in the second half, else at
// a word boundary adding "...".
std::string clip(const std::string& text, std::size_t max_chars) {
  if (utf8_chars(text) <= max_chars) return text;
  std::string out;
  std::size_t chars = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++chars > max_chars - 3) break;
    out.push_back(c);
  }
  // A whole sentence when one ends in the second half, else a word boundary.
  if (const auto stop = out.rfind(". "); stop != std::string::npos && stop > out.size() / 2) {
    out.resize(stop + 1);
    return out;
  }
  if (const auto space = out.find_last_of(' ');
      space != std::string::npos && space > out.size() / 2) {
    out.resize(space);
  }
  return out + "...";
}

std::string day(std::int64_t us) { return format_rfc3339_us(us).substr(0, 10); }

// The first non-blank line of a text, trimmed (an error's message).
std::string first_text_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = std::string_view(text).substr(start, end - start);
    if (const auto a = line.find_first_not_of(" \t\r"); a != std::string_view::npos) {
      return std::string(line.substr(a, line.find_last_not_of(" \t\r") - a + 1));
    }
    start = end + 1;
  }
  return {};
}

// The last non-blank line of a text, trimmed (a question at the end of a turn).
std::string last_text_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const auto start = text.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    const auto line = std::string_view(text).substr(from, end - from);
    if (const auto a = line.find_first_not_of(" \t\r"); a != std::string_view::npos) {
      return std::string(line.substr(a, line.find_last_not_of(" \t\r") - a + 1));
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return {};
}

// The problem a message states ("Problem:" or "Issue:" paragraph).
std::string problem_line(const std::string& text) {
  constexpr std::array<std::string_view, 2> kLabels{"Problem:", "Issue:"};
  return labelled_paragraph(text, kLabels);
}

// The newest n ids of a stored JSON array of event ids; empty when the text is not an array
// (NULL reads as ""). Parsed only for the items a medallion lists: a scope has thousands of
// streams and recurring problems, each with up to 200 ids, and lists ten of each.
json last_ids(const std::string& text, std::size_t n) {
  const json ids = json::parse(text, nullptr, false);
  json out = json::array();
  if (!ids.is_array()) return out;
  for (std::size_t i = ids.size() > n ? ids.size() - n : 0; i < ids.size(); ++i)
    out.push_back(ids[i]);
  return out;
}

bool has_table(SQLite::Database& db, const char* name) {
  SQLite::Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  query.bind(1, name);
  return query.executeStep();
}

// The scope's event filter: its namespace, or every namespace.
struct Span {
  std::int64_t count = 0;
  std::int64_t min_ts = 0;
  std::int64_t max_ts = 0;
};

class Refresher {
 public:
  Refresher(JobContext& ctx, const MedallionParams& params) : ctx_(ctx), p_(params), db_(ctx.db) {}

  json run() {
    std::vector<MedallionScope> scopes;
    for (const auto& ns : event_namespaces(db_)) {
      if (!ctx_.ns.empty() && ns != ctx_.ns) continue;
      scopes.push_back({ns, ns, {}, {ns}, true});
    }
    for (const auto& scope : p_.scopes) {
      if (ctx_.ns.empty() || scope.ns == ctx_.ns) scopes.push_back(scope);
    }
    const json summaries = refresh_entity_summaries(ctx_, p_.edge_half_life_s);
    std::int64_t refreshed = 0;
    std::int64_t skipped = 0;
    json ids = json::array();
    for (const auto& scope : scopes) {
      ctx_.cancel.check();
      WriteTransaction transaction(ctx_);
      if (refresh(scope)) {
        ++refreshed;
      } else {
        ++skipped;
      }
      ctx_.cancel.check();
      transaction.commit();
      ids.push_back("med:" + scope.name);
    }
    for (const auto& [id, payload] : published_) {
      if (ctx_.publish) ctx_.publish("medallion.updated", payload);
    }
    return {{"medallions_refreshed", refreshed},
            {"medallions_skipped", skipped},
            {"summaries_refreshed", summaries["summaries_refreshed"]},
            {"summaries_skipped", summaries["summaries_skipped"]},
            {"summaries_searched", summaries["summaries_searched"]},
            {"summaries_searched_in_pass", summaries["summaries_searched_in_pass"]},
            {"scopes", ids},
            {"skipped", refreshed == 0 && summaries["summaries_refreshed"] == 0},
            {"skip_reason", refreshed == 0 ? json("every medallion is fresh") : json()}};
  }

 private:
  // The scope's span, from the one kept for its namespace (migration 18) plus the events
  // stored since, or read whole when a stored event changed since it was kept. Runs inside
  // the refresh's write transaction: no event can be stored in between, so max(seq) bounds
  // what was read.
  Span span(const MedallionScope& scope) {
    SQLite::Statement changes_query(
        db_, scope.ns.empty()
                 ? "SELECT coalesce(sum(changes), 0) FROM event_span_changes"
                 : "SELECT coalesce(sum(changes), 0) FROM event_span_changes WHERE namespace = ?1");
    if (!scope.ns.empty()) changes_query.bind(1, scope.ns);
    changes_query.executeStep();
    const std::int64_t changes = changes_query.getColumn(0).getInt64();
    const std::int64_t through =
        db_.execAndGet("SELECT coalesce(max(seq), 0) FROM events").getInt64();

    Span kept;
    std::int64_t kept_through = 0;
    bool reused = false;
    SQLite::Statement kept_query(db_,
                                 "SELECT through_seq, changes, events, min_ts_us, max_ts_us FROM "
                                 "medallion_spans WHERE namespace = ?1");
    kept_query.bind(1, scope.ns);
    if (kept_query.executeStep() && kept_query.getColumn(1).getInt64() == changes &&
        kept_query.getColumn(0).getInt64() <= through) {
      reused = true;
      kept_through = kept_query.getColumn(0).getInt64();
      kept = {kept_query.getColumn(2).getInt64(), kept_query.getColumn(3).getInt64(),
              kept_query.getColumn(4).getInt64()};
    }
    kept_query.reset();

    // Two texts per case, not `(?1 = '' OR namespace = ?1)`: the OR hides the namespace from
    // the planner, which then reads the whole table instead of the covering index
    // events_namespace_active_seq (namespace, status, seq, ts_us) (migration 7). The events
    // after a kept span are a seq range of that index, or of the table for every namespace.
    std::string sql = "SELECT count(*), min(ts_us), max(ts_us) FROM events WHERE ";
    sql += scope.ns.empty() ? "status = 'active'" : "namespace = ?1 AND status = 'active'";
    if (kept_through > 0) sql += " AND seq > ?2";
    SQLite::Statement query(db_, sql);
    if (!scope.ns.empty()) query.bind(1, scope.ns);
    if (kept_through > 0) query.bind(2, kept_through);
    query.executeStep();
    const Span added{query.getColumn(0).getInt64(),
                     query.getColumn(1).isNull() ? 0 : query.getColumn(1).getInt64(),
                     query.getColumn(2).isNull() ? 0 : query.getColumn(2).getInt64()};
    Span s = kept.count == 0 ? added : kept;
    if (kept.count > 0 && added.count > 0) {
      s = {kept.count + added.count, std::min(kept.min_ts, added.min_ts),
           std::max(kept.max_ts, added.max_ts)};
    }

    if (reused && kept_through == through) return s;  // nothing stored since: kept as is
    SQLite::Statement keep(
        db_,
        "INSERT INTO medallion_spans (namespace, through_seq, changes, events, min_ts_us, "
        "max_ts_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (namespace) DO UPDATE SET "
        "through_seq = excluded.through_seq, changes = excluded.changes, events = "
        "excluded.events, min_ts_us = excluded.min_ts_us, max_ts_us = excluded.max_ts_us");
    keep.bind(1, scope.ns);
    keep.bind(2, through);
    keep.bind(3, changes);
    keep.bind(4, s.count);
    keep.bind(5, s.min_ts);
    keep.bind(6, s.max_ts);
    keep.exec();
    return s;
  }

  static std::string config_hash(const MedallionScope& scope) {
    json j = {{"ns", scope.ns}, {"nodes", scope.graph_nodes}, {"tags", scope.tags}};
    return sha256_hex(j.dump()).substr(0, 16);
  }

  // The newest fact of the scope's namespace (0: none, or a scope over every namespace, which
  // lists no people): facts come after their events, in a later job, so a medallion built
  // between the two is rebuilt once they exist.
  std::int64_t facts_through(const MedallionScope& scope) {
    if (scope.ns.empty() || !has_table(db_, "facts")) return 0;
    SQLite::Statement newest(db_,
                             "SELECT coalesce(max(fact_id), 0) FROM facts WHERE namespace = ?1");
    newest.bind(1, scope.ns);
    newest.executeStep();
    return newest.getColumn(0).getInt64();
  }

  // Why a medallion must be rebuilt, or empty when it is fresh.
  std::string staleness(const std::string& id, const MedallionScope& scope, const Span& s) {
    SQLite::Statement row(
        db_,
        "SELECT m.status, m.content_json, sc.config_hash FROM medallions m "
        "LEFT JOIN medallion_scopes sc ON sc.medallion_id = m.id WHERE m.id = ?1");
    row.bind(1, id);
    if (!row.executeStep()) return "new scope";
    if (row.getColumn(0).getString() == "stale") return "marked stale by new events";
    if (row.getColumn(2).isNull() || row.getColumn(2).getString() != config_hash(scope)) {
      return "scope configuration changed";
    }
    const json content = json::parse(row.getColumn(1).getString(), nullptr, false);
    const auto covered =
        content["meta"].value("x_reflectd", json::object()).value("events", std::int64_t{-1});
    if (covered != s.count) return "events in scope changed";
    const auto max_ts = content["meta"].value("knowledge_max_ts", json());
    if (s.max_ts != 0 && (!max_ts.is_string() ||
                          parse_rfc3339_us(max_ts.get<std::string>()).value_or(0) < s.max_ts)) {
      return "newer events in scope";
    }
    if (content["meta"]
            .value("x_reflectd", json::object())
            .value("facts_through", std::int64_t{0}) != facts_through(scope)) {
      return "facts in scope changed";
    }
    for (const auto& d : content.value("decisions", json::array())) {
      const std::string source = d.value("x_reflectd", json::object()).value("source_id", "");
      SQLite::Statement status(db_, "SELECT status FROM knowledge WHERE decision_id = ?1");
      status.bind(1, source);
      if (!status.executeStep()) return "a listed decision disappeared";
      const std::string st = status.getColumn(0).getString();
      if (st == "superseded" || st == "deprecated") return "a listed decision was " + st;
    }
    return {};
  }

  // An item's id is a function of what it lists: its kind and the first 8 hex digits of the
  // SHA-256 of its source record's id ("D-3f2a9c01"). So a record keeps its id across refreshes,
  // and two replicas that list it give it the same id whatever order their refreshes listed
  // items in. medallion_items remembers every record a medallion has listed, because a read
  // ranks the medallion by the most sensitive of them (recall/record_reads.cpp).
  std::string item_id(const std::string& medallion, const char* kind, const std::string& source) {
    std::string id = std::string(kind) + "-" + sha256_hex(source).substr(0, 8);
    SQLite::Statement insert(db_,
                             "INSERT OR IGNORE INTO medallion_items (medallion_id, item_kind, "
                             "source_id, item_id) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, medallion);
    insert.bind(2, kind);
    insert.bind(3, source);
    insert.bind(4, id);
    insert.exec();
    return id;
  }

  // Knowledge rows of the scope: its namespace, and when graph nodes are given, targets that
  // name one of them ("module:src" names target "src").
  std::string knowledge_filter(const MedallionScope& scope) const {
    std::string filter = "(?1 = '' OR namespace = ?1)";
    if (!scope.graph_nodes.empty()) {
      filter += " AND target IN (";
      for (std::size_t i = 0; i < scope.graph_nodes.size(); ++i) {
        const auto& node = scope.graph_nodes[i];
        const auto colon = node.find(':');
        const std::string name = colon == std::string::npos ? node : node.substr(colon + 1);
        std::string quoted;
        for (char c : name) {
          quoted += c;
          if (c == '\'') quoted += '\'';
        }
        filter += (i ? ", '" : "'") + quoted + "'";
      }
      filter += ")";
    }
    return filter;
  }

  std::vector<std::string> top_entities(const MedallionScope& scope, std::size_t limit) {
    std::vector<std::string> out;
    if (has_table(db_, "entities")) {
      try {
        SQLite::Statement query(
            db_,
            // Agents are who acted, not where to start (their ids are often pseudonyms);
            // scores rounded so that floating-point noise never orders two entities.
            "SELECT canonical_key FROM entities WHERE (?1 = '' OR namespace = ?1) "
            "AND is_active = 1 AND entity_type <> 'agent' "
            "ORDER BY round(importance_score, 9) DESC, canonical_key LIMIT ?2");
        query.bind(1, scope.ns);
        query.bind(2, static_cast<std::int64_t>(limit));
        while (query.executeStep()) out.push_back(query.getColumn(0).getString());
      } catch (const SQLite::Exception&) {
        out.clear();  // An entities table without these columns: fall back to stream targets.
      }
    }
    if (out.empty()) {
      SQLite::Statement query(
          db_,
          "SELECT target FROM knowledge WHERE " + knowledge_filter(scope) +
              " AND kind = 'proposal' AND provenance = 'internal' ORDER BY frequency DESC, target "
              "LIMIT ?2");
      query.bind(1, scope.ns);
      query.bind(2, static_cast<std::int64_t>(limit));
      while (query.executeStep()) out.push_back("module:" + query.getColumn(0).getString());
    }
    return out;
  }

  // A problem raised and not solved since: an error event or a "Problem:" line of
  // an event that is not itself a change (not a commit, no "Solution:"), with no later
  // successful outcome of its trajectory or on its target and no later active decision on its
  // target; and a trajectory that ended without success, with no later success on its target.
  // One per problem signature (its newest occurrence), newest first.
  struct OpenProblem {
    std::string source;  // the problem pattern's or trajectory's id
    std::string text, target, ids;
    std::int64_t ts_us = 0;
    std::int64_t occurrences = 0;
    std::string question;  // as listed, when not "How to solve <text>?"
  };
  std::vector<OpenProblem> unsolved_problems(const MedallionScope& scope) {
    constexpr const char* kNoLaterSuccess = R"sql(
  NOT EXISTS (SELECT 1 FROM trajectory_outcomes t WHERE t.namespace = o.namespace
              AND t.trajectory_id = o.trajectory_id AND t.success = 1 AND t.final_seq > o.seq)
  AND (o.target IS NULL OR (
    NOT EXISTS (SELECT 1 FROM trajectory_outcomes t WHERE t.namespace = o.namespace
                AND t.target = o.target AND t.success = 1 AND t.final_seq > o.seq)
    AND NOT EXISTS (SELECT 1 FROM knowledge k WHERE k.namespace = o.namespace
                    AND k.target = o.target AND k.kind = 'decision' AND k.status = 'active'
                    AND k.source_event_seq > o.seq))))sql";
    std::vector<OpenProblem> out;
    std::map<std::string, std::size_t> by_signature;
    // The occurrences that are no commit are chosen first (is_change = 0, a partial index;
    // MATERIALIZED), so that the later-success tests run on those alone: a commit history has
    // hundreds of thousands of "Problem:" paragraphs in its commits.
    SQLite::Statement problems(db_, std::string(R"sql(
WITH o AS MATERIALIZED (
  SELECT o.namespace, o.signature, o.seq, o.target, o.trajectory_id, o.ts_us, e.kind, e.content
  FROM problem_occurrences o JOIN events e ON e.seq = o.seq
  WHERE (?1 = '' OR o.namespace = ?1) AND o.is_change = 0 AND e.status = 'active'
    AND e.content NOT LIKE '%Solution:%')
SELECT o.namespace, o.signature, o.seq, coalesce(o.target, ''), o.ts_us, o.kind, o.content
FROM o WHERE )sql") + kNoLaterSuccess + " ORDER BY o.seq DESC LIMIT 500");
    problems.bind(1, scope.ns);
    while (problems.executeStep()) {
      const std::string target = problems.getColumn(3).getString();
      if (!in_scope_target(scope, target)) continue;
      const std::string key =
          problems.getColumn(0).getString() + '\n' + problems.getColumn(1).getString();
      if (const auto it = by_signature.find(key); it != by_signature.end()) {
        ++out[it->second].occurrences;
        continue;
      }
      const std::string kind = problems.getColumn(5).getString();
      const std::string content = problems.getColumn(6).getString();
      std::string text = kind == "error" ? first_text_line(content) : problem_line(content);
      if (text.empty()) continue;
      by_signature.emplace(key, out.size());
      out.push_back({"problem:" + problems.getColumn(0).getString() + ":" +
                         std::to_string(problems.getColumn(2).getInt64()),
                     std::move(text), target,
                     json::array({problems.getColumn(2).getInt64()}).dump(),
                     problems.getColumn(4).getInt64(), 1, ""});
    }
    SQLite::Statement failed(db_, R"sql(
SELECT o.namespace, o.trajectory_id, coalesce(o.target, ''), o.final_seq, o.final_ts_us,
  (SELECT e.content FROM event_targets x JOIN events e ON e.seq = x.seq
   WHERE x.namespace = o.namespace AND x.trajectory_id = o.trajectory_id AND e.kind = 'task'
   ORDER BY x.seq LIMIT 1)
FROM trajectory_outcomes o
WHERE (?1 = '' OR o.namespace = ?1) AND o.success = 0
  AND (o.target IS NULL OR NOT EXISTS (SELECT 1 FROM trajectory_outcomes t
       WHERE t.namespace = o.namespace AND t.target = o.target AND t.success = 1
       AND t.final_seq > o.final_seq))
ORDER BY o.final_seq DESC LIMIT 100)sql");
    failed.bind(1, scope.ns);
    while (failed.executeStep()) {
      const std::string target = failed.getColumn(2).getString();
      if (!in_scope_target(scope, target) || failed.getColumn(5).isNull()) continue;
      std::string text = task_problem(failed.getColumn(5).getString());
      if (text.empty()) continue;
      out.push_back(
          {"trajectory:" + failed.getColumn(0).getString() + ":" + failed.getColumn(1).getString(),
           std::move(text), target, json::array({failed.getColumn(3).getInt64()}).dump(),
           failed.getColumn(4).getInt64(), 1, ""});
    }
    // Questions asked and not answered (consolidation keeps the newest per trajectory).
    SQLite::Statement asked(db_, R"sql(
SELECT q.namespace, q.seq, q.agent_id, e.ts_us, e.content, coalesce(t.target, '')
FROM unanswered_questions q JOIN events e ON e.seq = q.seq LEFT JOIN event_targets t ON t.seq = q.seq
WHERE (?1 = '' OR q.namespace = ?1) AND e.status = 'active' ORDER BY q.seq DESC LIMIT 100)sql");
    asked.bind(1, scope.ns);
    while (asked.executeStep()) {
      const std::string target = asked.getColumn(5).getString();
      if (!in_scope_target(scope, target)) continue;
      std::string text = last_text_line(asked.getColumn(4).getString());
      if (text.empty()) continue;
      const std::int64_t ts = asked.getColumn(3).getInt64();
      const std::string agent = asked.getColumn(2).getString();
      out.push_back({"question:" + asked.getColumn(0).getString() + ":" +
                         std::to_string(asked.getColumn(1).getInt64()),
                     "", target, json::array({asked.getColumn(1).getInt64()}).dump(), ts, 1,
                     "Unanswered: \"" + clip(text, 160) + "\" (asked" +
                         (agent.empty() ? std::string() : " by " + agent) + " on " + day(ts) +
                         ")"});
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const OpenProblem& a, const OpenProblem& b) { return a.ts_us > b.ts_us; });
    return out;
  }

  // Whether a record with this target belongs to the scope (a scope with graph nodes keeps
  // the targets its nodes name: module:src names src).
  static bool in_scope_target(const MedallionScope& scope, const std::string& target) {
    return scope.graph_nodes.empty() ||
           std::any_of(scope.graph_nodes.begin(), scope.graph_nodes.end(),
                       [&](const std::string& n) {
                         return n.size() > target.size() && n.ends_with(":" + target);
                       });
  }

  bool refresh(const MedallionScope& scope) {
    const std::string id = "med:" + scope.name;
    const Span s = span(scope);
    // A medallion that no trigger marks stale is still built and compared: its records (a new
    // decision, an importance score, a vitality) can change with no new event in the scope, and
    // a medallion kept because no trigger fired would read differently from one built later
    // over the same records, so two replicas whose refreshes ran at different times would
    // disagree.
    std::string why = staleness(id, scope, s);
    const std::int64_t now = ctx_.clock.now_us();
    const std::string filter = knowledge_filter(scope);

    // Streams and decisions.
    struct Stream {
      std::string id, target, title, rationale, kind, status, phase, vitality;
      double confidence;
      std::int64_t frequency, last_seen;
      std::string evidence;  // JSON array of event ids, parsed by last_ids when listed
      std::string provenance;
      std::int64_t updated;
      std::int64_t source_seq;  // the event that stated it; 0 when none
      std::int64_t files;  // files that event's commit touched (context.files); active decisions
    };
    std::vector<Stream> streams;
    SQLite::Statement knowledge(
        db_,
        "SELECT decision_id, target, title, rationale, kind, status, phase, "
        "vitality, confidence, frequency, last_seen_us, evidence_event_ids, provenance, "
        "updated_us, coalesce(source_event_seq, 0), CASE WHEN kind = 'decision' AND status = "
        "'active' THEN coalesce((SELECT json_array_length(e.context, '$.files') FROM events e "
        "WHERE e.seq = knowledge.source_event_seq), 0) ELSE 0 END FROM knowledge WHERE " +
            filter + " ORDER BY decision_id");
    knowledge.bind(1, scope.ns);
    while (knowledge.executeStep()) {
      streams.push_back({knowledge.getColumn(0).getString(), knowledge.getColumn(1).getString(),
                         knowledge.getColumn(2).getString(), knowledge.getColumn(3).getString(),
                         knowledge.getColumn(4).getString(), knowledge.getColumn(5).getString(),
                         knowledge.getColumn(6).getString(), knowledge.getColumn(7).getString(),
                         knowledge.getColumn(8).getDouble(), knowledge.getColumn(9).getInt64(),
                         knowledge.getColumn(10).getInt64(), knowledge.getColumn(11).getString(),
                         knowledge.getColumn(12).getString(), knowledge.getColumn(13).getInt64(),
                         knowledge.getColumn(14).getInt64(), knowledge.getColumn(15).getInt64()});
    }
    struct Pattern {
      std::string id, target;
      std::string problem;  // as its newest occurrence writes it (the observation's title)
      std::int64_t support, last;
      std::string ids;  // JSON array of event ids, parsed by last_ids when listed
    };
    std::vector<Pattern> patterns;
    SQLite::Statement observations(
        db_,
        "SELECT observation_id, coalesce(target, ''), CASE WHEN title LIKE 'Recurring problem: %' "
        "THEN substr(title, 20) ELSE signature END, support_count, "
        "last_reinforced_us, supporting_event_ids FROM observations WHERE "
        "observation_type = 'pattern' AND is_active = 1 AND (?1 = '' OR namespace = ?1) "
        "ORDER BY support_count DESC, observation_id");
    observations.bind(1, scope.ns);
    while (observations.executeStep()) {
      Pattern pattern{observations.getColumn(0).getString(), observations.getColumn(1).getString(),
                      observations.getColumn(2).getString(), observations.getColumn(3).getInt64(),
                      observations.getColumn(4).getInt64(),  observations.getColumn(5).getString()};
      if (!scope.graph_nodes.empty() &&
          std::none_of(
              scope.graph_nodes.begin(), scope.graph_nodes.end(), [&](const std::string& n) {
                return n.size() > pattern.target.size() && n.ends_with(":" + pattern.target);
              })) {
        continue;
      }
      patterns.push_back(std::move(pattern));
    }
    auto days_since = [&](std::int64_t us) {
      return static_cast<double>(now - us) / static_cast<double>(kUsPerDay);
    };

    // decisions: the active decisions, agents' and those found in the events, by importance
    // (decision_importance(), docs/JOBS.md "Medallion refresh"), each statement once. The
    // consolidation streams are areas of work (subsystems), not decisions.
    std::vector<const Stream*> chosen;
    for (const auto& st : streams) {
      if (st.kind == "decision" && st.status == "active") chosen.push_back(&st);
    }
    std::map<std::string, std::vector<std::int64_t>> area_seqs;  // each decision area's events
    for (const Stream* st : chosen) {
      if (!st->target.empty()) area_seqs.try_emplace(st->target);
    }
    if (!area_seqs.empty()) {
      // Weighted events build on an area as they are evidence of it (docs/JOBS.md); the weight
      // term also lets SQLite read the area's own rows (index event_targets_contexts) instead
      // of the whole namespace's.
      SQLite::Statement area(db_,
                             "SELECT seq FROM event_targets WHERE namespace = ?1 AND target = ?2 "
                             "AND weight > 0");
      for (auto& [target, seqs] : area_seqs) {
        area.reset();
        area.bind(1, scope.ns);
        area.bind(2, target);
        while (area.executeStep()) seqs.push_back(area.getColumn(0).getInt64());
        std::sort(seqs.begin(), seqs.end());
      }
    }
    std::map<const Stream*, double> importance;
    for (const Stream* st : chosen) {
      std::int64_t later = 0;
      if (const auto it = area_seqs.find(st->target); it != area_seqs.end() && st->source_seq > 0) {
        later = static_cast<std::int64_t>(it->second.end() - std::upper_bound(it->second.begin(),
                                                                              it->second.end(),
                                                                              st->source_seq));
      }
      const double standing_days =
          static_cast<double>(std::max<std::int64_t>(0, s.max_ts - st->last_seen)) /
          static_cast<double>(kUsPerDay);
      importance[st] = decision_importance(st->confidence, st->files, later, standing_days);
    }
    std::stable_sort(chosen.begin(), chosen.end(), [&](const Stream* a, const Stream* b) {
      if (importance[a] != importance[b]) return importance[a] > importance[b];
      return a->id < b->id;
    });
    {
      std::set<std::string> stated;
      std::vector<const Stream*> distinct;
      for (const Stream* st : chosen) {
        if (stated.insert(ascii_lower(st->title)).second) distinct.push_back(st);
      }
      chosen = std::move(distinct);
    }
    if (chosen.size() > p_.max_items) chosen.resize(p_.max_items);
    json decisions = json::array();
    for (const Stream* st : chosen) {
      decisions.push_back({{"id", item_id(id, "D", st->id)},
                           {"statement", clip(st->title, 200)},
                           {"rationale", clip(st->rationale, 300)},
                           {"confidence", std::clamp(st->confidence, 0.0, 1.0)},
                           {"x_reflectd",
                            {{"source_id", st->id},
                             {"phase", st->phase},
                             {"evidence_event_ids", last_ids(st->evidence, 10)}}}});
    }

    // open_questions: problems raised and not solved since, proposals awaiting a verdict,
    // assumptions. Recurring problems that were solved each time are things to avoid
    // repeating (affordances), not questions.
    // nlohmann::json's destructor may allocate (it flattens nested values to avoid deep
    // recursion); a bad_alloc there ends the process, as it would anywhere else.
    struct Question {  // NOLINT(bugprone-exception-escape)
      std::string source, text, priority;
      json blocked_on;
      const std::string* ids;  // the stream's or pattern's, parsed only for the listed ten
      std::int64_t support;
    };
    std::vector<Question> questions;
    for (const auto& st : streams) {
      if (st.kind == "proposal" && st.status == "draft" && st.provenance == "external") {
        questions.push_back({st.id, "Accept or reject the proposal: " + clip(st.title, 200) + "?",
                             question_priority(st.frequency, days_since(st.last_seen)),
                             st.target.empty() ? json::array() : json::array({st.target}),
                             &st.evidence, st.frequency});
      } else if (st.kind == "assumption" && st.status == "active") {
        questions.push_back({st.id, "Does the assumption hold: " + clip(st.title, 200) + "?",
                             question_priority(st.frequency, days_since(st.last_seen)),
                             json::array({st.target}), &st.evidence, st.frequency});
      }
    }
    const std::vector<OpenProblem> open_problems = unsolved_problems(scope);
    for (const auto& problem : open_problems) {
      questions.push_back(
          {problem.source,
           !problem.question.empty()
               ? problem.question
               : "How to solve \"" + clip(problem.text, 160) + "\"? Raised " + day(problem.ts_us) +
                     (problem.occurrences > 1
                          ? " (" + std::to_string(problem.occurrences) + " times)"
                          : std::string()) +
                     ", no success " +
                     (problem.target.empty() ? "" : "on " + problem.target + " ") + "since.",
           question_priority(problem.occurrences, days_since(problem.ts_us)),
           problem.target.empty() ? json::array() : json::array({problem.target}), &problem.ids,
           problem.occurrences});
    }
    // A change reverted and not redone: no later commit (other than a revert) speaks of it
    // (jobs/follow_ups.hpp); the newest three reverts are read.
    std::vector<const Stream*> reverted;
    for (const auto& st : streams) {
      if (st.kind == "decision" && st.status == "falsified") reverted.push_back(&st);
    }
    std::stable_sort(reverted.begin(), reverted.end(), [](const Stream* a, const Stream* b) {
      return a->last_seen != b->last_seen ? a->last_seen > b->last_seen : a->id < b->id;
    });
    if (reverted.size() > 3 || scope.ns.empty()) reverted.resize(scope.ns.empty() ? 0 : 3);
    {
      std::vector<Said> said;
      said.reserve(reverted.size());
      for (const Stream* st : reverted) said.push_back({st->title, st->last_seen + 1});
      Tokenizer tokenizer;
      Topics topics(tokenizer, {});
      const std::vector<bool> redone =
          taken_up(db_, scope.ns, {"commit", "commit_change"}, said, s.max_ts,
                   {"Revert", "revert", "Back out", "Backout"}, topics, kMaxFollowUpTurns);
      for (std::size_t i = 0; i < reverted.size(); ++i) {
        if (redone[i]) continue;
        const Stream& st = *reverted[i];
        questions.push_back({st.id,
                             "Reverted on " + day(st.last_seen) + " and not redone since: \"" +
                                 clip(st.title, 160) + "\". Another way, or dropped?",
                             "low", st.target.empty() ? json::array() : json::array({st.target}),
                             &st.evidence, 1});
      }
    }
    // A conversation's open threads: plans whose day came with nothing said of them since.
    const std::vector<Person> people = people_of(db_, scope.ns, s.max_ts, 3);
    const std::vector<OpenThread> threads = open_threads(db_, scope.ns, people, s.max_ts, 3);
    std::vector<std::string> thread_ids;
    thread_ids.reserve(threads.size());  // Question::ids points into it
    for (const OpenThread& t : threads) {
      thread_ids.push_back(json::array({t.source_seq}).dump());
      const bool recent = s.max_ts - t.plan.valid_from_us <= 30 * kDayUs;
      questions.push_back({"fact:" + std::to_string(t.plan.fact_id),
                           "Follow up with " + t.person + ": \"" + clip(t.plan.statement, 160) +
                               "\" (told " + day(t.told_us) + ", for " + day(t.plan.valid_from_us) +
                               "; nothing said of it since)",
                           recent ? "medium" : "low", json::array(), &thread_ids.back(), 1});
    }
    auto rank = [](const std::string& priority) {
      return priority == "high" ? 0 : priority == "medium" ? 1 : 2;
    };
    std::stable_sort(questions.begin(), questions.end(), [&](const Question& a, const Question& b) {
      if (rank(a.priority) != rank(b.priority)) return rank(a.priority) < rank(b.priority);
      if (a.support != b.support) return a.support > b.support;
      return a.source < b.source;
    });
    if (questions.size() > p_.max_items) questions.resize(p_.max_items);
    json open_questions = json::array();
    for (const auto& q : questions) {
      open_questions.push_back(
          {{"id", item_id(id, "Q", q.source)},
           {"question", q.text},
           {"blocked_on", q.blocked_on},
           {"priority", q.priority},
           {"x_reflectd",
            {{"source_id", q.source}, {"evidence_event_ids", last_ids(*q.ids, 10)}}}});
    }

    // subsystems: the scope's areas of work (internal streams), with a status.
    std::map<std::string, std::string> decision_state;  // target -> active|retired
    for (const auto& st : streams) {
      if (st.kind != "decision") continue;
      if (st.status == "active")
        decision_state[st.target] = "active";
      else if (!decision_state.count(st.target))
        decision_state[st.target] = "retired";
    }
    std::set<std::string> recurring_recent;
    for (const auto& pattern : patterns) {
      if (days_since(pattern.last) <= p_.vitality.decaying_after_days)
        recurring_recent.insert(pattern.target);
    }
    std::vector<const Stream*> areas;
    for (const auto& st : streams) {
      if (st.kind == "proposal") areas.push_back(&st);
    }
    std::stable_sort(areas.begin(), areas.end(), [](const Stream* a, const Stream* b) {
      return a->frequency != b->frequency ? a->frequency > b->frequency : a->target < b->target;
    });
    // A conversation's people come first (jobs/medallion_people.hpp); the areas of work fill
    // what is left of the list.
    json subsystems = json::array();
    for (const Person& person : people) {
      json fact_ids = json::array();
      for (const auto* facts : {&person.known, &person.plans}) {
        for (const PersonFact& f : *facts) {
          fact_ids.push_back(item_id(id, "F", "fact:" + std::to_string(f.fact_id)));
        }
      }
      subsystems.push_back({{"name", person.name},
                            {"status", person.plans.empty() ? "stable" : "in_progress"},
                            {"notes", person_notes(person, 160)},
                            {"x_reflectd", {{"entity", person.key}, {"fact_items", fact_ids}}}});
    }
    areas.resize(std::min(areas.size(), p_.max_items - std::min(p_.max_items, people.size())));
    // What changed last in an area, in the words of the newest event of its evidence (a
    // commit's subject): one of the stream's own events, so the medallion's sensitivity, the
    // highest of its items', covers the quote.
    SQLite::Statement newest_in_area(
        db_,
        "SELECT e.content FROM events e WHERE e.seq = (SELECT max(event_seq) FROM "
        "knowledge_evidence WHERE decision_id = ?1)");
    for (const Stream* st : areas) {
      std::string status = "unknown";
      const auto d = decision_state.find(st->target);
      if (d != decision_state.end() && d->second == "retired") {
        status = "deprecated";
      } else if (st->vitality == "active" || st->status == "draft") {
        status = "in_progress";
      } else if ((st->phase == "canonical" || st->status == "accepted" ||
                  (d != decision_state.end() && d->second == "active")) &&
                 !recurring_recent.count(st->target)) {
        status = "stable";
      }
      newest_in_area.reset();
      newest_in_area.bind(1, st->id);
      std::string last_change;
      if (newest_in_area.executeStep()) {
        const std::string content = newest_in_area.getColumn(0).getString();
        last_change = clip(content.substr(0, content.find('\n')), 140);
      }
      subsystems.push_back(
          {{"name", st->target},
           {"status", status},
           {"notes", std::to_string(st->frequency) + " events; last change " + day(st->last_seen) +
                         (last_change.empty() ? "" : ": " + last_change)},
           {"x_reflectd", {{"source_id", st->id}}}});
    }

    // affordances.
    json entry_points = json::array();
    for (const Person& person : people) entry_points.push_back("Start from " + person.key);
    for (const auto& e : top_entities(scope, 5 + people.size())) {
      if (entry_points.size() >= 5) break;
      if (is_person_name(e, people)) continue;
      const std::string entry = "Start from " + e;
      if (std::find(entry_points.begin(), entry_points.end(), entry) == entry_points.end()) {
        entry_points.push_back(entry);
      }
    }
    json avoid = json::array();
    std::vector<const Stream*> failed;  // decisions later reverted: failed approaches
    for (const auto& st : streams) {
      if (st.kind == "decision" && (st.status == "falsified" || st.status == "rejected")) {
        failed.push_back(&st);
      }
    }
    // Newest first: a reverted change is recorded at the time of its decision or its revert.
    std::stable_sort(failed.begin(), failed.end(), [](const Stream* a, const Stream* b) {
      return a->last_seen != b->last_seen ? a->last_seen > b->last_seen : a->id < b->id;
    });
    for (std::size_t i = 0; i < failed.size() && i < 3; ++i) {
      avoid.push_back("Avoid repeating: " + clip(failed[i]->title, 160) + " (" +
                      (failed[i]->status == "falsified" ? "reverted" : failed[i]->status) + ", " +
                      day(failed[i]->last_seen) + ")");
    }
    for (std::size_t i = 0; i < patterns.size() && avoid.size() < 5; ++i) {
      avoid.push_back("Avoid repeating: " + clip(patterns[i].problem, 160) + " (seen " +
                      std::to_string(patterns[i].support) + " times)");
    }
    json invariants = json::array();
    for (const auto& st : streams) {
      if (st.kind == "constraint" && st.status == "active")
        invariants.push_back(clip(st.title + ": " + st.rationale, 300));
    }

    // summary.high_level: what the scope is about, what changed last, what is open. Within
    // the 300 characters, the areas of work give way first (their names can be long paths).
    std::string about = (scope.automatic ? "Namespace " : "Scope ") + scope.name + ": " +
                        std::to_string(s.count) + " events";
    if (people.size() >= 2) {
      about = "Conversation of ";
      for (std::size_t i = 0; i < people.size(); ++i) {
        about += (i == 0 ? "" : i + 1 == people.size() ? " and " : ", ") + people[i].name;
      }
      about += " (" + scope.name + "): " + std::to_string(s.count) + " events";
    }
    if (s.count > 0) about += " from " + day(s.min_ts) + " to " + day(s.max_ts);
    about += ".";
    std::string active;
    if (!areas.empty()) {
      active = " Most active:";
      for (std::size_t i = 0; i < areas.size() && i < 3; ++i) {
        active += (i ? ", " : " ") + areas[i]->target;
      }
      active += ".";
    }
    // What changed last: the newest active decision (by the time of its event).
    const Stream* newest = nullptr;
    for (const auto& st : streams) {
      if (st.kind == "decision" && st.status == "active" &&
          (newest == nullptr || st.last_seen > newest->last_seen)) {
        newest = &st;
      }
    }
    std::string last;
    // In a conversation, what was said last of someone: the newest known fact.
    const PersonFact* said = nullptr;
    for (const Person& person : people) {
      for (const PersonFact& f : person.known) {
        if (said == nullptr || f.valid_from_us > said->valid_from_us) said = &f;
      }
    }
    if (said != nullptr) {
      last = " Latest (" + day(said->valid_from_us) + "): " + clip(said->statement, 110);
      if (!last.ends_with('.')) last += '.';
    } else if (newest != nullptr) {
      last = " Last decided (" + day(newest->last_seen) + "): " + clip(newest->title, 90);
      if (!last.ends_with('.')) last += '.';
    }
    const std::string open = " Open: " + (questions.empty() ? std::string("nothing.")
                                                            : clip(questions.front().text, 70));
    // And what someone plans next: the soonest plan.
    const PersonFact* plan = nullptr;
    for (const Person& person : people) {
      if (!person.plans.empty() &&
          (plan == nullptr || person.plans.front().valid_from_us < plan->valid_from_us)) {
        plan = &person.plans.front();
      }
    }
    std::string next;
    if (plan != nullptr) {
      next = " Next (" + day(plan->valid_from_us) + "): " + clip(plan->statement, 90);
      if (!next.ends_with('.')) next += '.';
    }
    std::string high = about + active + last + next + open;
    if (utf8_chars(high) > kHighLevelMaxChars) high = about + last + next + open;
    if (utf8_chars(high) > kHighLevelMaxChars) high = about + last + open;
    // meta: id stable, created_at kept, updated_at strictly increasing.
    std::int64_t created_us = now;
    std::int64_t previous_updated = 0;
    std::string previous_content;
    {
      SQLite::Statement prev(
          db_, "SELECT created_at, updated_at, content_json FROM medallions WHERE id = ?1");
      prev.bind(1, id);
      if (prev.executeStep()) {
        created_us = parse_rfc3339_us(prev.getColumn(0).getString()).value_or(now);
        previous_updated = parse_rfc3339_us(prev.getColumn(1).getString()).value_or(0);
        previous_content = prev.getColumn(2).getString();
      }
    }
    const std::int64_t updated_us = std::max(now, previous_updated + 1);
    if (why.empty()) why = "records in scope changed";
    json meta = {{"medallion_id", id},
                 {"schema_version", "medallion.v1"},
                 {"model", kMedallionModel},
                 {"created_at", format_rfc3339_us(created_us)},
                 {"updated_at", format_rfc3339_us(updated_us)},
                 {"knowledge_min_ts", s.count ? json(format_rfc3339_us(s.min_ts)) : json()},
                 {"knowledge_max_ts", s.count ? json(format_rfc3339_us(s.max_ts)) : json()},
                 {"status", "active"},
                 {"x_reflectd",
                  {{"namespace", scope.ns},
                   {"events", s.count},
                   {"facts_through", facts_through(scope)},
                   {"refresh_reason", why}}}};
    json medallion = {
        {"meta", meta},
        {"scope", {{"graph_nodes", scope.graph_nodes}, {"tags", scope.tags}}},
        {"summary", {{"high_level", clip(high, kHighLevelMaxChars)}, {"subsystems", subsystems}}},
        {"decisions", decisions},
        {"open_questions", open_questions},
        {"affordances",
         {{"recommended_entry_points", entry_points},
          {"avoid_repeating", avoid},
          {"invariants", invariants.empty() ? json() : invariants}}}};
    if (const auto errors = validate_medallion(medallion); !errors.empty()) {
      throw std::runtime_error("medallion " + id + " is invalid: " + errors.front());
    }
    if (why == "records in scope changed" && !previous_content.empty() &&
        without_refresh_times(json::parse(previous_content, nullptr, false)) ==
            without_refresh_times(medallion)) {
      return false;
    }
    store(id, scope, medallion, previous_content, updated_us);
    published_.emplace_back(id, json{{"id", id},
                                     {"scope", medallion["scope"]},
                                     {"updated_at", meta["updated_at"]},
                                     {"reason", why}});
    return true;
  }

  // A medallion's content but for what says when and why it was refreshed: two builds over
  // the same records differ only there.
  static json without_refresh_times(json content) {
    if (!content.is_object() || !content.contains("meta")) return content;
    json& meta = content["meta"];
    meta.erase("created_at");
    meta.erase("updated_at");
    if (meta.contains("x_reflectd")) meta["x_reflectd"].erase("refresh_reason");
    return content;
  }

  void store(const std::string& id, const MedallionScope& scope, const json& medallion,
             const std::string& previous_content, std::int64_t updated_us) {
    const json& meta = medallion["meta"];
    store::put_medallion(db_, medallion, scope.ns, config_hash(scope), previous_content);
    store::AuditLog(db_).append("medallion", id, previous_content.empty() ? "create" : "revise",
                                "job:medallion", updated_us,
                                meta["x_reflectd"]["refresh_reason"].get<std::string>());
  }

  JobContext& ctx_;
  const MedallionParams& p_;
  SQLite::Database& db_;
  std::vector<std::pair<std::string, json>> published_;
};

void require_string(const json& object, const char* key, const std::string& where,
                    std::vector<std::string>& errors) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
    errors.emplace_back(where + "." + key + ": required string");
  }
}

void require_string_list(const json& object, const char* key, const std::string& where,
                         std::vector<std::string>& errors, bool optional = false) {
  if (!object.is_object() || !object.contains(key) || (optional && object[key].is_null())) {
    if (!optional) errors.emplace_back(where + "." + key + ": required array of strings");
    return;
  }
  const json& list = object[key];
  if (!list.is_array() ||
      !std::all_of(list.begin(), list.end(), [](const json& v) { return v.is_string(); })) {
    errors.emplace_back(where + "." + key + ": must be an array of strings");
  }
}

}  // namespace

MedallionScope parse_medallion_scope(const std::string& text) {
  MedallionScope scope;
  for (const auto& part : split(text, ';')) {
    const auto equals = part.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("'" + part + "': expected key=value");
    const std::string key = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    if (key == "name") {
      scope.name = value;
    } else if (key == "namespace") {
      scope.ns = value;
    } else if (key == "nodes") {
      scope.graph_nodes = split(value, ',');
    } else if (key == "tags") {
      scope.tags = split(value, ',');
    } else {
      throw std::invalid_argument("unknown scope field '" + key +
                                  "' (name, namespace, nodes, tags)");
    }
  }
  if (scope.name.empty()) throw std::invalid_argument("a scope needs name=<id>");
  if (scope.graph_nodes.empty() && scope.tags.empty()) {
    throw std::invalid_argument("scope " + scope.name + " needs nodes= or tags=");
  }
  return scope;
}

std::vector<std::string> validate_medallion(const json& m) {
  std::vector<std::string> errors;
  if (!m.is_object()) return {"medallion: must be an object"};
  const json meta = m.value("meta", json());
  for (const char* key :
       {"medallion_id", "schema_version", "model", "created_at", "updated_at", "status"}) {
    require_string(meta, key, "meta", errors);
  }
  if (errors.empty()) {
    const auto status = meta["status"].get<std::string>();
    if (status != "active" && status != "stale" && status != "superseded") {
      errors.emplace_back("meta.status: must be active, stale or superseded");
    }
    const auto created = parse_rfc3339_us(meta["created_at"].get<std::string>());
    const auto updated = parse_rfc3339_us(meta["updated_at"].get<std::string>());
    if (!created || !updated) {
      errors.emplace_back("meta.created_at/updated_at: must be ISO 8601 timestamps");
    } else if (*updated < *created) {
      errors.emplace_back("meta.updated_at: must be >= created_at");
    }
    for (const char* key : {"knowledge_min_ts", "knowledge_max_ts"}) {
      if (meta.contains(key) && !meta[key].is_null() &&
          (!meta[key].is_string() || !parse_rfc3339_us(meta[key].get<std::string>()))) {
        errors.emplace_back(std::string("meta.") + key + ": must be an ISO 8601 timestamp or null");
      }
    }
  }
  const json scope = m.value("scope", json());
  require_string_list(scope, "graph_nodes", "scope", errors);
  require_string_list(scope, "tags", "scope", errors);
  const json summary = m.value("summary", json());
  require_string(summary, "high_level", "summary", errors);
  if (summary.is_object() && summary.contains("high_level") && summary["high_level"].is_string() &&
      utf8_chars(summary["high_level"].get<std::string>()) > kHighLevelMaxChars) {
    errors.emplace_back("summary.high_level: at most 300 characters");
  }
  if (summary.is_object() && summary.contains("subsystems")) {
    for (const auto& sub : summary["subsystems"]) {
      require_string(sub, "name", "summary.subsystems[]", errors);
      require_string(sub, "notes", "summary.subsystems[]", errors);
      const std::string status = sub.is_object() ? sub.value("status", "") : "";
      if (status != "unknown" && status != "stable" && status != "in_progress" &&
          status != "deprecated") {
        errors.emplace_back(
            "summary.subsystems[].status: must be unknown, stable, in_progress or deprecated");
      }
    }
  }
  for (const auto& d : m.value("decisions", json::array())) {
    for (const char* key : {"id", "statement", "rationale"})
      require_string(d, key, "decisions[]", errors);
    if (!d.is_object() || !d.contains("confidence") || !d["confidence"].is_number() ||
        d["confidence"].get<double>() < 0.0 || d["confidence"].get<double>() > 1.0) {
      errors.emplace_back("decisions[].confidence: must be between 0.0 and 1.0");
    }
  }
  for (const auto& q : m.value("open_questions", json::array())) {
    for (const char* key : {"id", "question"}) require_string(q, key, "open_questions[]", errors);
    require_string_list(q, "blocked_on", "open_questions[]", errors);
    const std::string priority = q.is_object() ? q.value("priority", "") : "";
    if (priority != "low" && priority != "medium" && priority != "high") {
      errors.emplace_back("open_questions[].priority: must be low, medium or high");
    }
  }
  const json affordances = m.value("affordances", json());
  if (!affordances.is_object()) {
    errors.emplace_back("affordances: required object");
  } else {
    require_string_list(affordances, "recommended_entry_points", "affordances", errors);
    require_string_list(affordances, "avoid_repeating", "affordances", errors);
    require_string_list(affordances, "invariants", "affordances", errors, true);
  }
  return errors;
}

bool scope_matches(const std::vector<std::string>& query_nodes,
                   const std::vector<std::string>& query_tags,
                   const std::vector<std::string>& medallion_nodes,
                   const std::vector<std::string>& medallion_tags) {
  const bool nodes = std::all_of(query_nodes.begin(), query_nodes.end(), [&](const std::string& n) {
    return std::find(medallion_nodes.begin(), medallion_nodes.end(), n) != medallion_nodes.end();
  });
  const bool tags =
      query_tags.empty() ||
      std::any_of(query_tags.begin(), query_tags.end(), [&](const std::string& t) {
        return std::find(medallion_tags.begin(), medallion_tags.end(), t) != medallion_tags.end();
      });
  return nodes && tags;
}

double decision_importance(double confidence, std::int64_t files, std::int64_t later,
                           double standing_days) {
  const double breadth = std::min(
      1.0, std::log1p(static_cast<double>(std::max<std::int64_t>(0, files))) / std::log(21.0));
  const double built_on = std::min(
      1.0, std::log1p(static_cast<double>(std::max<std::int64_t>(0, later))) / std::log(51.0));
  const double standing = std::clamp(standing_days / 365.0, 0.0, 1.0);
  const double score =
      0.4 * std::clamp(confidence, 0.0, 1.0) + 0.2 * breadth + 0.2 * built_on + 0.2 * standing;
  return std::round(score * 1e9) / 1e9;
}

const char* question_priority(std::int64_t support, double days_since_seen) {
  if (support >= 10 && days_since_seen <= 30) return "high";
  if (support < 3 || days_since_seen > 365) return "low";
  return "medium";
}

json run_medallion_refresh(JobContext& ctx, const MedallionParams& params) {
  return Refresher(ctx, params).run();
}

}  // namespace reflectd::jobs
