#pragma once
// SQL of the event tables (events, dead_letters), prepared once on the writer connection.
//
// Thread-safety: none; an EventStore belongs to the writer thread. Errors: storage failures
// throw SQLite::Exception; the Writer turns them into per-event results.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/event.hpp"
#include "store/lifecycle.hpp"

namespace reflectd::store {

/// Outcome of inserting one event.
struct InsertOutcome {
  std::int64_t seq = 0;    ///< Row id of the stored event, or of the earlier one on duplicate.
  bool duplicate = false;  ///< An event with the same uid was already stored.
};

class EventStore {
 public:
  /// Prepares the statements on `db`, which must be migrated and outlive this object.
  explicit EventStore(SQLite::Database& db);

  /// Inserts `event` with its resolved salience lifecycle unless its uid exists. Must run
  /// inside a transaction.
  InsertOutcome insert(const EventRecord& event, const ResolvedLifecycle& lifecycle);

  /// Row id of the event with this uid, if stored.
  std::optional<std::int64_t> find(const std::string& uid);

  /// Marks the medallions covering namespace `ns` stale (their refresh job rebuilds them).
  /// Cheap: an indexed UPDATE that touches at most the scopes of one namespace.
  void mark_medallions_stale(const std::string& ns);

  /// Keeps a rejected message with its reason (raw bytes, endpoint, µs since the epoch).
  void insert_dead_letter(std::string_view payload, std::string_view endpoint,
                          std::string_view reason, std::int64_t received_us);

 private:
  SQLite::Database& db_;
  SQLite::Statement insert_event_;
  SQLite::Statement find_uid_;
  SQLite::Statement insert_dead_letter_;
  SQLite::Statement mark_stale_;
};

}  // namespace reflectd::store
