// The bus end to end, in-process: real ZeroMQ sockets on loopback tcp, a real SQLite file.

#include <catch2/catch.hpp>

#include "store/database.hpp"
#include "support/daemon_fixture.hpp"

using namespace reflectd;
using nlohmann::json;
using test::ingest;
using test::make_client;
using test::round_trip;

namespace {

std::int64_t count(const std::string& path, const std::string& sql) {
  auto db = store::open_database({path, "full", 5000}, store::Access::kReader);
  return db.execAndGet(sql).getInt64();
}

// Waits on notify until the daemon reports `total` events stored (no sleeps: the
// announcement is the event we wait for).
bool await_total_stored(zmq::context_t& context, const std::string& notify_endpoint,
                        std::uint64_t total, zmq::socket_t* subscriber = nullptr) {
  std::optional<zmq::socket_t> own;
  if (subscriber == nullptr) {
    own.emplace(make_client(context, zmq::socket_type::sub, notify_endpoint));
    own->set(zmq::sockopt::subscribe, "events.stored");
    subscriber = &*own;
  }
  for (;;) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(*subscriber, std::back_inserter(frames))) return false;
    const auto body = json::parse(frames.back().to_string());
    if (body["total_stored"].get<std::uint64_t>() >= total) return true;
  }
}

}  // namespace

TEST_CASE("ingest: one reply per message after commit; ids make resends idempotent") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));

  auto reply = ingest(dealer, R"({"id":"e-1","kind":"task","content":"fix the socket leak"})");
  CHECK(reply == json::parse(R"({"ok":true,"results":[{"id":"e-1","seq":1,"status":"stored"}]})"));
  reply = ingest(dealer, R"({"id":"e-1","kind":"task","content":"fix the socket leak"})");
  CHECK(reply ==
        json::parse(R"({"ok":true,"results":[{"id":"e-1","seq":1,"status":"duplicate"}]})"));
  // The reply means durable: a reader sees the row now.
  CHECK(count(dir.file("reflectd.db"), "SELECT count(*) FROM events") == 1);

  SECTION("a batch answers each event at its index") {
    reply = ingest(dealer, R"([{"id":"b-0","kind":"call","content":"ls"},
                              {"id":"b-1","kind":"decision","content":"x","context":{"title":"t","target":"db","rationale":"long enough text"}},
                              {"id":"e-1","kind":"task","content":"fix the socket leak"}])");
    CHECK(reply["ok"] == false);
    CHECK(reply["results"][0] ==
          json::parse(R"({"index":0,"id":"b-0","seq":2,"status":"stored"})"));
    CHECK(
        reply["results"][1] ==
        json::parse(
            R"j({"index":1,"id":"b-1","status":"rejected","error":"context.target: must be at least 3 characters (DecisionContent.target)",
                               "decision":{"should_persist":false,"store_type":"none","priority":0,"metadata":{},
                                           "reason":"context.target: must be at least 3 characters (DecisionContent.target)"}})j"));
    CHECK(reply["results"][2]["status"] == "duplicate");
  }
  SECTION("semantic events carry the seed's MemoryDecision; conflicts are refused in the ack") {
    const std::string d1 =
        R"({"id":"d-1","kind":"decision","content":"use WAL","context":{"title":"WAL","target":"storage","rationale":"readers never block"}})";
    reply = ingest(dealer, d1);
    CHECK(
        reply["results"][0]["decision"] ==
        json::parse(
            R"({"should_persist":true,"store_type":"semantic","reason":"Decision recorded","priority":7,
                          "metadata":{"event_seq":2,"decision_id":"d-1"}})"));
    reply = ingest(
        dealer,
        R"({"id":"d-2","kind":"decision","content":"use rollback journal","context":{"title":"journal","target":"storage","rationale":"simpler to back up"}})");
    CHECK(reply["ok"] == false);
    CHECK(reply["results"][0]["decision"] ==
          json::parse(R"({"should_persist":false,"store_type":"none","priority":0,
                          "reason":"CONFLICT: Active decision exists. ResolutionIntent required.",
                          "metadata":{"conflicting_ids":["d-1"]}})"));
    reply = ingest(
        dealer,
        R"({"id":"d-2","kind":"decision","content":"use rollback journal","context":{"title":"journal","target":"storage","rationale":"simpler to back up"},
                               "resolution":{"resolution_type":"supersede","rationale":"backups","target_decision_ids":["d-1"]}})");
    CHECK(reply["results"][0]["decision"]["metadata"]["superseded"] == json::parse(R"(["d-1"])"));
  }
  SECTION("a request-id frame is echoed; REQ sockets work too") {
    const auto frames = round_trip(dealer, {"req-42", R"({"kind":"task","content":"a"})"});
    REQUIRE(frames.size() == 2);
    CHECK(frames[0] == "req-42");
    CHECK(json::parse(frames[1])["results"][0]["status"] == "stored");
    auto req = make_client(context, zmq::socket_type::req, running.endpoints().ingest.at(0));
    CHECK(ingest(req, R"({"kind":"task","content":"b"})")["ok"] == true);
  }
  SECTION("malformed messages get precise errors and the daemon stays up") {
    CHECK(ingest(dealer, "{not json")["error"].get<std::string>().starts_with(
        "message: not valid JSON: "));
    CHECK(ingest(dealer, "{\"kind\":\"task\",\"content\":\"\xc3\x28\"}")["error"]
              .get<std::string>()
              .find("UTF-8") != std::string::npos);
    const auto frames = round_trip(dealer, {"a", "b", "c"});
    REQUIRE(frames.size() == 1);
    CHECK(json::parse(frames[0])["error"] ==
          "message: expected one payload frame, optionally preceded by one request-id frame of "
          "at most 255 bytes; got 3 frames");
    const std::string oversized =
        R"({"kind":"task","content":")" + std::string(1100000, 'x') + "\"}";
    CHECK(ingest(dealer, oversized)["error"] ==
          "message: 1100028 bytes exceeds the limit of 1048576 bytes (bus.max_message_bytes)");
    CHECK(ingest(dealer, R"({"kind":"task","content":"still up"})")["ok"] == true);
  }
  SECTION("a peer over the transport limit is dropped; others are unaffected") {
    auto abuser = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
    abuser.set(zmq::sockopt::rcvtimeo, 500);
    const std::string huge(std::size_t{5} * 1048576, 'x');
    CHECK(round_trip(abuser, {huge}).empty());
    CHECK(ingest(dealer, R"({"kind":"task","content":"still up"})")["ok"] == true);
  }
}

TEST_CASE("push: valid events are stored, rejects land in dead_letters with the reason") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  zmq::context_t context;
  auto subscriber = make_client(context, zmq::socket_type::sub, running.endpoints().notify.at(0));
  subscriber.set(zmq::sockopt::subscribe, "events.stored");
  auto push = make_client(context, zmq::socket_type::push, running.endpoints().push.at(0));
  push.send(zmq::str_buffer(R"({"id":"p-1","kind":"result","content":"ok"})"));
  push.send(zmq::str_buffer(
      R"([{"id":"p-2","kind":"result","content":"ok"},{"kind":"bogus","content":"x"}])"));
  push.send(zmq::str_buffer("garbage"));
  push.send(zmq::str_buffer(R"({"id":"p-3","kind":"result","content":"last"})"));
  REQUIRE(await_total_stored(context, "", 3, &subscriber));
  const std::string db = dir.file("reflectd.db");
  CHECK(count(db, "SELECT count(*) FROM events") == 3);
  CHECK(count(db, "SELECT count(*) FROM dead_letters") == 2);
  auto reader = store::open_database({db, "full", 5000}, store::Access::kReader);
  SQLite::Statement letters(reader,
                            "SELECT endpoint, reason, payload FROM dead_letters ORDER BY id");
  REQUIRE(letters.executeStep());
  CHECK(letters.getColumn(0).getString() == "push");
  CHECK(letters.getColumn(1).getString().starts_with("[1] kind: unknown kind 'bogus'"));
  REQUIRE(letters.executeStep());
  CHECK(letters.getColumn(1).getString().starts_with("message: not valid JSON"));
  CHECK(letters.getColumn(2).getString() == "garbage");
}

TEST_CASE("subscribe: the daemon's SUB reads agents' PUB sockets; the last frame is the payload") {
  test::TempDir dir;
  zmq::context_t context;
  zmq::socket_t agent(context, zmq::socket_type::pub);
  agent.set(zmq::sockopt::linger, 0);
  agent.bind("tcp://127.0.0.1:*");
  auto config = test::loopback_config(dir);
  config.bus.subscribe = {agent.get(zmq::sockopt::last_endpoint)};
  config.bus.subscribe_topics = {"agent."};
  test::RunningDaemon running(config);
  auto subscriber = make_client(context, zmq::socket_type::sub, running.endpoints().notify.at(0));
  subscriber.set(zmq::sockopt::subscribe, "events.stored");
  // PUB drops until the subscription arrives (slow joiner): publish until the first event is
  // announced, then stop. Each copy has the same id, so repeats are duplicates, not rows.
  bool stored = false;
  subscriber.set(zmq::sockopt::rcvtimeo, 100);
  for (int attempt = 0; attempt < 100 && !stored; ++attempt) {
    agent.send(zmq::str_buffer("agent.7"), zmq::send_flags::sndmore);
    agent.send(zmq::str_buffer(R"({"id":"s-1","kind":"observation","content":"seen"})"));
    agent.send(zmq::str_buffer("other.topic"), zmq::send_flags::sndmore);
    agent.send(zmq::str_buffer(R"({"id":"s-2","kind":"observation","content":"filtered"})"));
    std::vector<zmq::message_t> frames;
    stored = zmq::recv_multipart(subscriber, std::back_inserter(frames)).has_value();
  }
  REQUIRE(stored);
  running.stop();
  CHECK(count(dir.file("reflectd.db"), "SELECT count(*) FROM events WHERE uid = 's-1'") == 1);
  CHECK(count(dir.file("reflectd.db"), "SELECT count(*) FROM events WHERE uid = 's-2'") == 0);
}

TEST_CASE("control: status reports counts; bad requests get errors") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  ingest(dealer, R"([{"id":"c-1","kind":"task","content":"a"},{"kind":"task"}])");
  ingest(dealer, R"({"id":"c-1","kind":"task","content":"a"})");
  auto control = make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  const auto status = test::control(control, {{"cmd", "status"}});
  CHECK(status["ok"] == true);
  CHECK(status["version"] == "0.1.0");
  CHECK(status["events"] == json::parse(R"({"stored":1,"duplicate":1,"rejected":1})"));
  CHECK(status["dead_letters"] == 0);
  CHECK(status["writer_queue_events"] == 0);
  CHECK(status["db_bytes"].get<std::uint64_t>() > 0);
  CHECK(status["page_size_bytes"] == store::kPageSizeBytes);
  CHECK(status["endpoints"]["ingest"] == json(running.endpoints().ingest));
  CHECK_THAT(test::control(control, {{"cmd", "fly"}})["error"].get<std::string>(),
             Catch::StartsWith("unknown command 'fly'; known: status, run, jobs"));
  CHECK(test::control(control, {{"nocmd", 1}})["ok"] == false);
  const auto frames = round_trip(control, {"not json"});
  CHECK(json::parse(frames.back())["ok"] == false);
}

TEST_CASE("a graceful stop answers every message already read") {
  test::TempDir dir;
  auto config = test::loopback_config(dir);
  test::RunningDaemon running(config);
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  constexpr int kMessages = 2000;
  for (int i = 0; i < kMessages; ++i) {
    dealer.send(zmq::buffer(R"({"kind":"task","content":"m)" + std::to_string(i) + "\"}"));
  }
  // Wait for the first acknowledgement, then stop while the rest are in flight.
  std::vector<zmq::message_t> first;
  REQUIRE(zmq::recv_multipart(dealer, std::back_inserter(first)));
  CHECK(running.stop() == 0);
  std::int64_t acknowledged = 1;
  dealer.set(zmq::sockopt::rcvtimeo, 200);
  for (;;) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(dealer, std::back_inserter(frames))) break;
    ++acknowledged;
  }
  const auto rows = count(dir.file("reflectd.db"), "SELECT count(*) FROM events");
  // Everything acknowledged is stored; nothing unacknowledged was half-written.
  CHECK(acknowledged <= rows);
  CHECK(rows <= kMessages);
}
