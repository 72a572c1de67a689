#include "store/checkpointer.hpp"

#include <spdlog/spdlog.h>

namespace reflectd::store {

Checkpointer::Checkpointer(const DatabaseOptions& database, std::int64_t pages)
    : pages_(pages), db_(open_database(database, Access::kWriter)) {
  thread_ = std::thread([this] { run(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Checkpointer::attach(SQLite::Database& db) {
  ::sqlite3_wal_hook(db.getHandle(), &Checkpointer::wal_hook, this);
}

int Checkpointer::wal_hook(void* self, sqlite3* db, const char* name, int pages) {
  auto* checkpointer = static_cast<Checkpointer*>(self);
  if (pages >= checkpointer->pages_ * kInlineFactor) {
    // The thread cannot keep up (or keeps failing): bound the WAL as SQLite would.
    ::sqlite3_wal_checkpoint(db, name);
  } else if (pages >= checkpointer->pages_) {
    checkpointer->wake();
  }
  return SQLITE_OK;
}

void Checkpointer::wake() {
  {
    std::lock_guard lock(mutex_);
    due_ = true;
  }
  wake_.notify_one();
}

void Checkpointer::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return due_ || stop_; });
      if (stop_) return;
      due_ = false;
    }
    // A failure (disk full) leaves the WAL to grow; the next attempt or the hook's bound
    // retries.
    int log_pages = 0, checkpointed = 0;
    const int rc = ::sqlite3_wal_checkpoint_v2(db_.getHandle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                               &log_pages, &checkpointed);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      spdlog::warn("WAL checkpoint failed: {}", ::sqlite3_errstr(rc));
    }
  }
}

}  // namespace reflectd::store
