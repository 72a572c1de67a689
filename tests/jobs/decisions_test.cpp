// Decisions found in the events: the extraction rules on hand-made messages and
// trajectories, and the consolidation job's ledger on a real SQLite file (supersession by the
// same problem, revert, rerun, agents' decisions not in conflict, confidence after decay).

#include <catch2/catch.hpp>

#include <atomic>
#include <limits>

#include "common/clock.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/decision_extraction.hpp"
#include "jobs/medallion.hpp"
#include "jobs/sql_functions.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace reflectd;
using nlohmann::json;

const std::int64_t kNow = *parse_rfc3339_us("2025-01-01T00:00:00Z");

std::optional<jobs::ExtractedDecision> from_commit(std::string_view content,
                                                   std::vector<std::string> files = {"src/a.cpp"}) {
  return jobs::decision_from_message("commit_change", content, files);
}

std::string commit(const std::string& id, const std::string& ts, const std::string& message,
                   const std::vector<std::string>& files) {
  return json{{"id", id},
              {"kind", "commit_change"},
              {"namespace", "repo"},
              {"agent_id", "dev"},
              {"timestamp", ts},
              {"content", message},
              {"context", {{"files", files}}}}
      .dump();
}

json run(SQLite::Database& db, const Clock& clock, bool with_decay = false) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  const config::Config cfg = config::defaults();
  json result = jobs::run_consolidation(ctx, daemon::consolidation_params(cfg));
  if (with_decay) {
    const json decay = jobs::run_decay(ctx, daemon::vitality_params(cfg.decay));
    INFO(decay.dump());
    CHECK(decay["knowledge_dormant"].get<int>() > 0);
  }
  return result;
}

struct Row {
  std::string status, title, rationale, superseded_by, supersedes;
  double confidence;
};

Row row(SQLite::Database& db, const std::string& id) {
  SQLite::Statement q(db,
                      "SELECT status, title, rationale, coalesce(superseded_by, ''), supersedes, "
                      "confidence FROM knowledge WHERE decision_id = ?1");
  q.bind(1, id);
  if (!q.executeStep()) return {"missing", "", "", "", "", 0};
  return {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
          q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getDouble()};
}

}  // namespace

TEST_CASE("decisions: problem and solution paragraphs in the message's own words") {
  constexpr std::array<std::string_view, 1> kProblem{"Problem:"};
  CHECK(jobs::labelled_paragraph("Problem: the ABI changed\nin two ways\n\nSolution: bump",
                                 kProblem) == "the ABI changed in two ways");
  CHECK(jobs::labelled_paragraph("Problem:\n  tests are slow\nSolution: x", kProblem) ==
        "tests are slow");
  CHECK(jobs::labelled_paragraph("no label here", kProblem).empty());

  const auto d = from_commit(
      "Problem: generates incompatible libzmq.so.3.1.0\n\nSee https://bugs.debian.org/743508\n\n"
      "Solution: generate libzmq.so.4.0.0 library instead.\n\nThis should be backported");
  REQUIRE(d);
  CHECK(d->statement ==
        "Generates incompatible libzmq.so.3.1.0: generate libzmq.so.4.0.0 library instead.");
  CHECK(d->rationale == "Generates incompatible libzmq.so.3.1.0");
  CHECK(d->confidence == Approx(0.6));
  CHECK_FALSE(d->verified);

  // A short solution is stated with its problem; a test change verifies it (+0.2).
  const auto short_one =
      from_commit("Problem: Unused variables warnings\n\nSolution: fix them", {"tests/test_x.cpp"});
  REQUIRE(short_one);
  CHECK(short_one->statement == "Unused variables warnings: fix them");
  CHECK(short_one->verified);
  CHECK(short_one->confidence == Approx(0.8));
  // Issue:/Fix: labels; a message that is no change is only stated (0.5).
  const auto message = jobs::decision_from_message(
      "observation", "Issue: the cache grows without bound\nFix: evict the oldest entries first",
      {});
  REQUIRE(message);
  CHECK(message->statement == "Evict the oldest entries first");
  CHECK(message->confidence == Approx(0.5));
  // Either label missing: no decision.
  CHECK_FALSE(from_commit("Problem: something is off"));
  CHECK_FALSE(from_commit("Solution: do it anyway"));
  CHECK_FALSE(from_commit("fix typo"));
}

TEST_CASE("decisions: a successful trajectory's last change, in its own reasoning") {
  const std::string task =
      "We're currently solving the following issue within our repository. Here's the issue "
      "text:\nISSUE:\nTimeDelta serialization precision\nHi there!\n";
  std::vector<jobs::TrajectoryCall> calls{
      {"create", "create reproduce.py", "Let's first start by reproducing the results.", true},
      {"python", "python reproduce.py", "Now let's run the code.", true},
      {"edit", "edit 1475:1475 ...",
       "We are now looking at the relevant section. To fix this issue, we should round the "
       "result. Let's make the edit.",
       false},
      {"edit", "edit 1475:1475 ...",
       "My edit command did not use the proper indentation, I will fix my syntax.", true},
      {"python", "python reproduce.py", "Let's check the output now.", true},
      {"submit", "submit", "The fix works, submitting.", true}};
  const auto d = jobs::decision_from_trajectory(task, calls);
  REQUIRE(d);
  // The repair of the edit command is skipped; the thought is quoted from what it decides.
  CHECK(d->statement == "To fix this issue, we should round the result. Let's make the edit.");
  CHECK(d->call_index == 2);
  CHECK(d->rationale == "TimeDelta serialization precision");
  CHECK(d->verified);  // python reproduce.py succeeded after the change
  CHECK(d->confidence == Approx(0.8));

  calls[4].succeeded = false;
  CHECK(jobs::decision_from_trajectory(task, calls)->confidence == Approx(0.6));
  CHECK(jobs::task_problem("The CTF challenge is a cryptography problem named \"Katy\", worth 10 "
                           "points. The description is: x") ==
        "The CTF challenge is a cryptography problem named \"Katy\", worth 10 points.");
  CHECK(jobs::task_problem("Fix the build\nmore") == "Fix the build");
  CHECK_FALSE(jobs::decision_from_trajectory(
      task, std::vector<jobs::TrajectoryCall>{{"submit", "submit", "done", true}}));
}

TEST_CASE("decisions job: supersession by problem, revert, rerun, decay keeps confidence") {
  test::TempDir dir;
  const std::string path = dir.file("d.db");
  FakeClock clock(kNow);
  const std::vector<std::string> lines{
      commit("c1", "2024-01-10T10:00:00Z",
             "Problem: connect gives up after 30 s\n\nSolution: retry for 60 s", {"doc/NEWS"}),
      commit("c2", "2024-02-10T10:00:00Z",
             "Problem: socket leaks on close\n\nSolution: release the pipe in term()",
             {"src/socket.cpp", "tests/test_close.cpp"}),
      commit("c3", "2024-03-10T10:00:00Z",
             "Problem: connect gives up after 60 s\n\nSolution: retry for 120 s", {"doc/NEWS"}),
      commit("c4", "2024-04-10T10:00:00Z",
             "Revert \"Problem: socket leaks on close\"\n\nThis reverts commit c2.",
             {"src/socket.cpp"}),
      commit("c5", "2024-05-10T10:00:00Z", "Merge pull request #1\n\nProblem: a\n\nSolution: b",
             {"src/socket.cpp"})};
  // c5 is a merge commit: context.merge.
  std::vector<std::string> stored = lines;
  json merge = json::parse(stored[4]);
  merge["context"]["merge"] = true;
  stored[4] = merge.dump();
  REQUIRE(test::load_lines(path, stored, clock) == 5);
  auto db = store::open_database({path, "normal", 5000}, store::Access::kWriter);
  const model::VitalityParams vitality = daemon::vitality_params(config::defaults().decay);
  jobs::register_sql_functions(db, vitality);  // keeps a pointer to `vitality`

  const json first = run(db, clock);
  CHECK(first["decisions_extracted"] == 3);
  CHECK(first["decisions_falsified"] == 1);
  const Row bump1 = row(db, "decision:c1");
  const Row bump2 = row(db, "decision:c3");
  const Row leak = row(db, "decision:c2");
  // The same problem (numbers fold to <n>) answered again: the later one supersedes.
  CHECK(bump1.status == "superseded");
  CHECK(bump1.superseded_by == "decision:c3");
  CHECK(bump2.status == "active");
  CHECK(bump2.supersedes == R"(["decision:c1"])");
  CHECK(bump2.title == "Connect gives up after 60 s: retry for 120 s");
  CHECK(bump2.confidence == Approx(0.6));
  // Reverted: falsified, not deleted.
  CHECK(leak.status == "falsified");
  CHECK(leak.title == "Release the pipe in term()");
  CHECK(leak.rationale == "Socket leaks on close");
  CHECK(row(db, "decision:c5").status == "missing");
  CHECK(db.execAndGet("SELECT count(*) FROM audit_log WHERE record_type = 'knowledge' AND "
                      "record_id LIKE 'decision:%'")
            .getInt() == 5);  // three creations, one supersession, one revert

  // A rerun changes nothing; months later the decay keeps 0.8 of the confidence.
  CHECK(run(db, clock)["decisions_extracted"] == 0);
  clock.advance_us(365 * kDayUs);
  run(db, clock, true);
  CHECK(row(db, "decision:c3").confidence == Approx(0.48));

  // An agent's own decision on the same target is admitted: the job's decisions are no
  // conflict for the write-time router (they are provenance internal).
  const std::string target =
      db.execAndGet("SELECT target FROM knowledge WHERE decision_id = 'decision:c3'").getString();
  REQUIRE(!target.empty());
  const std::string agent_decision =
      json{
          {"id", "d1"},
          {"kind", "decision"},
          {"namespace", "repo"},
          {"agent_id", "agent"},
          {"timestamp", "2024-06-01T00:00:00Z"},
          {"content", "Release from a branch per minor version"},
          {"context", {{"target", target}, {"title", "Branches"}, {"rationale", "Patch releases"}}}}
          .dump();
  CHECK(test::load_lines(path, {agent_decision}, clock) == 1);
  CHECK(row(db, "d1").status == "active");
}

TEST_CASE("decisions job: a revert that names a commit id falsifies that commit's decisions") {
  test::TempDir dir;
  const std::string path = dir.file("r.db");
  FakeClock clock(kNow);
  auto sha_commit = [](const std::string& id, const std::string& sha, const std::string& ts,
                       const std::string& message) {
    json line = json::parse(commit(id, ts, message, {"src/a.cpp"}));
    line["context"]["commit"] = sha;
    return line.dump();
  };
  // The reverts quote no subject of an earlier commit, so only the commit id can tell.
  const std::vector<std::string> lines{
      sha_commit("c1", "ABC1234FFF", "2024-01-10T10:00:00Z", "Use epoll on Linux"),
      sha_commit("c2", "abd0000000", "2024-02-10T10:00:00Z", "Switch to CMake presets"),
      sha_commit("c3", "e000000001", "2024-03-10T10:00:00Z",
                 "Go back to select\n\nThis reverts commit abc1234."),
      sha_commit("c4", "e000000002", "2024-04-10T10:00:00Z",
                 "Undo an older change\n\nThis reverts commit abcd999.")};
  REQUIRE(test::load_lines(path, lines, clock) == 4);
  auto db = store::open_database({path, "normal", 5000}, store::Access::kWriter);
  const model::VitalityParams vitality = daemon::vitality_params(config::defaults().decay);
  jobs::register_sql_functions(db, vitality);  // keeps a pointer to `vitality`
  run(db, clock);
  // The id is matched by its prefix, in lower case; "abcd999" is no prefix of either id.
  CHECK(row(db, "decision:c1").status == "falsified");
  CHECK(row(db, "decision:c2").status == "active");
  CHECK(db.execAndGet("SELECT source_commit FROM extracted_decisions WHERE decision_id = "
                      "'decision:c1'")
            .getString() == "abc1234fff");

  // A database migrated from before the column gets it from the decisions' events.
  db.exec("UPDATE extracted_decisions SET source_commit = NULL; PRAGMA user_version = 43");
  REQUIRE(store::migrate(db) == store::latest_schema_version());
  CHECK(db.execAndGet("SELECT count(*) FROM extracted_decisions WHERE source_commit IS NULL")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT source_commit FROM extracted_decisions WHERE decision_id = "
                      "'decision:c2'")
            .getString() == "abd0000000");
}

TEST_CASE("open questions: a question asked and not answered, across chunks and runs") {
  test::TempDir dir;
  const std::string path = dir.file("q.db");
  FakeClock clock(kNow);
  auto said = [](const std::string& id, const std::string& agent, const std::string& kind,
                 const std::string& episode, const std::string& ts, const std::string& text) {
    return json{{"id", id},          {"kind", kind},    {"namespace", "talk"},
                {"agent_id", agent}, {"timestamp", ts}, {"episode_id", episode},
                {"content", text}}
        .dump();
  };
  REQUIRE(test::load_lines(
              path,
              {said("q1", "ana", "prompt", "e1", "2024-06-01T10:00:00Z",
                    "The deploy failed twice.\nCan the release go out on Friday?"),
               said("q2", "ana", "prompt", "e2", "2024-06-02T10:00:00Z", "Is the build green?"),
               said("a2", "bot", "prompt", "e2", "2024-06-02T10:01:00Z", "Yes, since 09:40.")},
              clock) == 3);
  auto db = store::open_database({path, "normal", 5000}, store::Access::kWriter);
  const model::VitalityParams vitality = daemon::vitality_params(config::defaults().decay);
  jobs::register_sql_functions(db, vitality);
  run(db, clock);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  jobs::MedallionParams params;
  jobs::run_medallion_refresh(ctx, params);
  auto questions = [&] {
    const json m = json::parse(
        db.execAndGet("SELECT content_json FROM medallions WHERE id = 'med:talk'").getString());
    return m["open_questions"];
  };
  REQUIRE(questions().size() == 1);
  CHECK(questions()[0]["question"] ==
        "Unanswered: \"Can the release go out on Friday?\" (asked by ana on 2024-06-01)");
  // Answered in a later run (its own chunk): the question is no longer open.
  REQUIRE(test::load_lines(path,
                           {said("a1", "lee", "conversation", "e1", "2024-06-03T09:00:00Z",
                                 "Yes, Friday works.")},
                           clock) == 1);
  run(db, clock);
  jobs::run_medallion_refresh(ctx, params);
  CHECK(questions().empty());
  CHECK(db.execAndGet("SELECT count(*) FROM unanswered_questions").getInt() == 0);
}
