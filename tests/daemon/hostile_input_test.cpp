// Hostile inputs through a real in-process daemon, on ingest (ROUTER, acknowledged) and push
// (PULL, dead letters): every case gets a precise error, none crashes the daemon, and none
// costs an unrelated event of the same batch.
//
// Two scopes: an *event* case is one bad object inside a batch of good ones (the good ones
// must be stored); a *message* case is bytes that are not a valid wire message at all (invalid
// UTF-8, not JSON, too deep, too large): the whole message is rejected with the reason (ingest
// reply / dead_letters row holding the raw bytes), so nothing disappears silently either way.

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "store/database.hpp"
#include "support/daemon_fixture.hpp"
#include "support/process.hpp"

using namespace reflectd;
using nlohmann::json;
using test::ingest;
using test::make_client;
using test::round_trip;

namespace {

struct HostileCase {
  std::string name;
  std::string payload;  // event cases: one JSON value; message cases: the whole payload
  std::string error;    // a substring the error must contain
};

std::string good_event(const std::string& id) {
  return R"({"id":")" + id + R"(","kind":"task","content":"unrelated good event )" + id + R"("})";
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// One bad event among good ones: the others must survive.
std::vector<HostileCase> event_cases() {
  const std::string task = R"("kind":"task","content":"x")";
  return {
      {"NUL escaped inside content", R"({"kind":"task","content":"a\u0000b"})",
       "content: must not contain NUL"},
      {"NUL escaped inside an id", R"({"kind":"task","content":"x","id":"a\u0000"})", "id:"},
      {"NUL inside an unknown field name", R"({"kind":"task","content":"x","a\u0000b":1})",
       "(field name): unknown field names must be 1-256 characters without NUL"},
      {"overlong content (256 KiB + 1)",
       R"({"kind":"task","content":")" + std::string(256 * 1024 + 1, 'a') + R"("})",
       "content: must be at most 262144 bytes (256 KiB), got 262145"},
      {"overlong id", "{" + task + R"(,"id":")" + std::string(129, 'i') + R"("})",
       "id: must be at most 128 characters"},
      {"overlong namespace", "{" + task + R"(,"namespace":")" + std::string(65, 'n') + R"("})",
       "namespace: must be 1-64 characters"},
      {"overlong agent_id", "{" + task + R"(,"agent_id":")" + std::string(257, 'a') + R"("})",
       "agent_id:"},
      {"overlong unknown field name", "{" + task + R"(,")" + std::string(257, 'k') + R"(":1})",
       "(field name): unknown field names must be 1-256 characters"},
      {"too many tags", "{" + task + R"(,"tags":[)" + repeat(R"("t",)", 64) + R"("t"]})", "tags:"},
      {"content of ASCII white space only", R"({"kind":"task","content":" \t\r\n "})",
       "content: must not be empty"},
      {"duplicate top-level key", R"({"kind":"task","content":"x","content":"y"})",
       "content: duplicate key"},
      {"duplicate kind with a different value",
       R"({"kind":"task","kind":"decision","content":"x"})", "kind: duplicate key"},
      {"duplicate key inside context", "{" + task + R"(,"context":{"a":1,"a":2}})",
       "context: duplicate key 'a'"},
      {"duplicate key inside metadata", "{" + task + R"(,"metadata":{"m":{"x":1,"x":1}}})",
       "metadata: duplicate key 'x'"},
      {"duplicate key inside an unknown field", "{" + task + R"(,"extra":[{"q":1,"q":2}]})",
       "extra: duplicate key 'q'"},
      {"huge integer timestamp", "{" + task + R"(,"timestamp":9223372036854775807})",
       "timestamp: epoch milliseconds must be between 0 and 253402300799999"},
      {"huge unsigned sequence_number", "{" + task + R"(,"sequence_number":18446744073709551615})",
       "sequence_number: must be an integer"},
      {"huge importance is finite but huge", "{" + task + R"(,"confidence":1e308})",
       "confidence: must be a number in [0, 1]"},
      {"negative zero-ish confidence", "{" + task + R"(,"credibility":-1e-300})",
       "credibility: must be a number in [0, 1]"},
      {"wrong type: kind is a number", R"({"kind":7,"content":"x"})", "kind: must be a string"},
      {"wrong type: content is an object", R"({"kind":"task","content":{"a":1}})",
       "content: must be a string, not object"},
      {"wrong type: content is null", R"({"kind":"task","content":null})",
       "content: must be a string, not null"},
      {"wrong type: tags is a string", "{" + task + R"(,"tags":"a"})",
       "tags: must be an array of strings"},
      {"wrong type: context is an array", "{" + task + R"(,"context":[]})",
       "context: must be an object, not array"},
      {"wrong type: metadata is a string", "{" + task + R"(,"metadata":"m"})", "metadata:"},
      {"wrong type: importance is a bool", "{" + task + R"(,"importance":true})",
       "importance: must be a number"},
      {"wrong type: sequence_number is a float", "{" + task + R"(,"sequence_number":1.5})",
       "sequence_number:"},
      {"wrong type: the event is a number", "42", "event: must be a JSON object, not number"},
      {"wrong type: the event is an array", "[1,2]", "event: must be a JSON object, not array"},
      {"wrong type: the event is null", "null", "event: must be a JSON object, not null"},
      {"deep nesting inside metadata (within the parser's limit)",
       "{" + task + R"(,"metadata":{"d":)" + std::string(900, '[') + std::string(900, ']') + "}}",
       ""},  // accepted: deep but legal; must not crash
  };
}

// Bytes that are not a wire message: the whole message is refused with the reason.
std::vector<HostileCase> message_cases() {
  const std::string good = good_event("never-stored");
  return {
      {"invalid UTF-8 (lone continuation byte)",
       "[" + good + R"(,{"kind":"task","content":"bad )" + std::string("\x80") + R"("}])",
       "message: not valid JSON: "},
      {"invalid UTF-8 (overlong encoding of '/')",
       R"({"kind":"task","content":")" + std::string("\xc0\xaf") + R"("})",
       "message: not valid JSON: "},
      {"invalid UTF-8 (UTF-16 surrogate encoded in UTF-8)",
       R"({"kind":"task","content":")" + std::string("\xed\xa0\x80") + R"("})",
       "message: not valid JSON: "},
      {"invalid UTF-8 (truncated 4-byte sequence)",
       R"({"kind":"task","content":")" + std::string("\xf0\x9f\x98") + R"("})",
       "message: not valid JSON: "},
      {"raw NUL byte inside a string",
       std::string(R"({"kind":"task","content":"a)") + std::string(1, '\0') + R"(b"})",
       "message: not valid JSON: "},
      {"raw NUL byte after the document", good + std::string(1, '\0'), "message: not valid JSON: "},
      {"lone surrogate escape", R"({"kind":"task","content":"\ud800"})",
       "message: not valid JSON: "},
      {"deep nesting (5000 levels)", std::string(5000, '[') + std::string(5000, ']'),
       "message: not valid JSON: "},
      {"deep nesting of objects",
       "{" + std::string(R"("kind":"task","content":"x","m":)") + repeat(R"({"a":)", 3000) + "1" +
           std::string(3000, '}') + "}",
       "message: not valid JSON: "},
      {"huge number (1e999)", R"({"kind":"task","content":"x","importance":1e999})",
       "message: not valid JSON: "},
      {"huge integer (2^64)",
       R"({"kind":"task","content":"x","sequence_number":18446744073709551616})",
       "message: not valid JSON: "},
      {"NaN", R"({"kind":"task","content":"x","importance":NaN})", "message: not valid JSON: "},
      {"Infinity", R"({"kind":"task","content":"x","importance":Infinity})",
       "message: not valid JSON: "},
      {"-Infinity", R"({"kind":"task","content":"x","importance":-Infinity})",
       "message: not valid JSON: "},
      {"truncated JSON", R"({"kind":"task","content":"x")", "message: not valid JSON: "},
      {"trailing garbage", good + "}", "message: not valid JSON: "},
      {"empty payload", "", "message: not valid JSON: "},
      {"a bare string", R"("task")",
       "message: must be a JSON object or an array of objects, not string"},
      {"empty batch", "[]", "message: a batch holds 1 to 1000 events, not 0"},
      {"1,001-event batch", "[" + repeat(good + ",", 1000) + good + "]",
       "message: a batch holds 1 to 1000 events, not 1001"},
      {"over bus.max_message_bytes (within 4x)",
       R"({"kind":"task","content":")" + std::string(std::size_t{1100} * 1024, 'a') + R"("})",
       "bytes exceeds the limit of 1048576 bytes (bus.max_message_bytes)"},
  };
}

std::int64_t count(const std::string& path, const std::string& sql) {
  auto db = store::open_database({path, "full", 5000}, store::Access::kReader);
  return db.execAndGet(sql).getInt64();
}

bool has_event(const std::string& path, const std::string& id) {
  auto db = store::open_database({path, "full", 5000}, store::Access::kReader);
  SQLite::Statement query(db, "SELECT count(*) FROM events WHERE uid = ?");
  query.bind(1, id);
  return query.executeStep() && query.getColumn(0).getInt64() == 1;
}

bool control_alive(zmq::context_t& context, test::RunningDaemon& running) {
  auto control = make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  return test::control(control, {{"cmd", "status"}}).value("ok", false);
}

}  // namespace

TEST_CASE("hostile events on ingest: precise per-event errors, the rest of the batch is stored",
          "[hostile]") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  int n = 0;
  for (const auto& c : event_cases()) {
    INFO(c.name);
    const std::string a = "ing-" + std::to_string(n) + "-a", b = "ing-" + std::to_string(n) + "-b";
    ++n;
    const json reply =
        ingest(dealer, "[" + good_event(a) + "," + c.payload + "," + good_event(b) + "]");
    REQUIRE(reply.is_object());
    REQUIRE(reply["results"].size() == 3);
    CHECK(reply["results"][0]["status"] == "stored");
    CHECK(reply["results"][2]["status"] == "stored");
    CHECK(has_event(db, a));
    CHECK(has_event(db, b));
    const json& bad = reply["results"][1];
    CHECK(bad["index"] == 1);
    if (c.error.empty()) {
      CHECK(bad["status"] == "stored");
      CHECK(reply["ok"] == true);
    } else {
      CHECK(reply["ok"] == false);
      CHECK(bad["status"] == "rejected");
      CHECK_THAT(bad.value("error", std::string()), Catch::Contains(c.error));
      if (c.payload.front() != '{') continue;  // alone it is a whole-message error
      // Alone, the same event gets the same error.
      const json single = ingest(dealer, c.payload);
      REQUIRE(single["results"].size() == 1);
      CHECK_THAT(single["results"][0].value("error", std::string()), Catch::Contains(c.error));
    }
  }
  CHECK(control_alive(context, running));
}

TEST_CASE("hostile messages on ingest: the whole message is refused with the reason", "[hostile]") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  for (const auto& c : message_cases()) {
    INFO(c.name);
    const json reply = ingest(dealer, c.payload);
    REQUIRE(reply.is_object());
    CHECK(reply["ok"] == false);
    CHECK(reply["results"].empty());
    CHECK_THAT(reply.value("error", std::string()), Catch::Contains(c.error));
  }
  // Nothing half-stored, and the connection still works for a good message afterwards.
  CHECK(count(db, "SELECT count(*) FROM events") == 0);
  CHECK(ingest(dealer, good_event("after"))["ok"] == true);
  CHECK(control_alive(context, running));
}

TEST_CASE("hostile inputs on push: dead_letters rows with the reason; the rest is stored",
          "[hostile]") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto push = make_client(context, zmq::socket_type::push, running.endpoints().push.at(0));
  struct Expected {
    std::string name, reason, payload;
  };
  std::vector<Expected> expected;
  std::vector<std::string> good_ids;
  int n = 0;
  for (const auto& c : event_cases()) {
    const std::string a = "push-" + std::to_string(n) + "-a",
                      b = "push-" + std::to_string(n) + "-b";
    ++n;
    const std::string payload = "[" + good_event(a) + "," + c.payload + "," + good_event(b) + "]";
    push.send(zmq::buffer(payload));
    good_ids.push_back(a);
    good_ids.push_back(b);
    if (!c.error.empty()) expected.push_back({c.name, "[1] " + c.error, payload});
  }
  for (const auto& c : message_cases()) {
    push.send(zmq::buffer(c.payload));
    expected.push_back({c.name, c.error, c.payload});
  }
  // Push is in order on one connection: once the sentinel is stored, everything before it is.
  push.send(zmq::buffer(good_event("push-sentinel")));
  REQUIRE(
      test::wait_until([&] { return has_event(db, "push-sentinel"); }, std::chrono::seconds(20)));
  for (const auto& id : good_ids) {
    INFO(id);
    CHECK(has_event(db, id));
  }
  auto reader = store::open_database({db, "full", 5000}, store::Access::kReader);
  SQLite::Statement letters(reader,
                            "SELECT endpoint, reason, payload FROM dead_letters ORDER BY id");
  std::size_t i = 0;
  while (letters.executeStep()) {
    REQUIRE(i < expected.size());
    INFO(expected[i].name);
    CHECK(letters.getColumn(0).getString() == "push");
    CHECK_THAT(letters.getColumn(1).getString(), Catch::Contains(expected[i].reason));
    CHECK(letters.getColumn(2).getString() == expected[i].payload);  // raw bytes kept
    ++i;
  }
  CHECK(i == expected.size());
  CHECK(control_alive(context, running));
}

TEST_CASE("multipart messages with extra frames", "[hostile]") {
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));

  SECTION("ingest: a request-id frame is echoed; more frames are refused precisely") {
    auto reply = round_trip(dealer, {"req-7", good_event("mp-1")});
    REQUIRE(reply.size() == 2);
    CHECK(reply[0] == "req-7");
    CHECK(json::parse(reply[1])["ok"] == true);

    reply = round_trip(dealer, {"a", "b", good_event("mp-2")});
    REQUIRE(!reply.empty());
    CHECK_THAT(json::parse(reply.back())["error"].get<std::string>(),
               Catch::Contains("expected one payload frame, optionally preceded by one request-id "
                               "frame of at most 255 bytes; got 3 frames"));
    reply = round_trip(dealer, {std::string(256, 'r'), good_event("mp-3")});
    REQUIRE(!reply.empty());
    CHECK_THAT(json::parse(reply.back())["error"].get<std::string>(),
               Catch::Contains("got 2 frames"));
    reply = round_trip(dealer, std::vector<std::string>(40, "x"));
    REQUIRE(!reply.empty());
    CHECK_THAT(json::parse(reply.back())["error"].get<std::string>(),
               Catch::Contains("got 40 frames"));
    // An empty frame list element: one empty payload frame.
    reply = round_trip(dealer, {""});
    CHECK_THAT(json::parse(reply.back())["error"].get<std::string>(),
               Catch::StartsWith("message: not valid JSON"));
    CHECK_FALSE(has_event(db, "mp-2"));
    CHECK_FALSE(has_event(db, "mp-3"));
    CHECK(ingest(dealer, good_event("mp-4"))["ok"] == true);
  }
  SECTION("push: more than one frame goes to dead_letters; the next message is stored") {
    auto push = make_client(context, zmq::socket_type::push, running.endpoints().push.at(0));
    push.send(zmq::str_buffer("topic"), zmq::send_flags::sndmore);
    push.send(zmq::buffer(good_event("mp-push-1")));
    push.send(zmq::buffer(good_event("mp-push-2")));
    REQUIRE(test::wait_until([&] { return has_event(db, "mp-push-2"); }, std::chrono::seconds(20)));
    CHECK_FALSE(has_event(db, "mp-push-1"));
    auto reader = store::open_database({db, "full", 5000}, store::Access::kReader);
    CHECK(reader.execAndGet("SELECT reason FROM dead_letters").getString() ==
          "message: expected 1 frame, got 2");
  }
  SECTION("control: extra frames and garbage get errors") {
    auto control =
        make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
    auto reply = round_trip(control, {"x", "y", "not json"});
    CHECK_THAT(json::parse(reply.back())["error"].get<std::string>(),
               Catch::Contains("JSON object"));
    const std::vector<std::string> bad_requests{"[]",
                                                "null",
                                                R"({"cmd":7})",
                                                R"({"cmd":"nope"})",
                                                "{\"cmd\":\"status\"\x80}",
                                                std::string(5000, '[')};
    for (const std::string& bad : bad_requests) {
      INFO(bad.substr(0, 40));
      reply = round_trip(control, {bad});
      REQUIRE(!reply.empty());
      CHECK(json::parse(reply.back())["ok"] == false);
    }
  }
  CHECK(control_alive(context, running));
}

TEST_CASE("a message over ZMQ_MAXMSGSIZE drops only its sender's connection", "[hostile]") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  config.bus.max_message_bytes = std::int64_t{64} * 1024;  // transport limit: 256 KiB
  test::RunningDaemon running(std::move(config));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto bystander = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  CHECK(ingest(bystander, good_event("by-1"))["ok"] == true);

  auto attacker = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  attacker.set(zmq::sockopt::rcvtimeo, 1000);
  const std::string huge =
      R"({"kind":"task","content":")" + std::string(std::size_t{300} * 1024, 'a') + R"("})";
  CHECK(round_trip(attacker, {huge}).empty());  // disconnected by libzmq: no reply

  auto push_attacker = make_client(context, zmq::socket_type::push, running.endpoints().push.at(0));
  push_attacker.send(zmq::buffer(huge));

  // Between the payload limit and the transport limit: a precise reply.
  const std::string big =
      R"({"kind":"task","content":")" + std::string(std::size_t{100} * 1024, 'a') + R"("})";
  CHECK_THAT(ingest(bystander, big)["error"].get<std::string>(),
             Catch::Contains("exceeds the limit of 65536 bytes (bus.max_message_bytes)"));
  CHECK(ingest(bystander, good_event("by-2"))["ok"] == true);
  CHECK(has_event(db, "by-2"));
  CHECK(count(db, "SELECT count(*) FROM events") == 2);
  CHECK(control_alive(context, running));
}

TEST_CASE("an event with a huge number of fields is decoded in linear time", "[hostile]") {
  // ~100k distinct unknown fields in one 1 MiB message: must not stall the bus thread.
  test::TempDir dir;
  test::RunningDaemon running(test::loopback_config(dir));
  zmq::context_t context;
  auto dealer = make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  std::string payload = R"({"kind":"task","content":"many fields")";
  for (int i = 0; payload.size() < std::size_t{1000} * 1000; ++i)
    payload += ",\"f" + std::to_string(i) + "\":0";
  payload += "}";
  const auto start = std::chrono::steady_clock::now();
  const json reply = ingest(dealer, payload);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(reply["ok"] == true);
  CHECK(elapsed < std::chrono::seconds(5));
  CHECK(control_alive(context, running));
}
