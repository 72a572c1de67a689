#include "store/sqlite_library.hpp"

#include <sqlite3.h>

namespace reflectd::store {

bool disable_sqlite_memory_statistics() noexcept {
  // SQLITE_MISUSE once SQLite is initialised.
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

}  // namespace reflectd::store
