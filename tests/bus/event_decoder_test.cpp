// Wire format v1: every validation rule, every kind, and the normalisations.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "bus/event_decoder.hpp"
#include "bus/kinds.hpp"
#include "common/date.hpp"
#include "common/sha256.hpp"
#include "common/timestamp.hpp"

using reflectd::FakeClock;
using reflectd::bus::DecodedMessage;
using reflectd::bus::EventDecoder;

namespace {

constexpr std::size_t kLimit = 1 << 20;

DecodedMessage decode(const std::string& payload) {
  static FakeClock clock(1'700'000'000'000'000);
  EventDecoder decoder(clock);
  return decoder.decode(payload, kLimit);
}

// The error of a lone event, or "" when it is valid.
std::string error_of(const std::string& payload) {
  const auto message = decode(payload);
  if (!message.error.empty()) return message.error;
  REQUIRE(message.events.size() == 1);
  return message.events[0].error;
}

const char* kDecisionContext =
    R"("context":{"title":"Use WAL","target":"storage","rationale":"Readers never block the writer"})";

}  // namespace

TEST_CASE("a minimal event gets every default") {
  const auto message = decode(R"({"kind":"task","content":"fix the bug"})");
  REQUIRE(message.error.empty());
  REQUIRE(message.events.size() == 1);
  const auto& event = *message.events[0].event;
  CHECK(event.kind == "task");
  CHECK(event.ns == "default");
  CHECK(event.source == "agent");
  CHECK(event.sensitivity == "low");
  CHECK(event.schema_version == 1);
  CHECK(event.timestamp_us == 1'700'000'000'000'000);
  CHECK(event.received_us == 1'700'000'000'000'000);
  CHECK(event.storage_class == reflectd::store::StorageClass::kEpisodic);
  CHECK(event.content_hash == reflectd::sha256_hex("fix the bug"));
  // Derived id: SHA-256 of the canonical JSON of namespace, agent_id, kind, content, timestamp.
  const std::string canonical =
      R"({"agent_id":null,"content":"fix the bug","kind":"task","namespace":"default","timestamp":1700000000000000})";
  CHECK(event.uid == reflectd::sha256_hex(canonical));
  CHECK(event.uid_derived);
  CHECK(message.events[0].id == event.uid);
}

TEST_CASE("every kind is accepted with its storage class (seed 000 KIND_STORAGE_MAP)") {
  const std::vector<std::pair<std::string, bool>> kinds{
      {"decision", true},           {"proposal", true},   {"intervention", true},
      {"constraint", true},         {"assumption", true}, {"error", false},
      {"config_change", false},     {"result", false},    {"context_snapshot", false},
      {"context_injection", false}, {"task", false},      {"call", false},
      {"commit_change", false},     {"prompt", false},    {"reflection_summary", false},
      {"observation", false},       {"learning", false},  {"discovery", false},
      {"pattern", false},           {"context", false},   {"code_edit", false},
      {"file_access", false},       {"search", false},    {"command", false},
      {"conversation", false}};
  REQUIRE(kinds.size() == 25);
  for (const auto& [kind, semantic] : kinds) {
    INFO(kind);
    std::string context;
    if (kind == "proposal") {
      context = R"(,"context":{"title":"T","target":"storage","rationale":"long enough text"})";
    } else if (semantic) {
      context = std::string(",") + kDecisionContext;
    }
    const auto message = decode(R"({"kind":")" + kind + R"(","content":"x")" + context + "}");
    REQUIRE(message.events.at(0).error.empty());
    CHECK(message.events[0].event->kind == kind);
    CHECK((message.events[0].event->storage_class == reflectd::store::StorageClass::kSemantic) ==
          semantic);
  }
}

TEST_CASE("SHODH spellings and case variants map to canonical kinds and sources") {
  CHECK(reflectd::bus::find_kind("CodeEdit")->name == "code_edit");
  CHECK(reflectd::bus::find_kind("FileAccess")->name == "file_access");
  CHECK(reflectd::bus::find_kind("FILE_ACCESS")->name == "file_access");
  CHECK(reflectd::bus::find_kind("Observation")->name == "observation");
  CHECK(reflectd::bus::find_kind("DECISION")->name == "decision");
  CHECK(reflectd::bus::find_kind("CommitChange")->name == "commit_change");
  CHECK_FALSE(reflectd::bus::find_kind("codeedit"));
  CHECK(*reflectd::bus::find_source("AiGenerated") == "ai_generated");
  CHECK(*reflectd::bus::find_source("REFLECTION_ENGINE") == "reflection_engine");
  const auto message = decode(R"({"kind":"CodeEdit","content":"x","source":"Web"})");
  CHECK(message.events.at(0).event->kind == "code_edit");
  CHECK(message.events.at(0).event->source == "web");
}

TEST_CASE("rule violations name the field and the rule") {
  struct Case {
    std::string payload;
    std::string error;
  };
  const std::string long_content(256 * 1024 + 1, 'a');
  const std::string long_id(129, 'i');
  const std::vector<Case> cases{
      {R"({"content":"x"})", "kind: is required (or, in a SHODH memory object, type)"},
      {R"({"type":"Nope","content":"x"})", "type: unknown kind 'Nope'; expected one of "},
      {R"({"type":"Task","content":"x","created_at":"yesterday"})",
       "created_at: must be RFC 3339 with an offset (2024-12-01T09:00:00+00:00)"},
      {R"({"type":"Task","content":"x","source_type":"robot"})", "source_type: must be one of "},
      {R"({"type":"Decision","content":"use JWT"})",
       "content: a SHODH Decision needs at least 10 characters: it is the decision's rationale "
       "(or send context with title, target and rationale)"},
      // Characters, not bytes: 8 two-byte characters are too few (fuzz round trip).
      {R"({"type":"Decision","content":"  \u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9  "})",
       "content: a SHODH Decision needs at least 10 characters: it is the decision's rationale "
       "(or send context with title, target and rationale)"},
      {R"({"kind":"task"})", "content: is required"},
      {R"({"kind":"task","content":"   \n\t "})", "content: must not be empty"},
      {R"({"kind":"task","content":""})", "content: must not be empty"},
      {R"({"kind":"task","content":42})", "content: must be a string, not number"},
      {R"({"kind":"task","content":"a\u0000b"})", "content: must not contain NUL"},
      {R"({"kind":"task","content":")" + long_content + R"("})",
       "content: must be at most 262144 bytes (256 KiB), got 262145"},
      {R"({"kind":"nope","content":"x"})", "kind: unknown kind 'nope'; expected one of "},
      {R"({"kind":7,"content":"x"})", "kind: must be a string, one of "},
      {R"({"kind":"task","content":"x","schema_version":2})",
       "schema_version: must be 1 (this daemon speaks wire format v1)"},
      {R"({"kind":"task","content":"x","id":")" + long_id + R"("})",
       "id: must be at most 128 characters"},
      {R"({"kind":"task","content":"x","id":""})", "id: must not be empty"},
      {R"({"kind":"task","content":"x","source":"robot"})", "source: must be one of "},
      {R"({"kind":"task","content":"x","namespace":"a b"})",
       "namespace: must be 1-64 characters of [A-Za-z0-9._:-]"},
      {R"({"kind":"task","content":"x","namespace":""})",
       "namespace: must be 1-64 characters of [A-Za-z0-9._:-]"},
      {R"({"kind":"task","content":"x","namespace":")" + std::string(65, 'n') + R"("})",
       "namespace: must be 1-64 characters of [A-Za-z0-9._:-]"},
      {R"({"kind":"task","content":"x","timestamp":"yesterday"})",
       "timestamp: must be RFC 3339 with an offset (2024-12-01T09:00:00+00:00)"},
      {R"({"kind":"task","content":"x","timestamp":"2024-12-01T09:00:00"})",
       "timestamp: must be RFC 3339 with an offset"},
      {R"({"kind":"task","content":"x","timestamp":-1})",
       "timestamp: epoch milliseconds must be between 0 and 253402300799999"},
      {R"({"kind":"task","content":"x","timestamp":1.5})",
       "timestamp: must be an RFC 3339 string or integer epoch milliseconds"},
      {R"({"kind":"task","content":"x","context":[]})", "context: must be an object, not array"},
      {R"({"kind":"task","content":"x","tags":"a"})", "tags: must be an array of strings"},
      {R"({"kind":"task","content":"x","tags":[1]})", "tags[0]: must be a string, not number"},
      {R"({"kind":"task","content":"x","entities":["ana"]})", "entities[0]: must be \"type:name\""},
      {R"({"kind":"task","content":"x","entities":[":x"]})", "entities[0]: must be \"type:name\""},
      {R"({"kind":"task","content":"x","relations":[{"target":"b"}]})",
       "relations[0].predicate: is required"},
      {R"({"kind":"task","content":"x","relations":[{"predicate":"supports"}]})",
       "relations[0].target: is required"},
      {R"({"kind":"task","content":"x","relations":[{"predicate":"p","target":"b","weight":1.5}]})",
       "relations[0].weight: must be a number in [0, 1]"},
      {R"({"kind":"task","content":"x","sequence_number":-3})",
       "sequence_number: must be between 0 and"},
      {R"({"kind":"task","content":"x","sensitivity":"secret"})",
       "sensitivity: must be one of public|low|medium|high|hyper"},
      {R"({"kind":"task","content":"x","confidence":1.01})",
       "confidence: must be a number in [0, 1]"},
      {R"({"kind":"task","content":"x","credibility":-0.1})",
       "credibility: must be a number in [0, 1]"},
      {R"({"kind":"task","content":"x","importance":-1})",
       "importance: must be a finite number >= 0"},
      {R"({"kind":"task","content":"x","salience":"high"})",
       "salience: must be a number, not string"},
      {R"({"kind":"task","content":"x","emotional_valence":-1.5})",
       "emotional_valence: must be a number in [-1, 1]"},
      {R"({"kind":"task","content":"x","emotional_arousal":2})",
       "emotional_arousal: must be a number in [0, 1]"},
      {R"({"kind":"task","content":"x","lifecycle":{"decay":{"half_life_seconds":0}}})",
       "lifecycle.decay.half_life_seconds: must be between 1 and"},
      {R"({"kind":"task","content":"x","lifecycle":{"decay":{"curve":"cubic"}}})",
       "lifecycle.decay.curve: must be one of exponential|linear|custom"},
      {R"({"kind":"task","content":"x","lifecycle":{"deletion_policy":"sometimes"}})",
       "lifecycle.deletion_policy: must be one of auto_prune|manual_only|never"},
      {R"({"kind":"task","content":"x","lifecycle":{"pinned":"yes"}})",
       "lifecycle.pinned: must be true or false"},
      {R"({"kind":"task","content":"x","resolution":{"rationale":"r"}})",
       "resolution.resolution_type: is required (ResolutionIntent.resolution_type)"},
      {R"({"kind":"task","content":"x","resolution":{"resolution_type":"merge"}})",
       "resolution.resolution_type: must be one of supersede|deprecate|abort"},
      {R"({"kind":"task","content":"x","resolution":{"resolution_type":"abort"}})",
       "resolution.rationale: is required (ResolutionIntent.rationale)"},
      {R"({"kind":"task","content":"x","resolution":{"resolution_type":"abort","rationale":" "}})",
       "resolution.rationale: must not be empty"},
      {R"({"kind":"task","content":"x","resolution":{"resolution_type":"abort","rationale":"r"}})",
       "resolution.target_decision_ids: is required (ResolutionIntent.target_decision_ids)"},
      {R"({"kind":"task","content":"x","resolution":{"resolution_type":"supersede","rationale":"r",
           "target_decision_ids":[]}})",
       "resolution.target_decision_ids: must name at least one decision to supersede "
       "(ResolutionIntent)"},
      {R"({"kind":"task","content":"x","metadata":[]})", "metadata: must be an object, not array"},
      {R"({"kind":"task","content":"x","kind":"call"})", "kind: duplicate key"},
      // seed 000 DecisionContent and ProposalContent.
      {R"({"kind":"decision","content":"x"})",
       "context: is required for kind decision (DecisionContent)"},
      {R"({"kind":"decision","content":"x","context":{"target":"storage","rationale":"long enough text"}})",
       "context.title: is required (DecisionContent.title)"},
      {R"({"kind":"constraint","content":"x","context":{"title":"t","target":"db","rationale":"long enough text"}})",
       "context.target: must be at least 3 characters (DecisionContent.target)"},
      {R"({"kind":"assumption","content":"x","context":{"title":"t","target":"storage","rationale":"too short"}})",
       "context.rationale: must be at least 10 characters (DecisionContent.rationale)"},
      {R"({"kind":"intervention","content":"x","context":{"title":"","target":"storage","rationale":"long enough text"}})",
       "context.title: must not be empty (DecisionContent.title)"},
      {R"({"kind":"decision","content":"x","context":{"title":"t","target":"storage","rationale":"long enough text","status":"draft"}})",
       "context.status: must be one of active|deprecated|superseded"},
      {R"({"kind":"proposal","content":"x","context":{"title":"t","target":"storage","rationale":"long enough text","confidence":1.2}})",
       "context.confidence: must be a number in [0, 1]"},
      {R"({"kind":"proposal","content":"x","context":{"title":"t","target":"storage","rationale":"long enough text","status":"active"}})",
       "context.status: must be one of draft|accepted|rejected|falsified"},
      {R"({"kind":"proposal","content":"x","context":{"title":"t","target":"st","rationale":"long enough text"}})",
       "context.target: must be at least 3 characters (ProposalContent.target)"},
  };
  for (const auto& c : cases) {
    INFO(c.payload.substr(0, 200));
    const std::string error = error_of(c.payload);
    CHECK_THAT(error, Catch::StartsWith(c.error));
  }
}

TEST_CASE("characters are counted as code points, not bytes") {
  // "ração" is 5 code points but 7 bytes: a 10-code-point rationale of multibyte text passes.
  CHECK(
      error_of(
          R"({"kind":"decision","content":"x","context":{"title":"t","target":"ção","rationale":"ççççççççç"}})") ==
      "context.rationale: must be at least 10 characters (DecisionContent.rationale)");
  CHECK(
      error_of(
          R"({"kind":"decision","content":"x","context":{"title":"t","target":"ção","rationale":"çççççççççç"}})")
          .empty());
  CHECK(
      error_of(R"({"kind":"task","content":"x","id":")" + std::string(128, 'a') + R"("})").empty());
}

TEST_CASE("whole-message errors") {
  CHECK_THAT(decode("not json").error, Catch::StartsWith("message: not valid JSON: "));
  CHECK_THAT(decode("{\"kind\":\"task\",\"content\":\"\xff\"}").error,
             Catch::StartsWith("message: not valid JSON: ") && Catch::Contains("UTF-8"));
  CHECK(decode("42").error == "message: must be a JSON object or an array of objects, not number");
  CHECK(decode("[]").error == "message: a batch holds 1 to 1000 events, not 0");
  std::string big = "[";
  for (int i = 0; i < 1001; ++i)
    big += std::string(i ? "," : "") + R"({"kind":"task","content":"x"})";
  big += "]";
  CHECK(decode(big).error == "message: a batch holds 1 to 1000 events, not 1001");
  CHECK(decode(std::string(200, '[') + std::string(200, ']')).events.at(0).error ==
        "event: must be a JSON object, not array");
  CHECK_THAT(decode(std::string(5000, '[') + std::string(5000, ']')).error,
             Catch::StartsWith("message: not valid JSON: ") && Catch::Contains("too deep"));
  CHECK_THAT(decode(R"({"kind":"task","content":"x","n":1e999})").error,
             Catch::StartsWith("message: not valid JSON"));
  CHECK_THAT(decode(R"({"kind":"task","content":"x","n":NaN})").error,
             Catch::StartsWith("message: not valid JSON"));
  FakeClock clock;
  EventDecoder decoder(clock);
  CHECK(decoder.decode(std::string(2000, ' '), 1024).error ==
        "message: 2000 bytes exceeds the limit of 1024 bytes (bus.max_message_bytes)");
}

TEST_CASE("a batch rejects bad events one by one and keeps the good ones") {
  const auto message = decode(
      R"([{"kind":"task","content":"a","id":"e1"},{"kind":"task"},7,{"kind":"call","content":"c","id":"e3"}])");
  REQUIRE(message.error.empty());
  CHECK(message.batch);
  REQUIRE(message.events.size() == 4);
  CHECK(message.events[0].event);
  CHECK(message.events[1].error == "content: is required");
  CHECK(message.events[1].index == 1);
  CHECK(message.events[2].error == "event: must be a JSON object, not number");
  CHECK(message.events[3].event->uid == "e3");
  CHECK(message.events[3].index == 3);
}

TEST_CASE("optional fields are kept; unknown fields go to metadata, never dropped") {
  const auto message = decode(R"({
    "schema_version": 1, "id": "ev-1", "kind": "decision", "content": "Use WAL",
    "namespace": "proj.a:b-c_d", "agent_id": "agent-7", "source": "user",
    "timestamp": "2009-07-29T12:07:54+02:00",)" +
                              std::string(kDecisionContext) + R"(,
    "tags": ["db"], "entities": ["file:src/ctx.cpp", "repo:muse"],
    "relations": [{"predicate": "supports", "target": "ev-0", "weight": 0.5}],
    "episode_id": "run-1", "sequence_number": 3, "sensitivity": "high",
    "confidence": 0.9, "credibility": 1, "importance": 2.5, "salience": 0.7,
    "emotion": "relief", "emotional_valence": -0.5, "emotional_arousal": 0.25,
    "lifecycle": {"decay": {"curve": "linear", "half_life_seconds": 60, "min_salience": 0.1},
                  "pinned": true, "deletion_policy": "never"},
    "resolution": {"resolution_type": "supersede", "rationale": "newer", "target_decision_ids": ["d1"]},
    "metadata": {"project": "x"}, "quality_score": 0.8, "type": "Decision"})");
  REQUIRE(message.events.at(0).error.empty());
  const auto& e = *message.events[0].event;
  CHECK(e.uid == "ev-1");
  CHECK_FALSE(e.uid_derived);
  CHECK(e.ns == "proj.a:b-c_d");
  CHECK(e.agent_id == "agent-7");
  CHECK(e.source == "user");
  CHECK(e.timestamp_us == 1248862074000000);  // 10:07:54Z
  CHECK(e.storage_class == reflectd::store::StorageClass::kSemantic);
  CHECK(nlohmann::json::parse(e.context_json)["target"] == "storage");
  CHECK(e.tags_json == R"(["db"])");
  CHECK(e.entities_json == R"(["file:src/ctx.cpp","repo:muse"])");
  CHECK(nlohmann::json::parse(e.relations_json)[0]["weight"] == 0.5);
  CHECK(e.episode_id == "run-1");
  CHECK(*e.sequence_number == 3);
  CHECK(e.sensitivity == "high");
  CHECK(*e.confidence == 0.9);
  CHECK(*e.credibility == 1.0);
  CHECK(*e.importance == 2.5);
  CHECK(*e.salience == 0.7);
  CHECK(e.emotion == "relief");
  CHECK(*e.emotional_valence == -0.5);
  CHECK(*e.emotional_arousal == 0.25);
  CHECK(nlohmann::json::parse(e.lifecycle_json)["deletion_policy"] == "never");
  CHECK(nlohmann::json::parse(e.resolution_json)["resolution_type"] == "supersede");
  const auto metadata = nlohmann::json::parse(e.metadata_json);
  CHECK(metadata["project"] == "x");
  CHECK(metadata["_unknown_fields"]["quality_score"] == 0.8);
  CHECK(metadata["_unknown_fields"]["type"] == "Decision");
}

TEST_CASE("a SHODH memory object (seed 004) is accepted as it is") {
  // seed 004's complete example, verbatim.
  const auto message = decode(R"({
  "id": "550e8400-e29b-41d4-a716-446655440000",
  "content": "Use JWT tokens with 24h expiry and refresh tokens for mobile apps",
  "content_hash": "a1b2c3d4e5f6...",
  "type": "Decision",
  "tags": ["auth", "security", "mobile"],
  "source_type": "user",
  "credibility": 0.95,
  "emotion": "satisfaction",
  "emotional_valence": 0.7,
  "emotional_arousal": 0.4,
  "episode_id": "auth-implementation-2024",
  "sequence_number": 3,
  "created_at": "2024-12-30T10:00:00Z",
  "updated_at": "2024-12-30T14:30:00Z",
  "last_accessed_at": "2024-12-30T16:00:00Z",
  "quality_score": 0.85,
  "access_count": 5,
  "metadata": {"project": "mobile-app", "reviewer": "security-team"}
})");
  REQUIRE(message.events.at(0).error.empty());
  const auto& e = *message.events[0].event;
  CHECK(e.uid == "550e8400-e29b-41d4-a716-446655440000");
  CHECK(e.kind == "decision");
  CHECK(e.storage_class == reflectd::store::StorageClass::kSemantic);
  CHECK(e.source == "user");
  CHECK(e.timestamp_us == 1735552800000000);  // 2024-12-30T10:00:00Z
  CHECK(*e.credibility == 0.95);
  CHECK(e.episode_id == "auth-implementation-2024");
  // The DecisionContent seed 000 requires, derived from the content (its own target).
  const auto context = nlohmann::json::parse(e.context_json);
  CHECK(context["title"] == "Use JWT tokens with 24h expiry and refresh tokens for mobile apps");
  CHECK(context["target"] == "shodh:" + e.content_hash.substr(0, 16));
  CHECK(context["rationale"] == e.content);
  // What has no wire-format field is kept, never dropped; content_hash is recomputed.
  const auto metadata = nlohmann::json::parse(e.metadata_json);
  CHECK(metadata["project"] == "mobile-app");
  CHECK(metadata["_unknown_fields"] ==
        nlohmann::json::parse(R"({"content_hash":"a1b2c3d4e5f6...","updated_at":
          "2024-12-30T14:30:00Z","last_accessed_at":"2024-12-30T16:00:00Z",
          "quality_score":0.85,"access_count":5})"));
  CHECK(e.content_hash.size() == 64);

  // type defaults to Observation; created_at alone makes an object SHODH's.
  auto plain = decode(R"({"content":"the build is green","created_at":"2024-12-30T10:00:00Z"})");
  REQUIRE(plain.events.at(0).event);
  CHECK(plain.events[0].event->kind == "observation");
  CHECK(plain.events[0].event->source == "agent");
  // A wire-format field wins over its SHODH alias, which is then kept as an unknown field.
  auto both = decode(
      R"({"type":"Learning","content":"x","timestamp":1000,"created_at":"2024-12-30T10:00:00Z"})");
  REQUIRE(both.events.at(0).event);
  CHECK(both.events[0].event->kind == "learning");
  CHECK(both.events[0].event->timestamp_us == 1000000);
  CHECK(
      nlohmann::json::parse(both.events[0].event->metadata_json)["_unknown_fields"]["created_at"] ==
      "2024-12-30T10:00:00Z");
  // With kind present, type is an ordinary unknown field (the wire format as before).
  auto wire = decode(R"({"kind":"task","type":"Decision","content":"x"})");
  REQUIRE(wire.events.at(0).event);
  CHECK(wire.events[0].event->kind == "task");
  // A SHODH Decision's title is its first line, cut at 120 bytes on a UTF-8 boundary.
  const std::string line = std::string(119, 'a') + "\u00e9 more";
  auto long_title = decode(R"({"type":"Decision","content":")" + line + R"(\nsecond line"})");
  REQUIRE(long_title.events.at(0).event);
  CHECK(nlohmann::json::parse(long_title.events[0].event->context_json)["title"] ==
        std::string(119, 'a'));
}

TEST_CASE("unknown fields merge into a client's own metadata._unknown_fields, never replace it") {
  // Found while writing fuzz/event_decoder_fuzz.cpp's "nothing dropped" invariant: the client's
  // metadata._unknown_fields used to be overwritten by the event's unknown fields.
  auto message =
      decode(R"({"kind":"task","content":"x","metadata":{"_unknown_fields":{"a":1},"b":2},"c":3})");
  REQUIRE(message.events.at(0).event);
  const auto metadata = nlohmann::json::parse(message.events[0].event->metadata_json);
  CHECK(metadata == nlohmann::json::parse(R"({"_unknown_fields":{"a":1,"c":3},"b":2})"));

  message = decode(R"({"kind":"task","content":"x","metadata":{"_unknown_fields":{"c":1}},"c":3})");
  CHECK(message.events.at(0).error ==
        "metadata._unknown_fields.c: also sent as a top-level field; one of the two would be lost");
  message = decode(R"({"kind":"task","content":"x","metadata":{"_unknown_fields":[1]},"c":3})");
  CHECK(message.events.at(0).error ==
        "metadata._unknown_fields: must be an object when the event has unknown fields (they are "
        "stored there)");
  // Without unknown fields the client's metadata is kept as sent, whatever its shape.
  message = decode(R"({"kind":"task","content":"x","metadata":{"_unknown_fields":[1]}})");
  CHECK(message.events.at(0).event->metadata_json == R"({"_unknown_fields":[1]})");
}

namespace {

// What parse_rfc3339_us() gave before it read ordinary fields itself: date::parse alone.
std::optional<std::int64_t> parsed_by_date_library(const std::string& text) {
  if (text.size() < 20 || text.size() > 64) return std::nullopt;
  const bool zulu = text.back() == 'Z';
  std::istringstream in(text);
  date::sys_time<std::chrono::microseconds> tp;
  std::chrono::minutes offset{0};
  if (zulu) {
    in >> date::parse("%FT%TZ", tp);
  } else {
    in >> date::parse("%FT%T%Ez", tp, offset);
  }
  if (in.fail() || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  const auto year = date::year_month_day(date::floor<date::days>(tp)).year();
  if (year < date::year{1} || year > date::year{9999}) return std::nullopt;
  return tp.time_since_epoch().count();
}

}  // namespace

TEST_CASE("timestamps: fields read directly agree with date::parse on every shape") {
  // Random texts of RFC 3339's shape, each field drawn a little beyond its range (month 13,
  // day 32, hour 24, second 60, offset 24:60, fractions of 1-9 digits, years 0 and 9999
  // crossing out of range by the offset), so that both the direct reading and the
  // fallback to date::parse are exercised. Fixed seed: the same texts on every run.
  std::mt19937_64 random(20261123);
  auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  auto field = [](int value, int width) {
    std::string text = std::to_string(value);
    return std::string(static_cast<std::size_t>(width) - text.size(), '0') + text;
  };
  int valid = 0;
  for (int n = 0; n < 50'000; ++n) {
    const int year =
        pick(0, 3) == 0 ? (pick(0, 1) != 0 ? pick(0, 2) : pick(9997, 9999)) : pick(1, 9999);
    std::string text = field(year, 4) + "-" + field(pick(0, 13), 2) + "-" + field(pick(0, 32), 2) +
                       "T" + field(pick(0, 24), 2) + ":" + field(pick(0, 60), 2) + ":" +
                       field(pick(0, 60), 2);
    if (const int digits = pick(-3, 9); digits > 0) {
      text += ".";
      for (int d = 0; d < digits; ++d) text += static_cast<char>('0' + pick(0, 9));
    }
    if (pick(0, 2) == 0) {
      text += "Z";
    } else {
      text += (pick(0, 1) != 0 ? "+" : "-") + field(pick(0, 24), 2) + ":" + field(pick(0, 60), 2);
    }
    INFO(text);
    const auto expected = parsed_by_date_library(text);
    REQUIRE(reflectd::parse_rfc3339_us(text) == expected);
    valid += expected.has_value();
  }
  CHECK(valid > 10'000);  // most texts were valid, so the comparison covered real values
}

TEST_CASE("SHA-256: one hasher reused gives FIPS 180-2's digests, as sha256_hex does") {
  reflectd::Sha256 sha256;
  const std::array<std::pair<std::string, std::string>, 3> kVectors{{
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  }};
  for (int round = 0; round < 2; ++round) {
    for (const auto& [text, digest] : kVectors) {
      INFO(text);
      CHECK(sha256.hex(text) == digest);
      CHECK(reflectd::sha256_hex(text) == digest);
    }
  }
}

TEST_CASE("timestamps: RFC 3339 with offset or epoch milliseconds") {
  using reflectd::parse_rfc3339_us;
  CHECK(*parse_rfc3339_us("1970-01-01T00:00:00Z") == 0);
  CHECK(*parse_rfc3339_us("1970-01-01T00:00:00.000001Z") == 1);
  CHECK(*parse_rfc3339_us("1970-01-01t01:00:00+01:00") == 0);
  CHECK(*parse_rfc3339_us("2024-12-01T09:00:00.5-00:30") == 1733045400500000);  // 09:30:00.5Z
  CHECK_FALSE(parse_rfc3339_us("2024-12-01 09:00:00"));
  CHECK_FALSE(parse_rfc3339_us("2024-13-01T09:00:00Z"));
  CHECK_FALSE(parse_rfc3339_us("2024-12-01T09:00:00+0100"));
  CHECK_FALSE(parse_rfc3339_us("2024-12-01T09:00:00Zjunk"));
  CHECK_FALSE(parse_rfc3339_us("2024-12-01T9:00:00Z"));
  CHECK_FALSE(parse_rfc3339_us("2024-12-01T09:00:00.Z"));
  CHECK_FALSE(parse_rfc3339_us("+024-12-01T09:00:00Z"));
  // Found by fuzz/event_decoder_fuzz.cpp: date::parse turned these into a NaN duration (UB).
  CHECK_FALSE(parse_rfc3339_us("2016-05-13T04:0\xc3\x83\xc2\xa9-07:00"));
  CHECK_FALSE(parse_rfc3339_us("2016-12-16T17:-922337203685477580932:27+01:00"));
  CHECK(reflectd::format_rfc3339_us(1248862074000000) == "2009-07-29T10:07:54.000000Z");
  CHECK(reflectd::format_rfc3339_us(-1) == "1969-12-31T23:59:59.999999Z");
  CHECK(reflectd::format_rfc3339_us(253402300799999999) == "9999-12-31T23:59:59.999999Z");
  CHECK(reflectd::format_rfc3339_us(253402300800000000) == "10000-01-01T00:00:00.000000Z");
  CHECK(reflectd::format_rfc3339_us(-62167219200000000) == "0000-01-01T00:00:00.000000Z");
  // Every value formats as date::format("%FT%TZ") does, which it replaced on the fast path.
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Years 0 to 9999 and beyond on both sides: +-2^59 µs is about 18,000 years.
    const auto us = static_cast<std::int64_t>(x >> 4) - (std::int64_t{1} << 59);
    const date::sys_time<std::chrono::microseconds> tp{std::chrono::microseconds{us}};
    INFO(us);
    REQUIRE(reflectd::format_rfc3339_us(us) == date::format("%FT%TZ", tp));
  }
  const auto message = decode(R"({"kind":"task","content":"x","timestamp":1248862074123})");
  CHECK(message.events.at(0).event->timestamp_us == 1248862074123000);
}

TEST_CASE("every line of the real streams is valid") {
  for (const char* name : {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}) {
    std::ifstream in(std::string(REFLECTD_DATA_DIR) + "/" + name);
    REQUIRE(in.good());
    std::string line;
    std::size_t lines = 0;
    while (std::getline(in, line)) {
      const auto message = decode(line);
      INFO(name << ":" << lines + 1);
      REQUIRE(message.error.empty());
      REQUIRE(message.events.at(0).error.empty());
      ++lines;
    }
    CHECK(lines == (std::string(name) == "libzmq-commits.jsonl" ? 8604u : 448u));
  }
}
