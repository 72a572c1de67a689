#pragma once
// Row ids assigned in event order, so that replicas (and a store whose jobs ran at other
// moments) give the same rows the same ids (docs/CLUSTER.md, "Why replicas agree"). An id
// counted by the database (INSERT without one: max(rowid) + 1) would depend on how runs
// interleaved namespaces and on which rows merges had deleted by then.
//
// The k-th row (k from 0) that the event of sequence number `seq` creates in a table gets
//   id = seq * 2^kOrdinalBits + k.
// Rows created by one event are created in a fixed order (the extraction's mention order for
// entities; (source, target, type) for relationships), so k is a function of the event too.
// Ids stay below 2^53 (exact in a JSON number read by JavaScript) up to seq 2^37.
// Thread-safety: an EventOrderIds is not thread-safe; each job uses its own.

#include <cassert>
#include <cstdint>

namespace reflectd::jobs {

/// Bits of an event-order id that number the rows one event creates.
inline constexpr int kOrdinalBits = 16;
/// Rows of one table that one event may create: the callers cap what an event names
/// (EntityStore::kMaxMentionsPerEvent, kMaxRelationsPerEvent) well below it.
inline constexpr std::int64_t kMaxRowsPerEvent = std::int64_t{1} << kOrdinalBits;

/// The id of row `ordinal` (from 0) created by event `seq`. Pure.
constexpr std::int64_t event_order_id(std::int64_t seq, std::int64_t ordinal) {
  return seq * kMaxRowsPerEvent + ordinal;
}

/// The event whose processing created the row of id `id`. Pure.
constexpr std::int64_t creating_seq(std::int64_t id) { return id / kMaxRowsPerEvent; }

/// Hands out event_order_id()s: consecutive calls with the same `seq` give ordinals 0, 1, ...;
/// a call with another `seq` starts again at 0. Each event's rows must be asked for together
/// (while the event is processed, or in one sorted pass), and each event's once.
class EventOrderIds {
 public:
  std::int64_t next(std::int64_t seq) {
    if (seq != seq_) {
      seq_ = seq;
      ordinal_ = 0;
    }
    assert(ordinal_ < kMaxRowsPerEvent && "an event created more rows than its caps allow");
    return event_order_id(seq, ordinal_++);
  }

 private:
  std::int64_t seq_ = -1;
  std::int64_t ordinal_ = 0;
};

}  // namespace reflectd::jobs
