#pragma once
// The records a medallion is built from (jobs/medallion.hpp): the scope's knowledge streams
// and recurring problems as the refresh reads them, which records belong to a scope, and the
// stable item ids it gives them. Thread-safety: the functions use only the connection passed
// in; they throw SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/medallion.hpp"

namespace reflectd::jobs::medallion {

/// A scope's active events: how many, and the oldest and newest time (µs; 0 when none).
struct Span {
  std::int64_t count = 0;
  std::int64_t min_ts = 0;
  std::int64_t max_ts = 0;
};

/// A `knowledge` row of the scope (a stream, decision, constraint, assumption or proposal).
struct Stream {
  std::string id, target, title, rationale, kind, status, phase, vitality;
  double confidence;
  std::int64_t frequency, last_seen;  ///< last_seen in µs
  std::string evidence;               ///< JSON array of event ids, parsed by last_ids when listed
  std::string provenance;
  std::int64_t updated;     ///< µs
  std::int64_t source_seq;  ///< the event that stated it; 0 when none
  std::int64_t files;       ///< files that event's commit touched (context.files); active decisions
};

/// An active recurring problem (`observations` row of type pattern) of the scope.
struct Pattern {
  std::string id, target;
  std::string problem;         ///< as its newest occurrence writes it (the observation's title)
  std::int64_t support, last;  ///< last: when last reinforced, µs
  std::string ids;             ///< JSON array of event ids, parsed by last_ids when listed
};

/// Whether `db` has a table of that name (the facts and entities tables come from jobs that
/// may not have run).
bool has_table(SQLite::Database& db, const char* name);

/// The SQL condition on `knowledge` rows of the scope, with ?1 bound to its namespace: its
/// namespace, and when graph nodes are given, targets that name one of them ("module:src"
/// names target "src"; the names are quoted as SQL literals).
std::string knowledge_filter(const MedallionScope& scope);

/// Whether a record with this target belongs to the scope (a scope with graph nodes keeps
/// the targets its nodes name: module:src names src).
bool in_scope_target(const MedallionScope& scope, const std::string& target);

/// The scope's knowledge rows, by decision_id.
std::vector<Stream> read_streams(SQLite::Database& db, const MedallionScope& scope);

/// The scope's active recurring problems, most supported first, then by id.
std::vector<Pattern> read_patterns(SQLite::Database& db, const MedallionScope& scope);

/// An item's id, a function of what it lists: its kind and the first 8 hex digits of the
/// SHA-256 of its source record's id ("D-3f2a9c01"). So a record keeps its id across
/// refreshes, and two replicas that list it give it the same id whatever order their
/// refreshes listed items in. Records (medallion, kind, source) in medallion_items, which
/// remembers every record a medallion has listed, because a read ranks the medallion by the
/// most sensitive of them (recall/record_reads.cpp).
std::string item_id(SQLite::Database& db, const std::string& medallion, const char* kind,
                    const std::string& source);

}  // namespace reflectd::jobs::medallion
