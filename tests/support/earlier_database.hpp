#pragma once
// Database files as an earlier reflectd left them, for the tests of what a newer one does with
// them.

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>

namespace reflectd::test {

/// Creates `path` as older versions of reflectd created their databases:
/// SQLite's default 4 KiB pages, WAL mode, no table yet. Returns the open connection, so a
/// test can add rows before closing it. Errors: SQLite::Exception.
inline SQLite::Database create_4k_page_database(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("PRAGMA page_size = 4096");  // before the first write, which fixes the page size
  db.exec("PRAGMA journal_mode = WAL");
  return db;
}

}  // namespace reflectd::test
