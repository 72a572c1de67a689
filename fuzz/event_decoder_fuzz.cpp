// Fuzz target: one wire-format v1 event (a JSON object) through the decoder and validator
// (bus::EventDecoder, the code every ingest/push/subscribe message takes). Beyond "no crash, no
// sanitizer report": errors name a field and a rule, an accepted event re-validates to the same
// EventRecord, nothing is dropped (unknown fields and metadata reappear in the stored metadata,
// docs/WIRE.md "anything else: kept, never dropped"), and the byte limit is enforced. Seeds: one
// line of ../shared/data each.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "fuzz/event_invariants.hpp"

namespace {

// Every field of an accepted event, as the client sent it, must survive: known fields in
// their columns (checked by the round trip), the others under metadata._unknown_fields and
// the client's own metadata keys in metadata.
void check_nothing_dropped(std::string_view payload, const reflectd::store::EventRecord& event) {
  static const std::set<std::string> known = {"kind",
                                              "content",
                                              "schema_version",
                                              "id",
                                              "source",
                                              "namespace",
                                              "agent_id",
                                              "timestamp",
                                              "context",
                                              "tags",
                                              "entities",
                                              "relations",
                                              "episode_id",
                                              "sequence_number",
                                              "sensitivity",
                                              "confidence",
                                              "credibility",
                                              "importance",
                                              "salience",
                                              "emotion",
                                              "emotional_valence",
                                              "emotional_arousal",
                                              "lifecycle",
                                              "resolution",
                                              "metadata"};
  const auto input = nlohmann::json::parse(payload, nullptr, false);
  if (!input.is_object()) return;  // simdjson accepted what nlohmann refuses: nothing to compare
  const auto stored = reflectd::fuzz::parsed_or_null(event.metadata_json);
  // A SHODH memory object's aliases stand for wire-format fields (docs/WIRE.md).
  const bool shodh = !input.contains("kind");
  const auto aliased = [&](const std::string& key) {
    return shodh && (key == "type" || (key == "source_type" && !input.contains("source")) ||
                     (key == "created_at" && !input.contains("timestamp")));
  };
  for (const auto& [key, value] : input.items()) {
    if (known.contains(key) || aliased(key)) continue;
    FUZZ_CHECK(stored.contains("_unknown_fields") && stored["_unknown_fields"].contains(key) &&
                   stored["_unknown_fields"][key] == value,
               "unknown field '%s' dropped; metadata %s", key.c_str(), event.metadata_json.c_str());
  }
  if (const auto metadata = input.find("metadata"); metadata != input.end()) {
    for (const auto& [key, value] : metadata->items()) {
      FUZZ_CHECK(stored.contains(key) && stored[key] == value,
                 "metadata.%s dropped or changed; stored %s", key.c_str(),
                 event.metadata_json.c_str());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const reflectd::FakeClock clock;
  static reflectd::bus::EventDecoder decoder(clock);
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kLimit = 1 << 20;  // bus.max_message_bytes default

  const auto message = decoder.decode(payload, kLimit);
  reflectd::fuzz::check_message(decoder, message, payload, kLimit);
  if (!message.batch && message.events.size() == 1 && message.events[0].event) {
    check_nothing_dropped(payload, *message.events[0].event);
  }
  if (size > 0) {
    const auto refused = decoder.decode(payload, size - 1);
    FUZZ_CHECK(!refused.error.empty() && refused.events.empty(), "limit not enforced");
  }
  return 0;
}
