#pragma once
// Rewriting a stopped daemon's database file (SQLite VACUUM) with kPageSizeBytes pages: how an
// operator converts a file an earlier reflectd created with 4 KiB pages (`reflectd --vacuum`).
//
// Error policy: an offline maintenance command, so failures throw (see vacuum_database()).

#include <cstdint>
#include <string>

namespace reflectd::store {

/// What vacuum_database() found and left.
struct VacuumReport {
  std::int64_t page_size_before = 0;   ///< bytes per page before (PRAGMA page_size)
  std::int64_t page_size_after = 0;    ///< bytes per page after: kPageSizeBytes
  std::int64_t file_bytes_before = 0;  ///< database file plus its -wal file, bytes
  std::int64_t file_bytes_after = 0;   ///< database file, bytes (no -wal is left)
  double seconds = 0.0;                ///< wall time of the rewrite, seconds
};

/// Rewrites the database at `path` with pages of kPageSizeBytes and without free pages, and
/// leaves it in WAL mode, rows, schema and PRAGMA user_version unchanged: `PRAGMA journal_mode
/// = DELETE` (which also checkpoints the WAL), `PRAGMA page_size`, `VACUUM`, `PRAGMA
/// journal_mode = WAL` (https://sqlite.org/pragma.html#pragma_page_size). The rewrite goes
/// through a rollback journal, so a crash or a full disk half way leaves the file as it was.
/// Takes time in proportion to the file (8-16 s per million events on the development VM).
/// Not thread-safe against other users of the file: it needs the file to itself.
/// Throws std::runtime_error naming the file when there is no file at `path` (none is created),
/// when another connection has it open ("in use": a running reflectd), when its directory has
/// less free space than the file's size (the rollback journal holds a copy of every page), or
/// when SQLite's temporary directory (SQLITE_TMPDIR, TMPDIR, /var/tmp, /usr/tmp, /tmp, the
/// current one: the first writable) has less than that for the new copy (both together when
/// they share a filesystem);
/// SQLite::Exception for other SQLite failures (e.g. a corrupt file, a disk that fills anyway).
VacuumReport vacuum_database(const std::string& path);

}  // namespace reflectd::store
