#pragma once
// forget: archive or delete events.
//
//  - archive: status 'archived' (seed 002's auto_prune does the same on schedule). The row,
//    its index entries and what the jobs derived stay; reads and jobs skip it; `restore`
//    brings it back. Runs on the writer thread.
//  - delete: the event's content leaves every place it reached. The events row and its
//    full-text postings go (then the index is optimized so that no segment keeps its terms);
//    its facts go and the facts they superseded are current again; an agent's decision it
//    carried goes, the decisions that one superseded are active again, and the audit rows
//    that quoted its rationale are redacted; everything the jobs derived for its namespace is
//    cleared (memory_ops/derived_state.hpp) and rebuilt by the jobs from the events left.
//    With SQLite's secure_delete on (store/database.cpp sets it on every connection) freed
//    cells and pages are zeroed, and a TRUNCATE checkpoint then empties the WAL, so that no
//    free page and no log frame keeps the text. Runs on the jobs' thread (Scheduler::
//    request_task), never beside a job. One audit row per event, action 'delete', without the
//    content: previous = {"namespace","kind","seq","status"}.
//
// Deletion policies (seed 002): `never` refuses every forget; a pinned event must be unpinned
// first; `manual_only` and `auto_prune` events may be forgotten. Listed by id, such an event
// fails the whole request; matched by a filter, it is left out and listed in "kept".
//
// Error policy: result values for input; SQLite::Exception on storage errors (the caller's
// transaction rolls back, so nothing is half deleted). Thread-safety: one connection's thread.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobs/job.hpp"
#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

/// Text that replaces a rationale in the audit log when the event it quoted is deleted.
inline constexpr const char* kForgottenRationale = "[forgotten]";

/// Applies the deletion policies above. Returns the events that may be forgotten and appends
/// the others to `kept` ({"id","reason"}); when `by_ids`, returns nullopt and sets `error`
/// instead.
std::optional<std::vector<SelectedEvent>> forgettable(std::vector<SelectedEvent> events,
                                                      bool by_ids, const std::string& cmd,
                                                      nlohmann::json& kept, std::string& error);

/// Archives the active ones of `events` with one audit row each ('archive', `rationale`).
/// Returns how many changed. Must run inside a write transaction.
std::int64_t archive_events(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                            const std::string& actor, std::int64_t now_us,
                            const std::string& rationale);

/// What delete_events() did.
struct DeleteOutcome {
  std::int64_t events_deleted = 0;
  std::int64_t facts_deleted = 0;
  std::int64_t agent_decisions_deleted = 0;
  std::int64_t audit_rows_redacted = 0;
  std::int64_t derived_rows_cleared = 0;
  std::set<std::string> namespaces;  ///< Whose derived state the jobs must rebuild.
  bool wal_truncated = false;        ///< Set by forget_events().
  // Set by forget_events(): the stages' wall times (ms, the jobs' monotonic clock) and the
  // write transactions the clear took (more than one when it gave way to the writer).
  std::int64_t clear_ms = 0;
  std::int64_t clear_transactions = 0;
  std::int64_t delete_ms = 0;
  std::int64_t optimize_ms = 0;
  nlohmann::json to_json() const;
};

/// Deletes `events` as described above, except the clear of their namespaces' derived state
/// (done before, by forget_events()), the index optimization and the checkpoint
/// (optimize_full_text_index(), truncate_wal(), after the commit). Must run inside a write
/// transaction on a connection whose secure_delete is on and whose foreign keys are off; a row
/// left referring to a deleted event (a bug: a derived table missing from the clear) throws
/// std::logic_error naming it, and the transaction rolls back.
DeleteOutcome delete_events(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                            const std::string& actor, std::int64_t now_us,
                            const std::string& rationale);

/// The whole hard delete on the jobs' connection (a forget's or the retention job's run):
///  1. the events' namespaces are marked for a clear (memory_ops/derived_state.hpp), in one
///     short transaction;
///  2. their derived state is cleared in chunks that give way to the writer (with any clear
///     a crash left unfinished);
///  3. delete_events() in one write transaction;
///  4. the index optimization in another, then truncate_wal().
/// A crash or a cancellation before 3 deletes no event: the clear is finished at the next
/// start (finish_pending_clears()) and the jobs rebuild the namespace from all its events; a
/// rerun of the forget then does it all. Everything runs with foreign keys off on that
/// connection: with them on, SQLite scans every child table that has no index on its reference
/// to events once per deleted event (10,000 events: seconds even on a small store).
/// Errors: SQLite::Exception, JobCancelled, std::logic_error (above).
DeleteOutcome forget_events(jobs::JobContext& ctx, const std::vector<SelectedEvent>& events,
                            const std::string& actor, const std::string& rationale);

/// Finishes the clears a crash or a cancellation left (step 2 above) and returns the
/// namespaces cleared: the jobs must rebuild them. Run it before any job (the daemon queues it
/// at start). Errors: SQLite::Exception, JobCancelled.
std::set<std::string> finish_pending_clears(jobs::JobContext& ctx);

/// FTS5 'optimize' of events_fts: merges the index into one segment, which drops the postings
/// of deleted events (O(index size)). Must run inside a write transaction.
void optimize_full_text_index(SQLite::Database& db);

/// PRAGMA wal_checkpoint(TRUNCATE) outside any transaction. Returns whether the WAL was
/// emptied (false when a reader kept it busy: a later checkpoint empties it).
bool truncate_wal(SQLite::Database& db);

}  // namespace reflectd::memory_ops
