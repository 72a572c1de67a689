#pragma once
// The schema migrations as data: one entry per version, in three files by number
// (store/migrations_1_to_5.cpp, migrations_6_to_19.cpp, migrations_20_to_44.cpp), applied in
// order by store/migrations.cpp. Migration N brings the schema from user_version N-1 to N.
// Never edit a released migration: add a new one at the end of the last file (and to
// store/schema.sql, which tests/store/schema_test.cpp compares with a migrated database).

#include <span>

namespace reflectd::store {

/// How a migration is applied, beyond running its statements once in the transaction that
/// bumps user_version.
enum class MigrationKind {
  /// Statements only.
  kStatements,
  /// Edits table definitions in sqlite_schema (constraint clauses only), under SQLite's
  /// writable_schema procedure with a new schema_version.
  kSchemaEdit,
  /// Adds `column` to `table`, then runs `fill` (when not null) to compute its values from
  /// other tables. On a database that already has the column (its user_version set back: a
  /// downgrade test, an operator's repair) the statements are skipped but the fill runs again,
  /// because a reflectd that did not know the column may have left it stale or empty.
  kAddColumn,
  /// Drops `column` from `table`; skipped on a database that no longer has it.
  kDropColumn,
};

/// One numbered migration. Every pointer is to a string literal (static storage).
struct Migration {
  int version;
  MigrationKind kind;
  const char* statements;
  const char* table = nullptr;   ///< kAddColumn, kDropColumn: the table changed.
  const char* column = nullptr;  ///< kAddColumn, kDropColumn: the column added or dropped.
  const char* fill = nullptr;    ///< kAddColumn: computes the new column's values; may be null.
};

/// The migrations of each file, in version order. Thread-safe (constant data).
std::span<const Migration> migrations_1_to_5();
std::span<const Migration> migrations_6_to_19();
std::span<const Migration> migrations_20_to_44();

}  // namespace reflectd::store
