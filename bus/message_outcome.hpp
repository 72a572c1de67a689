#pragma once
// What becomes of a message read by an inlet that has no one to answer (push, subscribe,
// JetStream): the dead letter that keeps its rejected parts, and the per-inlet counters of
// its events' outcomes.
//
// Thread-safety: dead_letters_for() is pure; count_results() updates atomics (relaxed) and
// may run on any thread (it runs on the writer's or the sync stage's thread).

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bus/event_decoder.hpp"
#include "store/writer.hpp"

namespace reflectd::bus {

/// What became of the events that arrived on one kind of socket (or the JetStream inlet).
struct SocketEventCounts {
  std::atomic<std::uint64_t> stored{0};
  std::atomic<std::uint64_t> duplicate{0};
  /// Refused events (invalid, not authorized, storage unavailable), and on push, subscribe
  /// and JetStream the messages kept whole as dead letters (a message that does not parse has
  /// no events).
  std::atomic<std::uint64_t> rejected{0};
};

/// The dead letter for the rejected parts of `message` (the whole payload, with every
/// rejected event's index and reason joined by "; "), or none when nothing was rejected.
/// `label` is where it arrived (dead_letters.endpoint); `now_us` microseconds since the epoch.
std::vector<store::DeadLetter> dead_letters_for(const DecodedMessage& message,
                                                std::string_view payload, const std::string& label,
                                                std::int64_t now_us);

/// Adds one message's outcome to `counts`: its stored, duplicate and rejected events, plus
/// `dead_letters` (the dead letters written for it by the inlet itself).
void count_results(SocketEventCounts& counts, const store::WriteResult& result,
                   std::size_t dead_letters);

}  // namespace reflectd::bus
