#pragma once
// Invariants shared by the event and batch decoder targets: the shape of a DecodedMessage,
// and "an accepted event re-validates": the event written back as wire JSON decodes to the
// same EventRecord.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bus/event_decoder.hpp"
#include "bus/event_encoder.hpp"
#include "common/timestamp.hpp"
#include "fuzz/fuzz_check.hpp"

namespace reflectd::fuzz {

inline nlohmann::json parsed_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json() : nlohmann::json::parse(text);
}

inline void check_same_event(const store::EventRecord& a, const store::EventRecord& b) {
  FUZZ_CHECK(a.uid == b.uid, "uid %s vs %s", a.uid.c_str(), b.uid.c_str());
  FUZZ_CHECK(a.uid_derived == b.uid_derived, "uid_derived");
  FUZZ_CHECK(a.ns == b.ns && a.kind == b.kind && a.source == b.source, "ns/kind/source");
  FUZZ_CHECK(a.storage_class == b.storage_class, "storage_class");
  FUZZ_CHECK(a.agent_id == b.agent_id && a.episode_id == b.episode_id && a.emotion == b.emotion,
             "agent_id/episode_id/emotion");
  FUZZ_CHECK(a.timestamp_us == b.timestamp_us, "timestamp %lld vs %lld",
             static_cast<long long>(a.timestamp_us), static_cast<long long>(b.timestamp_us));
  FUZZ_CHECK(a.content == b.content && a.content_hash == b.content_hash, "content");
  FUZZ_CHECK(a.sensitivity == b.sensitivity && a.schema_version == b.schema_version,
             "sensitivity/schema_version");
  FUZZ_CHECK(a.sequence_number == b.sequence_number, "sequence_number");
  FUZZ_CHECK(a.confidence == b.confidence && a.credibility == b.credibility &&
                 a.importance == b.importance && a.salience == b.salience &&
                 a.emotional_valence == b.emotional_valence &&
                 a.emotional_arousal == b.emotional_arousal,
             "numbers");
  const std::pair<const std::string*, const std::string*> texts[] = {
      {&a.context_json, &b.context_json},     {&a.tags_json, &b.tags_json},
      {&a.entities_json, &b.entities_json},   {&a.relations_json, &b.relations_json},
      {&a.lifecycle_json, &b.lifecycle_json}, {&a.resolution_json, &b.resolution_json},
      {&a.metadata_json, &b.metadata_json}};
  for (const auto& [x, y] : texts) {
    FUZZ_CHECK(parsed_or_null(*x) == parsed_or_null(*y), "JSON field %s vs %s", x->c_str(),
               y->c_str());
  }
  const auto& la = a.lifecycle;
  const auto& lb = b.lifecycle;
  FUZZ_CHECK(la.curve == lb.curve && la.half_life_s == lb.half_life_s &&
                 la.min_salience == lb.min_salience && la.max_age_s == lb.max_age_s &&
                 la.reinforcement_gain == lb.reinforcement_gain && la.pinned == lb.pinned &&
                 la.deletion_policy == lb.deletion_policy,
             "lifecycle override");
}

/// Checks the shape of `message` decoded from `payload` and round-trips every accepted event.
inline void check_message(bus::EventDecoder& decoder, const bus::DecodedMessage& message,
                          std::string_view payload, std::size_t limit) {
  if (!message.error.empty()) {
    FUZZ_CHECK(message.events.empty(), "whole-message error with events");
    FUZZ_CHECK(message.error.starts_with("message: "), "error '%s'", message.error.c_str());
    return;
  }
  FUZZ_CHECK(!message.events.empty() && message.events.size() <= bus::kMaxBatchEvents, "%zu events",
             message.events.size());
  FUZZ_CHECK(message.batch || message.events.size() == 1, "lone object with several events");
  nlohmann::json batch = nlohmann::json::array();
  std::vector<const store::EventRecord*> accepted;
  for (std::size_t i = 0; i < message.events.size(); ++i) {
    const auto& entry = message.events[i];
    FUZZ_CHECK(entry.index == i, "index %zu at %zu", entry.index, i);
    FUZZ_CHECK(entry.event.has_value() != !entry.error.empty(), "event and error at %zu", i);
    if (!entry.event) {
      // A field name first, then the rule: "context.rationale: must be ...".
      FUZZ_CHECK(entry.error.find(": ") != std::string::npos, "error '%s'", entry.error.c_str());
      continue;
    }
    const auto& e = *entry.event;
    FUZZ_CHECK(entry.id == e.uid && !e.uid.empty(), "id '%s' uid '%s'", entry.id.c_str(),
               e.uid.c_str());
    FUZZ_CHECK(e.content_hash.size() == 64, "content_hash");
    batch.push_back(bus::encode_event(e));
    accepted.push_back(&e);
  }
  if (accepted.empty()) return;
  const std::string again = accepted.size() == 1 && !message.batch ? batch[0].dump() : batch.dump();
  const bus::DecodedMessage second = decoder.decode(again, std::max(limit, again.size()));
  FUZZ_CHECK(second.error.empty(), "re-decode: %s\n  of %s", second.error.c_str(), again.c_str());
  FUZZ_CHECK(second.events.size() == accepted.size(), "re-decode count");
  for (std::size_t i = 0; i < accepted.size(); ++i) {
    FUZZ_CHECK(second.events[i].event.has_value(), "accepted event refused on re-decode: %s\n  %s",
               second.events[i].error.c_str(), again.c_str());
    check_same_event(*accepted[i], *second.events[i].event);
  }
  (void)payload;
}

}  // namespace reflectd::fuzz
