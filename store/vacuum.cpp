#include "store/vacuum.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
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

// Where SQLite puts VACUUM's temporary copy of the database: the first of these that is a
// directory this process may write, as SQLite's unix VFS picks it (unixTempFileDir() in
// os_unix.c; https://sqlite.org/tempfiles.html). SQLite reads the variables once, at its start;
// reflectd never changes its environment, so both see the same values.
std::filesystem::path sqlite_temp_directory() {
  const char* sqlite_tmpdir = std::getenv("SQLITE_TMPDIR");
  const char* tmpdir = std::getenv("TMPDIR");
  const std::array<const char*, 6> candidates{sqlite_tmpdir, tmpdir, "/var/tmp",
                                              "/usr/tmp",    "/tmp", "."};
  for (const char* candidate : candidates) {
    struct stat info {};
    if (candidate != nullptr && ::stat(candidate, &info) == 0 && S_ISDIR(info.st_mode) &&
        ::access(candidate, W_OK | X_OK) == 0) {
      return std::filesystem::absolute(candidate);
    }
  }
  return std::filesystem::current_path();
}

bool same_filesystem(const std::filesystem::path& a, const std::filesystem::path& b) {
  struct stat first {};
  struct stat second {};
  return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
         first.st_dev == second.st_dev;
}

std::int64_t available_bytes(const std::filesystem::path& directory) {
  return static_cast<std::int64_t>(std::filesystem::space(directory).available);
}

}  // namespace

VacuumReport vacuum_database(const std::string& path) {
  const auto started = std::chrono::steady_clock::now();
  if (!std::filesystem::is_regular_file(path)) {
    throw std::runtime_error("no database file at " + path);
  }
  VacuumReport report;
  report.file_bytes_before = size_or_zero(path) + size_or_zero(path + "-wal");
  // VACUUM writes the new file into a temporary one in SQLite's temporary directory, then
  // copies it back through a rollback journal beside the database, which holds the original
  // of every page it overwrites: up to the file's size in each place (twice that when they are
  // on one filesystem). Checked first, so a short disk is a clear error, not SQLITE_FULL.
  const std::filesystem::path directory = std::filesystem::absolute(path).parent_path();
  const std::filesystem::path temporary = sqlite_temp_directory();
  const bool shared = same_filesystem(directory, temporary);
  const std::int64_t needed = report.file_bytes_before * (shared ? 2 : 1);
  if (const std::int64_t available = available_bytes(directory); available < needed) {
    throw std::runtime_error(
        "not enough free disk to rewrite " + path + ": it needs about " + mib(needed) +
        " free in " + directory.string() +
        (shared ? " (the journal and SQLite's temporary copy in " + temporary.string() + ")"
                : std::string()) +
        ", which has " + mib(available));
  }
  if (!shared) {
    if (const std::int64_t available = available_bytes(temporary);
        available < report.file_bytes_before) {
      throw std::runtime_error("not enough free disk for SQLite's temporary copy of " + path +
                               ": it needs about " + mib(report.file_bytes_before) + " free in " +
                               temporary.string() +
                               " (SQLite's temporary directory; set SQLITE_TMPDIR to use "
                               "another), which has " +
                               mib(available));
    }
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
