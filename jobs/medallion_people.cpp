#include "jobs/medallion_people.hpp"

#include <algorithm>
#include <set>

#include "common/timestamp.hpp"
#include "jobs/clustering.hpp"
#include "jobs/decision_extraction.hpp"
#include "jobs/follow_ups.hpp"

namespace reflectd::jobs {
namespace {

// Sensitivity at most `low` (the default level of an event): see the header.
constexpr const char* kReadable = "sensitivity IN ('public', 'low')";

// A speaker holds at least this share of the namespace's facts about people.
constexpr std::int64_t kMinSharePercent = 5;

std::string iso_day(std::int64_t us) { return format_rfc3339_us(us).substr(0, 10); }

std::vector<PersonFact> read_facts(SQLite::Statement& query, const std::string& ns,
                                   const std::string& key, std::int64_t newest_event_us,
                                   std::size_t limit) {
  std::vector<PersonFact> out;
  query.reset();
  query.bind(1, ns);
  query.bind(2, key);
  query.bind(3, newest_event_us);
  query.bind(4, static_cast<std::int64_t>(limit));
  while (query.executeStep()) {
    out.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(),
                   query.getColumn(2).getInt64()});
  }
  query.reset();
  return out;
}

}  // namespace

std::vector<Person> people_of(SQLite::Database& db, const std::string& ns,
                              std::int64_t newest_event_us, std::size_t per_person) {
  std::vector<Person> people;
  if (ns.empty()) return people;
  SQLite::Statement who(db, std::string(R"sql(
SELECT entity_key, max(entity_name), count(*), min(e.ts_us), max(e.ts_us), sum(count(*)) OVER ()
FROM facts JOIN events e ON e.seq = facts.source_seq
WHERE facts.namespace = ?1 AND entity_type = 'person' AND facts.)sql") +
                                kReadable + R"sql(
GROUP BY entity_key ORDER BY count(*) DESC, entity_key)sql");
  who.bind(1, ns);
  while (who.executeStep() && people.size() < kMaxPeople) {
    const std::int64_t count = who.getColumn(2).getInt64();
    if (count * 100 < who.getColumn(5).getInt64() * kMinSharePercent) break;
    Person p;
    p.key = who.getColumn(0).getString();
    p.name = who.getColumn(1).getString();
    p.facts = count;
    p.first_us = who.getColumn(3).getInt64();
    p.last_us = who.getColumn(4).getInt64();
    people.push_back(std::move(p));
  }
  who.reset();
  // Known: current, not a plan; attributes, then dated facts, newest first (as entity
  // summaries order them).
  SQLite::Statement known(db, std::string(R"sql(
SELECT fact_id, fact_text, valid_from_us FROM facts
WHERE namespace = ?1 AND entity_key = ?2 AND is_stale = 0 AND valid_from_us <= ?3 AND )sql") +
                                  kReadable + R"sql(
ORDER BY attribute_key IS NULL, whole_days DESC, valid_from_us DESC, fact_id DESC LIMIT ?4)sql");
  SQLite::Statement plans(db, std::string(R"sql(
SELECT fact_id, fact_text, valid_from_us FROM facts
WHERE namespace = ?1 AND entity_key = ?2 AND is_stale = 0 AND valid_from_us > ?3 AND )sql") +
                                  kReadable + R"sql(
ORDER BY valid_from_us, fact_id LIMIT ?4)sql");
  for (Person& p : people) {
    p.known = read_facts(known, ns, p.key, newest_event_us, per_person);
    p.plans = read_facts(plans, ns, p.key, newest_event_us, per_person);
  }
  return people;
}

std::vector<OpenThread> open_threads(SQLite::Database& db, const std::string& ns,
                                     const std::vector<Person>& people,
                                     std::int64_t newest_event_us, std::size_t limit) {
  std::vector<OpenThread> due;
  if (ns.empty() || people.empty()) return due;
  SQLite::Statement plans(db, std::string(R"sql(
SELECT f.fact_id, f.fact_text, f.valid_from_us, e.ts_us, e.seq FROM facts f
JOIN events e ON e.seq = f.source_seq
WHERE f.namespace = ?1 AND f.entity_key = ?2 AND f.is_stale = 0 AND f.valid_from_us > e.ts_us
  AND f.valid_from_us <= ?3 AND f.)sql") +
                                  kReadable +
                                  R"sql(
ORDER BY f.valid_from_us DESC, f.fact_id DESC LIMIT 20)sql");
  for (const Person& p : people) {
    plans.bind(1, ns);
    plans.bind(2, p.key);
    plans.bind(3, newest_event_us);
    while (plans.executeStep()) {
      due.push_back({p.name,
                     {plans.getColumn(0).getInt64(), plans.getColumn(1).getString(),
                      plans.getColumn(2).getInt64()},
                     plans.getColumn(3).getInt64(),
                     plans.getColumn(4).getInt64()});
    }
    plans.reset();
  }
  if (due.empty()) return due;

  // A plan's topic leaves out the people's names and the calendar's words.
  text::Tokenizer tokenizer;
  std::vector<std::string> names;
  names.reserve(people.size());
  for (const Person& p : people) names.push_back(p.name);
  Topics topics(tokenizer, names);
  std::vector<Said> said;
  said.reserve(due.size());
  for (const OpenThread& t : due) {
    said.push_back({std::string(dated_sentence(t.plan.statement)), t.plan.valid_from_us});
  }
  const std::vector<bool> closed = taken_up(db, ns, {"prompt", "conversation", "response"}, said,
                                            newest_event_us, {}, topics, kMaxFollowUpTurns);
  std::vector<OpenThread> open;
  for (std::size_t i = 0; i < due.size(); ++i) {
    if (!closed[i] && !topics.of(said[i].text).stems.empty()) open.push_back(std::move(due[i]));
  }
  due = std::move(open);
  std::stable_sort(due.begin(), due.end(), [](const OpenThread& a, const OpenThread& b) {
    return a.plan.valid_from_us != b.plan.valid_from_us
               ? a.plan.valid_from_us > b.plan.valid_from_us
               : a.plan.fact_id > b.plan.fact_id;
  });
  if (due.size() > limit) due.resize(limit);
  return due;
}

bool is_person_name(const std::string& key, const std::vector<Person>& people) {
  if (!key.starts_with("name:") || key.size() < 8) return false;
  const std::string name = key.substr(5);
  return std::any_of(people.begin(), people.end(), [&](const Person& p) {
    return p.key.substr(p.key.find(':') + 1).starts_with(name);
  });
}

std::string person_notes(const Person& person, std::size_t max_bytes) {
  std::string out = std::to_string(person.facts) + (person.facts == 1 ? " fact" : " facts") +
                    " told from " + iso_day(person.first_us) + " to " + iso_day(person.last_us) +
                    ".";
  auto list = [&](const char* label, const std::vector<PersonFact>& facts) {
    for (std::size_t i = 0; i < facts.size(); ++i) {
      std::string statement = clip_words(facts[i].statement, max_bytes);
      while (!statement.empty() && (statement.back() == '.' || statement.back() == ' ')) {
        statement.pop_back();
      }
      out += (i == 0 ? std::string(" ") + label + ": " : std::string("; ")) + statement + " (" +
             iso_day(facts[i].valid_from_us) + ")";
    }
    if (!facts.empty()) out += ".";
  };
  list("Known", person.known);
  list("Plans", person.plans);
  return out;
}

}  // namespace reflectd::jobs
