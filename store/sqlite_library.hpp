#pragma once
// SQLite's process-wide settings, set once by main() before the first connection opens.

namespace reflectd::store {

/// Turns off SQLite's memory statistics (`sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)`).
///
/// With them on (SQLite's default), every allocation and free that SQLite makes, on every
/// connection and thread, takes one process-wide mutex to keep counters that reflectd never
/// reads. Debian's libsqlite3 is built with SQLITE_OMIT_LOOKASIDE, so a connection has no
/// per-connection allocator either: the jobs' statements allocate and free through that path
/// millions of times a cycle (binding a text copies it, building a record sizes a buffer),
/// and the writer and the jobs' connection take the same mutex. Off: 4.3% fewer
/// instructions in an incremental cycle of 10,000 events after 1M (callgrind, 9.56 -> 9.15 G).
///
/// What it costs: `sqlite3_memory_used()`, `sqlite3_memory_highwater()` and
/// `sqlite3_status(SQLITE_STATUS_MEMORY_USED, ...)` report 0, and `sqlite3_soft_heap_limit64()`
/// / `PRAGMA soft_heap_limit` and `hard_heap_limit` are not enforced; reflectd uses none of them
/// (its memory is bounded by each connection's `cache_size` and measured as the process's RSS).
///
/// SQLite accepts it only before `sqlite3_initialize()`, which the first `sqlite3_open*()`
/// calls: returns false when it came too late (the statistics then stay on; only speed
/// differs). Not thread-safe: call it before starting threads.
bool disable_sqlite_memory_statistics() noexcept;

}  // namespace reflectd::store
