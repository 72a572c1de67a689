#include "store/writer.hpp"

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "store/event_store.hpp"

namespace reflectd::store {
namespace {

// Where the message of entry `position` arrived and its raw bytes: its origin in a request
// that carries several messages, else the request's own.
std::pair<const std::string&, const std::string&> refusal_origin(const WriteRequest& request,
                                                                 std::size_t position) {
  if (position < request.entry_origins.size()) {
    const WriteRequest::Origin& origin = request.origins[request.entry_origins[position]];
    return {origin.endpoint, origin.raw_payload};
  }
  return {request.dead_letter_endpoint, request.raw_payload};
}

std::size_t weight(const WriteRequest& request) {
  return std::max<std::size_t>(1, request.entries.size());
}

std::string describe_storage_error(const SQLite::Exception& error) {
  switch (error.getErrorCode()) {
    case SQLITE_FULL: return "storage unavailable: disk full";
    case SQLITE_READONLY: return "storage unavailable: database is read-only";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "storage unavailable: database is locked by another process";
    case SQLITE_CANTOPEN: return std::string("storage unavailable: ") + error.what();
    case SQLITE_IOERR: return std::string("storage unavailable: I/O error: ") + error.what();
    default: return std::string("storage unavailable: ") + error.what();
  }
}

// The writer's turn at the write gate timed out (a job kept the lock).
struct GateTimeout {};

// A WAL fsync failed earlier: nothing more is written until a restart.
struct Poisoned {};

// The answer to a request whose events were not (durably) stored.
WriteResult failed_result(const WriteRequest& request, const std::string& storage_error) {
  WriteResult failed;
  failed.message_error = request.message_error;
  failed.storage_error = storage_error;
  for (const EventEntry& entry : request.entries) {
    EventResult r;
    r.index = entry.index;
    r.id = entry.id;
    r.status = EventStatus::kRejected;
    r.error = entry.event ? storage_error : entry.error;
    failed.results.push_back(std::move(r));
  }
  return failed;
}

class FdatasyncSyncer final : public WalSyncer {
 public:
  explicit FdatasyncSyncer(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC)) {
    if (fd_ < 0) {
      throw std::runtime_error("cannot open the WAL " + path +
                               " for the sync stage: " + std::strerror(errno));
    }
  }
  ~FdatasyncSyncer() override { ::close(fd_); }
  FdatasyncSyncer(const FdatasyncSyncer&) = delete;
  FdatasyncSyncer& operator=(const FdatasyncSyncer&) = delete;

  int sync() override {
    int rc = 0;
    do {
      rc = ::fdatasync(fd_);
    } while (rc != 0 && errno == EINTR);
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

bool is_full(const std::string& synchronous) {
  std::string lower = synchronous;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "full";
}

}  // namespace

std::unique_ptr<WalSyncer> make_fdatasync_syncer(const std::string& wal_path) {
  return std::make_unique<FdatasyncSyncer>(wal_path);
}

const char* to_string(EventStatus status) {
  switch (status) {
    case EventStatus::kStored: return "stored";
    case EventStatus::kDuplicate: return "duplicate";
    case EventStatus::kRejected: return "rejected";
  }
  return "rejected";
}

Writer::Writer(WriterOptions options, const Clock& clock, std::function<void()> on_space)
    : options_(std::move(options)),
      clock_(clock),
      on_space_(std::move(on_space)),
      db_(open_database(options_.database, Access::kWriter)),
      event_store_(db_, NamespaceTimes::kPerTransaction),
      knowledge_(db_),
      fts_(db_),
      fts_batch_events_(options_.fts_batch_events),
      max_events_(options_.commit_max_events),
      max_delay_us_(options_.commit_max_delay_ms * 1000),
      max_pages_(options_.max_pages),
      profiles_(options_.profiles) {
  unlimited_pages_ = db_.execAndGet("PRAGMA max_page_count").getInt64();
  db_.exec("PRAGMA cache_size = " + std::to_string(-options_.cache_mib * 1024));
  last_seq_ = db_.execAndGet("SELECT coalesce(max(seq), 0) FROM events").getInt64();
  event_store_.enable_content_dedup(options_.content_dedup);
  fts_indexed_seq_ = fts_.indexed_seq();
  stats_.last_seq = last_seq_;
  stats_.fts_indexed_seq = fts_indexed_seq_;
  if (options_.commit_pipelining && is_full(options_.database.synchronous)) {
    // The reads above opened (created) the -wal file; the syncer's descriptor must exist
    // before the first write it covers.
    db_.exec("PRAGMA synchronous = NORMAL");
    const std::string wal = ::sqlite3_filename_wal(::sqlite3_db_filename(db_.getHandle(), "main"));
    syncer_ = options_.make_syncer ? options_.make_syncer(wal) : make_fdatasync_syncer(wal);
    sync_thread_ = std::thread([this] { run_sync_stage(); });
  }
  if (options_.checkpoint_pages > 0) {
    checkpointer_ = std::make_unique<Checkpointer>(options_.database, options_.checkpoint_pages);
    checkpointer_->attach(db_);
  }
  thread_ = std::thread([this] { run(); });
}

Writer::~Writer() { stop(); }

void Writer::share_checkpointer(SQLite::Database& db) {
  if (checkpointer_) checkpointer_->attach(db);
}

bool Writer::submit(WriteRequest&& request, bool ignore_capacity) {
  const std::size_t events = weight(request);
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    const auto capacity = static_cast<std::size_t>(options_.queue_capacity_events);
    if (!ignore_capacity && !queue_.empty() && queued_events_ + events > capacity) {
      refused_ = true;
      return false;
    }
    queued_events_ += events;
    stats_.queue_events.store(queued_events_, std::memory_order_relaxed);
    queue_.push_back(std::move(request));
  }
  wake_.notify_one();
  return true;
}

void Writer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The writer has handed over its last group: let the sync stage sync and answer it.
  {
    std::lock_guard lock(sync_mutex_);
    sync_stop_ = true;
  }
  sync_wake_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();
  answer_leftovers();
}

void Writer::set_commit_limits(std::int64_t max_events, std::int64_t max_delay_ms) {
  max_events_ = max_events;
  max_delay_us_ = max_delay_ms * 1000;
}

void Writer::set_profiles(const DecayProfiles& profiles) {
  std::lock_guard lock(mutex_);
  profiles_ = profiles;
}

EventResult Writer::write_entry(std::size_t position, const WriteRequest& request,
                                const DecayProfiles& profiles) {
  const EventEntry& entry = request.entries[position];
  EventResult r;
  r.index = entry.index;
  r.id = entry.id;
  if (!entry.event) {
    r.status = EventStatus::kRejected;
    r.error = entry.error;
    return r;
  }
  const EventRecord& event = *entry.event;
  r.ns = event.ns;
  if (options_.content_dedup != ContentDedup::kOff && !event_store_.find(event.uid)) {
    if (auto copy = event_store_.find_same_content(event)) {
      r.status = EventStatus::kDuplicate;
      r.seq = copy->seq;
      r.duplicate_of = std::move(copy->uid);
      return r;
    }
  }
  if (event.storage_class == StorageClass::kEpisodic) {
    const InsertOutcome outcome = event_store_.insert(event, resolve_lifecycle(event, profiles));
    r.status = outcome.duplicate ? EventStatus::kDuplicate : EventStatus::kStored;
    r.seq = outcome.seq;
    if (!outcome.duplicate) last_seq_ = std::max(last_seq_, outcome.seq);
    return r;
  }
  r.semantic = true;
  if (const auto existing = event_store_.find(event.uid)) {
    r.status = EventStatus::kDuplicate;
    r.seq = *existing;
    r.decision_id = event.uid;
    return r;
  }
  const Admission admission = knowledge_.admit(event);
  if (admission.refused) {
    r.status = EventStatus::kRejected;
    r.error = admission.reason;
    r.conflicting_ids = admission.conflicting_ids;
    if (const auto [endpoint, raw_payload] = refusal_origin(request, position); !endpoint.empty()) {
      event_store_.insert_dead_letter(raw_payload, endpoint, admission.reason, event.received_us);
      stats_.dead_letters.fetch_add(1, std::memory_order_relaxed);
    }
    return r;
  }
  const InsertOutcome outcome = event_store_.insert(event, resolve_lifecycle(event, profiles));
  r.status = EventStatus::kStored;
  r.seq = outcome.seq;
  last_seq_ = std::max(last_seq_, outcome.seq);
  r.decision_id = knowledge_.record(event, outcome.seq, admission, clock_.now_us());
  r.resolution_type = admission.resolution_type;
  r.resolved_ids = admission.resolved_ids;
  r.priority = semantic_priority(event, admission);
  return r;
}

void Writer::index_step(std::int64_t limit) {
  db_.exec("SAVEPOINT fts");
  try {
    std::int64_t indexed = 0;
    while (indexed < limit) {
      const std::int64_t chunk = std::min(kIndexChunkEvents, limit - indexed);
      const std::int64_t done = fts_.index_pending(chunk);
      indexed += done;
      if (done < chunk) break;  // nothing left above the watermark
      {
        // A request waiting for this transaction to end would wait for the whole batch.
        const std::lock_guard lock(mutex_);
        if (!queue_.empty()) break;
      }
    }
    db_.exec("RELEASE fts");
    if (indexed == 0) {
      last_seq_ = txn_fts_seq_;  // what looked pending was rolled back
    } else {
      txn_fts_seq_ = fts_.indexed_seq();
      stats_.fts_indexed.fetch_add(static_cast<std::uint64_t>(indexed), std::memory_order_relaxed);
    }
  } catch (const SQLite::Exception& error) {
    const int code = error.getErrorCode() & 0xff;
    if (code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_READONLY ||
        code == SQLITE_BUSY) {
      throw;  // storage failures fail the group like any write
    }
    // Anything else (a damaged index) must not cost events: keep them, leave the index
    // where it was, and stop retrying until new events arrive.
    db_.exec("ROLLBACK TO fts");
    db_.exec("RELEASE fts");
    last_seq_ = txn_fts_seq_;
    spdlog::error("full-text indexing failed, search stays at seq {}: {}", txn_fts_seq_,
                  error.what());
  }
}

void Writer::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      // Pending index work keeps the thread busy only while nothing else is queued: an
      // index-only group commits at most store.fts_batch_events.
      wake_.wait(lock, [this] { return !queue_.empty() || stopping_ || fts_pending(); });
      // The index is not finished on stop: the next start carries on from the watermark.
      if (queue_.empty() && stopping_) return;
    }
    commit_group();
  }
}

void Writer::commit_group() {
  // Requests are taken one at a time and inserted while the transaction is open, so the
  // commit covers everything that arrived meanwhile (group commit).
  std::vector<WriteRequest> taken;
  std::vector<WriteResult> results;
  std::string storage_error;
  std::size_t events = 0;
  std::set<std::string> stored_namespaces;
  const std::int64_t start_us = clock_.monotonic_us();
  bool space_freed = false;
  txn_fts_seq_ = fts_indexed_seq_;
  DecayProfiles profiles;
  {
    std::lock_guard lock(mutex_);
    profiles = profiles_;
  }
  if (syncer_) {
    // Bounds what waits for the sync stage (memory, and the answers a slow disk delays):
    // past a queue's worth the writer waits, its queue fills and the bus pushes back.
    std::unique_lock lock(sync_mutex_);
    sync_space_.wait(lock, [this] {
      return sync_events_ < static_cast<std::size_t>(options_.queue_capacity_events) ||
             poisoned_.load();
    });
  }
  // What a failed group stored rolled back with it, and its times with them.
  event_store_.discard_namespace_times();
  try {
    if (poisoned_.load()) throw Poisoned{};
    prepare_connection();
    // Before SQLite's lock: the gate makes a job inside end its transaction at its next step.
    const WriterTurn turn(options_.gate, options_.database.busy_timeout_ms);
    if (!turn.entered()) throw GateTimeout{};
    SQLite::Transaction transaction(db_, SQLite::TransactionBehavior::IMMEDIATE);
    for (;;) {
      std::optional<WriteRequest> request = next_request(!taken.empty(), start_us, space_freed);
      if (!request) break;
      // Taken before writing: when a statement fails (disk full) this request is answered
      // or retried with the others of the group instead of vanishing.
      events += weight(*request);
      taken.push_back(std::move(*request));
      results.push_back(write_request(taken.back(), profiles));
      if (static_cast<std::int64_t>(events) >= max_events_.load() ||
          clock_.monotonic_us() - start_us >= max_delay_us_.load()) {
        break;
      }
    }
    for (const WriteResult& result : results) {
      for (const EventResult& r : result.results) {
        if (r.status == EventStatus::kStored) stored_namespaces.insert(r.ns);
      }
    }
    for (const auto& ns : stored_namespaces) event_store_.mark_medallions_stale(ns);
    event_store_.write_namespace_times();
    bool dry = false;
    {
      std::lock_guard lock(mutex_);
      dry = queue_.empty();
    }
    // Only when nothing waits: under overload the index must not slow acknowledgements.
    // A group that carries acknowledgements indexes as many events as it stored: with no
    // backlog, its own (searchable when acknowledged); with one, the backlog is caught up by
    // index-only transactions between requests instead of inside their acknowledgements.
    if (dry && fts_pending()) {
      const std::int64_t batch = fts_batch_events_.load();
      index_step(taken.empty()
                     ? batch
                     : std::clamp<std::int64_t>(static_cast<std::int64_t>(events), 1, batch));
    }
    const std::int64_t commit_start_us = clock_.monotonic_us();
    transaction.commit();
    stats_.commit_duration.observe_us(clock_.monotonic_us() - commit_start_us);
    fts_indexed_seq_ = txn_fts_seq_;
    stats_.last_seq.store(last_seq_, std::memory_order_relaxed);
    stats_.fts_indexed_seq.store(fts_indexed_seq_, std::memory_order_relaxed);
  } catch (const SQLite::Exception& error) {
    storage_error = describe_storage_error(error);
  } catch (const GateTimeout&) {
    storage_error = kJobBusyError;
  } catch (const Poisoned&) {
    std::lock_guard lock(sync_mutex_);
    storage_error = poison_;
  }
  if (!storage_error.empty() && taken.empty()) {
    // The transaction could not even begin (locked by another process or one of our jobs,
    // read-only): answer what is queued now rather than holding publishers until the fault
    // clears.
    std::lock_guard lock(mutex_);
    while (!queue_.empty() && static_cast<std::int64_t>(events) < max_events_.load()) {
      events += weight(queue_.front());
      queued_events_ -= weight(queue_.front());
      taken.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    stats_.queue_events.store(queued_events_, std::memory_order_relaxed);
    space_freed = release_refusal() || space_freed;
  }
  if (space_freed && on_space_) on_space_();
  if (!storage_error.empty()) {
    fail_group(taken, events, storage_error);
    return;
  }
  stats_.commits.fetch_add(1, std::memory_order_relaxed);
  if (options_.after_commit) options_.after_commit();
  Completion done;
  done.requests = std::move(taken);
  done.results = std::move(results);
  done.committed = true;
  done.events = events;
  complete(std::move(done));
}

void Writer::prepare_connection() {
  // A deleted or replaced database file would still accept writes through the open
  // descriptor and lose them at the next start: refuse until the file is back.
  if (int moved = 0;
      sqlite3_file_control(db_.getHandle(), "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
      moved) {
    throw SQLite::Exception("the database file was deleted or moved (" + db_.getFilename() + ")",
                            SQLITE_CANTOPEN);
  }
  if (const std::int64_t pages = max_pages_.load(); pages != applied_max_pages_) {
    // SQLite never sets it below the current size; 0 restores the connection's default.
    db_.execAndGet("PRAGMA max_page_count = " +
                   std::to_string(pages > 0 ? pages : unlimited_pages_));
    applied_max_pages_ = pages;
  }
}

// Called with mutex_ held: once the queue drained to half after a refused submit(), the
// refusal ends; true when it did (on_space_ is then called, without the lock).
bool Writer::release_refusal() {
  if (!refused_ || queued_events_ > static_cast<std::size_t>(options_.queue_capacity_events) / 2) {
    return false;
  }
  refused_ = false;
  return true;
}

std::optional<WriteRequest> Writer::next_request(bool group_open, std::int64_t start_us,
                                                 bool& space_freed) {
  std::unique_lock lock(mutex_);
  if (queue_.empty() && syncing_ && group_open) {
    // Pipelined, with an fsync running: a COMMIT now would be answered only after the next
    // fsync, which starts when this one ends; until then more events join this group for free
    // (fewer, fuller commits write fewer pages per event).
    const std::int64_t left_us = max_delay_us_.load() - (clock_.monotonic_us() - start_us);
    if (left_us > 0) {
      wake_.wait_for(lock, std::chrono::microseconds(left_us),
                     [this] { return !queue_.empty() || stopping_ || !syncing_; });
    }
  }
  if (queue_.empty()) return std::nullopt;
  WriteRequest request = std::move(queue_.front());
  queue_.pop_front();
  queued_events_ -= weight(request);
  stats_.queue_events.store(queued_events_, std::memory_order_relaxed);
  space_freed = release_refusal() || space_freed;
  return request;
}

WriteResult Writer::write_request(WriteRequest& request, const DecayProfiles& profiles) {
  WriteResult result;
  result.message_error = request.message_error;
  result.results.reserve(request.entries.size());
  for (std::size_t i = 0; i < request.entries.size(); ++i) {
    result.results.push_back(write_entry(i, request, profiles));
  }
  if (request.apply) {
    db_.exec("SAVEPOINT apply");
    try {
      result.apply_result = request.apply(db_);
      db_.exec("RELEASE apply");
      // An apply may store events (a revision): the index must learn they are pending.
      last_seq_ = std::max(last_seq_,
                           db_.execAndGet("SELECT coalesce(max(seq), 0) FROM events").getInt64());
    } catch (const SQLite::Exception& error) {
      // Storage failures fail the whole group like any other write.
      const int code = error.getErrorCode();
      if (code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_READONLY ||
          code == SQLITE_BUSY) {
        throw;
      }
      db_.exec("ROLLBACK TO apply");
      db_.exec("RELEASE apply");
      result.apply_error = error.what();
    } catch (const std::exception& error) {
      db_.exec("ROLLBACK TO apply");
      db_.exec("RELEASE apply");
      result.apply_error = error.what();
    }
  }
  for (const DeadLetter& letter : request.dead_letters) {
    event_store_.insert_dead_letter(letter.payload, letter.endpoint, letter.reason,
                                    letter.received_us);
  }
  return result;
}

void Writer::fail_group(std::vector<WriteRequest>& taken, std::size_t events,
                        const std::string& storage_error) {
  stats_.storage_errors.fetch_add(1, std::memory_order_relaxed);
  spdlog::error("write transaction of {} events failed: {}", events, storage_error);
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
  }
  std::vector<WriteRequest> retry;
  Completion failed;
  for (WriteRequest& request : taken) {
    // Once stopping, nothing will be retried: answer what can be answered and let go.
    if (request.retry_on_storage_error && !stopping) {
      retry.push_back(std::move(request));
      continue;
    }
    failed.events += weight(request);
    failed.results.push_back(failed_result(request, storage_error));
    failed.requests.push_back(std::move(request));
  }
  // Through the sync stage when pipelined, so that answers keep the submission order.
  complete(std::move(failed));
  if (!retry.empty()) {
    std::unique_lock lock(mutex_);
    // Iterators, not std::ranges::reverse_view: clang 14 (the fuzz build) cannot build
    // libstdc++ 12's views.
    for (auto it = retry.rbegin(); it != retry.rend(); ++it) {  // NOLINT(modernize-loop-convert)
      queued_events_ += weight(*it);
      queue_.push_front(std::move(*it));
    }
    stats_.queue_events.store(queued_events_, std::memory_order_relaxed);
    // Back off so a full disk is not hammered; stop() cuts the wait short.
    wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; });
  } else if (stopping) {
    spdlog::error("stopping with storage unavailable: unacknowledged push events were lost");
  } else if (taken.empty()) {
    // An index-only transaction failed: do not hammer the disk while the index is pending.
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::milliseconds(250),
                   [this] { return stopping_ || !queue_.empty(); });
  }
}

void Writer::complete(Completion&& completion) {
  if (completion.requests.empty()) return;  // an index-only transaction: nobody to answer
  if (!syncer_) {
    answer(completion);
    return;
  }
  bool inline_sync = false;
  std::deque<Completion> batch;
  {
    // Lock order sync_mutex_ then mutex_, as in run_sync_stage(): the stage's batch and its
    // syncing_ flag change under both, so "idle" here means everything before is answered.
    std::lock_guard sync_lock(sync_mutex_);
    std::lock_guard lock(mutex_);
    // Nothing behind this group and the stage idle: no other group could share the fsync,
    // so the writer syncs it itself and saves a thread hand-off on the answer's path (low
    // load: the latency of the non-pipelined writer). Under backlog the stage takes it.
    inline_sync = queue_.empty() && sync_queue_.empty() && !syncing_;
    if (inline_sync) {
      syncing_ = true;
      batch.push_back(std::move(completion));
    } else {
      sync_events_ += completion.events;
      sync_queue_.push_back(std::move(completion));
    }
  }
  if (!inline_sync) {
    sync_wake_.notify_one();
    return;
  }
  sync_and_answer(batch);
  {
    std::lock_guard lock(mutex_);
    syncing_ = false;
  }
}

void Writer::answer(Completion& completion) {
  std::vector<WriteRequest>& taken = completion.requests;
  std::vector<WriteResult>& results = completion.results;
  if (!completion.committed) {
    for (std::size_t i = 0; i < taken.size(); ++i) {
      stats_.rejected.fetch_add(results[i].results.size(), std::memory_order_relaxed);
      if (taken[i].on_done) taken[i].on_done(std::move(results[i]));
    }
    return;
  }
  std::map<std::string, std::uint64_t> stored_per_namespace;
  for (std::size_t i = 0; i < taken.size(); ++i) {
    for (std::size_t j = 0; j < results[i].results.size(); ++j) {
      const auto& entry = taken[i].entries[j];
      if (results[i].results[j].status == EventStatus::kStored && entry.event) {
        ++stored_per_namespace[entry.event->ns];
      }
    }
  }
  if (commit_listener_ && !stored_per_namespace.empty()) commit_listener_(stored_per_namespace);
  for (std::size_t i = 0; i < taken.size(); ++i) {
    for (const EventResult& r : results[i].results) {
      auto& counter = r.status == EventStatus::kStored      ? stats_.stored
                      : r.status == EventStatus::kDuplicate ? stats_.duplicate
                                                            : stats_.rejected;
      counter.fetch_add(1, std::memory_order_relaxed);
    }
    stats_.dead_letters.fetch_add(taken[i].dead_letters.size(), std::memory_order_relaxed);
    if (taken[i].on_done) taken[i].on_done(std::move(results[i]));
  }
}

void Writer::run_sync_stage() {
  for (;;) {
    std::deque<Completion> batch;
    {
      std::unique_lock lock(sync_mutex_);
      sync_wake_.wait(lock, [this] { return !sync_queue_.empty() || sync_stop_; });
      if (sync_queue_.empty()) return;  // stopping, and everything was answered
      batch.swap(sync_queue_);
      std::lock_guard writer_lock(mutex_);
      syncing_ = true;
    }
    const std::size_t events = sync_and_answer(batch);
    {
      std::lock_guard lock(sync_mutex_);
      sync_events_ -= events;
    }
    sync_space_.notify_all();
    {
      std::lock_guard lock(mutex_);
      syncing_ = false;
    }
    wake_.notify_all();
  }
}

std::size_t Writer::sync_and_answer(std::deque<Completion>& batch) {
  {
    // Every group in the batch committed before this fsync starts, so it covers them all
    // (frames are appended in commit order; docs/RELIABILITY.md).
    const bool covers_commits =
        std::any_of(batch.begin(), batch.end(), [](const Completion& c) { return c.committed; });
    std::string error;
    if (covers_commits) {
      if (poisoned_.load()) {
        std::lock_guard lock(sync_mutex_);
        error = poison_;
      } else if (const int code = timed_sync(); code != 0) {
        // fsyncgate: after a failed fsync the kernel may have dropped the dirty pages and a
        // retry would report success, so nothing written since the last good fsync can be
        // trusted. Never acknowledge it; stop writing until a restart recovers the WAL
        // from what is really on disk.
        error = std::string("storage unavailable: I/O error: syncing the WAL failed (") +
                std::strerror(code) + "); reflectd stores nothing more until it is restarted";
        {
          std::lock_guard lock(sync_mutex_);
          poison_ = error;
          poisoned_ = true;
        }
        stats_.storage_errors.fetch_add(1, std::memory_order_relaxed);
        spdlog::critical("fdatasync of the WAL failed: {}; refusing every write from now on",
                         std::strerror(code));
      }
    }
    std::size_t events = 0;
    for (Completion& completion : batch) {
      events += completion.events;
      if (completion.committed && !error.empty()) {
        fail_synced(completion, error);
      } else {
        answer(completion);
      }
    }
    return events;
  }
}

int Writer::timed_sync() {
  const std::int64_t start_us = clock_.monotonic_us();
  const int code = syncer_->sync();
  stats_.wal_sync_duration.observe_us(clock_.monotonic_us() - start_us);
  return code;
}

void Writer::fail_synced(Completion& completion, const std::string& error) {
  bool stopping = false;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
  }
  std::vector<WriteRequest> retry;
  for (WriteRequest& request : completion.requests) {
    if (request.retry_on_storage_error && !stopping) {
      retry.push_back(std::move(request));
      continue;
    }
    WriteResult failed = failed_result(request, error);
    stats_.rejected.fetch_add(failed.results.size(), std::memory_order_relaxed);
    if (request.on_done) request.on_done(std::move(failed));
  }
  if (retry.empty()) return;
  // Nobody else resends push events: back into the queue (the writer refuses them while it
  // is poisoned; stop() answers what is left).
  {
    std::lock_guard lock(mutex_);
    // Iterators, not std::ranges::reverse_view: clang 14 (the fuzz build) cannot build
    // libstdc++ 12's views.
    for (auto it = retry.rbegin(); it != retry.rend(); ++it) {  // NOLINT(modernize-loop-convert)
      queued_events_ += weight(*it);
      queue_.push_front(std::move(*it));
    }
    stats_.queue_events.store(queued_events_, std::memory_order_relaxed);
  }
  wake_.notify_one();
}

void Writer::answer_leftovers() {
  // Requests the sync stage handed back after the writer thread had ended (a failed fsync
  // while stopping): nothing will store them now.
  std::deque<WriteRequest> leftovers;
  {
    std::lock_guard lock(mutex_);
    leftovers.swap(queue_);
    queued_events_ = 0;
    stats_.queue_events.store(0, std::memory_order_relaxed);
  }
  if (leftovers.empty()) return;
  std::string error;
  {
    std::lock_guard lock(sync_mutex_);
    error = poison_.empty() ? std::string("storage unavailable: reflectd is stopping") : poison_;
  }
  spdlog::error("stopping with storage unavailable: {} unacknowledged messages were lost",
                leftovers.size());
  for (WriteRequest& request : leftovers) {
    WriteResult failed = failed_result(request, error);
    stats_.rejected.fetch_add(failed.results.size(), std::memory_order_relaxed);
    if (request.on_done) request.on_done(std::move(failed));
  }
}

}  // namespace reflectd::store
