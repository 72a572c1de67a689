// Applies the schema migrations (store/migration_list.hpp) in version order.

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/database.hpp"
#include "store/migration_list.hpp"

namespace reflectd::store {
namespace {

// Every migration in version order; entry i is version i + 1 (checked once, at first use).
const std::vector<Migration>& all_migrations() {
  static const std::vector<Migration> all = [] {
    std::vector<Migration> list;
    for (const auto part : {migrations_1_to_5(), migrations_6_to_19(), migrations_20_to_44()}) {
      list.insert(list.end(), part.begin(), part.end());
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].version != static_cast<int>(i) + 1) {
        throw std::logic_error("migration " + std::to_string(list[i].version) +
                               " listed as number " + std::to_string(i + 1));
      }
    }
    return list;
  }();
  return all;
}

bool has_column(SQLite::Database& db, const char* table, const char* column) {
  SQLite::Statement query(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  query.bind(1, table);
  query.bind(2, column);
  return query.executeStep();
}

// A migration whose change a database already has: its user_version was set back below it (a
// downgrade test, an operator's repair).
bool applied_already(SQLite::Database& db, const Migration& m) {
  switch (m.kind) {
    case MigrationKind::kAddColumn: return has_column(db, m.table, m.column);
    case MigrationKind::kDropColumn: return !has_column(db, m.table, m.column);
    case MigrationKind::kStatements:
    case MigrationKind::kSchemaEdit: return false;
  }
  return false;
}

// SQLite's procedure for edits of sqlite_schema: the new schema_version makes every other
// connection parse the edited definitions again. This one keeps the definitions it parsed (its
// cookie is the one it wrote) until RESET, which also ends writable_schema: without it, the
// writer that migrated would check rows by the old clauses until restarted.
void edit_schema(SQLite::Database& db, const char* statements) {
  const int schema_version = db.execAndGet("PRAGMA schema_version").getInt();
  db.exec("PRAGMA writable_schema = ON");
  try {
    db.exec(statements);
    db.exec("PRAGMA schema_version = " + std::to_string(schema_version + 1));
  } catch (...) {
    db.exec("PRAGMA writable_schema = RESET");
    throw;
  }
  db.exec("PRAGMA writable_schema = RESET");
}

}  // namespace

int latest_schema_version() { return static_cast<int>(all_migrations().size()); }

int migrate(SQLite::Database& db) { return migrate(db, latest_schema_version()); }

int migrate(SQLite::Database& db, int up_to) {
  int version = db.execAndGet("PRAGMA user_version").getInt();
  if (version > latest_schema_version()) {
    throw std::runtime_error(db.getFilename() + ": schema version " + std::to_string(version) +
                             " is newer than this reflectd (" +
                             std::to_string(latest_schema_version()) + ")");
  }
  up_to = std::min(up_to, latest_schema_version());
  while (version < up_to) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    const Migration& m = all_migrations()[static_cast<std::size_t>(version)];
    if (m.kind == MigrationKind::kSchemaEdit) {
      edit_schema(db, m.statements);
    } else if (!applied_already(db, m)) {
      db.exec(m.statements);
    }
    if (m.kind == MigrationKind::kAddColumn && m.fill != nullptr) db.exec(m.fill);
    ++version;
    db.exec("PRAGMA user_version = " + std::to_string(version));
    transaction.commit();
  }
  return version;
}

}  // namespace reflectd::store
