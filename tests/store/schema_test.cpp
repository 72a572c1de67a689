// The checked-in schema (store/schema.sql) against the migrations (store/migration_list.hpp):
// a database migrated from empty holds exactly that schema, a database created from the file
// equals it, and so does one migrated from every earlier version.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "store/database.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace reflectd;

// The schema's own objects, in creation order, as `<sql>;` paragraphs. The tables a virtual
// table keeps its data in (FTS5's shadow tables) are left out: creating the virtual table
// creates them.
std::string schema_of(SQLite::Database& db) {
  SQLite::Statement query(db, R"sql(
SELECT m.sql FROM sqlite_master m
WHERE m.sql IS NOT NULL AND m.name NOT LIKE 'sqlite_%'
  AND NOT EXISTS (SELECT 1 FROM pragma_table_list l WHERE l.name = m.name AND l.type = 'shadow')
ORDER BY m.rowid)sql");
  std::string text;
  while (query.executeStep()) text += query.getColumn(0).getString() + ";\n\n";
  return text;
}

// The file without its heading (the "--" lines before the first statement).
std::string checked_in_schema() {
  std::ifstream in(std::string(REFLECTD_SOURCE_DIR) + "/store/schema.sql");
  REQUIRE(in.good());
  std::string line;
  std::stringstream text;
  bool heading = true;
  while (std::getline(in, line)) {
    if (heading && (line.starts_with("--") || line.empty())) continue;
    heading = false;
    text << line << '\n';
  }
  return text.str();
}

}  // namespace

TEST_CASE("store/schema.sql is the schema the migrations build") {
  test::TempDir dir;
  SQLite::Database migrated(dir.file("migrated.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  REQUIRE(store::migrate(migrated) == store::latest_schema_version());
  const std::string expected = schema_of(migrated);
  const std::string file = checked_in_schema();
  if (file != expected) {
    const std::string actual =
        (std::filesystem::temp_directory_path() / "reflectd-migrated-schema.sql").string();
    std::ofstream(actual) << expected;
    FAIL("store/schema.sql is not the migrated schema; the migrated one is in " + actual +
         " (put it below the file's heading when the change is meant)");
  }

  // Created from the file, at the latest version: the same schema, and nothing to migrate.
  SQLite::Database created(dir.file("created.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  created.exec(file);
  created.exec("PRAGMA user_version = " + std::to_string(store::latest_schema_version()));
  CHECK(store::migrate(created) == store::latest_schema_version());
  CHECK(schema_of(created) == expected);
}

TEST_CASE("a database of every earlier version migrates to the checked-in schema") {
  test::TempDir dir;
  const std::string expected = checked_in_schema();
  for (int version = 1; version < store::latest_schema_version(); ++version) {
    INFO("from version " << version);
    const std::string path = dir.file("v" + std::to_string(version) + ".db");
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(store::migrate(db, version) == version);
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(schema_of(db) == expected);
  }
}
