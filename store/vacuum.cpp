#include "store/vacuum.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "store/database.hpp"
#include "store/umask_guard.hpp"

namespace reflectd::store {
namespace {

std::int64_t size_or_zero(const std::filesystem::path& path) {
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<std::int64_t>(bytes);
}

std::string mib(std::int64_t bytes) {
  return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
}

}  // namespace

VacuumReport vacuum_database(const std::string& path) {
  const auto started = std::chrono::steady_clock::now();
  if (!std::filesystem::is_regular_file(path)) {
    throw std::runtime_error("no database file at " + path);
  }
  VacuumReport report;
  report.file_bytes_before = size_or_zero(path) + size_or_zero(path + "-wal");
  // The rollback journal holds the original of every page VACUUM rewrites: the whole file.
  const std::filesystem::path directory = std::filesystem::absolute(path).parent_path();
  if (const auto space = std::filesystem::space(directory);
      static_cast<std::int64_t>(space.available) < report.file_bytes_before) {
    throw std::runtime_error("not enough free disk to rewrite " + path + ": it needs about " +
                             mib(report.file_bytes_before) + " free in " + directory.string() +
                             ", which has " + mib(static_cast<std::int64_t>(space.available)));
  }
  // The rollback journal and SQLite's temporary copy hold every row: mode 0600, as the database.
  const UmaskGuard guard(0077);
  // No OPEN_CREATE: a mistyped path must not leave an empty database behind.
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
  report.page_size_before = db.execAndGet("PRAGMA page_size").getInt64();
  // Leaving WAL mode needs the only connection to the file; another one (a running reflectd)
  // makes it fail at once (no busy timeout is set) instead of waiting.
  try {
    db.exec("PRAGMA journal_mode = DELETE");
  } catch (const SQLite::Exception& error) {
    if ((error.getErrorCode() & 0xff) == SQLITE_BUSY) {
      throw std::runtime_error(path + " is in use by another process (a running reflectd?): " +
                               "stop it first, e.g. systemctl stop reflectd");
    }
    throw;
  }
  try {
    db.exec("PRAGMA page_size = " + std::to_string(kPageSizeBytes));
    db.exec("VACUUM");
  } catch (const SQLite::Exception&) {
    // The rollback left the file as it was; give it back its journal mode too (reflectd would
    // set it again at start anyway).
    try {
      db.exec("PRAGMA journal_mode = WAL");
    } catch (const SQLite::Exception&) {
      // Ignored: the error that stopped the VACUUM is the one to report.
    }
    throw;
  }
  db.exec("PRAGMA journal_mode = WAL");
  report.page_size_after = db.execAndGet("PRAGMA page_size").getInt64();
  report.file_bytes_after = size_or_zero(path);
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace reflectd::store
