#pragma once
// Opening reflectd's SQLite database and migrating its schema.
//
// Error policy: opening and migrating happen at startup, so failures throw
// SQLite::Exception or std::runtime_error with the file name and SQLite's message.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

namespace reflectd::store {

/// How a connection is used: the single writer, or a reader (status, queries, tests).
enum class Access { kWriter, kReader };

/// Page size of a database file reflectd creates, bytes (PRAGMA page_size). SQLite's default
/// is 4096. With 8192 the jobs' large B-trees have half the pages and the deepest lose a
/// level: the same instructions, fewer page-cache misses and WAL frames, and a full cycle
/// over 100,000 events takes ~10% less time (docs/PERFORMANCE.md).
/// A file keeps the page size it was created with: in WAL mode SQLite ignores the pragma on
/// an existing database (vacuum_database() in store/vacuum.hpp, `reflectd --vacuum`, converts
/// one with the daemon stopped).
inline constexpr int kPageSizeBytes = 8192;

/// Connection settings.
struct DatabaseOptions {
  std::string path;                  ///< Database file; its directory must exist.
  std::string synchronous = "full";  ///< off|normal|full|extra (PRAGMA synchronous).
  std::int64_t busy_timeout_ms = 5000;
};

/// Opens a connection in WAL mode with foreign keys on. A writer also creates the file
/// (mode 0600, pages of kPageSizeBytes), keeps its temporary files in memory (PRAGMA temp_store =
/// MEMORY: statement journals, temporary B-trees) and applies pending migrations. Readers open
/// read-only. Throws std::runtime_error naming the file and what is wrong with it or its directory
/// (missing, read-only filesystem, permission) when a writer cannot open it for writing;
/// SQLite::Exception for other SQLite failures (e.g. a corrupt file).
SQLite::Database open_database(const DatabaseOptions& options, Access access);

/// Highest schema version this build knows (the number of migrations).
int latest_schema_version();

/// Applies every migration above the database's PRAGMA user_version, each in its own
/// transaction that also bumps user_version. Throws std::runtime_error if the database is
/// newer than this build. Returns the version after migrating.
int migrate(SQLite::Database& db);

/// The same, stopping at version `up_to` (clamped to latest_schema_version()): lets tests
/// build a database of an older version and check that a later migration converts it.
int migrate(SQLite::Database& db, int up_to);

}  // namespace reflectd::store
