#pragma once
// The fact ledger's writes (seed 003 MemoryFact and MemoryFactEntityLink, migration 26): the
// facts job's only way into the facts and fact_entity_links tables. Reads are in
// recall/record_reads.hpp.
//
// Supersession: a fact with an attribute replaces the current fact on the same
// namespace, entity and attribute. The earlier one keeps its row and text; it gets valid_to
// (the later fact's valid_from, unless its own range already ended earlier) and is_stale = 1,
// and the later one names it in supersedes_fact_id. Nothing is deleted.
//
// Thread-safety: none; one FactStore per connection, used by one thread. Statements are
// prepared once. Errors: SQLite::Exception (the caller's transaction rolls back).

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reflectd::store {

/// One fact to store (columns of `facts`, see store/schema.sql).
struct FactRow {
  std::string ns;
  std::string entity_key;   ///< Canonical "type:name".
  std::string entity_name;  ///< As written.
  std::string entity_type;
  std::string attribute;    ///< Empty: no attribute, never superseded.
  std::string text;         ///< The normalised statement.
  double confidence = 0.8;  ///< [0,1].
  std::int64_t valid_from_us = 0;
  std::optional<std::int64_t> valid_to_us;  ///< Exclusive; nullopt = open.
  bool whole_days = false;
  std::int64_t source_seq = 0;  ///< events.seq of the evidence event.
  int sentence_index = 0;
  std::string sensitivity;  ///< The evidence event's.
  /// Other entities the statement names: (canonical key, display name).
  std::vector<std::pair<std::string, std::string>> linked;
};

class FactStore {
 public:
  explicit FactStore(SQLite::Database& db);

  /// Stores `fact` with its entity links (the subject as primary) and applies supersession.
  /// Returns the new fact_id.
  std::int64_t add(const FactRow& fact);

 private:
  SQLite::Database& db_;
  SQLite::Statement current_;
  SQLite::Statement supersede_;
  SQLite::Statement insert_;
  SQLite::Statement link_;
};

}  // namespace reflectd::store
