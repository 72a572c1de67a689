#include "store/database.hpp"

#include <sys/stat.h>

#include <cctype>
#include <optional>
#include <stdexcept>

namespace reflectd::store {
namespace {

// Files the writer creates (database, -wal, -shm) hold agents' memories: mode 0600.
class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t mask) : previous_(::umask(mask)) {}
  ~UmaskGuard() { ::umask(previous_); }
  UmaskGuard(const UmaskGuard&) = delete;
  UmaskGuard& operator=(const UmaskGuard&) = delete;

 private:
  mode_t previous_;
};

std::string synchronous_pragma(const std::string& mode) {
  std::string upper = mode;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper != "OFF" && upper != "NORMAL" && upper != "FULL" && upper != "EXTRA") {
    throw std::runtime_error("invalid synchronous mode '" + mode + "'");
  }
  return "PRAGMA synchronous = " + upper;
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
  SQLite::Database db(options.path,
                      SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX,
                      static_cast<int>(options.busy_timeout_ms));
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(synchronous_pragma(options.synchronous));
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  return db;
}

}  // namespace reflectd::store
