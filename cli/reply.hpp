#pragma once
// Reads the daemon's reply to an ingest message and spreads it over the message's events.
//
// Error policy: nothing throws; a reply that is not the documented JSON becomes a
// whole-message error, so its events count as rejected with that explanation.
// Thread-safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::cli {

enum class Outcome { kStored, kDuplicate, kRejected };

/// The outcome of one event of a message.
struct EventOutcome {
  Outcome outcome = Outcome::kRejected;
  std::string error;  ///< kRejected only.
};

/// Maps the reply `body` to one outcome per event of a message of `event_count` events.
/// A whole-message error rejects every event. Results are placed by their "index" (or
/// position when absent). A message holding a single input line takes every result as its
/// own — a line that is itself a JSON array may yield several — keeping the worst
/// (rejected, then stored, then duplicate). An event the reply does not mention is rejected.
std::vector<EventOutcome> outcomes_of_reply(std::string_view body, std::size_t event_count);

}  // namespace reflectd::cli
