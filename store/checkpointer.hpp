#pragma once
// WAL checkpoints off the committing threads. SQLite's autocheckpoint runs inside the COMMIT
// that pushes the WAL past 1,000 pages: that thread copies the pages back into the database
// and fsyncs it while it still holds the write lock (for the writer: between two groups; for
// a job: while ingest waits at the write gate, up to 200 ms measured). A Checkpointer owns a
// thread and a connection of its own; connections attached to it replace the autocheckpoint
// with a WAL hook that wakes that thread (PASSIVE checkpoint: copies what no reader still
// needs, never blocks a writer) once the WAL holds `pages` pages. Past kInlineFactor times
// that the committing connection checkpoints itself, as SQLite would, so the WAL stays
// bounded when the thread cannot keep up or its checkpoints keep failing (disk full: logged).
// That bound is also what lets the WAL start over under back-to-back write transactions:
// SQLite restarts it only for a write transaction whose snapshot began with every frame
// copied, and the next job chunk or ingest group begins while the thread is still copying.
//
// Used by store::Writer (its own connection and, through share_checkpointer(), the jobs'),
// and by bench_jobs to run the jobs' connection as the daemon does.
//
// Thread-safety: attach() from the thread that owns the connection, before it commits; the
// hook runs on the committing threads. Errors: the constructor throws SQLite::Exception when
// its connection cannot be opened.

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "store/database.hpp"

namespace reflectd::store {

class Checkpointer {
 public:
  /// Opens its own connection to `database` (write access: a checkpoint writes the database
  /// file) and starts the thread. `pages` > 0: the WAL size, in pages, that wakes it.
  Checkpointer(const DatabaseOptions& database, std::int64_t pages);
  /// Stops and joins the thread. Every attached connection must be closed before.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  /// Hands `db`'s checkpoints to this thread (replaces its autocheckpoint).
  void attach(SQLite::Database& db);

  /// The WAL size, in multiples of `pages`, past which the committing connection checkpoints
  /// itself (16: 128 MiB of WAL at the default 1,000 pages of 8 KiB). 8 made the +10,000
  /// cycle after 1M events (~13,000 pages written) copy and fsync inside the cluster job's
  /// COMMIT: 16 took it from 1.10 to 1.02 s and the full cycle at 1M from 54.9 to 53.5 s,
  /// with ingest unchanged.
  static constexpr std::int64_t kInlineFactor = 16;

 private:
  static int wal_hook(void* self, sqlite3* db, const char* name, int pages);
  void run();
  void wake();

  std::int64_t pages_;
  SQLite::Database db_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool due_ = false;   // guarded by mutex_
  bool stop_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace reflectd::store
