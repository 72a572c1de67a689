// The consolidation job on the real streams: split into runs and chunks, late and repeated
// arrivals, the migrations that fill its totals, yields and cancelled runs.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/entities.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/importance.hpp"
#include "jobs/scheduler.hpp"
#include "jobs/sql_functions.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/gate_contender.hpp"
#include "support/jobs_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;
using namespace reflectd::test;
using nlohmann::json;

TEST_CASE("consolidation on the real streams") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string path = dir.file("c.db");
  REQUIRE(test::load_corpus(path, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                            clock) == 9052);
  auto db = open_writer(path);
  const json result = consolidate(db, clock, default_params());
  INFO(result.dump());
  CHECK(result["events_processed"] == 9052);
  CHECK(result["skipped"] == false);
  CHECK(result["observations_created"].get<int>() > 0);
  CHECK(result["streams_created"].get<int>() > 0);
  CHECK(result["procedures_distilled"].get<int>() > 0);
  CHECK(kept_pattern_totals(db) == counted_pattern_totals(db));

  SECTION("libzmq's most active modules become EMERGENT or CANONICAL streams") {
    const auto src = dump(db,
                          "SELECT phase, status, frequency > 1000, coverage, target FROM knowledge "
                          "WHERE decision_id = 'proposal:libzmq:src'");
    CHECK((src == "canonical|accepted|1|1.0|src|\n" || src == "emergent|accepted|1|1.0|src|\n"));
    CHECK(db.execAndGet(
                "SELECT count(*) FROM knowledge WHERE namespace = 'libzmq' AND phase != 'pattern'")
              .getInt() >= 3);
    // Every metric is the documented formula of the stored evidence.
    std::vector<std::int64_t> dates;
    SQLite::Statement evidence(db,
                               "SELECT ts_us FROM knowledge_evidence WHERE decision_id = "
                               "'proposal:libzmq:src' ORDER BY ts_us, event_seq");
    while (evidence.executeStep()) dates.push_back(evidence.getColumn(0).getInt64());
    const auto m =
        model::compute_metrics(dates, {}, model::Phase::kEmergent, model::Scope::kLocal, kNow, {});
    CHECK(
        db.execAndGet("SELECT confidence FROM knowledge WHERE decision_id = 'proposal:libzmq:src'")
            .getDouble() == m.confidence);
    CHECK(db.execAndGet(
                "SELECT stability_score FROM knowledge WHERE decision_id = 'proposal:libzmq:src'")
              .getDouble() == m.stability);
    CHECK(db.execAndGet("SELECT frequency FROM knowledge WHERE decision_id = 'proposal:libzmq:src'")
              .getInt64() == m.frequency);
  }
  SECTION("recurring problems become pattern observations whose ids are real events") {
    CHECK(db.execAndGet("SELECT count(*) FROM observations WHERE namespace = 'libzmq' AND "
                        "observation_type = 'pattern'")
              .getInt() >= 5);
    CHECK(db.execAndGet("SELECT support_count FROM observations WHERE signature = 'tests without "
                        "test framework'")
              .getInt() == 17);
    CHECK(db.execAndGet("SELECT count(*) FROM observations o, json_each(o.supporting_event_ids) j "
                        "LEFT JOIN events e ON e.seq = j.value WHERE e.seq IS NULL")
              .getInt() == 0);
    CHECK(
        db.execAndGet("SELECT min(support_count >= 3 AND trajectory_count >= 2) FROM observations "
                      "WHERE observation_type = 'pattern'")
            .getInt() == 1);
  }
  SECTION("successful SWE-agent runs are distilled into procedures") {
    const auto procedural =
        json::parse(db.execAndGet("SELECT procedural FROM knowledge WHERE namespace = 'swe-agent' "
                                  "AND procedural IS NOT NULL "
                                  "ORDER BY decision_id LIMIT 1")
                        .getString());
    CHECK(procedural["steps"].size() > 0);
    CHECK(procedural["steps"][0]["action"].is_string());
    CHECK(procedural["success_evidence_ids"].size() == 1);
    CHECK(db.execAndGet("SELECT count(*) FROM trajectory_outcomes WHERE namespace = 'swe-agent'")
              .getInt() == 19);
  }
  SECTION("a rerun with no new events changes nothing") {
    const std::string before = derived_tables(db);
    const json again = consolidate(db, clock, default_params());
    CHECK(again["events_processed"] == 0);
    CHECK(again["skipped"] == true);
    CHECK(derived_tables(db) == before);
  }
}

TEST_CASE("consolidation does not depend on how events were split into runs and chunks") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string one = dir.file("one.db");
  const std::string many = dir.file("many.db");
  REQUIRE(test::load_corpus(one, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}, clock) ==
          9052);
  std::filesystem::copy_file(one, many);
  auto db_one = open_writer(one);
  auto db_many = open_writer(many);
  consolidate(db_one, clock, default_params());
  auto small_chunks = default_params();
  small_chunks.chunk_events = 777;
  // Several runs, one per namespace, in small chunks.
  consolidate(db_many, clock, small_chunks, "swe-agent");
  consolidate(db_many, clock, small_chunks, "libzmq");
  CHECK(derived_tables(db_many) == derived_tables(db_one));
}

// Promotion and acceptance are decided per evidence event
// (jobs/consolidation_stream_evaluation.cpp StreamEvaluator::evaluate()), so any chunk size and any
// split of the events into runs give the same tables, audit entries of the streams included. On the
// chunk-end rule this failed: proposal:libzmq:perf was accepted with one split and a draft with
// another.
TEST_CASE("consolidation: the same tables for any chunk size and any split into runs") {
  test::TempDir dir;
  FakeClock clock(kNow);
  std::vector<std::string> lines = test::corpus_lines("libzmq-commits.jsonl");
  for (auto& line : test::corpus_lines("swe-agent-trajectories.jsonl"))
    lines.push_back(std::move(line));
  REQUIRE(lines.size() == 9052);
  // Agents' records on the target `perf`: a decision, the decision that
  // supersedes it later (so the first one's evidence ends there) and a draft proposal; each is
  // evaluated over the weighted events of its target in its window, split like the rest.
  auto timestamp_of = [&](std::size_t line) {
    return json::parse(lines[line]).at("timestamp").get<std::string>();
  };
  auto agent_record = [&](std::size_t at, const std::string& kind, const std::string& id,
                          const std::string& extra) {
    lines.insert(
        lines.begin() + static_cast<std::ptrdiff_t>(at),
        R"({"id":")" + id + R"(","kind":")" + kind +
            R"(","namespace":"libzmq","agent_id":"perf-agent","timestamp":")" + timestamp_of(at) +
            R"(","content":"perf: )" + id + R"(","context":{"title":")" + id +
            R"(","target":"perf","rationale":"measured with the perf tools")" + extra + "}");
  };
  agent_record(6000, "decision", "perf-d2",
               R"(},"resolution":{"resolution_type":"supersede","rationale":"newer numbers",)"
               R"("target_decision_ids":["perf-d1"]})");
  agent_record(3000, "proposal", "perf-p1", "}");
  agent_record(1000, "decision", "perf-d1", "}");
  REQUIRE(lines.size() == 9055);
  // An agent's record changes status when the agent's events arrive, so where the writer's
  // supersede row falls among the job's rows, and the status the job's rows record as
  // previous, depend on when the job ran; what the job decides does not.
  auto knowledge_audit = [](SQLite::Database& db) {
    return dump(db,
                "SELECT record_id, action, rationale, previous FROM audit_log WHERE record_type = "
                "'knowledge' AND record_id NOT IN (SELECT decision_id FROM knowledge WHERE "
                "provenance = 'external') ORDER BY record_id, audit_id") +
           dump(db,
                "SELECT record_id, action, rationale, json_remove(previous, '$.status') FROM "
                "audit_log WHERE record_type = 'knowledge' AND actor LIKE 'job:%' AND record_id "
                "IN (SELECT decision_id FROM knowledge WHERE provenance = 'external') ORDER BY "
                "record_id, audit_id");
  };
  const std::string base = dir.file("base.db");
  REQUIRE(test::load_lines(base, lines, clock) == 9055);
  const std::string reference_path = dir.file("reference.db");
  std::filesystem::copy_file(base, reference_path);
  auto reference = open_writer(reference_path);
  consolidate(reference, clock, default_params());
  const std::string tables = derived_tables(reference);
  const std::string audit = knowledge_audit(reference);
  CHECK(dump(reference,
             "SELECT status, phase FROM knowledge WHERE decision_id = 'proposal:libzmq:perf'") ==
        "accepted|emergent|\n");
  {
    // Each agent's record has its own event and the target's weighted events in its window,
    // and the lifecycle columns those give; the job never accepts the agent's proposal.
    INFO(dump(reference,
              "SELECT decision_id, status, phase, frequency, unique_contexts, ended_seq FROM "
              "knowledge WHERE provenance = 'external' ORDER BY decision_id"));
    const std::string window = R"sql(
SELECT k.decision_id, k.status, k.frequency = (SELECT count(*) FROM knowledge_evidence x
    WHERE x.decision_id = k.decision_id),
  (SELECT count(*) FROM knowledge_evidence x WHERE x.decision_id = k.decision_id) = 1 + (
    SELECT count(*) FROM event_targets t WHERE t.namespace = 'libzmq' AND t.target = 'perf'
    AND t.weight > 0 AND t.seq > k.source_event_seq
    AND t.seq < coalesce(k.ended_seq, 9223372036854775807)),
  k.ended_seq = (SELECT source_event_seq FROM knowledge WHERE decision_id = 'perf-d2'),
  k.frequency > 1, k.unique_contexts > 1
FROM knowledge k WHERE provenance = 'external' ORDER BY decision_id)sql";
    CHECK(dump(reference, window) ==
          "perf-d1|superseded|1|1|1|1|1|\n"
          "perf-d2|active|1|1|NULL|1|1|\n"
          "perf-p1|draft|1|1|NULL|1|1|\n");
    CHECK(dump(reference,
               "SELECT count(*) FROM audit_log WHERE record_id LIKE 'perf-%' AND action = "
               "'accept'") == "0|\n");
  }

  {  // chunks of 997 and of 1 event, one run
    for (const std::int64_t chunk : {997, 1}) {
      INFO("chunk_events " << chunk);
      const std::string path = dir.file("chunks-" + std::to_string(chunk) + ".db");
      std::filesystem::copy_file(base, path);
      auto db = open_writer(path);
      auto params = default_params();
      params.chunk_events = chunk;
      consolidate(db, clock, params);
      CHECK(derived_tables(db) == tables);
      CHECK(knowledge_audit(db) == audit);
    }
  }
  {  // events arriving between runs, runs in chunks of 5000 and 997
    for (const std::int64_t chunk : {5000, 997}) {
      INFO("chunk_events " << chunk);
      const std::string path = dir.file("runs-" + std::to_string(chunk) + ".db");
      auto params = default_params();
      params.chunk_events = chunk;
      // Runs as the after_events trigger would start them, at uneven points.
      std::size_t begin = 0;
      for (const std::size_t end : {std::size_t{1234}, std::size_t{4321}, std::size_t{4322},
                                    std::size_t{7777}, lines.size()}) {
        test::load_lines(path,
                         {lines.begin() + static_cast<std::ptrdiff_t>(begin),
                          lines.begin() + static_cast<std::ptrdiff_t>(end)},
                         clock);
        auto db = open_writer(path);
        consolidate(db, clock, params);
        begin = end;
      }
      auto db = open_writer(path);
      CHECK(derived_tables(db) == tables);
      CHECK(knowledge_audit(db) == audit);
    }
  }
}

// A recurring problem's history is read as aggregates at its first touch in a run, and its
// qualifying time is only re-walked when an occurrence arrives before it
// (jobs/consolidation_patterns.cpp Patterns::update). Events here arrive late (earlier timestamps
// in later runs), at the qualifying time itself, in trajectories already counted in earlier runs,
// with targets tied, and in one-event chunks so that later touches of a run add to what the first
// one read; the observation must equal the one run over all events and the hand-computed values.
TEST_CASE("consolidation: a recurring problem's totals across late, tied and repeated arrivals") {
  test::TempDir dir;
  FakeClock clock(kNow);
  constexpr std::int64_t kDayStart = 1'767'225'600 * kSecond;  // 2026-01-01T00:00:00Z
  auto at = [&](int hour, int minute, int second = 0) {
    return kDayStart + ((hour * 60 + minute) * 60 + second) * kSecond;
  };
  int next_id = 0;
  auto event = [&](const std::string& episode, int hour, int minute, int second,
                   const std::string& target) {
    std::array<char, 40> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "2026-01-01T%02d:%02d:%02d+00:00", hour, minute,
                  second);
    const std::string stamp = buffer.data();
    return json{{"schema_version", 1},   {"id", "probe:" + std::to_string(++next_id)},
                {"source", "agent"},     {"kind", "error"},
                {"namespace", "probe"},  {"agent_id", "probe-agent"},
                {"timestamp", stamp},    {"content", "Disk quota exceeded"},
                {"episode_id", episode}, {"context", {{"target", target}}}}
        .dump();
  };
  // Each batch is stored, then consolidated in one run with the given chunk size.
  std::vector<std::pair<std::vector<std::string>, std::int64_t>> runs;
  // 1: one trajectory, no pattern yet.
  runs.push_back(
      {{event("A", 10, 0, 0, "alpha"), event("A", 10, 1, 0, "alpha"), event("A", 10, 2, 0, "beta")},
       20000});
  // 2: a second trajectory qualifies it at 10:05; alpha and beta tie (alpha: byte order).
  runs.push_back({{event("B", 10, 5, 0, "beta")}, 20000});
  // 3: late arrivals move the qualifying time to 10:00 (C 09:00, A 09:30, A 10:00).
  runs.push_back({{event("C", 9, 0, 0, "gamma"), event("A", 9, 30, 0, "alpha")}, 20000});
  // 4: trajectories B and A again (still 3); beta leads.
  runs.push_back({{event("B", 11, 0, 0, "beta"), event("A", 11, 1, 0, "beta")}, 20000});
  // 5: one-event chunks: D at the qualifying time itself (no change), then E, E, F earlier.
  runs.push_back({{event("D", 10, 0, 0, "gamma"), event("E", 8, 0, 0, "gamma"),
                   event("E", 8, 1, 0, "gamma"), event("F", 8, 2, 0, "beta")},
                  1});
  // 6: 205 occurrences in chunks of 50: the newest 200 ids are listed.
  {
    std::vector<std::string> batch;
    batch.reserve(205);
    for (int i = 0; i < 205; ++i) batch.push_back(event("G", 12, i / 60, i % 60, "delta"));
    runs.emplace_back(batch, 50);
  }
  const std::vector<std::string> expected = {
      "",
      "4|2|alpha|" + std::to_string(at(10, 5)) + "|" + std::to_string(at(10, 5)) + "|",
      "6|3|alpha|" + std::to_string(at(10, 0)) + "|" + std::to_string(at(10, 5)) + "|",
      "8|3|beta|" + std::to_string(at(10, 0)) + "|" + std::to_string(at(11, 1)) + "|",
      "12|6|beta|" + std::to_string(at(8, 2)) + "|" + std::to_string(at(11, 1)) + "|",
      "217|7|delta|" + std::to_string(at(8, 2)) + "|" + std::to_string(at(12, 3, 24)) + "|",
  };
  auto observation = [](SQLite::Database& db) {
    return dump(db,
                "SELECT support_count, trajectory_count, target, first_detected_us, "
                "last_reinforced_us FROM observations WHERE namespace = 'probe' AND "
                "observation_type = 'pattern'");
  };

  std::vector<std::string> all;
  for (const auto& run : runs) all.insert(all.end(), run.first.begin(), run.first.end());
  const std::string whole = dir.file("whole.db");
  REQUIRE(test::load_lines(whole, all, clock) == all.size());
  auto db_whole = open_writer(whole);
  consolidate(db_whole, clock, default_params());
  CHECK(observation(db_whole) == expected.back() + "\n");
  const std::string tables = derived_tables(db_whole);

  // Split into runs: each first touch of the signature in a run reads the totals the runs
  // before kept (problem_patterns), which always equal a count of the stored occurrences.
  const std::string split = dir.file("split.db");
  for (std::size_t r = 0; r < runs.size(); ++r) {
    INFO("run " << r + 1);
    REQUIRE(test::load_lines(split, runs[r].first, clock) == runs[r].first.size());
    auto db = open_writer(split);
    auto params = default_params();
    params.chunk_events = runs[r].second;
    consolidate(db, clock, params);
    CHECK(observation(db) == (expected[r].empty() ? "" : expected[r] + "\n"));
    CHECK(kept_pattern_totals(db) == counted_pattern_totals(db));
  }
  auto db_split = open_writer(split);
  CHECK(derived_tables(db_split) == tables);
  CHECK(kept_pattern_totals(db_split) ==
        "probe|disk quota exceeded|217|217|" + std::to_string(at(12, 3, 24)) +
            "|7|18|\nprobe|disk quota exceeded|alpha|3|\nprobe|disk quota exceeded|beta|5|\n"
            "probe|disk quota exceeded|delta|205|\nprobe|disk quota exceeded|gamma|4|\n");
  // The newest 200 of the 217 occurrences (seqs 1..217), ascending.
  const auto ids = json::parse(db_split
                                   .execAndGet("SELECT supporting_event_ids FROM observations "
                                               "WHERE namespace = 'probe'")
                                   .getString());
  REQUIRE(ids.size() == 200);
  CHECK(ids.front() == 18);
  CHECK(ids.back() == 217);
  CHECK(db_split.execAndGet("SELECT min(seq) FROM events").getInt64() == 1);

  // A run takes the newest ids from the observation when it counts the same support; a list
  // that misses an occurrence (216 here) fails the check of its range and the occurrences
  // are read, so the next list is the newest 200 again.
  db_split.exec(
      "WITH RECURSIVE n(value) AS (SELECT 17 UNION ALL SELECT value + 1 FROM n WHERE value < "
      "217) UPDATE observations SET supporting_event_ids = (SELECT json_group_array(value) "
      "FROM n WHERE value != 216) WHERE namespace = 'probe'");
  const std::vector<std::string> one_more = {event("G", 12, 4, 0, "delta")};
  REQUIRE(test::load_lines(split, one_more, clock) == 1);
  consolidate(db_split, clock, default_params());
  CHECK(db_split
            .execAndGet("WITH RECURSIVE n(value) AS (SELECT 19 UNION ALL SELECT value + 1 "
                        "FROM n WHERE value < 218) SELECT supporting_event_ids = (SELECT "
                        "json_group_array(value) FROM n) FROM observations WHERE namespace = "
                        "'probe'")
            .getInt() == 1);

  // Thresholds raised between runs (consolidation.pattern_min_*, a reload): the occurrences
  // up to the stored qualifying time no longer qualify, the whole history does (at D 12:00).
  // The observation is still reinforced, its first detection kept (the minimum, as always).
  const std::vector<std::string> late = {event("A", 9, 0, 0, "alpha"),
                                         event("D", 12, 0, 0, "beta")};
  const std::string raised = dir.file("raised.db");
  for (std::size_t r = 0; r < 2; ++r) {
    REQUIRE(test::load_lines(raised, runs[r].first, clock) == runs[r].first.size());
    auto db = open_writer(raised);
    consolidate(db, clock, default_params());
  }
  REQUIRE(test::load_lines(raised, late, clock) == 2);
  auto db = open_writer(raised);
  auto params = default_params();
  params.pattern_min_occurrences = 4;
  params.pattern_min_trajectories = 3;
  consolidate(db, clock, params);
  CHECK(observation(db) ==
        "6|3|alpha|" + std::to_string(at(10, 5)) + "|" + std::to_string(at(12, 0)) + "|\n");
  CHECK(kept_pattern_totals(db) == counted_pattern_totals(db));
}

// The job reads `target`, `success`, `exit_status`/`submission` and `files` of an event's
// context and the "file:" entities with simdjson, with nlohmann's meaning, which it used
// before: a repeated key's last value counts, and a text only nlohmann accepts (an integer
// beyond 64 bits) is still read. The contexts are written directly, as another writer of
// the database could.
TEST_CASE("consolidation: an event's context read with a repeated key and a 90-bit integer") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string path = dir.file("c.db");
  std::vector<std::string> lines;
  lines.reserve(6);
  for (int i = 0; i < 6; ++i) {
    lines.push_back(json{{"schema_version", 1},
                         {"id", "ctx:" + std::to_string(i)},
                         {"source", "agent"},
                         {"kind", i == 4 ? "result" : "call"},
                         {"namespace", "ctx"},
                         {"agent_id", "probe-agent"},
                         {"timestamp", "2026-01-01T10:00:0" + std::to_string(i) + "+00:00"},
                         {"content", "step " + std::to_string(i)},
                         {"episode_id", "E" + std::to_string(i)}}
                        .dump());
  }
  REQUIRE(test::load_lines(path, lines, clock) == lines.size());
  {
    auto db = open_writer(path);
    SQLite::Statement set(db, "UPDATE events SET context = ?2, entities = ?3 WHERE seq = ?1");
    auto write = [&](std::int64_t seq, const char* context, const char* entities) {
      set.reset();
      set.bind(1, seq);
      set.bind(2, context);
      if (entities == nullptr) {
        set.bind(3);
      } else {
        set.bind(3, entities);
      }
      set.exec();
    };
    write(1, R"({"target":"first-target","target":"second-target"})", nullptr);
    write(2, R"({"target":"big-target","n":1234567890123456789012345678})", nullptr);
    write(3, R"({"target":"kept-target","target":7})", nullptr);
    write(4, R"({"files":["src/a.c"],"files":["lib/b.c","/lib/c.c","top.c"]})",
          R"(["file:src/x.c","file:src/y.c","tool:make"])");
    write(5, R"({"target":"outcome","exit_status":"submitted","success":0.8,"success":1})",
          nullptr);
    write(6, R"({"target":"late","success":true,"submission":null,"success":false})",
          R"(not json)");
  }
  // Event 6 is a call: its success and submission make no outcome.
  auto db = open_writer(path);
  consolidate(db, clock, default_params());
  CHECK(dump(db, "SELECT seq, target FROM event_targets ORDER BY seq") ==
        "1|second-target|\n2|big-target|\n3|NULL|\n4|lib|\n5|outcome|\n6|late|\n");
  CHECK(dump(db, "SELECT trajectory_id, target, success FROM trajectory_outcomes") ==
        "ep:E4|outcome|1|\n");
}

namespace {

// Stores `lines` in each of `paths` (all `expected` of them must be new there) and consolidates
// each database, for the tests that run the same history on two copies.
void store_and_consolidate(const std::vector<std::string>& paths,
                           const std::vector<std::string>& lines, std::size_t expected,
                           const Clock& clock) {
  for (const std::string& path : paths) {
    INFO(path);
    REQUIRE(test::load_lines(path, lines, clock) == expected);
    auto db = open_writer(path);
    consolidate(db, clock, default_params());
  }
}

// `lines` as the same events sent again under new ids ("<id>-again"): new rows of the same
// signatures, trajectories and targets.
std::vector<std::string> sent_again(const std::vector<std::string>& lines) {
  std::vector<std::string> again;
  again.reserve(lines.size());
  for (const std::string& line : lines) {
    json e = json::parse(line);
    e["id"] = e["id"].get<std::string>() + "-again";
    again.push_back(e.dump());
  }
  return again;
}

}  // namespace

// Migration 15 fills problem_patterns from the occurrences already stored, which the job
// consolidated: a database upgraded between two runs ends with the tables of one that had the
// totals all along.
TEST_CASE("migration 15: recurring problems' totals filled from the stored occurrences") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string kept = dir.file("kept.db");
  const std::string upgraded = dir.file("upgraded.db");
  store_and_consolidate({kept, upgraded}, test::corpus_lines("swe-agent-trajectories.jsonl"), 448,
                        clock);
  {
    auto db = open_writer(upgraded);
    const std::string totals = kept_pattern_totals(db);
    REQUIRE(db.execAndGet("SELECT count(*) FROM problem_patterns").getInt64() > 10);
    // Back to schema 14: without the totals.
    db.exec(
        "DROP TABLE problem_patterns; DROP TABLE problem_pattern_targets; PRAGMA "
        "user_version = 14");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(kept_pattern_totals(db) == totals);
  }
  store_and_consolidate({kept, upgraded}, test::corpus_lines("libzmq-commits.jsonl"), 8604, clock);
  auto db_kept = open_writer(kept);
  auto db_upgraded = open_writer(upgraded);
  CHECK(kept_pattern_totals(db_upgraded) == counted_pattern_totals(db_upgraded));
  CHECK(derived_tables(db_upgraded) == derived_tables(db_kept));
}

// Migration 22 fills each recurring problem's floor from the stored occurrences, also when it
// runs again on a database that has the column (a reflectd that did not know it may have left
// the values behind), and a run without floors reads the newest occurrences instead: the
// tables end as those of a database that had the floors all along.
TEST_CASE("migration 22: recurring problems' floors filled again from the stored occurrences") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string kept = dir.file("kept.db");
  const std::string stale = dir.file("stale.db");
  store_and_consolidate({kept, stale}, test::corpus_lines("libzmq-commits.jsonl"), 8604, clock);
  {
    auto db = open_writer(stale);
    const std::string totals = kept_pattern_totals(db);
    REQUIRE(totals == counted_pattern_totals(db));
    REQUIRE(db.execAndGet("SELECT count(*) FROM problem_patterns WHERE newest_floor_seq > 1")
                .getInt64() > 10);
    db.exec("UPDATE problem_patterns SET newest_floor_seq = newest_floor_seq - 1");
    db.exec("PRAGMA user_version = 21");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(kept_pattern_totals(db) == totals);
    // A floor that disagrees with the observation's list: the next run reads the occurrences.
    db.exec("UPDATE problem_patterns SET newest_floor_seq = NULL");
  }
  // The same signatures again (the same events under new ids): each is loaded from its totals.
  const std::vector<std::string> again = sent_again(test::corpus_lines("libzmq-commits.jsonl"));
  store_and_consolidate({kept, stale}, again, again.size(), clock);
  auto db_kept = open_writer(kept);
  auto db_stale = open_writer(stale);
  CHECK(kept_pattern_totals(db_stale) == counted_pattern_totals(db_stale));
  CHECK(derived_tables(db_stale) == derived_tables(db_kept));
}

// Migration 23 keeps each trajectory outcome's final event time, which the competences are
// read in order of. A database of schema 22 (no column, the old index) and one whose rows lost
// their times (a reflectd that did not know the column replaced them) both get the events'
// times, and the next run over the same trajectories again ends with the tables of a database
// that had them all along.
TEST_CASE("migration 23: trajectory outcomes' final times filled from their events") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string kept = dir.file("kept.db");
  const std::string old_schema = dir.file("old_schema.db");
  const std::string replaced = dir.file("replaced.db");
  const auto lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  store_and_consolidate({kept, old_schema, replaced}, lines, 448, clock);
  const char* kTimes =
      "SELECT o.trajectory_id, o.final_ts_us, e.ts_us FROM trajectory_outcomes o JOIN events e "
      "ON e.seq = o.final_seq ORDER BY o.namespace, o.trajectory_id";
  const char* kIndexes =
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'trajectory_outcomes' "
      "AND sql IS NOT NULL ORDER BY name";
  std::string times;
  {
    auto db = open_writer(kept);
    REQUIRE(db.execAndGet("SELECT count(*) FROM trajectory_outcomes WHERE success = 1").getInt64() >
            3);
    // Written by the job: every row has its final event's time.
    CHECK(db.execAndGet("SELECT count(*) FROM trajectory_outcomes o JOIN events e ON e.seq = "
                        "o.final_seq WHERE o.final_ts_us IS NOT e.ts_us")
              .getInt64() == 0);
    times = dump(db, kTimes);
  }
  {
    auto db = open_writer(old_schema);
    db.exec(
        "DROP INDEX trajectory_outcomes_successes; ALTER TABLE trajectory_outcomes DROP COLUMN "
        "final_ts_us; CREATE INDEX trajectory_outcomes_tools ON trajectory_outcomes (namespace, "
        "tool_sequence, success); PRAGMA user_version = 22");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(dump(db, kTimes) == times);
    CHECK(dump(db, kIndexes) == "trajectory_outcomes_successes|\ntrajectory_outcomes_target|\n");
  }
  {
    auto db = open_writer(replaced);
    db.exec("UPDATE trajectory_outcomes SET final_ts_us = NULL; PRAGMA user_version = 22");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(dump(db, kTimes) == times);
  }
  // The same trajectories under new ids: every competence is read from the stored outcomes.
  const std::vector<std::string> again = sent_again(lines);
  store_and_consolidate({kept, old_schema, replaced}, again, again.size(), clock);
  auto db_kept = open_writer(kept);
  CHECK(db_kept
            .execAndGet("SELECT count(*) FROM observations WHERE observation_type = "
                        "'competence' AND support_count > 1")
            .getInt64() > 0);
  for (const std::string& path : {old_schema, replaced}) {
    INFO(path);
    auto db = open_writer(path);
    CHECK(derived_tables(db) == derived_tables(db_kept));
  }
}

// Consolidation ends its chunk at the next event when ingest waits at the write gate
// (jobs/consolidation.cpp consolidate_chunk); its tables stay those of an undisturbed run.
TEST_CASE("consolidation under a writer that always waits yields and keeps its tables") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string alone = dir.file("alone.db");
  const std::string yielding = dir.file("yielding.db");
  REQUIRE(test::load_corpus(alone, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                            clock) == 9052);
  std::filesystem::copy_file(alone, yielding);
  auto db_alone = open_writer(alone);
  auto db_yielding = open_writer(yielding);
  consolidate(db_alone, clock, default_params());
  // A writer that always wants the lock: every transaction ends after its 2 ms slice.
  store::WriteGate gate(1, 2);
  {
    test::GateContender writer(gate);
    CHECK(consolidate(db_yielding, clock, default_params(), "", &gate)["events_processed"] == 9052);
  }
  INFO("job transactions " << gate.stats().job_turns.load() << ", yields "
                           << gate.stats().job_yields.load());
  // Undisturbed it takes 3 transactions (libzmq 5,000 + 3,604, swe-agent 448).
  CHECK(gate.stats().job_yields.load() > 3);
  CHECK(gate.stats().job_turns.load() > 3);
  CHECK(derived_tables(db_yielding) == derived_tables(db_alone));
}

TEST_CASE("a run cancelled mid-way and rerun yields the tables of an uninterrupted run") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_corpus(a, {"libzmq-commits.jsonl"}, clock) == 8604);
  std::filesystem::copy_file(a, b);
  auto db_a = open_writer(a);
  auto db_b = open_writer(b);
  consolidate(db_a, clock, default_params());

  auto params = default_params();
  params.chunk_events = 1000;
  // Cancel at the 4th check: the first chunks commit, the one in flight rolls back.
  std::atomic<bool> stopping{false};
  struct CountingClock final : Clock {
    const Clock& inner;
    mutable std::atomic<int> calls{0};
    explicit CountingClock(const Clock& c) : inner(c) {}
    std::int64_t now_us() const override { return inner.now_us(); }
    std::int64_t monotonic_us() const override { return ++calls >= 4 ? 1 : 0; }
  } counting(clock);
  jobs::CancelToken cancel(counting, 1, stopping);
  jobs::JobContext ctx{db_b, clock, cancel, "", "interval", 0, {}};
  CHECK_THROWS_AS(jobs::run_consolidation(ctx, params), jobs::JobCancelled);
  const auto watermark =
      db_b.execAndGet("SELECT value FROM job_state WHERE key = 'watermark'").getString();
  CHECK(watermark != "8604");
  consolidate(db_b, clock, params);
  CHECK(derived_tables(db_b) == derived_tables(db_a));
}
