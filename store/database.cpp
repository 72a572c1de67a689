#include "store/database.hpp"

#include <sqlite3.h>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "store/umask_guard.hpp"

namespace reflectd::store {
namespace {

std::string synchronous_pragma(const std::string& mode) {
  std::string upper = mode;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper != "OFF" && upper != "NORMAL" && upper != "FULL" && upper != "EXTRA") {
    throw std::runtime_error("invalid synchronous mode '" + mode + "'");
  }
  return "PRAGMA synchronous = " + upper;
}

// Why the writer could not open `path`, in the operator's terms: SQLite's own message ("unable
// to open database file") does not say which file or what is wrong with its directory.
std::string diagnose_open_failure(const std::string& path, const std::string& sqlite_message) {
  std::string message = "cannot open the database " + path + " for writing: " + sqlite_message;
  std::filesystem::path directory = std::filesystem::absolute(path).parent_path();
  struct statvfs fs {};
  if (!std::filesystem::is_directory(directory)) {
    message += " (directory " + directory.string() + " does not exist)";
  } else if (::statvfs(directory.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) {
    message += " (directory " + directory.string() + " is on a read-only filesystem)";
  } else if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    message += " (directory " + directory.string() + ": " + std::strerror(errno) + ")";
  } else if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), R_OK | W_OK) != 0) {
    message += " (" + std::string(std::strerror(errno)) + ")";
  }
  return message;
}

}  // namespace

SQLite::Database open_database(const DatabaseOptions& options, Access access) {
  if (access == Access::kReader) {
    SQLite::Database db(options.path, SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX,
                        static_cast<int>(options.busy_timeout_ms));
    db.exec("PRAGMA foreign_keys = ON");
    return db;
  }
  UmaskGuard guard(0077);
  try {
    SQLite::Database db(options.path,
                        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX,
                        static_cast<int>(options.busy_timeout_ms));
    // SQLite opens a read-only file read-only without complaint; the writer must be able to write.
    if (sqlite3_db_readonly(db.getHandle(), "main") == 1) {
      throw SQLite::Exception("attempt to write a readonly database", SQLITE_READONLY);
    }
    // Before the first write, which fixes a new file's page size; a no-op on an existing one.
    db.exec("PRAGMA page_size = " + std::to_string(kPageSizeBytes));
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(synchronous_pragma(options.synchronous));
    db.exec("PRAGMA foreign_keys = ON");
    // Statement journals in memory: a statement that writes several rows and can fail half
    // way (a batched insert, an upsert with foreign keys, a trigger's writes) keeps the pages
    // it changes in a statement journal, which SQLite spills to a temporary file past 64 KiB.
    // The cluster job opened and wrote such files all the time: 1 s of its 8.5 s at 100,000
    // events in the kernel. What they hold is bounded by the
    // pages one statement changes; the jobs' temporary B-trees are over a chunk's rows.
    db.exec("PRAGMA temp_store = MEMORY");
    // Deleted content is overwritten with zeros, in cells and in freed pages, so that a
    // forgotten event (memory_ops/forget.hpp) leaves no trace in the file. Debian builds SQLite
    // with this default; set here so that no build's default decides.
    db.exec("PRAGMA secure_delete = ON");
    migrate(db);
    return db;
  } catch (const SQLite::Exception& error) {
    const int code = error.getErrorCode() & 0xff;
    if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_PERM ||
        code == SQLITE_IOERR) {
      throw std::runtime_error(diagnose_open_failure(options.path, error.what()));
    }
    throw;
  }
}

}  // namespace reflectd::store
