#pragma once
// SQL fragments and row conversion shared by the list reads (record_reads.cpp, audit_reads.cpp).
// Every read applies the caller's scope in SQL, over numbered parameters it binds with
// bind_scope(): ?20 the caller's clearance rank, ?21 1 when it reads every namespace, ?22 its
// namespaces as a JSON array, ?23 the redaction marker (kRedacted). Numbered, not named: SQLite
// gives a named parameter the next free index, which would collide with the queries' own ?N.
// Ranks are seed 002's sensitivity levels: public 0, low 1, medium 2, high 3, hyper 4.
//
// Thread-safety: pure functions; rows() steps the statement it is given (one thread at a time).
// Errors: SQLite failures throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <string>

#include "recall/read_scope.hpp"

namespace reflectd::recall::read_sql {

/// Binds ?20 (when `with_clearance`), ?21 and ?22 from `caller`.
void bind_scope(SQLite::Statement& query, const ReadScope& caller, bool with_clearance);

/// An SQL expression for the rank of the level in `column`; an unknown value ranks 4 (hyper).
std::string rank_sql(const char* column);

/// An SQL expression for the level name of the rank expression `rank` (inverse of rank_sql).
std::string level_sql(const std::string& rank);

/// An SQL condition: `column` (a namespace) is one the caller may read (?21, ?22).
std::string scope_sql(const char* column);

/// A select-list item: `column` as itself, or ?23 when the row's rank `r` is above ?20.
std::string redacted_text(const char* column);

/// A select-list item: `column` (named `alias` when given), or NULL when `r` is above ?20.
std::string hidden(const char* column, const char* alias = nullptr);

/// A column's value as JSON: null, integer, real or string.
nlohmann::json column_value(const SQLite::Column& column);

/// Steps `query` to the end and returns its rows as JSON objects keyed by column name; a
/// column named *_json holds JSON text and comes back parsed, under the name without _json
/// (text that is not JSON reads as a discarded value).
nlohmann::json rows(SQLite::Statement& query);

}  // namespace reflectd::recall::read_sql
