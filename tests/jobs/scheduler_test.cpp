// The scheduler under a fake clock: intervals with jitter, triggers, failures and timeouts.

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

TEST_CASE("scheduler: interval with a stable jitter, rescheduled when a run ends") {
  test::TempDir dir;
  FakeClock clock;
  auto db = open_writer(dir.file("s.db"));
  std::vector<std::string> ran;
  jobs::Job job{"tick", {true, 60, 50, 10, 0, 0}, [&](jobs::JobContext& ctx) {
                  ran.push_back(ctx.trigger);
                  clock.advance_us(5 * kSecond);  // the run takes 5 s
                  return json{{"ticks", 1}};
                }};
  const double jitter = jobs::Scheduler::jitter_fraction("tick");
  CHECK(jitter == jobs::Scheduler::jitter_fraction("tick"));
  CHECK(jitter >= 0.0);
  CHECK(jitter < 1.0);
  const auto offset = static_cast<std::int64_t>(jitter * 0.5 * 60 * kSecond);
  std::vector<json> published;
  jobs::Scheduler scheduler(db, clock, {job}, [&](const std::string& topic, json payload) {
    CHECK(topic == "job.tick");
    published.push_back(std::move(payload));
  });
  CHECK(*scheduler.next_due_us() == offset);
  if (offset > 0) {
    clock.advance_us(offset - 1);
    CHECK(scheduler.run_due() == 0);
    clock.advance_us(1);
  }
  CHECK(scheduler.run_due() == 1);
  // Next run: end of the run + interval + the same jitter.
  CHECK(*scheduler.next_due_us() == offset + 5 * kSecond + 60 * kSecond + offset);
  clock.advance_us(60 * kSecond + offset - 1);
  CHECK(scheduler.run_due() == 0);
  clock.advance_us(1);
  CHECK(scheduler.run_due() == 1);
  CHECK(ran == std::vector<std::string>{"interval", "interval"});
  REQUIRE(published.size() == 2);
  CHECK(published[0]["status"] == "ok");
  CHECK(published[0]["result"] == json{{"ticks", 1}});
  CHECK(published[0]["finished_us"].get<std::int64_t>() -
            published[0]["started_us"].get<std::int64_t>() ==
        5 * kSecond);
  const auto runs = jobs::recent_runs(db, 10);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].status == "ok");
  CHECK(runs[0].trigger == "interval");
}

TEST_CASE("scheduler: event-count, idle and on-demand triggers") {
  test::TempDir dir;
  FakeClock clock;
  auto db = open_writer(dir.file("s.db"));
  std::vector<std::string> ran;
  jobs::Job job{"work", {true, 86400, 0, 10, 100, 30}, [&](jobs::JobContext& ctx) {
                  ran.push_back(ctx.trigger + ":" + ctx.ns);
                  return json::object();
                }};
  jobs::Scheduler scheduler(db, clock, {job}, {});
  scheduler.run_due();  // the first interval run (jitter 0)
  ran.clear();
  scheduler.events_committed("a", 99);
  CHECK(scheduler.run_due() == 0);
  scheduler.events_committed("a", 1);
  CHECK(scheduler.run_due() == 1);  // 100 new events in namespace a
  scheduler.events_committed("b", 5);
  clock.advance_us(29 * kSecond);
  CHECK(scheduler.run_due() == 0);
  clock.advance_us(1 * kSecond);
  CHECK(scheduler.run_due() == 1);  // idle 30 s with unprocessed events
  CHECK(scheduler.run_due() == 0);  // nothing left unprocessed
  bool answered = false;
  CHECK_FALSE(scheduler.request(
      "work", "c", [&](const jobs::RunRecord& run) { answered = run.status == "ok"; }));
  CHECK(scheduler.request("nope", "", {}) == "unknown job 'nope'; known: work");
  CHECK(scheduler.run_due() == 1);
  CHECK(answered);
  CHECK(ran == std::vector<std::string>{"events:a", "idle:", "demand:c"});
}

TEST_CASE("scheduler: failures, timeouts, skips and interrupted runs are recorded") {
  test::TempDir dir;
  FakeClock clock;
  auto db = open_writer(dir.file("s.db"));
  jobs::Job failing{"failing", {true, 3600, 0, 10, 0, 0}, [](jobs::JobContext&) -> json {
                      throw std::runtime_error("boom");
                    }};
  jobs::Job slow{"slow", {true, 3600, 0, 10, 0, 0}, [&](jobs::JobContext& ctx) -> json {
                   for (;;) {
                     clock.advance_us(kSecond);  // each step takes 1 s of fake time
                     ctx.cancel.check();
                   }
                 }};
  jobs::Job disabled{
      "disabled", {false, 3600, 0, 10, 0, 0}, [](jobs::JobContext&) { return json::object(); }};
  jobs::Job empty{"empty", {true, 3600, 0, 10, 0, 0}, [](jobs::JobContext&) {
                    return json{{"skipped", true}, {"skip_reason", "no new events"}};
                  }};
  jobs::Scheduler scheduler(db, clock, {failing, slow, disabled, empty}, {});
  CHECK(scheduler.run_due() == 3);  // disabled jobs are not scheduled
  CHECK_FALSE(scheduler.request("disabled", "", {}));
  CHECK(scheduler.run_due() == 1);
  std::map<std::string, jobs::RunRecord> by_job;
  for (const auto& run : jobs::recent_runs(db, 10)) by_job[run.job] = run;
  CHECK(by_job["failing"].status == "failed");
  CHECK(by_job["failing"].error == "boom");
  CHECK(by_job["slow"].status == "timeout");
  CHECK(by_job["slow"].finished_us - by_job["slow"].started_us == 10 * kSecond);
  CHECK(by_job["empty"].status == "skipped");
  CHECK(by_job["disabled"].status == "skipped");
  CHECK(by_job["disabled"].trigger == "demand");
  // A run the process died in is found at the next start.
  db.exec(
      "INSERT INTO job_runs (job, trigger, started_us, status) VALUES ('slow', 'interval', 1, "
      "'running')");
  jobs::Scheduler restarted(db, clock, {}, {});
  CHECK(restarted.recover_interrupted() == 1);
  CHECK(jobs::recent_runs(db, 1)[0].status == "interrupted");
}
