// The systemd watchdog: WATCHDOG=1 comes from the event loop itself, so a stuck loop stops the
// pings (and systemd restarts the service). The real binary runs with WATCHDOG_USEC and a
// NOTIFY_SOCKET the test reads; REFLECTD_TEST_HOOKS=1 enables {"cmd":"test_stall"}, which
// blocks the io thread.

#include <catch2/catch.hpp>

#include <csignal>

#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "support/child_daemon.hpp"
#include "support/notify_socket.hpp"

using namespace reflectd;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using test::NotifySocket;

TEST_CASE("watchdog pings stop while the event loop is stuck and resume after", "[watchdog][e2e]") {
  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  const std::string config = dir.file("reflectd.yaml");
  test::write_text_file(config, test::child_config(dir, db));
  NotifySocket notify(dir.file("notify"));
  ::setenv("NOTIFY_SOCKET", dir.file("notify").c_str(), 1);
  ::setenv("WATCHDOG_USEC", "200000", 1);  // pings every 100 ms
  ::setenv("REFLECTD_TEST_HOOKS", "1", 1);
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ::unsetenv("REFLECTD_TEST_HOOKS");

  // Ready first.
  REQUIRE(notify.next_with("READY=1", 20s));

  // Collect ping times: 1 s healthy, a 1.5 s stall, then 1 s healthy again.
  std::vector<Clock::time_point> pings;
  const auto collect_until = [&](Clock::time_point end) {
    for (auto now = Clock::now(); now < end; now = Clock::now()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - now);
      if (notify.next_with("WATCHDOG=1", left)) pings.push_back(Clock::now());
    }
  };
  const auto t0 = Clock::now();
  collect_until(t0 + 1s);
  const std::size_t before = pings.size();
  zmq::context_t context;
  const auto stall_start = Clock::now();
  auto stall = std::async(std::launch::async, [&] {
    return test::control_request(context, test::ipc_endpoint(dir, "c"),
                                 {{"cmd", "test_stall"}, {"ms", 1500}});
  });
  collect_until(stall_start + 1500ms);
  const auto stall_end = stall_start + 1500ms;
  const nlohmann::json reply = stall.get();
  CHECK(reply.value("ok", false));
  collect_until(Clock::now() + 1s);

  std::size_t during = 0, after = 0;
  for (const auto& t : pings) {
    // Allow one ping already in flight when the stall began.
    if (t > stall_start + 150ms && t < stall_end - 50ms) ++during;
    if (t > stall_end + 200ms) ++after;
  }
  std::cout << "watchdog: " << before << " pings in the first second, " << during
            << " during a 1.5 s stall, " << after << " in the second after it" << std::endl;
  CHECK(before >= 5);
  CHECK(during == 0);
  CHECK(after >= 5);

  daemon.send_signal(SIGTERM);
  const auto status = daemon.wait_for(30s);
  REQUIRE(status);
  CHECK(status->code == 0);
}

TEST_CASE("test hooks are off without REFLECTD_TEST_HOOKS=1", "[watchdog][e2e]") {
  test::TempDir dir;
  const std::string config = dir.file("reflectd.yaml");
  test::write_text_file(config, test::child_config(dir, dir.file("reflectd.db")));
  ::unsetenv("REFLECTD_TEST_HOOKS");
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
  zmq::context_t context;
  REQUIRE(test::wait_ready(context, test::ipc_endpoint(dir, "c"), 20s));
  const auto reply = test::control_request(context, test::ipc_endpoint(dir, "c"),
                                           {{"cmd", "test_stall"}, {"ms", 10}});
  CHECK(reply.value("ok", true) == false);
  CHECK(reply.value("error", std::string()).find("unknown command") != std::string::npos);
  daemon.send_signal(SIGTERM);
  REQUIRE(daemon.wait_for(30s));
}
