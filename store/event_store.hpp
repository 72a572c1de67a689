#pragma once
// SQL of the event tables (events, dead_letters), prepared once on the writer connection.
//
// Thread-safety: none; an EventStore belongs to the writer thread. Errors: storage failures
// throw SQLite::Exception; the Writer turns them into per-event results.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
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

/// Content-hash deduplication (seed 004 content_hash; config store.dedup): an event whose
/// content's SHA-256 equals that of an event already stored in the same namespace (kNamespace)
/// or by the same agent in the same namespace (kAgent; no agent_id matches no agent_id) is a
/// duplicate of that first copy. kOff: only an equal uid makes a duplicate.
enum class ContentDedup { kOff, kNamespace, kAgent };

/// "off" | "namespace" | "agent" -> ContentDedup; nullopt for anything else. Pure.
std::optional<ContentDedup> parse_content_dedup(std::string_view text);

/// The first stored copy of an event's content.
struct StoredCopy {
  std::int64_t seq = 0;
  std::string uid;
};

/// Marks the medallion job's medallions covering namespace `ns` stale (agents' medallions,
/// table agent_medallions, change status only when an agent says so: seed 001), for a change
/// made outside the event path (a proposal's verdict); EventStore::mark_medallions_stale is the
/// writer's prepared form. Throws SQLite::Exception.
void mark_medallions_stale(SQLite::Database& db, const std::string& ns);

/// When insert() raises a namespace's newest event time (table event_namespaces, which the
/// importance job reads; migration 11 kept it by an AFTER INSERT trigger, migration 21 moved it
/// here: that trigger gave every event insert a sub-program and a statement journal, about a
/// third of the writer's time per event).
enum class NamespaceTimes {
  kPerEvent,        ///< right after each stored event: exact after every insert
  kPerTransaction,  ///< by write_namespace_times(), which the caller runs before COMMIT
};

class EventStore {
 public:
  /// Prepares the statements on `db`, which must be migrated and outlive this object.
  explicit EventStore(SQLite::Database& db, NamespaceTimes times = NamespaceTimes::kPerEvent);

  /// Inserts `event` with its resolved salience lifecycle unless its uid exists, and raises
  /// its namespace's newest event time as `times` says. Must run inside a transaction.
  InsertOutcome insert(const EventRecord& event, const ResolvedLifecycle& lifecycle);

  /// kPerTransaction: writes the newest event time of each namespace stored into since the
  /// last call or discard (one upsert per namespace). Run it inside the transaction that
  /// stored the events, before its COMMIT. No-op under kPerEvent.
  void write_namespace_times();

  /// kPerTransaction: forgets the times not written yet (their transaction rolled back).
  void discard_namespace_times() { pending_times_.clear(); }

  /// Turns content-hash deduplication on (any mode but kOff): creates the index
  /// events_content_hash (namespace, content_hash) if it is missing, which on a large store
  /// takes seconds once, and prepares the lookup. Throws SQLite::Exception.
  void enable_content_dedup(ContentDedup mode);
  /// Under content dedup, the earliest stored event with `event`'s content in its namespace
  /// (and of its agent under kAgent); nullopt when none or when dedup is off.
  std::optional<StoredCopy> find_same_content(const EventRecord& event);
  /// Row id of the event with this uid, if stored.
  std::optional<std::int64_t> find(const std::string& uid);

  /// Marks the medallions covering namespace `ns` stale (their refresh job rebuilds them).
  /// Cheap: an indexed UPDATE that touches at most the scopes of one namespace.
  void mark_medallions_stale(const std::string& ns);

  /// Keeps a rejected message with its reason (raw bytes, endpoint, µs since the epoch).
  void insert_dead_letter(std::string_view payload, std::string_view endpoint,
                          std::string_view reason, std::int64_t received_us);

 private:
  void raise_namespace_time(const std::string& ns, std::int64_t ts_us);

  SQLite::Database& db_;
  NamespaceTimes times_;
  std::map<std::string, std::int64_t> pending_times_;  // namespace -> newest ts_us (µs)
  SQLite::Statement insert_event_;
  // Prepared at its first use: an EventStore under kPerTransaction that never writes the
  // times also works on a schema before migration 11 (the migration tests' old databases).
  std::optional<SQLite::Statement> raise_time_;
  SQLite::Statement find_uid_;
  ContentDedup dedup_ = ContentDedup::kOff;
  std::optional<SQLite::Statement> find_content_;  // prepared by enable_content_dedup
  SQLite::Statement insert_dead_letter_;
  SQLite::Statement mark_stale_;
};

}  // namespace reflectd::store
