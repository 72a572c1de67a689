// Backpressure and stuck peers: a push flood beyond the writer's capacity is held
// back by the writer queue and libzmq's high-water marks, so the daemon's memory stays bounded
// however long the flood; publishers and subscribers that stop reading, or stop halfway through
// a handshake, never block the daemon for anyone else.

#include <catch2/catch.hpp>

#include <array>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "support/child_daemon.hpp"
#include "support/daemon_fixture.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// One message of `events` events of about 500 bytes of content each, ids "<prefix><n>".
std::string batch(const std::string& prefix, int first, int events) {
  std::string out = "[";
  for (int k = first; k < first + events; ++k) {
    if (k != first) out += ",";
    out += R"({"id":")" + prefix + std::to_string(k) +
           R"(","kind":"call","namespace":"flood","content":"call )" + std::to_string(k) + " " +
           std::string(500, 'x') + R"("})";
  }
  return out + "]";
}

std::uint64_t stored(zmq::context_t& context, const std::string& control) {
  const json status = test::control_request(context, control, {{"cmd", "status"}}, 10000);
  return status.is_object() ? status["events"].value("stored", std::uint64_t{0}) : 0;
}

}  // namespace

TEST_CASE("a push flood beyond the writer's capacity is pushed back with bounded memory",
          "[backpressure][e2e]") {
  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  const std::string config = dir.file("reflectd.yaml");
  // A small writer queue and high-water marks make the pushback visible within a short flood.
  // libzmq bounds its pipes in messages, not bytes: memory held for one connection is about
  // receive_hwm x message size, so the flood's 55 KB messages get a proportionate HWM. The
  // writer's page cache is bounded too, but fills as the database grows: with the default
  // 64 MiB it was still filling after 50,000 events (peak +23 to +35 MiB by 300,000), so a
  // small one, full within the first flood, leaves the queues' bound alone to be measured.
  std::string yaml = test::child_config(
      dir, db,
      {.extra = test::kNoJobsYaml, .store_extra = "  writer_queue_events: 5000\n  cache_mib: 8\n"});
  yaml.replace(yaml.find("bus:\n"), 5, "bus:\n  receive_hwm: 100\n");
  test::write_text_file(config, yaml);
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
  zmq::context_t context;
  const std::string control = test::ipc_endpoint(dir, "c");
  REQUIRE(test::wait_ready(context, control, 20s));

  zmq::socket_t push(context, zmq::socket_type::push);
  push.set(zmq::sockopt::sndhwm, 100);
  push.set(zmq::sockopt::sndtimeo, 60000);  // failure bound only: a healthy daemon drains sooner
  push.set(zmq::sockopt::linger, 0);
  push.connect(test::ipc_endpoint(dir, "p"));

  constexpr int kPerMessage = 100;
  int sent_events = 0;
  std::uint64_t blocked = 0;  // sends that found the pipe full: the daemon was pushing back
  long max_sampled_rss = 0;
  const auto flood = [&](int events) {
    for (int n = 0; n < events; n += kPerMessage) {
      const std::string payload = batch("flood-", sent_events, kPerMessage);
      if (!push.send(zmq::buffer(payload), zmq::send_flags::dontwait)) {
        ++blocked;
        REQUIRE(push.send(zmq::buffer(payload), zmq::send_flags::none));
      }
      sent_events += kPerMessage;
      if (sent_events % 5000 == 0)
        max_sampled_rss = std::max(max_sampled_rss, test::rss_kib(daemon.pid()));
    }
    const bool drained = test::wait_until(
        [&] { return stored(context, control) == static_cast<std::uint64_t>(sent_events); }, 30s,
        50ms);
    INFO("status: " << test::control_request(context, control, {{"cmd", "status"}}).dump()
                    << "\nstderr: "
                    << test::read_text_file(dir.file("stderr.log")).substr(0, 2000));
    REQUIRE(drained);
  };

  flood(50000);
  const long peak_after_short = test::peak_rss_kib(daemon.pid());
  flood(250000);
  const long peak_after_long = test::peak_rss_kib(daemon.pid());
  const json status = test::control_request(context, control, {{"cmd", "status"}});
  const std::uint64_t paused = status.value("reads_paused", std::uint64_t{0});

  CHECK(stored(context, control) == 300000);
  CHECK(status.value("dead_letters", -1) == 0);
  CHECK(blocked > 0);  // the publisher felt the pushback
  CHECK(paused > 0);   // the bus stopped reading because the writer queue was full
  // Bounded: six times the events barely moves the peak (the writer queue holds ≤ 5,000
  // events, each libzmq pipe ≤ its high-water mark of messages).
#ifndef REFLECTD_SANITIZED
  CHECK(peak_after_long - peak_after_short <= std::int64_t{32} * 1024);
  CHECK(peak_after_long <= std::int64_t{256} * 1024);
#endif

  daemon.send_signal(SIGTERM);
  const auto exit_status = daemon.wait_for(60s);
  REQUIRE(exit_status);
  CHECK(exit_status->code == 0);
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  CHECK(check.execAndGet("SELECT count(*) FROM events").getInt64() == 300000);
  std::cout << "push flood: " << sent_events << " events in " << sent_events / kPerMessage
            << " messages of ~55 KB; publisher blocked on " << blocked
            << " sends, daemon paused reading " << paused
            << " times (writer queue 5,000 events, ZMQ_RCVHWM 100); peak RSS "
            << peak_after_short / 1024 << " MiB after 50,000 events, " << peak_after_long / 1024
            << " MiB after 300,000 (max sampled VmRSS " << max_sampled_rss / 1024 << " MiB)"
            << std::endl;
}

TEST_CASE("stuck peers never block the daemon for anyone else", "[backpressure][e2e]") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  config.bus.send_hwm = 100;
  test::disable_background_jobs(config);
  test::RunningDaemon running(std::move(config));
  zmq::context_t context;
  const auto& endpoints = running.endpoints();

  // 1. A publisher that sends and never reads its acknowledgements.
  zmq::socket_t stuck(context, zmq::socket_type::dealer);
  stuck.set(zmq::sockopt::rcvhwm, 10);
  stuck.set(zmq::sockopt::linger, 0);
  stuck.connect(endpoints.ingest.at(0));
  constexpr int kStuckMessages = 5000;
  for (int k = 0; k < kStuckMessages; ++k) {
    const std::string event =
        R"({"id":"stuck-)" + std::to_string(k) + R"(","kind":"result","content":"never read"})";
    REQUIRE(stuck.send(zmq::buffer(event), zmq::send_flags::none));
  }
  // 2. A subscriber to notify that never reads.
  zmq::socket_t deaf(context, zmq::socket_type::sub);
  deaf.set(zmq::sockopt::rcvhwm, 1);
  deaf.set(zmq::sockopt::subscribe, "");
  deaf.set(zmq::sockopt::linger, 0);
  deaf.connect(endpoints.notify.at(0));
  // 3. A tcp peer that opens a connection, sends half a ZMTP greeting and stalls.
  const auto colon = endpoints.ingest.at(0).rfind(':');
  const int port = std::stoi(endpoints.ingest.at(0).substr(colon + 1));
  const int raw = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(raw >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(raw, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const std::array<char, 5> half_greeting{'\xff', 0, 0, 0, 0};
  REQUIRE(::send(raw, half_greeting.data(), half_greeting.size(), 0) ==
          static_cast<ssize_t>(half_greeting.size()));

  // Everyone else is served: every stuck message is stored (its replies overflow and are
  // dropped), a healthy publisher gets each acknowledgement, the control socket answers.
  auto control = test::make_client(context, zmq::socket_type::dealer, endpoints.control.at(0));
  REQUIRE(test::wait_until(
      [&] {
        return test::control(control, {{"cmd", "status"}})["events"].value("stored", 0) >=
               kStuckMessages;
      },
      60s, 20ms));
  auto healthy = test::make_client(context, zmq::socket_type::dealer, endpoints.ingest.at(0));
  int acknowledged = 0;
  for (int k = 0; k < 200; ++k) {
    const json reply = test::ingest(healthy, R"({"id":"healthy-)" + std::to_string(k) +
                                                 R"(","kind":"result","content":"served"})");
    if (reply.is_object() && reply["results"][0]["status"] == "stored") ++acknowledged;
  }
  const json status = test::control(control, {{"cmd", "status"}});
  CHECK(acknowledged == 200);
  CHECK(status["events"]["stored"] == kStuckMessages + 200);
  // Only the high-water marks' worth of replies waits for the stuck peer; the rest is dropped
  // (it resends with the same ids and gets "duplicate").
  const std::uint64_t dropped = status.value("replies_dropped", std::uint64_t{0});
  CHECK(dropped > 0);
  CHECK(dropped <= static_cast<std::uint64_t>(kStuckMessages));
  ::close(raw);
  CHECK(running.stop() == 0);
  std::cout << "stuck peers: " << kStuckMessages << " unread acknowledgements (" << dropped
            << " dropped at ZMQ_SNDHWM=100), a notify subscriber that never reads, a half-open "
               "ZMTP handshake; the healthy publisher got "
            << acknowledged << "/200 acknowledgements" << std::endl;
}
