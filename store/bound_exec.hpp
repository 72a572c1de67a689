#pragma once
// One run of a prepared statement with its parameters: the reset, the binds and the exec that
// every repeated UPDATE or DELETE would otherwise spell out.

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/VariadicBind.h>

namespace reflectd::store {

/// Resets `statement`, binds `args` to ?1, ?2, … in order (SQLite::bind of SQLiteCpp's
/// VariadicBind.h: integers, doubles, strings), runs it to completion and returns the number
/// of rows it changed (sqlite3_changes). Throws SQLite::Exception as Statement::exec() does.
/// Thread-safety: that of the statement's connection (one thread at a time).
template <class... Args>
int exec_bound(SQLite::Statement& statement, const Args&... args) {
  statement.reset();
  SQLite::bind(statement, args...);
  return statement.exec();
}

}  // namespace reflectd::store
