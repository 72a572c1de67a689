#pragma once
// Decoder and validator of wire format v1 (docs/WIRE.md). Untrusted bytes in,
// validated store::EventRecord values or precise per-event errors out.
//
// Error policy (event path): nothing here throws for bad input. A message that is not JSON,
// or not an object or an array of 1-1000 objects, yields DecodedMessage::error; an event that
// breaks a rule yields DecodedEvent::error naming the field and the rule, e.g.
// "context.rationale: must be at least 10 characters (DecisionContent.rationale)".

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "bus/security.hpp"
#include "common/clock.hpp"
#include "common/sha256.hpp"
#include "store/event.hpp"

namespace reflectd::bus {

/// Largest number of events in one batch message.
inline constexpr std::size_t kMaxBatchEvents = 1000;
/// Largest `content`, bytes.
inline constexpr std::size_t kMaxContentBytes = std::size_t{256} * 1024;

/// One event of a message: valid (`event` set) or rejected (`error` set).
using DecodedEvent = store::EventEntry;

/// A decoded message.
struct DecodedMessage {
  bool batch = false;                ///< The payload was a JSON array.
  std::string error;                 ///< Whole-message error; `events` is then empty.
  std::vector<DecodedEvent> events;  ///< One entry per event, in message order.
};

/// Decodes messages with simdjson. Not thread-safe: one decoder per thread (it owns a
/// reusable simdjson parser). Receive times come from the injected clock.
class EventDecoder {
 public:
  explicit EventDecoder(const Clock& clock);

  /// Decodes `payload`. `max_message_bytes` is the payload limit (bus.max_message_bytes).
  /// With a `sender`, each valid event also passes authorize_event() (agent_id stamped before
  /// a derived id is computed; namespace and sensitivity outside its rights are rejected).
  DecodedMessage decode(std::string_view payload, std::size_t max_message_bytes,
                        const Principal* sender = nullptr);

 private:
  DecodedEvent decode_event(simdjson::dom::element element, std::size_t index,
                            std::int64_t received_us, const Principal* sender);

  const Clock& clock_;
  simdjson::dom::parser parser_;
  Sha256 sha256_;  // content hashes and derived ids
};

}  // namespace reflectd::bus
