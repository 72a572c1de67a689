#pragma once
// Table dumps for tests that compare what jobs derived: two databases hold the same derived
// state exactly when their dumps are equal.

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "store/database.hpp"

namespace reflectd::test {

/// A writer connection with the settings job tests use.
inline SQLite::Database open_writer(const std::string& path) {
  return store::open_database({path, "normal", 5000}, store::Access::kWriter);
}

/// Every row of `sql`, columns separated by '|', NULL spelled out, one row per line.
inline std::string dump(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement query(db, sql);
  std::ostringstream out;
  while (query.executeStep()) {
    for (int i = 0; i < query.getColumnCount(); ++i) {
      out << (query.getColumn(i).isNull() ? "NULL" : query.getColumn(i).getString()) << '|';
    }
    out << '\n';
  }
  return out.str();
}

/// Everything the consolidation job derives, minus bookkeeping times (updated_us).
inline std::string consolidation_tables(SQLite::Database& db) {
  return dump(
             db,
             "SELECT decision_id, namespace, kind, target, title, rationale, scope, status, phase, "
             "vitality, provenance, keywords, evidence_event_ids, consequences, procedural, "
             "frequency, unique_contexts, confidence, confidence_base, stability_score, "
             "reinforcement_density, coverage, lifetime_days, estimated_removal_cost, "
             "estimated_utility, acceptance_score, first_seen_us, last_seen_us, supersedes, "
             "superseded_by FROM knowledge ORDER BY decision_id") +
         dump(db, "SELECT * FROM extracted_decisions ORDER BY decision_id") +
         dump(db, "SELECT * FROM unanswered_questions ORDER BY namespace, trajectory_id") +
         dump(db, "SELECT * FROM unanswered_questions ORDER BY namespace, trajectory_id") +
         dump(db, "SELECT * FROM knowledge_evidence ORDER BY decision_id, event_seq") +
         dump(db,
              "SELECT observation_id, namespace, observation_type, signature, target, title, text, "
              "supporting_event_ids, support_count, trajectory_count, success_count, confidence, "
              "importance, times_reinforced, first_detected_us, last_reinforced_us "
              "FROM observations ORDER BY observation_id") +
         dump(db, "SELECT * FROM event_targets ORDER BY seq") +
         dump(db, "SELECT * FROM consolidation_targets ORDER BY namespace, target") +
         dump(db, "SELECT * FROM problem_occurrences ORDER BY namespace, signature, seq") +
         dump(db, "SELECT * FROM problem_patterns ORDER BY namespace, signature") +
         dump(db, "SELECT * FROM problem_pattern_targets ORDER BY namespace, signature, target") +
         dump(db, "SELECT * FROM trajectory_outcomes ORDER BY namespace, trajectory_id") +
         dump(db, "SELECT * FROM job_state ORDER BY job, namespace, key");
}

/// "table.column" of every place `needle` occurs (ASCII case-insensitive), over every table of
/// the schema (FTS5 shadow tables included), plus "events_fts_vocab" for an indexed term.
inline std::set<std::string> places_of(SQLite::Database& db, const std::string& needle) {
  std::set<std::string> found;
  std::vector<std::string> tables;
  {
    SQLite::Statement q(db, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  }
  for (const auto& table : tables) {
    std::vector<std::string> columns;
    try {
      SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?1)");
      info.bind(1, table);
      while (info.executeStep()) columns.push_back(info.getColumn(0).getString());
    } catch (const SQLite::Exception&) {
      continue;
    }
    for (const auto& column : columns) {
      SQLite::Statement q(db, "SELECT count(*) FROM \"" + table + "\" WHERE instr(lower(CAST(\"" +
                                  column + "\" AS BLOB)), lower(CAST(?1 AS BLOB))) > 0");
      q.bind(1, needle);
      if (q.executeStep() && q.getColumn(0).getInt() > 0) found.insert(table + "." + column);
    }
  }
  SQLite::Statement vocab(db, "SELECT count(*) FROM events_fts_vocab WHERE term LIKE ?1");
  vocab.bind(1, needle + "%");
  if (vocab.executeStep() && vocab.getColumn(0).getInt() > 0) found.insert("events_fts_vocab");
  return found;
}

/// Occurrences of `needle` (lower case) in the bytes of the file at `path`, ASCII
/// case-insensitive; 0 when the file is absent.
inline std::size_t file_occurrences(const std::string& path, const std::string& needle) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::transform(bytes.begin(), bytes.end(), bytes.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::size_t n = 0;
  for (auto at = bytes.find(needle); at != std::string::npos; at = bytes.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace reflectd::test
