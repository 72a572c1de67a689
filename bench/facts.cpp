// bench_facts: how much of what a conversation says the fact ledger keeps, on
// LoCoMo (../shared/data/locomo-dev: 2,760 turns of five conversations; the evidence turns of
// the 760 non-adversarial questions and their gold answers are the reference).
//
// It stores every turn as the daemon does, runs the `facts` job (jobs/facts.hpp) at a fixed
// time, and prints:
//   - the share of evidence turns that carry at least one fact (target >= 0.85),
//   - the share of all turns that do (target <= 0.75: a greeting or a question is no fact;
//     LoCoMo's annotators found evidence in 43% of the turns),
//   - the share of facts whose turn is an evidence turn of some question (a precision proxy),
//   - for temporal questions whose gold answer is a date ("7 May 2023", "May 2023", "2022",
//     "The week before 9 June 2023"), the share whose gold date a fact from one of the
//     question's evidence turns gives: the fact's validity (its [valid_from, valid_to), or
//     the day of valid_from while it is open) and the gold span overlap with one inside the
//     other (target >= 0.70),
//   - facts per second of the job.
// Thresholds given on the command line make it exit 1 when missed (the CTest run).
// --dump FILE writes every fact with its turn as JSON Lines, for reading them.
// The figures are deterministic: the same data give the same numbers.

#include <SQLiteCpp/SQLiteCpp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/locomo.hpp"
#include "common/clock.hpp"
#include "common/guarded_main.hpp"
#include "common/timestamp.hpp"

namespace {

using namespace reflectd;
using nlohmann::json;

struct StoredFact {
  std::string turn;  // the evidence event's id
  std::string statement;
  std::string attribute;
  std::int64_t from_us = 0;
  std::int64_t to_us = 0;  // exclusive; the day of from_us while the fact is open
};

// Every fact of the ledger, by the id of its evidence turn, in fact_id order; a fact without
// an end holds for the day it starts.
std::map<std::string, std::vector<StoredFact>> read_facts(SQLite::Database& db) {
  std::map<std::string, std::vector<StoredFact>> by_turn;
  SQLite::Statement read(db,
                         "SELECT e.uid, f.fact_text, coalesce(f.attribute_key, ''), "
                         "f.valid_from_us, f.valid_to_us FROM facts f "
                         "JOIN events e ON e.seq = f.source_seq ORDER BY f.fact_id");
  while (read.executeStep()) {
    StoredFact f{read.getColumn(0).getString(), read.getColumn(1).getString(),
                 read.getColumn(2).getString(), read.getColumn(3).getInt64(), 0};
    f.to_us =
        read.isColumnNull(4) ? (f.from_us / kDayUs + 1) * kDayUs : read.getColumn(4).getInt64();
    by_turn[f.turn].push_back(std::move(f));
  }
  return by_turn;
}

// --dump: every fact with its turn, and whether a question cites that turn as evidence.
void write_dump(const std::string& dump, const std::vector<json>& turns,
                const std::map<std::string, std::vector<StoredFact>>& by_turn,
                const std::set<std::string>& evidence) {
  std::ofstream out(dump);
  std::map<std::string, std::string> content;
  for (const json& t : turns) content[t["id"]] = t["content"];
  for (const auto& [turn, facts] : by_turn) {
    for (const StoredFact& f : facts) {
      out << json{{"turn", turn},
                  {"content", content[turn]},
                  {"statement", f.statement},
                  {"attribute", f.attribute},
                  {"valid_from_us", f.from_us},
                  {"evidence", evidence.contains(turn)}}
                 .dump()
          << "\n";
    }
  }
}

int run(int argc, char** argv) {
  CLI::App app{"bench_facts: the fact ledger on LoCoMo (evidence coverage, gold dates)"};
  std::string data = bench::locomo_dev_dir();
  double min_evidence = 0;
  double max_turns = 1;
  double min_temporal = 0;
  std::string dump;
  app.add_option("--data", data, "the locomo-dev folder (events.jsonl, questions.jsonl)")
      ->capture_default_str();
  app.add_option("--min-evidence-coverage", min_evidence,
                 "exit 1 when fewer evidence turns carry a fact")
      ->capture_default_str();
  app.add_option("--max-turn-coverage", max_turns, "exit 1 when more of all turns carry a fact")
      ->capture_default_str();
  app.add_option("--min-temporal", min_temporal,
                 "exit 1 when fewer dated temporal questions get their gold date from a fact")
      ->capture_default_str();
  app.add_option("--dump", dump, "write every fact with its turn as JSON Lines");
  CLI11_PARSE(app, argc, argv);

  const std::vector<json> turns = bench::read_lines(data + "/events.jsonl");
  const std::vector<json> questions = bench::read_lines(data + "/questions.jsonl");
  FakeClock clock(bench::day_after_last_turn_us(turns));

  const bench::ScratchDir dir("bench_facts");
  const std::string path = dir.file("facts.db");
  bench::store_turns(path, turns, clock);

  auto db = bench::open_jobs_database(path);
  const auto start = std::chrono::steady_clock::now();
  const json result = bench::run_facts_once(db, clock);
  const double job_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::map<std::string, std::vector<StoredFact>> by_turn = read_facts(db);
  std::size_t fact_count = 0;
  for (const auto& [turn, facts] : by_turn) fact_count += facts.size();

  std::set<std::string> evidence;
  int temporal_dated = 0;
  int temporal_found = 0;
  for (const json& q : questions) {
    if (q["category"] == "adversarial") continue;
    const auto ids = q["evidence_ids"].get<std::vector<std::string>>();
    evidence.insert(ids.begin(), ids.end());
    if (q["category"] != "temporal") continue;
    const std::string answer =
        q["answer"].is_string() ? q["answer"].get<std::string>() : q["answer"].dump();
    const auto gold = bench::gold_range(answer);
    if (!gold) continue;
    ++temporal_dated;
    bool found = false;
    for (const auto& id : ids) {
      const auto facts = by_turn.find(id);
      if (facts == by_turn.end()) continue;
      for (const StoredFact& f : facts->second) {
        const bool fact_in_gold = f.from_us >= gold->first && f.from_us < gold->second;
        const bool gold_in_fact = gold->first >= f.from_us && gold->first < f.to_us;
        found = found || fact_in_gold || gold_in_fact;
      }
    }
    temporal_found += found ? 1 : 0;
  }

  std::size_t turns_with = 0;
  std::size_t evidence_with = 0;
  std::size_t facts_on_evidence = 0;
  for (const json& t : turns) {
    const std::string id = t["id"];
    const auto it = by_turn.find(id);
    const bool has = it != by_turn.end();
    turns_with += has ? 1 : 0;
    if (evidence.contains(id)) {
      evidence_with += has ? 1 : 0;
      if (has) facts_on_evidence += it->second.size();
    }
  }
  if (!dump.empty()) write_dump(dump, turns, by_turn, evidence);

  const double evidence_share =
      static_cast<double>(evidence_with) / static_cast<double>(evidence.size());
  const double turn_share = static_cast<double>(turns_with) / static_cast<double>(turns.size());
  const double temporal_share =
      temporal_dated > 0 ? static_cast<double>(temporal_found) / temporal_dated : 0;
  std::printf("bench_facts: %zu turns, %zu facts (job: %s)\n", turns.size(), fact_count,
              result.dump().c_str());
  std::printf("evidence turns with a fact: %zu of %zu (%.3f)\n", evidence_with, evidence.size(),
              evidence_share);
  std::printf("turns with a fact: %zu of %zu (%.3f)\n", turns_with, turns.size(), turn_share);
  std::printf("facts on evidence turns (precision proxy): %zu of %zu (%.3f)\n", facts_on_evidence,
              fact_count,
              fact_count > 0
                  ? static_cast<double>(facts_on_evidence) / static_cast<double>(fact_count)
                  : 0);
  std::printf(
      "temporal questions whose gold date a fact of their evidence gives: %d of %d (%.3f)\n",
      temporal_found, temporal_dated, temporal_share);
  std::printf("facts job: %.3f s, %.0f turns/s\n", job_s,
              static_cast<double>(turns.size()) / job_s);
  int status = 0;
  if (evidence_share < min_evidence) {
    std::printf("FAIL: evidence coverage %.3f < %.3f\n", evidence_share, min_evidence);
    status = 1;
  }
  if (turn_share > max_turns) {
    std::printf("FAIL: turn coverage %.3f > %.3f\n", turn_share, max_turns);
    status = 1;
  }
  if (temporal_share < min_temporal) {
    std::printf("FAIL: temporal %.3f < %.3f\n", temporal_share, min_temporal);
    status = 1;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) { return reflectd::guarded_main("bench_facts", run, argc, argv); }
