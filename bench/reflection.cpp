// bench_reflection: how well the fact ledger distils a conversation, measured against what
// LoCoMo's annotators drew from the same turns (../shared/data/locomo-dev: observations.jsonl,
// 1,210 observations with their evidence turns; sessions.jsonl, each session's life events).
//
// It stores every turn as the daemon does, runs the `facts` job (jobs/facts.hpp) at a fixed
// time and reads every fact the ledger holds, superseded ones included. It prints:
//   - facts per turn (the annotators wrote 0.44 observations per turn; target <= 0.6);
//   - precision: the share of facts whose evidence turn an observation cites (target >= 0.80);
//   - observation recall: the share of observations with a fact on one of their evidence turns
//     that holds at least half of the observation's content words (target >= 0.55);
//   - event recall: the share of the sessions' annotated life events held, by the same rule, by
//     a fact about that person dated within 14 days of the session (target >= 0.55).
// Content words: tokens of 3+ letters that are not Snowball English stop words
// (text::Tokenizer::is_stop_word) and not a speaker's name, compared by their Porter stem
// (text/porter_stemmer.hpp). A fact's date is the day it names: its validity range when a
// time expression gave one ("this month" said on 20 January: 1-31 January, 0 days from the
// 20th), else its valid_from (the turn's time; its open end says nothing of when it happened).
//
// Thresholds given on the command line make it exit 1 when missed (the CTest run). --dump FILE
// writes every fact with its turn and whether an observation cites it, as JSON Lines;
// --misses FILE every observation and life event no fact holds, with the facts nearest to it
// and, for a life event, the content stems each of them lacks. The
// figures are deterministic: the same data give the same numbers.

#include <SQLiteCpp/SQLiteCpp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/locomo.hpp"
#include "common/ascii.hpp"
#include "common/clock.hpp"
#include "common/guarded_main.hpp"
#include "common/timestamp.hpp"
#include "text/porter_stemmer.hpp"
#include "text/tokenizer.hpp"

namespace {

using namespace reflectd;
using nlohmann::json;

constexpr std::int64_t kDayUs = 86'400'000'000;
constexpr std::int64_t kEventWindowUs = 14 * kDayUs;

struct StoredFact {
  std::string ns;
  std::string turn;     // the evidence event's id
  std::string subject;  // the entity's name, lower case
  std::string statement;
  std::int64_t from_us = 0;
  std::optional<std::int64_t> to_us;  // exclusive; set when a time expression dated the fact
  std::set<std::string> stems;
};

// How far `at_us` lies from the day `f` names (0 inside its range), µs.
std::int64_t days_apart_us(const StoredFact& f, std::int64_t at_us) {
  if (at_us < f.from_us) return f.from_us - at_us;
  if (!f.to_us) return at_us - f.from_us;
  return at_us < *f.to_us ? 0 : at_us - (*f.to_us - 1);
}

// The content words' stems of `text`, as the header defines them.
class ContentWords {
 public:
  explicit ContentWords(std::set<std::string> names) : names_(std::move(names)) {}

  std::set<std::string> of(const std::string& text) {
    std::set<std::string> out;
    std::string word;
    auto flush = [&] {
      if (word.size() >= 3 && !text::Tokenizer::is_stop_word(word) && !names_.contains(word)) {
        out.insert(stemmer_.stem(word));
      }
      word.clear();
    };
    for (const char c : text) {
      if (std::isalpha(static_cast<unsigned char>(c)) != 0) {
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      } else {
        flush();
      }
    }
    flush();
    return out;
  }

 private:
  std::set<std::string> names_;
  text::PorterStemmer stemmer_;
};

// True when `fact` holds at least half of `wanted` (an observation's or event's stems).
bool holds(const std::set<std::string>& fact, const std::set<std::string>& wanted) {
  if (wanted.empty()) return false;
  std::size_t n = 0;
  for (const std::string& s : wanted) n += fact.contains(s) ? 1 : 0;
  return 2 * n >= wanted.size();
}

double share(std::size_t part, std::size_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// Every fact the ledger holds, superseded ones included, and the facts of each turn.
struct Ledger {
  std::vector<StoredFact> facts;
  std::map<std::string, std::vector<std::size_t>> by_turn;  // turn id -> indices in facts
};

Ledger read_ledger(SQLite::Database& db, ContentWords& words) {
  Ledger ledger;
  auto& [facts, by_turn] = ledger;
  SQLite::Statement read(db,
                         "SELECT f.namespace, e.uid, f.entity_key, f.fact_text, f.valid_from_us, "
                         "f.valid_to_us "
                         "FROM facts f JOIN events e ON e.seq = f.source_seq ORDER BY f.fact_id");
  while (read.executeStep()) {
    StoredFact f;
    f.ns = read.getColumn(0).getString();
    f.turn = read.getColumn(1).getString();
    const std::string key = read.getColumn(2).getString();
    f.subject = key.substr(key.find(':') + 1);
    f.statement = read.getColumn(3).getString();
    f.from_us = read.getColumn(4).getInt64();
    if (!read.getColumn(5).isNull()) f.to_us = read.getColumn(5).getInt64();
    f.stems = words.of(f.statement);
    by_turn[f.turn].push_back(facts.size());
    facts.push_back(std::move(f));
  }
  return ledger;
}

// The session's facts about `subject`, the closest to `wanted` first, with the content stems
// each one lacks.
json nearest_facts(const std::vector<StoredFact>& facts, const std::string& ns,
                   const std::string& subject, std::int64_t session_us,
                   const std::set<std::string>& wanted) {
  std::vector<std::pair<std::size_t, json>> near;
  for (const StoredFact& f : facts) {
    if (f.ns != ns || f.subject != subject || days_apart_us(f, session_us) > kEventWindowUs) {
      continue;
    }
    json lacks = json::array();
    for (const std::string& w : wanted) {
      if (!f.stems.contains(w)) lacks.push_back(w);
    }
    near.emplace_back(lacks.size(), json{{"fact", f.statement}, {"lacks", lacks}});
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json listed = json::array();
  for (auto& [lacking, entry] : near) listed.push_back(std::move(entry));
  return listed;
}

// What the turns tell the measures: the speakers' names (no content words), each session's
// date (its first turn's timestamp) and each turn's text by id.
struct TurnIndex {
  std::set<std::string> names;
  std::map<std::pair<std::string, std::string>, std::int64_t> session_start;
  std::map<std::string, std::string> content;
};

TurnIndex index_turns(const std::vector<json>& turns) {
  TurnIndex index;
  auto& [names, session_start, content] = index;
  for (const json& t : turns) {
    names.insert(ascii_lower(t["agent_id"].get<std::string>()));
    content[t["id"]] = t["content"];
    // "locomo:conv-26:D3:7": session 3 of its namespace.
    const std::string id = t["id"];
    const std::size_t d = id.rfind(":D");
    const auto key =
        std::make_pair(t["namespace"].get<std::string>(), id.substr(d + 2, id.rfind(':') - d - 2));
    if (!session_start.contains(key)) {
      session_start[key] = parse_rfc3339_us(t["timestamp"].get<std::string>()).value_or(0);
    }
  }
  return index;
}

// The command line.
struct Options {
  std::string data = bench::locomo_dev_dir();
  double max_per_turn = std::numeric_limits<double>::infinity();
  double min_precision = 0;
  double min_observation_recall = 0;
  double min_event_recall = 0;
  std::string dump;
  std::string misses;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("--data", o.data,
                 "the locomo-dev folder (events.jsonl, observations.jsonl, sessions.jsonl)")
      ->capture_default_str();
  app.add_option("--max-facts-per-turn", o.max_per_turn, "exit 1 when there are more");
  app.add_option("--min-precision", o.min_precision, "exit 1 when lower")->capture_default_str();
  app.add_option("--min-observation-recall", o.min_observation_recall, "exit 1 when lower")
      ->capture_default_str();
  app.add_option("--min-event-recall", o.min_event_recall, "exit 1 when lower")
      ->capture_default_str();
  app.add_option("--dump", o.dump, "write every fact with its turn as JSON Lines");
  app.add_option("--misses", o.misses,
                 "write every observation and life event no fact holds as JSON Lines, with the "
                 "facts of its evidence turns (observations) or of its speaker's session "
                 "(events)");
}

// --dump and --misses, when asked for.
void write_dumps(const Options& opt, const std::vector<StoredFact>& facts,
                 const std::map<std::string, std::string>& content,
                 const std::set<std::string>& cited, const std::vector<json>& missed) {
  if (!opt.dump.empty()) {
    std::ofstream out(opt.dump);
    for (const StoredFact& f : facts) {
      out << json{{"turn", f.turn},
                  {"content", content.at(f.turn)},
                  {"statement", f.statement},
                  {"cited", cited.contains(f.turn)}}
                 .dump()
          << "\n";
    }
  }

  if (!opt.misses.empty()) {
    std::ofstream out(opt.misses);
    for (const json& m : missed) out << m.dump() << "\n";
  }
}

int run(int argc, char** argv) {
  CLI::App app{
      "bench_reflection: the fact ledger on LoCoMo against the annotators' observations and "
      "life events (facts per turn, precision, observation recall, event recall)"};
  Options opt;
  add_options(app, opt);
  CLI11_PARSE(app, argc, argv);

  const std::vector<json> turns = bench::read_lines(opt.data + "/events.jsonl");
  const std::vector<json> observations = bench::read_lines(opt.data + "/observations.jsonl");
  const std::vector<json> sessions = bench::read_lines(opt.data + "/sessions.jsonl");
  FakeClock clock(bench::day_after_last_turn_us(turns));

  const bench::ScratchDir dir("bench_reflection");
  const std::string path = dir.file("facts.db");
  bench::store_turns(path, turns, clock);
  auto db = bench::open_jobs_database(path);
  const json result = bench::run_facts_once(db, clock);

  const auto [names, session_start, content] = index_turns(turns);
  ContentWords words(names);

  auto [facts, by_turn] = read_ledger(db, words);

  std::vector<json> missed;
  std::set<std::string> cited;
  std::size_t observations_held = 0;
  for (const json& o : observations) {
    const std::set<std::string> wanted = words.of(o["observation"].get<std::string>());
    bool held = false;
    for (const std::string& id : o["evidence_ids"].get<std::vector<std::string>>()) {
      cited.insert(id);
      for (const std::size_t i : by_turn[id]) held = held || holds(facts[i].stems, wanted);
    }
    observations_held += held ? 1 : 0;
    if (!held) {
      json near = json::array();
      for (const std::string& id : o["evidence_ids"].get<std::vector<std::string>>()) {
        for (const std::size_t i : by_turn[id]) near.push_back(facts[i].statement);
      }
      missed.push_back(
          {{"observation", o["observation"]}, {"evidence", o["evidence_ids"]}, {"facts", near}});
    }
  }
  std::size_t precise = 0;
  for (const StoredFact& f : facts) precise += cited.contains(f.turn) ? 1 : 0;

  std::size_t life_events = 0;
  std::size_t events_held = 0;
  for (const json& s : sessions) {
    const std::string ns = s["namespace"];
    const auto start = session_start.find({ns, std::to_string(s["session"].get<int>())});
    if (start == session_start.end()) continue;
    for (const auto& [speaker, list] : s["events"].items()) {
      const std::string subject = ascii_lower(speaker);
      for (const json& e : list) {
        ++life_events;
        const std::set<std::string> wanted = words.of(e.get<std::string>());
        bool held = false;
        for (const StoredFact& f : facts) {
          if (held) break;
          held = f.ns == ns && f.subject == subject &&
                 days_apart_us(f, start->second) <= kEventWindowUs && holds(f.stems, wanted);
        }
        events_held += held ? 1 : 0;
        if (!held) {
          const json listed = nearest_facts(facts, ns, subject, start->second, wanted);
          missed.push_back({{"event", e},
                            {"namespace", ns},
                            {"session", s["session"]},
                            {"speaker", speaker},
                            {"stems", wanted},
                            {"facts", listed}});
        }
      }
    }
  }

  write_dumps(opt, facts, content, cited, missed);

  const double per_turn = share(facts.size(), turns.size());
  const double precision = share(precise, facts.size());
  const double observation_recall = share(observations_held, observations.size());
  const double event_recall = share(events_held, life_events);
  std::printf("bench_reflection: %zu turns, %zu facts (job: %s)\n", turns.size(), facts.size(),
              result.dump().c_str());
  std::printf("facts per turn: %.3f (annotators: %.3f observations per turn)\n", per_turn,
              share(observations.size(), turns.size()));
  std::printf("precision (facts on a cited turn): %zu of %zu (%.3f)\n", precise, facts.size(),
              precision);
  std::printf("observation recall by content: %zu of %zu (%.3f)\n", observations_held,
              observations.size(), observation_recall);
  std::printf("event recall by content, within 14 days: %zu of %zu (%.3f)\n", events_held,
              life_events, event_recall);
  int status = 0;
  auto check = [&status](bool ok, const char* what, double value, double bound) {
    if (ok) return;
    std::printf("FAIL: %s %.3f (bound %.3f)\n", what, value, bound);
    status = 1;
  };
  check(per_turn <= opt.max_per_turn, "facts per turn", per_turn, opt.max_per_turn);
  check(precision >= opt.min_precision, "precision", precision, opt.min_precision);
  check(observation_recall >= opt.min_observation_recall, "observation recall", observation_recall,
        opt.min_observation_recall);
  check(event_recall >= opt.min_event_recall, "event recall", event_recall, opt.min_event_recall);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return reflectd::guarded_main("bench_reflection", run, argc, argv);
}
