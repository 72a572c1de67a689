// The consolidation job's steps one by one (jobs/consolidation_*.hpp), on small hand-made
// inputs with exact expected values; consolidation_test.cpp runs the whole job on the real streams.

#include <catch2/catch.hpp>

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "jobs/consolidation_competence.hpp"
#include "jobs/consolidation_events.hpp"
#include "jobs/consolidation_outcomes.hpp"
#include "jobs/consolidation_pattern_walk.hpp"
#include "jobs/consolidation_questions.hpp"
#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_state.hpp"
#include "jobs/consolidation_streams.hpp"
#include "jobs/consolidation_text.hpp"
#include "jobs/consolidation_trajectories.hpp"
#include "support/db_dump.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;
using namespace reflectd::jobs::consolidation;
using nlohmann::json;

namespace {

// A migrated database without foreign-key checks, so that a step's rows need no events.
SQLite::Database scratch_database(const test::TempDir& dir) {
  auto db = test::open_writer(dir.file("steps.db"));
  db.exec("PRAGMA foreign_keys = OFF");
  return db;
}

}  // namespace

TEST_CASE("consolidation steps: first_line, labelled_line and the id list") {
  CHECK(first_line("\n  \t\r\n  hello world \t\r\nnext", 100) == "hello world");
  CHECK(first_line("abcdef", 3) == "abc");
  CHECK(first_line("a\xC3\xA9"
                   "b",
                   2) == "a");  // never inside a UTF-8 sequence
  CHECK(first_line(" \n\t\r\n", 10).empty());
  CHECK(first_line("", 10).empty());

  const std::string message = "Title\nProblem:  socket leaks \nSolution: close it\nProblem: two";
  CHECK(labelled_line(message, "Problem:") == "socket leaks");
  CHECK(labelled_line(message, "Solution:") == "close it");
  CHECK(labelled_line("  Problem: indented", "Problem:").empty());
  CHECK(labelled_line("Problem:   \nnext", "Problem:").empty());
  CHECK(labelled_line("no label here", "Problem:").empty());

  CHECK(integer_array_json({}) == "[]");
  const std::vector<std::int64_t> ids = {1, -2, std::numeric_limits<std::int64_t>::max()};
  CHECK(integer_array_json(ids) == "[1,-2,9223372036854775807]");
  CHECK(integer_array_json(ids) == json(ids).dump());
}

TEST_CASE("consolidation steps: string fields, truthy values and solution mentions") {
  const json object = {{"a", "x"},     {"b", 1},      {"yes", true},   {"no", false},
                       {"high", 0.71}, {"edge", 0.7}, {"text", "yes"}, {"list", json::array({1})}};
  CHECK(string_field(object, "a") == "x");
  CHECK(string_field(object, "b").empty());
  CHECK(string_field(object, "missing").empty());
  CHECK(string_field(json::array({"a"}), "a").empty());
  CHECK(truthy(object, "yes"));
  CHECK_FALSE(truthy(object, "no"));
  CHECK(truthy(object, "high"));
  CHECK_FALSE(truthy(object, "edge"));
  CHECK_FALSE(truthy(object, "text"));
  CHECK_FALSE(truthy(object, "list"));
  CHECK_FALSE(truthy(object, "missing"));
  CHECK_FALSE(truthy(json(), "yes"));

  CHECK(mentions_solution("the SOLUTION: close the socket"));
  CHECK(mentions_solution("sOlUtIoN:"));
  CHECK_FALSE(mentions_solution("a solution without a colon"));
  CHECK_FALSE(mentions_solution("Solutions: plural"));
  CHECK_FALSE(mentions_solution(""));
}

TEST_CASE("consolidation steps: event fields from context and entities") {
  EventFieldReader reader;
  SECTION("simdjson: the last of repeated keys, files from both columns") {
    const EventFields f = reader.read(
        R"({"target":"first","target":"second","success":0.9,"exit_status":0,"merge":true,)"
        R"("files":["src/a.c",3,"lib/b.c"]})",
        R"(["file:src/x.c","tool:make","file:/top.c",7])");
    CHECK(f.target == "second");
    CHECK(f.success);
    CHECK(f.ends_trajectory);
    CHECK(f.merge);
    CHECK(f.files == std::vector<std::string>{"src/a.c", "lib/b.c", "src/x.c", "/top.c"});
  }
  SECTION("nlohmann for a text simdjson rejects (a 90-bit integer)") {
    const EventFields f = reader.read(
        R"({"target":"big","n":1234567890123456789012345678,"success":true,"files":["a/b"]})",
        R"(["file:c/d",1234567890123456789012345678])");
    CHECK(f.target == "big");
    CHECK(f.success);
    CHECK_FALSE(f.ends_trajectory);
    CHECK_FALSE(f.merge);
    CHECK(f.files == std::vector<std::string>{"a/b", "c/d"});
  }
  SECTION("values of other types, and texts that are no JSON") {
    EventFields f = reader.read(R"({"target":7,"success":"yes","merge":"yes","submission":null})",
                                R"({"file:a/b":1})");
    CHECK(f.target.empty());
    CHECK_FALSE(f.success);
    CHECK(f.ends_trajectory);
    CHECK_FALSE(f.merge);
    CHECK(f.files.empty());
    f = reader.read(std::string("not json"), std::string("[oops"));
    CHECK(f.target.empty());
    CHECK_FALSE(f.ends_trajectory);
    CHECK(f.files.empty());
    f = reader.read(std::nullopt, std::nullopt);
    CHECK(f.target.empty());
    CHECK(f.files.empty());
  }
}

TEST_CASE("consolidation steps: an event's own target") {
  CHECK(conventional_scope("fix(socket)!: close fds\nbody") == "socket");
  CHECK(conventional_scope("\n  feat(api): add a call") == "api");
  CHECK(conventional_scope("plain message").empty());

  CHECK(module_of_files({"src/a.c", "/src/b.c", "lib/c.c", "top.c", "/x", "//y/z"}) == "src");
  CHECK(module_of_files({"b/x", "a/y"}) == "a");  // a tie: the smallest name
  CHECK(module_of_files({"b/x", "a/y", "b/z"}) == "b");
  CHECK(module_of_files({"top.c", "/x"}).empty());
  CHECK(module_of_files({}).empty());

  CHECK(valid_target("ab").empty());
  CHECK(valid_target("abc") == "abc");

  EventFields fields;
  fields.target = "core";
  CHECK(own_target(fields, "fix(net): x") == "core");
  fields.target = "ab";  // too short: the scope comes next
  CHECK(own_target(fields, "fix(net): x") == "net");
  fields.files = {"src/a", "src/b", "lib/c"};
  CHECK(own_target(fields, "fix(ab): short scope") == "src");
  fields.files = {"ab/c"};
  CHECK(own_target(fields, "no scope").empty());
}

TEST_CASE("consolidation steps: evidence weights") {
  const jobs::ConsolidationParams p;
  CHECK(kind_weight(p, "commit_change", false) == 2.0);
  CHECK(kind_weight(p, "decision", false) == 1.0);
  CHECK(kind_weight(p, "error", false) == 0.5);
  CHECK(kind_weight(p, "result", true) == 1.0);
  CHECK(kind_weight(p, "result", false) == 0.2);
  CHECK(kind_weight(p, "call", false) == 0.3);
  CHECK(kind_weight(p, "task", false) == 0.3);
  CHECK(kind_weight(p, "prompt", false) == 0.2);
  CHECK(kind_weight(p, "observation", true) == 0.0);

  const EventFields none;
  EventEvidence e = event_evidence(p, "error", "Traceback\nValueError: x", none);
  CHECK(e.problem == "Traceback\nValueError: x");
  CHECK(e.weight == 0.5);
  CHECK_FALSE(e.success);
  e = event_evidence(p, "commit_change", "Fix leak\nProblem: leak\nSolution: close", none);
  CHECK(e.problem == "leak");
  CHECK(e.weight == 3.0);
  e = event_evidence(p, "call", "Problem: only a problem", none);
  CHECK(e.problem == "only a problem");
  CHECK(e.weight == 0.3);
  EventFields succeeded;
  succeeded.success = true;
  e = event_evidence(p, "result", "done", succeeded);
  CHECK(e.success);
  CHECK(e.weight == 1.0);
  CHECK(e.problem.empty());
  e = event_evidence(p, "call", "done", succeeded);  // only a result succeeds
  CHECK_FALSE(e.success);
}

TEST_CASE("consolidation steps: trajectories start and keep their targets") {
  constexpr std::int64_t kGap = 1000;
  CHECK(starts_trajectory({}, "call", 0, kGap));
  const OpenTrajectory open{"tr:1", 100, ""};
  CHECK_FALSE(starts_trajectory(open, "call", 100 + kGap, kGap));
  CHECK(starts_trajectory(open, "call", 101 + kGap, kGap));
  CHECK(starts_trajectory(open, "prompt", 101, kGap));
  CHECK(starts_trajectory(open, "task", 101, kGap));

  CHECK(open_trajectory_json({"tr:5", 42, "src"}) ==
        R"({"id":"tr:5","last_ts_us":42,"target":"src"})");
  const OpenTrajectory parsed = parse_open_trajectory(open_trajectory_json({"tr:5", 42, "src"}));
  CHECK(parsed.id == "tr:5");
  CHECK(parsed.last_ts_us == 42);
  CHECK(parsed.target == "src");
  CHECK(parse_open_trajectory(std::nullopt).id.empty());
  CHECK(parse_open_trajectory(std::string("{}")).last_ts_us == 0);

  test::TempDir dir;
  auto db = scratch_database(dir);
  db.exec(
      "INSERT INTO event_targets (seq, namespace, trajectory_id, target, weight) VALUES "
      "(1, 'n', 'ep:E', 'older', 1.0), (2, 'n', 'ep:E', 'stored', 1.0), "
      "(3, 'n', 'ep:E', NULL, 1.0), (4, 'other', 'ep:F', 'elsewhere', 1.0)");
  Trajectories trajectories(db, kGap);
  trajectories.begin_chunk("n", {"tr:7", 500, "inherited"});
  Placement p = trajectories.place(10, "call", 600, "", "");
  CHECK(p.trajectory == "tr:7");
  CHECK(p.target == "inherited");
  p = trajectories.place(11, "call", 700, "", "own");
  CHECK(p.target == "own");
  p = trajectories.place(12, "result", 800, "", "");
  CHECK(p.target == "own");  // the trajectory's target is now its last own one
  trajectories.record(12, p, 0.25);
  p = trajectories.place(13, "call", 800 + kGap + 1, "", "");  // after a silence
  CHECK(p.trajectory == "tr:13");
  CHECK(p.target.empty());
  p = trajectories.place(14, "call", 900, "E", "");
  CHECK(p.trajectory == "ep:E");
  CHECK(p.target == "stored");
  p = trajectories.place(15, "call", 901, "F", "");  // F's row is another namespace's
  CHECK(p.trajectory == "ep:F");
  CHECK(p.target.empty());
  trajectories.record(15, p, 0.0);
  CHECK(trajectories.open().id == "tr:13");
  CHECK(trajectories.open().last_ts_us == 800 + kGap + 1);
  CHECK(test::dump(db, "SELECT * FROM event_targets WHERE seq > 10 ORDER BY seq") ==
        "12|n|tr:7|own|0.25|\n15|n|ep:F|NULL|0.0|\n");
}

TEST_CASE("consolidation steps: questions pending until answered") {
  CHECK(asks_question("prompt", "Why?  \n"));
  CHECK(asks_question("task", "What now?"));
  CHECK(asks_question("conversation", "Really?\t"));
  CHECK_FALSE(asks_question("response", "Why?"));
  CHECK_FALSE(asks_question("prompt", "Do it."));
  CHECK_FALSE(asks_question("prompt", " \n"));

  PendingQuestion q;
  advance_question(q, 3, "prompt", "Why?", "a");
  CHECK((q.seq == 3 && q.agent == "a" && q.dirty));
  q.dirty = false;
  advance_question(q, 4, "call", "ls", "a");
  CHECK((q.seq == 3 && !q.dirty));
  advance_question(q, 5, "result", "done", "a");
  CHECK((q.seq == 0 && q.agent.empty() && q.dirty));
  q = {6, "a", false};
  advance_question(q, 7, "conversation", "an answer", "b");
  CHECK((q.seq == 0 && q.dirty));
  q = {6, "a", false};
  advance_question(q, 8, "conversation", "and you?", "b");  // answers, then asks
  CHECK((q.seq == 8 && q.agent == "b" && q.dirty));

  test::TempDir dir;
  auto db = scratch_database(dir);
  db.exec(
      "INSERT INTO unanswered_questions (namespace, trajectory_id, seq, agent_id) VALUES "
      "('n', 'tr:1', 1, 'a'), ('n', 'tr:2', 2, 'a')");
  Questions questions(db);
  questions.begin_chunk();
  questions.track("n", "tr:1", 5, "decision", "chosen", "a");    // answers tr:1's question
  questions.track("n", "tr:2", 6, "call", "ls", "a");            // tr:2's stays pending
  questions.track("n", "tr:3", 7, "prompt", "Which one?", "b");  // a new question
  questions.store("n");
  CHECK(test::dump(db, "SELECT * FROM unanswered_questions ORDER BY trajectory_id") ==
        "n|tr:2|2|a|\nn|tr:3|7|b|\n");
}

TEST_CASE("consolidation steps: a trajectory's procedure and tool sequence") {
  ProcedureBuilder b;
  b.add(1, "task", "Fix the bug\nISSUE: crash", json(), 10);
  b.add(2, "call", "open file.py", {{"tool", "edit"}, {"thought", "look at it"}}, 11);
  b.add(3, "result", "opened\nmore", {{"success", true}}, 12);
  b.add(4, "call", "python t.py", {{"tool", "python"}}, 13);
  b.add(5, "error", "Traceback", json(), 14);
  b.add(6, "call", "python t.py", {{"tool", "python"}, {"thought", "again"}}, 15);
  b.add(7, "call", "submit", {{"tool", "submit"}}, 16);
  b.add(8, "result", "ok", {{"success", 0.9}}, 17);
  b.add(9, "task", "A second task", json(), 18);
  CHECK(b.tool_sequence() == "edit>python>submit");
  CHECK(b.steps() == json::parse(R"([
    {"action": "open file.py", "rationale": "look at it", "expected_outcome": "opened"},
    {"action": "python t.py", "rationale": "", "expected_outcome": "Traceback"},
    {"action": "python t.py", "rationale": "again", "expected_outcome": null},
    {"action": "submit", "rationale": "", "expected_outcome": "ok"}])"));
  CHECK(b.task_line() == "Fix the bug");
  CHECK(b.task_text() == "Fix the bug\nISSUE: crash");
  CHECK(b.task_seq() == 1);
  CHECK(b.task_ts_us() == 10);
  REQUIRE(b.calls().size() == 4);
  CHECK(b.calls()[0].succeeded);
  CHECK_FALSE(b.calls()[1].succeeded);
  CHECK_FALSE(b.calls()[2].succeeded);
  CHECK(b.calls()[3].succeeded);
  CHECK(b.calls()[2].thought == "again");
  CHECK(b.call_events() ==
        std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 11}, {4, 13}, {6, 15}, {7, 16}});

  const Outcome outcome{"tr:1", "src", true, 8, 17};
  CHECK(procedural_content(outcome, b) == json{{"steps", b.steps()},
                                               {"target_task", "Fix the bug"},
                                               {"success_evidence_ids", json::array({8})}});
  ProcedureBuilder no_task;
  no_task.add(1, "call", "make", {{"tool", "make"}}, 1);
  CHECK(procedural_content(outcome, no_task)["target_task"] == "src");
  CHECK(no_task.steps()[0]["expected_outcome"].is_null());
  ProcedureBuilder no_tool;
  no_tool.add(1, "call", "make", json(), 1);
  CHECK(no_tool.tool_sequence().empty());
}

TEST_CASE("consolidation steps: a competence's summary") {
  const std::vector<SuccessfulRun> runs = {{10, 1, -1}, {20, 2, 5}, {30, 3, -1}};
  const auto summary = summarize_competence(runs, 2);
  REQUIRE(summary);
  CHECK(summary->ids == std::vector<std::int64_t>{1, 2, 3});
  CHECK(summary->target == 5);
  CHECK(summary->first_us == 20);
  CHECK(summary->last_us == 30);
  CHECK(summarize_competence(runs, 3)->first_us == 30);
  CHECK_FALSE(summarize_competence(runs, 4));
  CHECK(summarize_competence(std::vector<SuccessfulRun>{{1, 1, -1}}, 1)->target == -1);
  CHECK(SuccessfulRun{10, 2, 0} < SuccessfulRun{10, 3, 0});
  CHECK(SuccessfulRun{9, 9, 0} < SuccessfulRun{10, 1, 0});
  CHECK(competence_id("ns", "edit>python") == "competence:ns:ef19c6dc468e1f78");
}

TEST_CASE("consolidation steps: stream ids, solutions, gap limbs and target totals") {
  CHECK(stream_id("ns", "src") == "proposal:ns:src");

  std::vector<std::pair<std::int64_t, std::int64_t>> top;
  for (const auto& [ts, seq] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {5, 1}, {1, 2}, {9, 3}, {5, 4}, {7, 5}, {2, 6}, {8, 7}}) {
    add_solution(top, ts, seq);
  }
  CHECK(top ==
        std::vector<std::pair<std::int64_t, std::int64_t>>{{9, 3}, {8, 7}, {7, 5}, {5, 4}, {5, 1}});

  using model::GapSquares;
  const GapSquares big = (static_cast<GapSquares>(3) << 64) + 5;
  CHECK(split_limbs(big) == std::pair<std::int64_t, std::int64_t>{3, 5});
  const GapSquares low = (static_cast<GapSquares>(1) << 64) - 1;
  CHECK(split_limbs(low) == std::pair<std::int64_t, std::int64_t>{0, -1});
  CHECK(join_limbs(0, -1) == low);
  const GapSquares huge = (static_cast<GapSquares>(0x123456789) << 70) + 0xFEDCBA987654321;
  const auto [hi, lo] = split_limbs(huge);
  CHECK(join_limbs(hi, lo) == huge);

  TargetTotals totals;
  add_to_totals(totals, "commit_change", false, 2.0);
  add_to_totals(totals, "error", false, 0.5);
  add_to_totals(totals, "result", true, 1.0);
  CHECK(totals.weight == 3.5);
  CHECK(totals.events == 3);
  CHECK(totals.commits == 1);
  CHECK(totals.errors == 1);
  CHECK(totals.successes == 1);
  CHECK(totals.dirty);
}

TEST_CASE("consolidation steps: a recurring problem's qualifying walk") {
  PatternState s;
  s.head_loaded = true;
  s.head_bound = std::numeric_limits<std::int64_t>::max();
  s.head = {{10, 1, 0}, {10, 2, 0}, {20, 3, 1}, {30, 4, 1}, {40, 5, 2}};
  CHECK(walk_loaded_head(s, 3, 2) == 20);
  CHECK(s.head_bound == 20);
  CHECK(s.head.size() == 3);

  // Occurrences tied at the qualifying time stay in the head.
  s.head = {{10, 1, 0}, {20, 2, 1}, {20, 3, 0}, {20, 4, 2}, {21, 5, 2}};
  s.head_bound = std::numeric_limits<std::int64_t>::max();
  CHECK(walk_loaded_head(s, 2, 2) == 20);
  CHECK(s.head.size() == 4);

  // Never qualifying: nothing changes.
  s.head = {{1, 1, 0}, {2, 2, 0}, {3, 3, 0}};
  s.head_bound = 99;
  CHECK(walk_loaded_head(s, 2, 2) == 0);
  CHECK(s.head.size() == 3);
  CHECK(s.head_bound == 99);
  CHECK(walk_loaded_head(s, 4, 1) == 0);
  CHECK(walk_loaded_head(s, 3, 1) == 3);
}

TEST_CASE("consolidation steps: a recurring problem's listed ids, target and words") {
  jobs::EventJsonReader reader;
  CHECK(newest_from_list(reader, "[3,5,9]", 3, 9, 3) == std::vector<std::int64_t>{3, 5, 9});
  CHECK_FALSE(newest_from_list(reader, "[3,5,9]", 3, 9, 4));   // another floor
  CHECK_FALSE(newest_from_list(reader, "[3,5,9]", 3, 10, 3));  // another newest
  CHECK_FALSE(newest_from_list(reader, "[3,5,9]", 4, 9, 3));   // stale: fewer than counted
  CHECK_FALSE(newest_from_list(reader, "[5,3,9]", 3, 9, 5));   // not ascending
  CHECK_FALSE(newest_from_list(reader, "[3,3,9]", 3, 9, 3));
  CHECK_FALSE(newest_from_list(reader, R"([3,"x",9])", 3, 9, 3));
  CHECK_FALSE(newest_from_list(reader, "[]", 0, 0, 0));
  CHECK_FALSE(newest_from_list(reader, "[3,5", 2, 5, 3));
  std::vector<std::int64_t> many(250);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::int64_t>(i + 1);
  // 250 counted: the list holds the newest 200, 51..250.
  CHECK(newest_from_list(reader,
                         json(std::vector<std::int64_t>(many.begin() + 50, many.end())).dump(), 250,
                         250, 51)
            ->size() == kMaxSupportIdsListed);

  std::vector<std::int64_t> newest(401);
  for (std::size_t i = 0; i < newest.size(); ++i) newest[i] = static_cast<std::int64_t>(i + 1);
  trim_newest(newest);
  REQUIRE(newest.size() == kMaxSupportIdsListed);
  CHECK(newest.front() == 202);
  CHECK(newest.back() == 401);
  std::vector<std::int64_t> kept(400, 1);
  trim_newest(kept);
  CHECK(kept.size() == 400);

  Interner strings;
  const std::int32_t zeta = strings.intern("zeta");
  const std::int32_t alpha = strings.intern("alpha");
  const std::int32_t mid = strings.intern("mid");
  CHECK(most_frequent_target({{zeta, 3}, {alpha, 3}, {mid, 2}}, strings) == alpha);
  CHECK(most_frequent_target({{zeta, 4}, {alpha, 3}}, strings) == zeta);
  CHECK(most_frequent_target({}, strings) == -1);

  CHECK(pattern_problem("Build fails\nProblem: cannot link libfoo\n", "sig") ==
        "cannot link libfoo");
  CHECK(pattern_problem("  \nsegfault in x\nmore", "sig") == "segfault in x");
  CHECK(pattern_problem("", "sig text") == "sig text");
  CHECK(pattern_problem("", std::string(300, 's')) == std::string(200, 's'));
  CHECK(pattern_text(5, 2, "src", "boom") ==
        "Seen 5 times in 2 trajectories, mostly around src; latest: boom");
  CHECK(pattern_text(5, 2, "", "boom") == "Seen 5 times in 2 trajectories; latest: boom");
  CHECK(pattern_id("ns", "cannot link <path>") == "pattern:ns:03a75e2ba0b78b70");
}

TEST_CASE("consolidation steps: the run's result and interned strings") {
  Totals totals;
  json result = result_json(totals);
  CHECK(result["skipped"] == true);
  CHECK(result["skip_reason"] == "no new events");
  CHECK(result.size() == 15);
  totals.events_processed = 3;
  totals.streams_created = 2;
  totals.agent_records_promoted = 1;
  result = result_json(totals);
  CHECK(result["skipped"] == false);
  CHECK(result["skip_reason"].is_null());
  CHECK(result["events_processed"] == 3);
  CHECK(result["streams_created"] == 2);
  CHECK(result["agent_records_promoted"] == 1);
  CHECK(result["competences"] == 0);

  Interner strings;
  CHECK(strings.intern("a") == 0);
  CHECK(strings.intern("b") == 1);
  CHECK(strings.intern("a") == 0);
  CHECK(strings.text(1) == "b");
}
