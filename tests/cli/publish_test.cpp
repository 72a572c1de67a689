// reflectctl end to end: the real reflectd and reflectctl binaries as child processes, a
// database checked with SQLite; plus unit tests of reflectctl's line and reply handling.
//
// Needs REFLECTD_BIN, REFLECTCTL_BIN and REFLECTD_DATA_DIR (compile definitions).

#include <SQLiteCpp/SQLiteCpp.h>
#include <catch2/catch.hpp>
#include <csignal>
#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/endpoints.hpp"
#include "cli/event_line.hpp"
#include "cli/line_reader.hpp"
#include "cli/message_builder.hpp"
#include "cli/reply.hpp"
#include "common/sha256.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using reflectd::test::ChildProcess;
using reflectd::test::RunResult;
using reflectd::test::TempDir;

const std::string kLibzmq = std::string(REFLECTD_DATA_DIR) + "/libzmq-commits.jsonl";
const std::string kTrajectories = std::string(REFLECTD_DATA_DIR) + "/swe-agent-trajectories.jsonl";
constexpr std::int64_t kLibzmqEvents = 8604;
constexpr std::int64_t kTrajectoryEvents = 448;

// A valid event without an id: reflectctl gives it "line:<sha256>".
std::string observation(int n) {
  return R"({"schema_version":1,"source":"agent","kind":"observation","namespace":"cli-test",)"
         R"("content":"observation number )" +
         std::to_string(n) + R"( made by the reflectctl test"})";
}

// reflectd as a child process, every socket on ipc:// inside its own temp dir.
class DaemonProcess {
 public:
  DaemonProcess() {
    const std::string d = dir_.path().string();
    config_ = dir_.file("reflectd.yaml");
    reflectd::test::write_text_file(
        config_,
        "log: {level: warn}\n"
        "bus: {ingest: [\"ipc://" +
            d + "/ingest\"], push: [\"ipc://" + d +
            "/push\"], "
            "notify: [\"ipc://" +
            d + "/notify\"], control: [\"ipc://" + d +
            "/control\"]}\n"
            "store: {path: \"" +
            dir_.file("reflectd.db") +
            "\"}\n"
            "daemon: {stats_interval_ms: 100, metrics_listen: \"127.0.0.1:0\"}\n"
            "http: {listen: \"127.0.0.1:0\"}\n"
            // No background job: a slow (sanitized) cluster run
            // holds the write lock past busy_timeout_ms.
            "jobs: {consolidate: {enabled: false}, decay: {enabled: "
            "false}, cluster: {enabled: false}, importance: "
            "{enabled: false}, medallion: {enabled: false}}\n");
    child_.emplace(std::vector<std::string>{REFLECTD_BIN, "--config", config_},
                   reflectd::test::SpawnOptions{"", "", dir_.file("daemon.log")});
    const bool ready = reflectd::test::wait_until(
        [this] {
          return !child_->running() || ctl({"status", "--timeout-ms", "200"}).status.code == 0;
        },
        15s, 50ms);
    INFO("daemon log:\n" << log());
    REQUIRE(child_->running());
    REQUIRE(ready);
  }

  /// Runs reflectctl against this daemon: REFLECTCTL_BIN --config <config> args...
  RunResult ctl(std::vector<std::string> args, const std::string& stdin_path = "") const {
    // A reply waits behind the whole window; sanitized builds on a busy machine take
    // longer than publish's 5 s default, and a resend would change the counts checked.
    if (args.front() == "publish") args.insert(args.begin() + 1, {"--timeout-ms", "60000"});
    args.insert(args.begin(), {REFLECTCTL_BIN, "--config", config_});
    return reflectd::test::run_process(args, 120s, stdin_path);
  }

  /// ctl() with --json, expecting a JSON summary on stdout.
  json ctl_json(std::vector<std::string> args, int expected_exit) const {
    args.emplace_back("--json");
    const RunResult run = ctl(args);
    INFO("stdout:\n" << run.out << "\nstderr:\n" << run.err);
    REQUIRE_FALSE(run.timed_out);
    REQUIRE(run.status.code == expected_exit);
    return json::parse(run.out);
  }

  std::int64_t rows(const std::string& table) const {
    SQLite::Database db(dir_.file("reflectd.db"), SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT count(*) FROM " + table).getInt64();
  }

  /// SIGTERM, then the exit status (-1 if it did not exit within 15 s).
  int stop() {
    child_->send_signal(SIGTERM);
    const auto status = child_->wait_for(15s);
    return status ? status->code : -1;
  }

  std::string log() const { return reflectd::test::read_text_file(dir_.file("daemon.log")); }
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  TempDir dir_;
  std::string config_;
  std::optional<ChildProcess> child_;  // After dir_: killed and reaped before dir_ goes.
};

}  // namespace

TEST_CASE("publish stores both data sets once; publishing again stores nothing new", "[cli][e2e]") {
  DaemonProcess daemon;
  const json first = daemon.ctl_json({"publish", kLibzmq, kTrajectories}, 0);
  CHECK(first["files"] == 2);
  CHECK(first["events"] == kLibzmqEvents + kTrajectoryEvents);
  CHECK(first["stored"] == kLibzmqEvents + kTrajectoryEvents);
  CHECK(first["duplicate"] == 0);
  CHECK(first["rejected"] == 0);
  CHECK(first["unacknowledged"] == 0);
  CHECK(daemon.rows("events") == kLibzmqEvents + kTrajectoryEvents);

  const json second = daemon.ctl_json({"publish", "--batch", "37", kLibzmq, kTrajectories}, 0);
  CHECK(second["stored"] == 0);
  CHECK(second["duplicate"] == kLibzmqEvents + kTrajectoryEvents);
  CHECK(daemon.rows("events") == kLibzmqEvents + kTrajectoryEvents);
  CHECK(daemon.stop() == 0);
}

TEST_CASE("a malformed line is rejected at its file:line and the rest is stored", "[cli][e2e]") {
  DaemonProcess daemon;
  const std::string path = daemon.file("mixed.jsonl");
  reflectd::test::write_text_file(path, observation(1) + "\n" + observation(2) + "\n" +
                                            "{\"kind\": oops\n\n" + observation(3) + "\r\n");
  const json first = daemon.ctl_json({"publish", path}, 1);
  CHECK(first["events"] == 4);
  CHECK(first["stored"] == 3);
  CHECK(first["rejected"] == 1);
  REQUIRE(first["rejections"].size() == 1);
  CHECK(first["rejections"][0]["file"] == path);
  CHECK(first["rejections"][0]["line"] == 3);
  CHECK_THAT(first["rejections"][0]["error"].get<std::string>(), Catch::Contains("JSON"));
  CHECK(daemon.rows("events") == 3);

  SECTION("line ids make a re-run idempotent") {
    const json again = daemon.ctl_json({"publish", "--batch", "1", path}, 1);
    CHECK(again["stored"] == 0);
    CHECK(again["duplicate"] == 3);
    CHECK(daemon.rows("events") == 3);
    SQLite::Database db(daemon.file("reflectd.db"), SQLite::OPEN_READONLY);
    CHECK(db.execAndGet("SELECT count(*) FROM events WHERE uid = '" +
                        reflectd::cli::line_id(observation(1)) + "'")
              .getInt64() == 1);
  }
  SECTION("the text summary names the rejected line") {
    const RunResult run = daemon.ctl({"publish", path});
    CHECK(run.status.code == 1);
    CHECK_THAT(run.out, Catch::Contains("rejected        1") && Catch::Contains(path + ":3: "));
  }
  CHECK(daemon.stop() == 0);
}

TEST_CASE("publish reads standard input and --push reaches the PULL socket", "[cli][e2e]") {
  DaemonProcess daemon;
  const RunResult piped = daemon.ctl({"publish", "--json", "-"}, kTrajectories);
  INFO(piped.err);
  REQUIRE(piped.status.code == 0);
  CHECK(json::parse(piped.out)["stored"] == kTrajectoryEvents);

  const json pushed = daemon.ctl_json({"publish", "--push", kLibzmq}, 0);
  CHECK(pushed["mode"] == "push");
  CHECK(pushed["events"] == kLibzmqEvents);
  CHECK(reflectd::test::wait_until(
      [&] { return daemon.rows("events") == kLibzmqEvents + kTrajectoryEvents; }, 20s, 50ms));
  CHECK(daemon.stop() == 0);
}

TEST_CASE("status answers with the daemon's counters", "[cli][e2e]") {
  DaemonProcess daemon;
  daemon.ctl_json({"publish", kTrajectories}, 0);
  const json status = daemon.ctl_json({"status"}, 0);
  CHECK(status["ok"] == true);
  CHECK(status["events"]["stored"] == kTrajectoryEvents);
  const RunResult table = daemon.ctl({"status"});
  CHECK(table.status.code == 0);
  CHECK_THAT(table.out, Catch::Contains("events stored") && Catch::Contains("448") &&
                            Catch::Contains("8192 bytes"));
  CHECK(daemon.stop() == 0);
}

TEST_CASE("reflectctl exit statuses without a daemon", "[cli][e2e]") {
  const TempDir dir;
  const std::string nowhere = "ipc://" + dir.file("absent");
  const auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), REFLECTCTL_BIN);
    return reflectd::test::run_process(args, 30s);
  };
  CHECK(run({"--ingest", nowhere, "publish", "--timeout-ms", "200", kTrajectories}).status.code ==
        3);
  CHECK(run({"--control", nowhere, "status", "--timeout-ms", "200"}).status.code == 3);
  CHECK(run({"publish", "--batch", "0", kTrajectories}).status.code == 2);
  CHECK(run({"publish", dir.file("missing.jsonl")}).status.code == 2);
  CHECK(run({"frobnicate"}).status.code == 2);
  CHECK(run({"--help"}).status.code == 0);
}

TEST_CASE("check_line classifies lines and finds a top-level id", "[cli]") {
  using reflectd::cli::check_line;
  using reflectd::cli::LineShape;
  CHECK(check_line("").shape == LineShape::kBlank);
  CHECK(check_line(" \t ").shape == LineShape::kBlank);
  CHECK(check_line(R"({"a":1})").shape == LineShape::kObject);
  CHECK_FALSE(check_line(R"({"a":{"id":1}})").has_id);
  CHECK(check_line(R"( {"x":[1,{"id":2}],"id":"e1"} )").has_id);
  CHECK(check_line(R"({"\u0069d":"e1"})").has_id);
  CHECK(check_line("[{}]").shape == LineShape::kOther);
  CHECK(check_line("42").shape == LineShape::kOther);
  CHECK(check_line(R"({"a":1} x)").shape == LineShape::kOther);
  CHECK(check_line(R"({"a":)").shape == LineShape::kOther);
}

TEST_CASE("with_line_id splices the id in as the first member", "[cli]") {
  using reflectd::cli::with_line_id;
  const std::string line = R"(  {"kind":"task"})";
  const std::string id = "line:" + reflectd::sha256_hex(line);
  CHECK(with_line_id(line) == R"(  {"id":")" + id + R"(","kind":"task"})");
  CHECK(with_line_id("{ }") == R"({"id":")" + reflectd::cli::line_id("{ }") + R"(" })");
  CHECK(json::parse(with_line_id(line))["id"] == id);
}

TEST_CASE("outcomes_of_reply maps results back to events", "[cli]") {
  using reflectd::cli::Outcome;
  using reflectd::cli::outcomes_of_reply;
  const auto batch = outcomes_of_reply(
      R"({"ok":false,"results":[{"index":1,"id":"b","status":"rejected","error":"kind: bad"},)"
      R"({"index":0,"id":"a","seq":7,"status":"stored"},{"index":2,"id":"c","seq":3,"status":"duplicate"}]})",
      3);
  REQUIRE(batch.size() == 3);
  CHECK(batch[0].outcome == Outcome::kStored);
  CHECK(batch[1].outcome == Outcome::kRejected);
  CHECK(batch[1].error == "kind: bad");
  CHECK(batch[2].outcome == Outcome::kDuplicate);
  const auto whole =
      outcomes_of_reply(R"({"ok":false,"results":[],"error":"message: too large"})", 2);
  CHECK(whole[1].outcome == Outcome::kRejected);
  CHECK(whole[1].error == "message: too large");
  CHECK(outcomes_of_reply("not json", 1)[0].outcome == Outcome::kRejected);
  CHECK(outcomes_of_reply(R"({"ok":true,"results":[]})", 1)[0].outcome == Outcome::kRejected);
}

TEST_CASE("MessageBuilder batches object lines and isolates the others", "[cli]") {
  const TempDir dir;
  const std::string path = dir.file("in.jsonl");
  reflectd::test::write_text_file(path,
                                  "{\"id\":\"a\"}\n{\"id\":\"b\"}\n\nnope\n{\"id\":\"c\"}\n"
                                  "{\"id\":\"d\"}\n{\"id\":\"e\"}\n");
  reflectd::cli::LineReader reader({path});
  reflectd::cli::MessageBuilder builder(reader, {2, 1 << 20});
  std::vector<std::string> payloads;
  std::vector<std::uint64_t> first_lines;
  while (auto message = builder.next()) {
    payloads.push_back(message->payload);
    first_lines.push_back(message->events.front().line);
  }
  CHECK(payloads == std::vector<std::string>{R"([{"id":"a"},{"id":"b"}])", "nope",
                                             R"([{"id":"c"},{"id":"d"}])", R"([{"id":"e"}])"});
  CHECK(first_lines == std::vector<std::uint64_t>{1, 4, 5, 7});
}

TEST_CASE("connectable_endpoint reaches wildcard binds on loopback", "[cli]") {
  using reflectd::cli::connectable_endpoint;
  using reflectd::cli::Role;
  CHECK(connectable_endpoint("tcp://*:7701", Role::kIngest) == "tcp://127.0.0.1:7701");
  CHECK(connectable_endpoint("tcp://0.0.0.0:7704", Role::kControl) == "tcp://127.0.0.1:7704");
  CHECK(connectable_endpoint("ipc:///run/reflectd/ingest", Role::kIngest) ==
        "ipc:///run/reflectd/ingest");
  CHECK_THROWS_WITH(connectable_endpoint("tcp://127.0.0.1:*", Role::kPush),
                    Catch::Contains("--push-endpoint"));
  CHECK_THROWS(connectable_endpoint("ipc://*", Role::kIngest));
}
