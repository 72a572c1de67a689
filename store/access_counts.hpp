#pragma once
// Accesses (seed 004 access_count, last_accessed_at): every event that `recall`, `context` or
// `get` returned in full counts as one access. Reads never write: the reading thread records
// accesses in an AccessBatch, and the daemon hands the batch to the writer thread, which adds
// it in one transaction (store::Writer, WriteRequest::apply) at each stats tick, when the batch
// reaches kAccessBatchFlush events, and at stop. A batch lost in a crash loses those counts
// only (they are statistics, not events).
//
// Accesses do not reinforce salience (docs/JOBS.md, "Accesses"): seed 002 reinforcement is a
// judgement that a memory helped, which only `reinforce` reports.
//
// Thread-safety: an AccessBatch belongs to one thread; apply() runs on the writer's.
// Errors: apply() throws SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace reflectd::store {

/// Distinct events a batch holds before the daemon hands it to the writer early.
inline constexpr std::size_t kAccessBatchFlush = 10'000;

class AccessBatch {
 public:
  /// Counts one access to event `seq` at `at_us` (µs, UTC).
  void record(std::int64_t seq, std::int64_t at_us);
  bool empty() const { return counts_.empty(); }
  std::size_t size() const { return counts_.size(); }
  /// Moves the batch out, leaving this one empty.
  AccessBatch take();
  /// Adds `other`'s counts (a batch the writer could not take back in).
  void merge(const AccessBatch& other);
  /// In the caller's transaction: access_count += n and last_accessed_us = the latest access
  /// for each event (events deleted since are skipped). Returns the events updated.
  std::int64_t apply(SQLite::Database& db) const;

 private:
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> counts_;  // seq -> (n, last)
};

}  // namespace reflectd::store
