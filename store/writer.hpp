#pragma once
// The single writer: one thread owns the write connection and commits events in groups
// (up to store.commit_max_events, or store.commit_max_delay_ms after the transaction began,
// whichever comes first; it commits at once when its queue runs dry, so an idle daemon never
// delays an acknowledgement). It also keeps the full-text index (store/fts_index.hpp): when
// its queue has run dry it indexes, inside the transaction it is about to commit, as many
// pending events as that transaction stored (under light load, its own: an event is searchable
// when it is acknowledged); a backlog (after a burst) is caught up by index-only transactions
// of up to store.fts_batch_events while nothing is queued, which end early when a request
// arrives, so catching up never holds an acknowledgement back by more than one chunk. Under
// overload (the queue never runs dry) indexing waits and the lag is reported.
// WAL checkpoints run on a second thread with its own connection (store/checkpointer.hpp:
// PASSIVE, started when the WAL passes store.checkpoint_pages), so the writer never copies
// pages back into the database between two commits; past 16 times that the writer
// checkpoints itself, as SQLite's autocheckpoint would, so the WAL stays bounded.
//
// Commit pipelining (store.synchronous full with store.commit_pipelining, on by default): the
// writer connection commits with synchronous=NORMAL (the COMMIT appends the WAL frames and
// returns without an fsync), and a third thread, the sync stage, makes the WAL durable
// (fdatasync of the -wal file) before it answers the group's requests and fires the commit
// listener; meanwhile the writer already inserts the next group. A group is answered only
// after an fsync that started after its COMMIT returned; one fsync covers every group
// committed before it. When nothing is queued behind a group and the sync stage is idle, the
// writer thread fsyncs and answers it itself (no thread hand-off at low load). While an fsync runs,
// the writer keeps its transaction open for events still arriving (up to store.commit_max_events /
// commit_max_delay_ms) instead of committing when its queue runs dry: such a commit could not be
// answered before the next fsync anyway. The power-loss argument is in docs/RELIABILITY.md
// ("Durability of acknowledged events"). A failed fsync answers every unacknowledged group with a
// storage error and stops the writer from writing (fsyncgate: the page cache's state is unknown)
// until the daemon is restarted.
//
// Thread-safety: submit(), stats() and the setters may be called from any thread. Completion
// callbacks run in submission order after the transaction holding their events committed and
// (pipelined) its WAL frames were synced, or failed: on the sync stage's thread when
// pipelined, else on the writer thread; they must be quick (post to another thread).
// Errors: storage failures never throw out of the writer; they become per-event results.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "common/histogram.hpp"
#include "store/checkpointer.hpp"
#include "store/database.hpp"
#include "store/event.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "store/knowledge_store.hpp"
#include "store/lifecycle.hpp"
#include "store/write_gate.hpp"

struct sqlite3;

namespace reflectd::store {

enum class EventStatus { kStored, kDuplicate, kRejected };

/// "stored", "duplicate" or "rejected".
const char* to_string(EventStatus status);

/// What happened to one event of a message.
struct EventResult {
  std::size_t index = 0;
  std::string id;
  EventStatus status = EventStatus::kRejected;
  std::int64_t seq = 0;  ///< events.seq when stored or duplicate.
  std::string error;     ///< Why it was rejected.
  /// kDuplicate by content (WriterOptions::content_dedup): the first copy's id.
  std::string duplicate_of;
  std::string ns;  ///< The event's namespace (empty when it could not be decoded).
  // Routing (seed 000 MemoryDecision): set for semantic events and write-time refusals.
  bool semantic = false;
  std::string decision_id;                   ///< knowledge.decision_id of a semantic event.
  std::string resolution_type;               ///< supersede|deprecate when it resolved others.
  std::vector<std::string> resolved_ids;     ///< Decisions it superseded or deprecated.
  std::vector<std::string> conflicting_ids;  ///< Active decisions that made it a conflict.
  int priority = 0;  ///< MemoryDecision.priority, 0-10 (store::semantic_priority).
};

/// A message kept in dead_letters.
struct DeadLetter {
  std::string payload;   ///< The raw message bytes.
  std::string endpoint;  ///< Where it arrived.
  std::string reason;
  std::int64_t received_us = 0;
};

/// Result of one WriteRequest, handed to its completion callback.
struct WriteResult {
  std::vector<EventResult> results;  ///< One per entry, in entry order.
  std::string message_error;         ///< Copied from the request.
  std::string storage_error;  ///< Set when the transaction failed ("storage unavailable: ...").
  std::string apply_result;   ///< What WriteRequest::apply returned.
  std::string apply_error;    ///< What it threw (its changes were rolled back).
};

/// One received message's worth of work (or one pulled batch's: `origins`).
struct WriteRequest {
  std::vector<EventEntry> entries;
  std::vector<DeadLetter> dead_letters;  ///< Written in the same transaction.
  std::string message_error;             ///< Whole-message error, passed through for ordering.
  /// true (push, subscribe): on a storage failure keep the request and retry with backoff,
  /// because nobody else will resend it. false (ingest): answer with the storage error so
  /// the publisher retries.
  bool retry_on_storage_error = false;
  /// Fire-and-forget only: where the message arrived and its raw bytes, so that events the
  /// writer itself refuses (conflicting decisions) are kept in dead_letters too.
  std::string dead_letter_endpoint;
  std::string raw_payload;
  /// A request that carries several messages (a JetStream pull): where each came from and its
  /// raw bytes (an empty endpoint: not kept, the message being a dead letter already), and for
  /// each entry the position in `origins` of its message. When set, they stand for
  /// dead_letter_endpoint and raw_payload.
  struct Origin {
    std::string endpoint;
    std::string raw_payload;
  };
  std::vector<Origin> origins;
  std::vector<std::uint32_t> entry_origins;    ///< One per entry, or empty.
  std::function<void(WriteResult&&)> on_done;  ///< May be empty.
  /// A change other than events (e.g. a reinforcement reported by an agent), run on the
  /// writer thread inside the group transaction, under a savepoint: if it throws, only its
  /// own changes roll back and the text goes to WriteResult::apply_error. Its return value
  /// goes to WriteResult::apply_result.
  std::function<std::string(SQLite::Database&)> apply;
};

/// Counters since start; read with relaxed loads.
struct WriterStats {
  std::atomic<std::uint64_t> stored{0};
  std::atomic<std::uint64_t> duplicate{0};
  std::atomic<std::uint64_t> rejected{0};
  std::atomic<std::uint64_t> dead_letters{0};
  std::atomic<std::uint64_t> commits{0};
  std::atomic<std::uint64_t> storage_errors{0};
  std::atomic<std::uint64_t> queue_events{0};
  std::atomic<std::int64_t> last_seq{0};         ///< Highest events.seq committed.
  std::atomic<std::int64_t> fts_indexed_seq{0};  ///< Full-text watermark committed.
  std::atomic<std::uint64_t> fts_indexed{0};     ///< Events indexed since start.
  /// The COMMIT of each group transaction (SQLite writing its frames to the WAL).
  Histogram commit_duration{Histogram::latency_bounds_s()};
  /// Each fdatasync of the WAL by the sync stage (pipelined commits only).
  Histogram wal_sync_duration{Histogram::latency_bounds_s()};
};

/// Makes the WAL durable for the sync stage (commit pipelining).
/// Thread-safety: sync() is called from the sync stage's thread only.
class WalSyncer {
 public:
  virtual ~WalSyncer() = default;
  /// Makes every byte written to the WAL before the call durable. Returns 0, or the errno
  /// of the failure (after which nothing the kernel held is known to be on disk).
  virtual int sync() = 0;
};

/// fdatasync(2) on a descriptor of `wal_path` opened here (before any write it must cover,
/// so that a writeback error is reported to it). Throws std::runtime_error naming the file
/// when it cannot be opened.
std::unique_ptr<WalSyncer> make_fdatasync_syncer(const std::string& wal_path);

/// The writer's settings. The daemon builds them from store.* (daemon::writer_options); the
/// defaults here are those keys' defaults (config/keys.cpp, compared by config_test), for the
/// tests and benchmarks that build a writer without a configuration.
struct WriterOptions {
  DatabaseOptions database;
  DecayProfiles profiles;
  std::int64_t commit_max_events = 2000;
  std::int64_t commit_max_delay_ms = 20;
  std::int64_t queue_capacity_events = 20000;  ///< Events queued before submit() refuses.
  std::int64_t max_pages = 0;                  ///< PRAGMA max_page_count; 0 = unlimited.
  /// Most events indexed for full-text search in one transaction (bounds how long an event
  /// arriving meanwhile waits, and the work added to one commit).
  std::int64_t fts_batch_events = 2000;
  /// WAL size in pages that wakes the background checkpointer (0 = SQLite's autocheckpoint
  /// on the writer thread, 1000 pages).
  std::int64_t checkpoint_pages = 1000;
  std::int64_t cache_mib = 64;  ///< PRAGMA cache_size of the writer connection, MiB.
  /// Content-hash deduplication (store.dedup); see store::ContentDedup.
  ContentDedup content_dedup = ContentDedup::kOff;
  /// Shared with the jobs' connection (not owned; must outlive the writer); nullptr = none.
  /// Every write transaction takes the writer's turn first, waiting at most
  /// database.busy_timeout_ms for a job inside; past that the group fails with kJobBusyError.
  WriteGate* gate = nullptr;
  /// With database.synchronous "full": commit with synchronous=NORMAL and acknowledge after
  /// the sync stage's fsync (see the header comment). Ignored for off, normal and extra.
  bool commit_pipelining = true;
  /// Builds the sync stage's WalSyncer from the -wal file's path; empty = fdatasync
  /// (make_fdatasync_syncer). Tests inject one that holds or fails the fsync.
  std::function<std::unique_ptr<WalSyncer>(const std::string& wal_path)> make_syncer;
  /// Called on the writer thread after each COMMIT returned, before the sync stage covers it
  /// (tests await it; must be quick). May be empty.
  std::function<void()> after_commit;
};

/// The storage error of a group whose writer waited store.busy_timeout_ms for a job of this
/// daemon to end its write transaction (not another process: that is "database is locked").
inline constexpr const char* kJobBusyError =
    "storage busy: a background job holds the write lock (retry later)";

class Writer {
 public:
  /// Opens (creating and migrating) the database on the calling thread so that startup
  /// errors throw here, then starts the writer thread. `on_space` is called on the writer
  /// thread when the queue drained below half after a refused submit().
  Writer(WriterOptions options, const Clock& clock, std::function<void()> on_space = {});
  /// Drains and stops (see stop()).
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Queues a request. Returns false without taking it when the queue is full (a request is
  /// always accepted into an empty queue, whatever its size) or the writer is stopping.
  /// `ignore_capacity` queues it even when full (used once, at shutdown, for messages the bus
  /// already read).
  bool submit(WriteRequest&& request, bool ignore_capacity = false);

  /// Commits everything queued, waits for the sync stage to sync and answer it, runs every
  /// callback, and joins the threads. Idempotent.
  void stop();

  /// Live settings (SIGHUP).
  void set_commit_limits(std::int64_t max_events, std::int64_t max_delay_ms);
  void set_fts_batch_events(std::int64_t events) { fts_batch_events_ = events; }
  void set_profiles(const DecayProfiles& profiles);
  /// PRAGMA max_page_count (0 = unlimited), applied by the writer thread before its next
  /// transaction.
  void set_max_pages(std::int64_t pages) { max_pages_ = pages; }
  /// Called on the writer thread after each commit with the events stored per namespace.
  /// Set it before events flow (it is not synchronised with the writer thread).
  void set_commit_listener(
      std::function<void(const std::map<std::string, std::uint64_t>&)> listener) {
    commit_listener_ = std::move(listener);
  }

  const WriterStats& stats() const { return stats_; }

  /// True when commits are pipelined (store.synchronous full and commit_pipelining).
  bool pipelined() const { return syncer_ != nullptr; }

  /// Makes `db` (another write connection of this process: the jobs') hand its WAL
  /// checkpoints to this writer's checkpointer thread instead of running them inside its own
  /// COMMIT, where SQLite's autocheckpoint would copy pages and fsync while the connection
  /// still holds the write gate (measured: up to 200 ms of ingest waiting per job commit).
  /// Past 16 times store.checkpoint_pages it checkpoints itself, as SQLite would. No-op when
  /// checkpoint_pages is 0. `db` must be closed before the writer is destroyed.
  void share_checkpointer(SQLite::Database& db);

 private:
  // A group handed from the writer to whoever answers it (the sync stage when pipelined).
  struct Completion {
    std::vector<WriteRequest> requests;
    std::vector<WriteResult> results;  // one per request
    bool committed = false;            // false: results already carry the group's storage error
    std::size_t events = 0;
  };
  void run();
  void run_sync_stage();
  // Syncs the WAL when the batch holds a commit (or fails it when poisoned), then answers
  // the batch in order. Returns its events. Called by one thread at a time (syncing_).
  std::size_t sync_and_answer(std::deque<Completion>& batch);
  void complete(Completion&& completion);
  void answer(Completion& completion);
  void fail_synced(Completion& completion, const std::string& error);
  int timed_sync();  // syncer_->sync(), recorded in stats_.wal_sync_duration
  void answer_leftovers();
  // One group commit: requests taken from the queue and written in one transaction, then
  // answered (or retried / failed together on a storage error). Writer thread only.
  void commit_group();
  // The next queued request for the open group (waiting for more while an fsync runs and the
  // group is not empty), or nullopt when none is queued; `space_freed` is set when taking it
  // ended a refusal.
  std::optional<WriteRequest> next_request(bool group_open, std::int64_t start_us,
                                           bool& space_freed);
  // Writes one request's entries, apply function (in a savepoint: its own error is its
  // result's) and dead letters inside the open transaction; throws SQLite::Exception on a
  // storage error, which fails the group.
  WriteResult write_request(WriteRequest& request, const DecayProfiles& profiles);
  // A group whose transaction failed: requests that ask for it are queued again (after a
  // 250 ms back-off), the others answered with `storage_error`.
  void fail_group(std::vector<WriteRequest>& taken, std::size_t events,
                  const std::string& storage_error);
  bool release_refusal();  // with mutex_ held
  // Before a group's transaction: throws SQLite::Exception when the database file was deleted
  // or moved, and applies a changed store.max_pages.
  void prepare_connection();
  bool fts_pending() const { return fts_indexed_seq_ < last_seq_; }
  // Indexes up to `limit` pending events inside the open transaction, kIndexChunkEvents at a
  // time, and stops early when a write request is queued: it would wait for the whole batch.
  // Groups that carry acknowledgements index only as many events as they stored (see
  // commit_group). Measured with `bench_ingest --modes latency-jobs --preload 300000`:
  // 2,000-event steps inside paced acknowledgements put ack p90 at 31-35 ms while the 300k
  // preloaded events were being indexed.
  void index_step(std::int64_t limit);
  static constexpr std::int64_t kIndexChunkEvents = 100;  // about 0.7 ms of indexing here
  // `position`: the entry's place in request.entries (its message, for a refusal's dead
  // letter).
  EventResult write_entry(std::size_t position, const WriteRequest& request,
                          const DecayProfiles& profiles);

  WriterOptions options_;
  const Clock& clock_;
  std::function<void()> on_space_;
  std::function<void(const std::map<std::string, std::uint64_t>&)> commit_listener_;
  SQLite::Database db_;
  EventStore event_store_;
  KnowledgeStore knowledge_;
  FtsIndex fts_;
  WriterStats stats_;
  std::atomic<std::int64_t> fts_batch_events_;
  // Writer thread only: the highest seq written (possibly by a rolled-back transaction; an
  // index step that finds nothing resets it) and the committed full-text watermark.
  std::int64_t last_seq_ = 0;
  std::int64_t fts_indexed_seq_ = 0;
  std::int64_t txn_fts_seq_ = 0;  // the watermark inside the open transaction
  std::atomic<std::int64_t> max_events_;
  std::atomic<std::int64_t> max_delay_us_;
  std::atomic<std::int64_t> max_pages_;
  std::int64_t applied_max_pages_ = -1;  // writer thread only
  std::int64_t unlimited_pages_ = 0;     // the connection's default max_page_count

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<WriteRequest> queue_;
  // Checkpoints of db_ and of the jobs' connection (nullptr when checkpoint_pages is 0). Its
  // hook is on db_, which is destroyed after it (reverse declaration order), when no commit
  // can run any more.
  std::unique_ptr<Checkpointer> checkpointer_;
  DecayProfiles profiles_;  // guarded by mutex_
  std::size_t queued_events_ = 0;
  bool stopping_ = false;
  bool refused_ = false;
  // A batch is being synced and answered (by the sync stage, or inline by the writer);
  // guarded by mutex_, set by the stage under sync_mutex_ too.
  bool syncing_ = false;
  std::thread thread_;
  // The sync stage (pipelined only).
  std::unique_ptr<WalSyncer> syncer_;
  std::mutex sync_mutex_;
  std::condition_variable sync_wake_;   // work for the sync stage
  std::condition_variable sync_space_;  // the writer may commit again
  std::deque<Completion> sync_queue_;   // guarded by sync_mutex_
  std::size_t sync_events_ = 0;         // events committed, not yet answered; sync_mutex_
  bool sync_stop_ = false;              // guarded by sync_mutex_
  std::string poison_;                  // the failed fsync's error; sync_mutex_
  std::atomic<bool> poisoned_{false};
  std::thread sync_thread_;
};

}  // namespace reflectd::store
