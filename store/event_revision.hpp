#pragma once
// A revision's new row (memory_ops/revise.hpp, seed 004's supersession): a copy of an event
// with its own id, content, relations and lifecycle start, stored beside the old one, which
// becomes superseded by it.
//
// Thread-safety: use the connection from one thread at a time, inside the caller's write
// transaction. Errors: SQLite failures (a taken uid among them) throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>

namespace reflectd::store {

struct RevisionRow {
  std::int64_t revised_seq = 0;  ///< The event revised: every column not named here is its.
  std::string uid;               ///< The new event's id.
  bool uid_derived = false;      ///< `uid` was derived from the content, not given.
  std::int64_t received_us = 0;  ///< µs UTC; also where the new salience (1.0) starts.
  std::string content;
  std::string content_hash;                   ///< SHA-256 of `content`, lowercase hex.
  std::optional<std::string> context_json;    ///< nullopt keeps the revised event's context.
  std::string relations_json;                 ///< A JSON array.
  std::optional<std::int64_t> archive_at_us;  ///< µs UTC; nullopt: never archived by age.
  std::optional<std::int64_t> ts_us;          ///< µs UTC; nullopt keeps the revised event's time.
};

/// Inserts `row` as a new event, raises its namespace's newest event time (event_namespaces) to
/// `received_us`, marks the revised event superseded by it, and returns the new event's seq.
/// Throws SQLite::Exception when no event has `revised_seq`.
std::int64_t insert_revision(SQLite::Database& db, const RevisionRow& row);

}  // namespace reflectd::store
