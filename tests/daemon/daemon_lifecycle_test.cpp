// reflectd's lifecycle end to end, with the real binary as a child process: systemd
// notifications (READY, RELOADING, STOPPING) read from a NOTIFY_SOCKET the test owns, SIGHUP
// with a broken and a fixed configuration, SIGTERM in the middle of a stream of
// acknowledged events, the command-line flags, and the job commands through reflectctl.
//
// No fixed sleeps: every wait is on a datagram, a reply or a process exit, with a deadline.
// Needs REFLECTD_BIN, REFLECTCTL_BIN, REFLECTD_DATA_DIR and REFLECTD_SOURCE_DIR.

#include <SQLiteCpp/SQLiteCpp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <ctime>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "jobs/scheduler.hpp"
#include "support/notify_socket.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using reflectd::test::ChildProcess;
using reflectd::test::field;
using reflectd::test::has_line;
using reflectd::test::NotifySocket;
using reflectd::test::RunResult;
using reflectd::test::TempDir;
using SteadyClock = std::chrono::steady_clock;

const std::string kLibzmq = std::string(REFLECTD_DATA_DIR) + "/libzmq-commits.jsonl";
constexpr std::int64_t kLibzmqEvents = 8604;

// Scheduled job runs are kept out of the tests' way: consolidate runs only on demand (with
// interval_s 604800 and jitter_pct 100 its first interval run comes
// jitter_fraction("consolidate") * 604800 s after the start, checked below to be more than a
// day; the events and idle triggers are off) and every other job is disabled.
constexpr std::int64_t kJobIntervalS = 604800;

// The job names of the configuration's key table (jobs.<name>.<key>).
std::vector<std::string> configured_jobs() {
  std::vector<std::string> names;
  for (const auto& spec : reflectd::config::key_table()) {
    const std::string_view path = spec.path;
    if (!path.starts_with("jobs.")) continue;
    const std::string_view rest = path.substr(5);
    if (rest.find('.') == std::string_view::npos) continue;  // jobs.write_wait_ms: not a job
    const std::string name(rest.substr(0, rest.find('.')));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

// A configuration with every socket on ipc:// in `dir`, the database in `dir` and no
// scheduled job runs (see kJobIntervalS).
std::string config_text(const TempDir& dir, const std::string& log_level) {
  std::string text = "log:\n  level: " + log_level + "\nbus:\n";
  for (const std::string socket : {"ingest", "push", "notify", "control"}) {
    text += "  " + socket + ": [\"ipc://" + dir.path().string() + "/" + socket + "\"]\n";
  }
  text += "store:\n  path: \"" + dir.file("reflectd.db") + "\"\n";
  text += "daemon:\n  stats_interval_ms: 100\n  metrics_listen: \"127.0.0.1:0\"\n";
  text += "http:\n  listen: \"127.0.0.1:0\"\n";
  text += "jobs:\n";
  for (const std::string& name : configured_jobs()) {
    const std::string on_demand_only = "{interval_s: " + std::to_string(kJobIntervalS) +
                                       ", jitter_pct: 100, after_events: 0, idle_s: 0}";
    text += "  " + name + ": " +
            (name == "consolidate" || name == "medallion" ? on_demand_only : "{enabled: false}") +
            "\n";
  }
  return text;
}

// One request on a fresh DEALER; nullopt when no reply came within `timeout`.
std::optional<json> request(const std::string& endpoint, const json& body,
                            std::chrono::milliseconds timeout) {
  zmq::context_t context(1);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  dealer.send(zmq::buffer(body.is_string() ? body.get<std::string>() : body.dump()),
              zmq::send_flags::none);
  zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) <= 0) return std::nullopt;
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait) ||
      frames.empty()) {
    return std::nullopt;
  }
  return json::parse(frames.back().to_string_view(), nullptr, false);
}

// reflectd as a child process with its own NOTIFY_SOCKET, started on config_text().
class Lifecycle {
 public:
  Lifecycle() : notify_(dir_.file("notify.sock")) {
    config_ = dir_.file("reflectd.yaml");
    write_config(config_for("warn"));
    // env(1) execs reflectd in place: the child's pid is the daemon's.
    child_.emplace(std::vector<std::string>{"/usr/bin/env", "NOTIFY_SOCKET=" + notify_.path(),
                                            REFLECTD_BIN, "--config", config_},
                   reflectd::test::SpawnOptions{"", "", dir_.file("daemon.log")});
    // Until READY=1, or the daemon died, or 20 s passed.
    reflectd::test::wait_until(
        [this] {
          ready_ = notify_.next_with("READY=1", 100ms);
          return ready_ || !child_->running();
        },
        20s, 0ms);
    INFO("daemon log:\n" << log() << "\nnotifications:\n" << notify_.history());
    REQUIRE(ready_);
  }

  /// The datagram that carried the first READY=1.
  const std::string& ready_datagram() const { return *ready_; }
  NotifySocket& notify() { return notify_; }
  ChildProcess& child() { return *child_; }

  std::string endpoint(const std::string& name) const {
    return "ipc://" + dir_.path().string() + "/" + name;
  }
  std::optional<json> status(std::chrono::milliseconds timeout = 5s) const {
    return request(endpoint("control"), {{"cmd", "status"}}, timeout);
  }
  /// config_text() for this daemon's directory.
  std::string config_for(const std::string& log_level) const {
    return config_text(dir_, log_level);
  }
  void write_config(const std::string& text) const {
    reflectd::test::write_text_file(config_, text);
  }
  const std::string& config_path() const { return config_; }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string log() const { return reflectd::test::read_text_file(dir_.file("daemon.log")); }

  /// SIGHUP, then the RELOADING=1 datagram and the READY=1 after it (nullopt if missing).
  std::pair<std::optional<std::string>, std::optional<std::string>> reload() {
    child_->send_signal(SIGHUP);
    auto reloading = notify_.next_with("RELOADING=1", 10s);
    auto ready = reloading ? notify_.next_with("READY=1", 10s) : std::nullopt;
    return {std::move(reloading), std::move(ready)};
  }

  /// SIGTERM; expects STOPPING=1 and exit status 0 (REQUIREs, with the daemon's log).
  void stop() {
    child_->send_signal(SIGTERM);
    const auto stopping = notify_.next_with("STOPPING=1", 20s);
    const auto exit = child_->wait_for(20s);
    INFO("daemon log:\n" << log() << "\nnotifications:\n" << notify_.history());
    CHECK(stopping);
    REQUIRE(exit);
    CHECK(exit->code == 0);
    CHECK(exit->signal == 0);
  }

  /// Runs reflectctl against this daemon: REFLECTCTL_BIN --config <config> args...
  RunResult ctl(std::vector<std::string> args) const {
    // A reply waits behind the whole window; sanitized builds on a busy machine take
    // longer than publish's 5 s default, and a resend would change the counts checked.
    if (args.front() == "publish") args.insert(args.begin() + 1, {"--timeout-ms", "60000"});
    args.insert(args.begin(), {REFLECTCTL_BIN, "--config", config_});
    return reflectd::test::run_process(args, 180s);
  }

  /// ctl() expecting exit status 0 and JSON on stdout.
  json ctl_json(const std::vector<std::string>& args) const {
    const RunResult run = ctl(args);
    INFO("reflectctl " << args.front() << ": exit " << run.status.code << ", signal "
                       << run.status.signal << (run.timed_out ? " (killed: timed out)" : "")
                       << "\nstdout:\n"
                       << run.out << "\nstderr:\n"
                       << run.err << "\ndaemon log:\n"
                       << log());
    REQUIRE_FALSE(run.timed_out);
    REQUIRE(run.status.code == 0);
    return json::parse(run.out);
  }

 private:
  TempDir dir_;
  NotifySocket notify_;
  std::string config_;
  std::optional<std::string> ready_;
  std::optional<ChildProcess> child_;  // Last: killed and reaped before the rest goes.
};

// "column=value|..." for each row of `table` ordered by `key`, every column but
// updated_us (a bookkeeping time that a rerun may legitimately refresh).
std::vector<std::string> dump_table(SQLite::Database& db, const std::string& table,
                                    const std::string& key) {
  std::vector<std::string> columns;
  SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
  info.bind(1, table);
  while (info.executeStep()) {
    std::string name = info.getColumn(0).getString();
    if (name != "updated_us") columns.push_back(std::move(name));
  }
  REQUIRE_FALSE(columns.empty());
  std::string select;
  for (const auto& c : columns) select += (select.empty() ? "" : ", ") + ("quote(" + c + ")");
  SQLite::Statement query(db, "SELECT " + select + " FROM " + table + " ORDER BY " + key);
  std::vector<std::string> rows;
  while (query.executeStep()) {
    std::string row;
    for (int i = 0; i < query.getColumnCount(); ++i) {
      row += columns[static_cast<std::size_t>(i)] + "=" + query.getColumn(i).getString() + "|";
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// "" when equal, else the first difference.
std::string first_difference(const std::vector<std::string>& before,
                             const std::vector<std::string>& after) {
  for (std::size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    if (before[i] != after[i]) {
      return "row " + std::to_string(i) + "\nbefore: " + before[i] + "\nafter:  " + after[i];
    }
  }
  if (before.size() != after.size()) {
    return "row count " + std::to_string(before.size()) + " -> " + std::to_string(after.size());
  }
  return {};
}

}  // namespace

TEST_CASE("systemd notifications: READY after the sockets answer, RELOADING, STOPPING",
          "[lifecycle][e2e]") {
  Lifecycle daemon;
  // READY=1 is sent once the control socket works: the very first request, with no retry,
  // is answered.
  const auto status = daemon.status(2s);
  REQUIRE(status);
  CHECK((*status)["ok"] == true);
  CHECK(has_line(daemon.ready_datagram(), "READY=1"));
  CHECK(field(daemon.ready_datagram(), "STATUS"));

  const std::uint64_t before_hup = monotonic_usec();
  const auto [reloading, ready] = daemon.reload();
  const std::uint64_t after_hup = monotonic_usec();
  INFO("notifications:\n" << daemon.notify().history() << "\ndaemon log:\n" << daemon.log());
  REQUIRE(reloading);
  const auto stamp = field(*reloading, "MONOTONIC_USEC");
  REQUIRE(stamp);
  // The daemon's CLOCK_MONOTONIC when it began the reload: between our SIGHUP and now.
  const std::uint64_t usec = std::stoull(*stamp);
  CHECK(usec >= before_hup);
  CHECK(usec <= after_hup);
  REQUIRE(ready);  // READY=1 again once the reload is done.
  CHECK(daemon.status(2s));

  daemon.stop();  // STOPPING=1, then exit status 0.
}

namespace {

// A valid single event for the ingest socket.
std::string event(const std::string& id, const std::string& content) {
  return json{{"id", id}, {"kind", "observation"}, {"namespace", "lifecycle"}, {"content", content}}
      .dump();
}

// A DEALER on the daemon's ingest socket for windowed bursts (the window bounds what queues).
zmq::socket_t burst_dealer(zmq::context_t& context, const Lifecycle& daemon) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.connect(daemon.endpoint("ingest"));
  return dealer;
}

// Sends events `prefix`-<n> until `total` are sent or `window` await an answer; returns the new
// count sent.
int fill_window(zmq::socket_t& dealer, int sent, int answered, int total, int window,
                const std::string& prefix) {
  while (sent < total && sent - answered < window) {
    const std::string id = prefix + "-" + std::to_string(sent);
    if (!dealer.send(zmq::buffer(event(id, "event " + id + " of the " + prefix + " test")),
                     zmq::send_flags::dontwait)) {
      break;
    }
    ++sent;
  }
  return sent;
}

// Sends one event on ingest and expects it stored.
void expect_ingest_works(const Lifecycle& daemon, const std::string& id) {
  const auto reply = request(daemon.endpoint("ingest"), event(id, "still serving: " + id), 10s);
  INFO("daemon log:\n" << daemon.log());
  REQUIRE(reply);
  INFO("reply: " << reply->dump());
  CHECK((*reply)["ok"] == true);
  CHECK((*reply)["results"][0]["status"] == "stored");
}

// last_reload of a status reply.
json last_reload(const Lifecycle& daemon) {
  const auto status = daemon.status();
  REQUIRE(status);
  REQUIRE((*status)["ok"] == true);
  return (*status)["last_reload"];
}

}  // namespace

TEST_CASE("SIGHUP with a broken configuration keeps the running one", "[lifecycle][e2e]") {
  Lifecycle daemon;
  const std::string valid = daemon.config_for("warn");
  const auto valid_lines = std::count(valid.begin(), valid.end(), '\n');

  // An unknown key on the line after the valid text.
  daemon.write_config(valid + "unknown_key: 1\n");
  auto [reloading, ready] = daemon.reload();
  INFO("notifications:\n" << daemon.notify().history() << "\ndaemon log:\n" << daemon.log());
  REQUIRE(reloading);
  REQUIRE(ready);
  json reload = last_reload(daemon);
  INFO("last_reload: " << reload.dump());
  CHECK(reload["ok"] == false);
  CHECK(reload["at_us"].get<std::int64_t>() > 0);
  CHECK_THAT(reload["message"].get<std::string>(),
             Catch::Contains(daemon.config_path() + ":" + std::to_string(valid_lines + 1) + ":1") &&
                 Catch::Contains("unknown_key"));
  expect_ingest_works(daemon, "after-unknown-key");

  // Text that is not YAML at all.
  daemon.write_config(valid + "bus: [unclosed\n");
  std::tie(reloading, ready) = daemon.reload();
  REQUIRE(reloading);
  REQUIRE(ready);
  reload = last_reload(daemon);
  CHECK(reload["ok"] == false);
  CHECK_THAT(reload["message"].get<std::string>(),
             Catch::Contains(daemon.config_path() + ":") && Catch::Contains("YAML"));
  expect_ingest_works(daemon, "after-invalid-yaml");

  // Fixed (and changed: log.level applies live).
  daemon.write_config(daemon.config_for("info"));
  std::tie(reloading, ready) = daemon.reload();
  REQUIRE(reloading);
  REQUIRE(ready);
  reload = last_reload(daemon);
  CHECK(reload["ok"] == true);
  CHECK_THAT(reload["message"].get<std::string>(), Catch::StartsWith("applied"));
  expect_ingest_works(daemon, "after-fix");

  daemon.stop();
}

TEST_CASE("SIGTERM while publishing: every acknowledged event is in the database",
          "[lifecycle][e2e]") {
  constexpr int kEvents = 20000;
  constexpr int kWindow = 500;
  constexpr std::size_t kSignalAfterAcks = 3000;
  Lifecycle daemon;

  zmq::context_t context(1);
  zmq::socket_t dealer = burst_dealer(context, daemon);

  std::vector<std::string> acked;
  int sent = 0;
  int replies = 0;
  int refused = 0;
  std::size_t acked_at_signal = 0;
  bool signalled = false;
  SteadyClock::time_point quiet_since{};  // Daemon gone and nothing read since; {} = not yet.
  const auto deadline = SteadyClock::now() + 180s;
  for (;;) {
    if (SteadyClock::now() >= deadline) {
      FAIL("no end after 180 s: sent " << sent << ", replies " << replies << ", daemon "
                                       << (daemon.child().running() ? "running" : "exited")
                                       << "\ndaemon log:\n"
                                       << daemon.log());
    }
    sent = fill_window(dealer, sent, replies, kEvents, kWindow, "sigterm");
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 50ms);
    bool read_any = false;
    for (;;) {
      std::vector<zmq::message_t> frames;
      if (!zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait))
        break;
      read_any = true;
      ++replies;
      const json reply = json::parse(frames.back().to_string_view(), nullptr, false);
      if (!reply.is_object()) FAIL("not a JSON object: " << frames.back().to_string());
      for (const json& result : reply.value("results", json::array())) {
        const std::string status = result.value("status", "");
        if (status == "stored" || status == "duplicate") {
          acked.push_back(result.value("id", ""));
        } else {
          ++refused;  // e.g. "storage unavailable": not acknowledged, so not promised.
        }
      }
    }
    if (!signalled && acked.size() >= kSignalAfterAcks) {
      daemon.child().send_signal(SIGTERM);
      signalled = true;
      acked_at_signal = acked.size();
    }
    if (!signalled) continue;
    // Keep reading until the daemon has exited and its socket stays quiet.
    if (read_any || daemon.child().running()) {
      quiet_since = {};
    } else if (quiet_since == SteadyClock::time_point{}) {
      quiet_since = SteadyClock::now();
    } else if (SteadyClock::now() - quiet_since > 500ms) {
      break;
    }
  }
  const auto exit = daemon.child().wait_for(20s);
  INFO("daemon log:\n" << daemon.log());
  REQUIRE(exit);
  CHECK(exit->code == 0);
  CHECK(exit->signal == 0);

  SQLite::Database db(daemon.file("reflectd.db"), SQLite::OPEN_READONLY);
  const std::int64_t rows = db.execAndGet("SELECT count(*) FROM events").getInt64();
  SQLite::Statement find(db, "SELECT count(*) FROM events WHERE uid = ?1");
  std::vector<std::string> missing;
  for (const std::string& id : acked) {
    find.reset();
    find.bind(1, id);
    find.executeStep();
    if (find.getColumn(0).getInt64() != 1) missing.push_back(id);
  }
  std::cout << "SIGTERM while publishing: sent " << sent << ", replies " << replies << ", acked "
            << acked.size() << " (" << acked_at_signal << " before SIGTERM), refused " << refused
            << ", rows " << rows << ", acked but missing " << missing.size() << '\n';
  INFO("first missing ids: " << (missing.empty() ? std::string("-") : missing.front()));
  CHECK(missing.empty());
  CHECK(static_cast<std::size_t>(rows) >= acked.size());
  CHECK(sent < kEvents);  // The signal really came mid-stream.
}

// A handled signal interrupts libzmq's zero-timeout poll of its mailbox (ZMQ_EVENTS, recv and
// send with ZMQ_DONTWAIT) with EINTR; uncaught, that once ended the daemon with "startup failed:
// Interrupted system call" when SIGTERM came mid-burst. SIGHUP (a reload) on every turn of the
// loop gives many such chances; every event must still be answered and the daemon keep running.
TEST_CASE("signals during a burst: every event is answered and the daemon keeps serving",
          "[lifecycle][e2e]") {
  constexpr int kEvents = 20000;
  constexpr int kWindow = 500;
  Lifecycle daemon;

  zmq::context_t context(1);
  zmq::socket_t dealer = burst_dealer(context, daemon);

  int sent = 0;
  int stored = 0;
  int signals = 0;
  const auto deadline = SteadyClock::now() + 120s;
  while (stored < kEvents && daemon.child().running() && SteadyClock::now() < deadline) {
    sent = fill_window(dealer, sent, stored, kEvents, kWindow, "sighup");
    daemon.child().send_signal(SIGHUP);
    ++signals;
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, 1ms);
    std::vector<zmq::message_t> frames;
    while (zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
      const json reply = json::parse(frames.back().to_string_view(), nullptr, false);
      frames.clear();
      REQUIRE(reply.is_object());
      for (const json& result : reply.value("results", json::array())) {
        INFO("reply: " << reply.dump());
        REQUIRE(result.value("status", "") == "stored");
        ++stored;
      }
    }
  }
  INFO("daemon log:\n" << daemon.log());
  std::cout << "signals during a burst: " << sent << " sent, " << stored << " stored, " << signals
            << " SIGHUPs\n";
  REQUIRE(daemon.child().running());
  CHECK(stored == kEvents);
  CHECK(signals > 100);
  expect_ingest_works(daemon, "after-the-signals");
  daemon.stop();
}

TEST_CASE("reflectd's command line: --check-config, --help, --version", "[lifecycle][e2e]") {
  const TempDir dir;
  const auto reflectd = [](std::vector<std::string> args) {
    args.insert(args.begin(), REFLECTD_BIN);
    RunResult run = reflectd::test::run_process(args, 30s);
    REQUIRE_FALSE(run.timed_out);
    return run;
  };

  const std::string bad = dir.file("bad.yaml");
  reflectd::test::write_text_file(bad, "log:\n  level: info\n  colour: true\n");
  const RunResult checked_bad = reflectd({"--check-config", "--config", bad});
  INFO("stderr: " << checked_bad.err);
  CHECK(checked_bad.status.code == 1);
  CHECK_THAT(checked_bad.err, Catch::Contains(bad + ":3:3:") && Catch::Contains("log.colour"));

  const std::string shipped = std::string(REFLECTD_SOURCE_DIR) + "/config/reflectd.yaml";
  // The shipped file's relative store.path resolves as under the unit's StateDirectory=.
  ::setenv("STATE_DIRECTORY", dir.path().c_str(), 1);
  const RunResult checked_good = reflectd({"--check-config", "--config", shipped});
  ::unsetenv("STATE_DIRECTORY");
  INFO("stdout: " << checked_good.out << "\nstderr: " << checked_good.err);
  CHECK(checked_good.status.code == 0);
  CHECK(checked_good.out == shipped + ": configuration OK\nstore path: " +
                                (dir.path() / "reflectd.db").string() + "\n");

  const RunResult help = reflectd({"--help"});
  CHECK(help.status.code == 0);
  CHECK_THAT(help.out, Catch::Contains("SIGHUP") && Catch::Contains("--vacuum"));

  const RunResult version = reflectd({"--version"});
  CHECK(version.status.code == 0);
  CHECK_THAT(version.out, Catch::StartsWith("reflectd 0.1.0"));
}

TEST_CASE("job commands end to end: consolidate libzmq, list what it found, rerun",
          "[lifecycle][e2e][jobs]") {
  // Scheduled runs must stay out of the way (see kJobIntervalS).
  REQUIRE(reflectd::jobs::Scheduler::jitter_fraction("consolidate") * kJobIntervalS > 86400);
  REQUIRE(reflectd::jobs::Scheduler::jitter_fraction("medallion") * kJobIntervalS > 86400);
  Lifecycle daemon;
  const json published = daemon.ctl_json({"publish", "--json", kLibzmq});
  REQUIRE(published["stored"] == kLibzmqEvents);

  const json first =
      daemon.ctl_json({"run", "consolidate", "--namespace", "libzmq", "--wait", "--json"});
  INFO("first run: " << first.dump());
  CHECK(first["ok"] == true);
  const json& run = first["run"];
  CHECK(run["status"] == "ok");
  CHECK(run["namespace"] == "libzmq");
  CHECK(run["trigger"] == "demand");
  CHECK(run["result"]["events_processed"] == kLibzmqEvents);
  CHECK(run["result"]["skipped"] == false);
  const std::int64_t run_id = run["run_id"].get<std::int64_t>();

  const json knowledge = daemon.ctl_json({"knowledge", "--namespace", "libzmq", "--json"});
  const json& streams = knowledge["knowledge"];
  CHECK(std::any_of(streams.begin(), streams.end(), [](const json& row) {
    return (row["phase"] == "emergent" || row["phase"] == "canonical") && row["target"] == "src";
  }));

  const json observations =
      daemon.ctl_json({"observations", "--namespace", "libzmq", "--type", "pattern", "--json"});
  const json& patterns = observations["observations"];
  CHECK(std::any_of(patterns.begin(), patterns.end(), [](const json& row) {
    return row["observation_type"] == "pattern" && row["support_count"].get<std::int64_t>() >= 3;
  }));

  const json jobs = daemon.ctl_json({"jobs", "--json"});
  const json& runs = jobs["runs"];
  CHECK(std::any_of(runs.begin(), runs.end(), [run_id](const json& row) {
    return row["run_id"] == run_id && row["job"] == "consolidate" && row["status"] == "ok" &&
           row["result"]["events_processed"] == kLibzmqEvents;
  }));

  // The tables as a rerun with nothing new must leave them.
  const auto dump = [&] {
    SQLite::Database db(daemon.file("reflectd.db"), SQLite::OPEN_READONLY);
    return std::pair{dump_table(db, "knowledge", "decision_id"),
                     dump_table(db, "observations", "observation_id")};
  };
  const auto before = dump();
  REQUIRE_FALSE(before.first.empty());
  REQUIRE_FALSE(before.second.empty());

  const json second =
      daemon.ctl_json({"run", "consolidate", "--namespace", "libzmq", "--wait", "--json"});
  INFO("second run: " << second.dump());
  CHECK(second["run"]["result"]["events_processed"] == 0);
  CHECK(second["run"]["result"]["skipped"] == true);
  CHECK(second["run"]["status"] == "skipped");

  const auto after = dump();
  CHECK(first_difference(before.first, after.first) == "");
  CHECK(first_difference(before.second, after.second) == "");

  // The table forms, on the same data.
  const RunResult jobs_table = daemon.ctl({"jobs", "--job", "consolidate"});
  CHECK(jobs_table.status.code == 0);
  CHECK_THAT(jobs_table.out, Catch::StartsWith("RUN  JOB") &&
                                 Catch::Contains("events_processed=8604") &&
                                 Catch::Contains("skipped: no new events"));
  const RunResult knowledge_table =
      daemon.ctl({"knowledge", "--namespace", "libzmq", "--limit", "3"});
  CHECK(knowledge_table.status.code == 0);
  CHECK_THAT(knowledge_table.out,
             Catch::StartsWith("DECISION_ID") && Catch::Contains("proposal:libzmq:src"));
  const RunResult observations_table = daemon.ctl({"observations", "--type", "pattern"});
  CHECK(observations_table.status.code == 0);
  CHECK_THAT(observations_table.out, Catch::StartsWith("TYPE") && Catch::Contains("pattern"));
  const RunResult waited = daemon.ctl({"run", "consolidate", "--wait"});
  CHECK(waited.status.code == 0);
  CHECK_THAT(waited.out, Catch::Contains("status") && Catch::Contains("skipped") &&
                             Catch::Contains("events_processed"));

  // Errors: an unknown job is the daemon's "ok": false (exit 1, its error on stderr); no
  // daemon at the endpoint is exit 3.
  const RunResult unknown = daemon.ctl({"run", "nosuchjob", "--wait"});
  CHECK(unknown.status.code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("unknown job 'nosuchjob'"));
  const RunResult unreachable =
      reflectd::test::run_process({REFLECTCTL_BIN, "--control", "ipc://" + daemon.file("absent"),
                                   "jobs", "--timeout-ms", "200"},
                                  30s);
  CHECK(unreachable.status.code == 3);
  const RunResult queued = daemon.ctl({"run", "decay"});
  CHECK(queued.status.code == 0);
  CHECK_THAT(queued.out, Catch::StartsWith("queued decay"));

  // search, reinforce, events tail and medallion on a handful of fresh events.
  const std::string fresh = daemon.file("fresh.jsonl");
  std::string lines;
  for (int i = 0; i < 4; ++i) {
    lines += json{{"id", "cli-e2e-" + std::to_string(i)},
                  {"source", "agent"},
                  {"kind", "observation"},
                  {"namespace", "clie2e"},
                  {"content", "the quokkaflux valve number " + std::to_string(i) + " leaks"}}
                 .dump() +
             "\n";
  }
  reflectd::test::write_text_file(fresh, lines);
  CHECK(daemon.ctl_json({"publish", "--json", fresh})["stored"] == 4);
  const json found = daemon.ctl_json({"search", "quokkaflux", "--json"});
  REQUIRE(found["results"].size() == 4);
  CHECK(found["results"][0]["namespace"] == "clie2e");
  const RunResult search_table = daemon.ctl({"search", "quokkaflux valve", "--limit", "2"});
  CHECK(search_table.status.code == 0);
  CHECK_THAT(search_table.out, Catch::StartsWith("SCORE") && Catch::Contains("cli-e2e-"));
  const RunResult reinforced = daemon.ctl({"reinforce", "cli-e2e-1"});
  CHECK(reinforced.status.code == 0);
  CHECK_THAT(reinforced.out, Catch::Contains("hit_count"));
  CHECK(daemon.ctl({"reinforce", "cli-e2e-2", "--misleading"}).status.code == 0);
  const RunResult unknown_id = daemon.ctl({"reinforce", "no-such-record"});
  CHECK(unknown_id.status.code == 1);
  const RunResult tail = daemon.ctl({"events", "tail", "--namespace", "clie2e", "-n", "2"});
  CHECK(tail.status.code == 0);
  CHECK(std::count(tail.out.begin(), tail.out.end(), '\n') == 2);
  CHECK_THAT(tail.out, Catch::Contains("cli-e2e-3") && Catch::Contains("clie2e"));

  const RunResult medallion_run = daemon.ctl({"run", "medallion", "--wait"});
  CHECK(medallion_run.status.code == 0);
  const json medallions = daemon.ctl_json({"medallion", "list", "--json"});
  INFO("medallions: " << medallions.dump() << "\nrun medallion: " << medallion_run.out
                      << medallion_run.err);
  REQUIRE_FALSE(medallions["medallions"].empty());
  const std::string medallion_id = "med:libzmq";
  CHECK(std::any_of(medallions["medallions"].begin(), medallions["medallions"].end(),
                    [&](const json& row) { return row["id"] == medallion_id; }));
  const RunResult medallion = daemon.ctl({"medallion", "get", medallion_id});
  CHECK(medallion.status.code == 0);
  CHECK_THAT(medallion.out,
             Catch::Contains("libzmq") && Catch::Contains("DECISIONS") && Catch::Contains("D-"));
  CHECK(daemon.ctl_json({"medallion", "get", medallion_id, "--json"})["medallion"].is_object());
  CHECK(daemon.ctl({"medallion", "get", "no-such-medallion"}).status.code == 1);
  CHECK(daemon.ctl({"medallion", "history", medallion_id}).status.code == 0);
  CHECK(daemon.ctl({"medallion", "query", "--tag", "none"}).status.code == 0);
  CHECK(daemon.ctl({"entities", "--top", "3"}).status.code == 0);
  CHECK(daemon.ctl({"clusters", "--limit", "3"}).status.code == 0);

  daemon.stop();
}
