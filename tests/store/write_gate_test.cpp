// The write gate (store/write_gate.hpp): ingest has priority over the jobs for SQLite's single
// write lock. Its rules on their own, the writer's truthful error when a job keeps the lock,
// and a real daemon whose ingest commits interleave with a running cluster job.

#include <catch2/catch.hpp>
#include <zmq.hpp>

#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "daemon/settings.hpp"
#include "store/write_gate.hpp"
#include "store/writer.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"
#include "support/db_dump.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The writer side, entered on its own thread: the future says whether it got in.
std::future<bool> writer_enters(store::WriteGate& gate, std::int64_t timeout_ms) {
  return std::async(std::launch::async, [&gate, timeout_ms] {
    const bool entered = gate.writer_enter(timeout_ms);
    if (entered) gate.writer_exit();
    return entered;
  });
}

// Waits (without a deadline of its own: the test's timeout is the bound) for `condition`.
template <class F>
void await(F condition) {
  while (!condition()) std::this_thread::yield();
}

}  // namespace

TEST_CASE("write gate: a waiting writer makes the job inside yield, then gets in") {
  store::WriteGate gate(200, 1);
  REQUIRE(gate.job_enter(nullptr));
  CHECK_FALSE(gate.job_should_yield());  // nobody waits
  auto writer = writer_enters(gate, 600'000);
  // The writer is blocked until the job leaves; the job is told so once its slice is over.
  await([&] { return gate.job_should_yield(); });
  CHECK(writer.wait_for(0s) == std::future_status::timeout);
  gate.job_exit(true);
  CHECK(writer.get());
  CHECK(gate.stats().writer_waits == 1);
  CHECK(gate.stats().job_yields == 1);
  CHECK(gate.stats().writer_timeouts == 0);
}

TEST_CASE("write gate: a writer that cannot get in within its timeout gives up") {
  store::WriteGate gate(200, 20);
  REQUIRE(gate.job_enter(nullptr));
  CHECK_FALSE(writer_enters(gate, 5).get());
  CHECK(gate.stats().writer_timeouts == 1);
  gate.job_exit(false);
  CHECK(writer_enters(gate, 5).get());
}

TEST_CASE("write gate: a job waits for a busy writer, then goes first once overdue") {
  store::WriteGate gate(1, 60'000);  // the writer is never "quiet": only overdue jobs get in
  REQUIRE(gate.writer_enter(0));
  auto job = std::async(std::launch::async, [&gate] {
    const bool entered = gate.job_enter(nullptr);
    if (entered) {
      // Inside: the writer's next turn has to wait for us.
      const bool writer_got_in = gate.writer_enter(0);
      gate.job_exit(false);
      return entered && !writer_got_in;
    }
    return false;
  });
  CHECK(job.wait_for(0s) == std::future_status::timeout);  // not while the writer is inside
  gate.writer_exit();
  CHECK(job.get());
  CHECK(gate.stats().job_forced == 1);
  CHECK(gate.stats().job_turns == 1);
}

TEST_CASE("write gate: a cancelled job stops waiting") {
  store::WriteGate gate(60'000, 20);
  REQUIRE(gate.writer_enter(0));
  std::atomic<bool> cancelled{false};
  auto job = std::async(std::launch::async,
                        [&] { return gate.job_enter([&] { return cancelled.load(); }); });
  cancelled = true;
  CHECK_FALSE(job.get());
  gate.writer_exit();
  CHECK(gate.stats().job_turns == 0);
}

TEST_CASE("writer: a job keeping the lock past busy_timeout_ms is reported as such") {
  test::TempDir dir;
  SystemClock clock;
  store::WriteGate gate(200, 20);
  store::WriterOptions options;
  options.database = {dir.file("w.db"), "normal", 50};  // 50 ms busy timeout
  options.gate = &gate;
  store::Writer writer(options, clock);

  auto submit = [&] {
    std::promise<store::WriteResult> done;
    auto future = done.get_future();
    store::WriteRequest request;
    request.apply = [](SQLite::Database&) { return std::string("applied"); };
    request.on_done = [&done](store::WriteResult&& result) { done.set_value(std::move(result)); };
    const bool accepted = writer.submit(std::move(request));
    REQUIRE(accepted);
    return future.get();
  };
  REQUIRE(gate.job_enter(nullptr));  // a job's transaction that never ends
  const store::WriteResult refused = submit();
  CHECK(refused.storage_error == store::kJobBusyError);
  CHECK(refused.storage_error.find("another process") == std::string::npos);
  CHECK(refused.apply_result.empty());
  gate.job_exit(false);
  const store::WriteResult stored = submit();
  CHECK(stored.storage_error.empty());
  CHECK(stored.apply_result == "applied");
  CHECK(writer.stats().storage_errors == 1);
}

// Ingest while a job writes, with every part real: a daemon, ZeroMQ sockets, a SQLite file and
// the cluster job over 8,604 stored events, whose chunks are 5,000 events. Ingest keeps
// coming (one event per message, each sent when the previous one was acknowledged) while
// the job runs. Without the gate the job holds the write lock for a whole chunk and takes it
// back right after each commit, so an acknowledgement could only come at a chunk boundary
// (watermark 0, 5,000 or 8,604) or after the busy timeout as "storage unavailable". With it,
// every message is stored and acknowledgements arrive while the job's watermark stands
// inside its chunks: the job ended its transaction at the event where the writer asked.
TEST_CASE("daemon: ingest commits while the cluster job runs, between the job's events") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::disable_background_jobs(config);
  config.jobs.cluster.enabled = true;  // on demand only
  config.jobs.cluster.after_events = 0;
  config.jobs.cluster.idle_s = 0;
  config.jobs.cluster.interval_s = 604800;
  // Ingest comes back-to-back here, so the job gets in mostly as overdue; a short wait and a
  // long slice let it finish in seconds.
  config.jobs.write_wait_ms = 5;
  config.jobs.write_slice_ms = 50;
  {
    SystemClock clock;
    REQUIRE(test::load_corpus(config.store.path, {"libzmq-commits.jsonl"}, clock) == 8604);
  }
  test::RunningDaemon running(config);
  zmq::context_t context(1);
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  auto job =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  auto publisher =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  SQLite::Database reader(config.store.path, SQLite::OPEN_READONLY);
  reader.setBusyTimeout(5000);
  auto watermark = [&] {
    SQLite::Statement q(
        reader,
        "SELECT value FROM job_state WHERE job = 'cluster' AND namespace = 'libzmq' "
        "AND key = 'watermark'");
    return q.executeStep() ? std::stoll(q.getColumn(0).getString()) : 0;
  };

  const std::string run_request =
      json{{"cmd", "run"}, {"job", "cluster"}, {"namespace", "libzmq"}, {"wait", true}}.dump();
  job.send(zmq::buffer(run_request), zmq::send_flags::none);
  std::set<long long> seen;  // the job's committed watermark after each acknowledgement
  int stored = 0;
  int sent = 0;
  json run_reply;
  for (;;) {
    const std::string id = "probe-" + std::to_string(sent++);
    const json reply = test::ingest(publisher, json{{"id", id},
                                                    {"kind", "observation"},
                                                    {"namespace", "probe"},
                                                    {"content", "during the job"}}
                                                   .dump());
    REQUIRE(reply.is_object());
    INFO(reply.dump());
    REQUIRE(reply["results"][0]["status"] == "stored");
    ++stored;
    seen.insert(watermark());
    // The run's reply (it answers when the run ended) is the loop's end.
    zmq::pollitem_t item{job.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(0)) > 0) {
      std::vector<zmq::message_t> frames;
      REQUIRE(zmq::recv_multipart(job, std::back_inserter(frames)));
      run_reply = json::parse(frames.back().to_string());
      break;
    }
  }
  INFO("run: " << run_reply.dump());
  REQUIRE(run_reply["ok"] == true);
  CHECK(run_reply["run"]["result"]["events_processed"] == 8604);
  CHECK(watermark() == 8604);
  std::set<long long> inside;
  for (const long long w : seen) {
    if (w != 0 && w != 5000 && w != 8604) inside.insert(w);
  }
  INFO(stored << " acknowledgements during the run; watermarks seen inside chunks: "
              << inside.size());
  CHECK(inside.size() >= 2);
  const json status = test::control(control, {{"cmd", "status"}});
  CHECK(status["storage_errors"] == 0);
  CHECK(status["write_gate"]["writer_timeouts"] == 0);
  CHECK(status["write_gate"]["job_yields"].get<std::uint64_t>() >= inside.size());
  CHECK(status["events"]["stored"] == stored);
  CHECK(running.stop() == 0);
}
