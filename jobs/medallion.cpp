#include "jobs/medallion.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "common/sha256.hpp"
#include "common/timestamp.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/job_state.hpp"
#include "jobs/medallion_decisions.hpp"
#include "jobs/medallion_people.hpp"
#include "jobs/medallion_questions.hpp"
#include "jobs/medallion_records.hpp"
#include "jobs/medallion_text.hpp"
#include "store/audit_log.hpp"
#include "store/medallion_store.hpp"

// The refresh reads the scope's records (medallion_records.hpp), then builds each part of the
// medallion in its own unit: decisions (medallion_decisions.hpp), open questions
// (medallion_questions.hpp, with medallion_problems.hpp), a conversation's people
// (medallion_people.hpp); the areas of work, affordances and summary are built here. Items
// are registered in medallion_items in the order they are listed (decisions, questions, facts).
namespace reflectd::jobs {
namespace {

using medallion::clip;
using medallion::day;
using medallion::has_table;
using medallion::item_id;
using medallion::knowledge_filter;
using medallion::kUsPerDay;
using medallion::Pattern;
using medallion::Span;
using medallion::Stream;
using medallion::utf8_chars;
using nlohmann::json;

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
    SQLite::bind(keep, scope.ns, through, changes, s.count, s.min_ts, s.max_ts);
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
  // subsystems: a conversation's people, then the scope's areas of work (internal streams),
  // with a status. `most_active` gets the targets of the first three areas listed.
  json subsystem_items(const std::string& id, const std::vector<Stream>& streams,
                       const std::vector<Pattern>& patterns, const std::vector<Person>& people,
                       std::int64_t now, std::vector<std::string>& most_active) {
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
      if (static_cast<double>(now - pattern.last) / static_cast<double>(kUsPerDay) <=
          p_.vitality.decaying_after_days)
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
          fact_ids.push_back(item_id(db_, id, "F", "fact:" + std::to_string(f.fact_id)));
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
    for (std::size_t i = 0; i < areas.size() && i < 3; ++i) most_active.push_back(areas[i]->target);
    return subsystems;
  }

  // affordances: where to start (the people, then the most important entities), what not to
  // repeat (decisions reverted or rejected, recurring problems) and the constraints in force.
  json affordance_items(const MedallionScope& scope, const std::vector<Stream>& streams,
                        const std::vector<Pattern>& patterns, const std::vector<Person>& people) {
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
    return {{"recommended_entry_points", entry_points},
            {"avoid_repeating", avoid},
            {"invariants", invariants.empty() ? json() : invariants}};
  }

  static std::string high_level(const MedallionScope& scope, const Span& s,
                                const std::vector<Stream>& streams,
                                const std::vector<Person>& people,
                                const std::vector<std::string>& most_active,
                                const medallion::QuestionItems& questions) {
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
    if (!most_active.empty()) {
      active = " Most active:";
      for (std::size_t i = 0; i < most_active.size(); ++i) {
        active += (i ? ", " : " ") + most_active[i];
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
    const std::string open =
        " Open: " + (questions.items.empty() ? std::string("nothing.") : clip(questions.first, 70));
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
    return high;
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

    const std::vector<Stream> streams = medallion::read_streams(db_, scope);
    const std::vector<Pattern> patterns = medallion::read_patterns(db_, scope);
    const json decisions =
        medallion::decision_items(db_, id, scope, streams, s.max_ts, p_.max_items);
    const std::vector<Person> people = people_of(db_, scope.ns, s.max_ts, 3);
    const medallion::QuestionItems questions =
        medallion::question_items(db_, id, scope, streams, people, s.max_ts, now, p_.max_items);
    std::vector<std::string> most_active;
    const json subsystems = subsystem_items(id, streams, patterns, people, now, most_active);
    const json affordances = affordance_items(scope, streams, patterns, people);
    const std::string high = high_level(scope, s, streams, people, most_active, questions);

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
        {"open_questions", questions.items},
        {"affordances", affordances}};
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

}  // namespace

json run_medallion_refresh(JobContext& ctx, const MedallionParams& params) {
  return Refresher(ctx, params).run();
}

}  // namespace reflectd::jobs
