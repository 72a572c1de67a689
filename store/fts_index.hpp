#pragma once
// The full-text index of events (events_fts, FTS5 over events.content and events.namespace;
// porter stemming, migration 24), maintained in the
// background instead of by an insert trigger: acknowledging an event never waits for FTS5.
//
// Invariant (migration 6): every event with seq <= fts_state.indexed_seq is in events_fts and
// no other event is. index_pending() inserts the next events and advances indexed_seq in the
// caller's transaction, so a crash never loses or doubles an index entry. The delete and
// update triggers touch events_fts only for rows at or below the watermark, and deleting the
// watermark row lowers it to the highest remaining row, so a reused seq is indexed again.
//
// Who calls it: the Writer (store/writer.hpp) on its own thread, inside its group transaction
// whenever its queue has run dry, so under light load an event is searchable when it is
// acknowledged and under overload indexing trails by a reported lag.
//
// Thread-safety: none; an FtsIndex belongs to the thread that owns its connection.
// Errors: SQLite failures throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>

namespace reflectd::store {

/// How far search results are complete.
struct FtsLag {
  std::int64_t indexed_through_seq = 0;  ///< Every event with seq <= this is searchable.
  std::int64_t lag_events = 0;           ///< Stored events above it (not yet searchable).
};

/// Reads the lag on any connection (reader or writer), one consistent snapshot per call
/// when called inside a transaction.
FtsLag read_fts_lag(SQLite::Database& db);

class FtsIndex {
 public:
  /// Prepares the statements on `db`, which must be migrated and outlive this object.
  explicit FtsIndex(SQLite::Database& db);

  /// Indexes up to `max_events` events above the watermark, in seq order, and moves the
  /// watermark past them. Must run inside a write transaction. Returns the events indexed
  /// (0: nothing pending).
  std::int64_t index_pending(std::int64_t max_events);

  /// The watermark as last read or written on this connection.
  std::int64_t indexed_seq();

 private:
  SQLite::Statement watermark_;
  SQLite::Statement last_seq_;
  SQLite::Statement insert_;
  SQLite::Statement advance_;
};

/// Indexes everything pending in transactions of `batch_events` (tests, tools, crash
/// recovery checks). Returns the events indexed.
std::int64_t index_all_pending(SQLite::Database& db, std::int64_t batch_events = 10000);

}  // namespace reflectd::store
