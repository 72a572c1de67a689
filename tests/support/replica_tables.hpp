#pragma once
// Every table of a database as replicas must hold it (docs/CLUSTER.md, "Why replicas agree"):
// each table's rows in a total order, all columns but the per-replica ones that
// kPerReplicaColumns lists, for tests that compare two stores fed the same events.

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "support/db_dump.hpp"

namespace reflectd::test {

/// Columns that are each replica's own (docs/CLUSTER.md lists them and says why); "*" names a
/// whole table.
inline const std::set<std::pair<std::string, std::string>> kPerReplicaColumns{
    {"events", "received_us"},
    {"events", "salience_ref_us"},
    {"events", "archive_at_us"},
    {"dead_letters", "received_us"},
    {"job_runs", "*"},
    {"sqlite_sequence", "*"},
    {"audit_log", "*"},
    {"knowledge", "updated_us"},
    {"medallions", "created_at"},
    {"medallions", "updated_at"},
    {"medallion_history", "*"},
    {"medallion_items", "*"},
};

/// Columns compared through an expression that leaves their per-replica parts out: a
/// medallion's content says when and why this replica refreshed it.
inline const std::map<std::pair<std::string, std::string>, std::string> kComparedAs{
    {{"medallions", "content_json"},
     "json_remove(content_json, '$.meta.created_at', '$.meta.updated_at', "
     "'$.meta.x_reflectd.refresh_reason')"},
};

/// table name -> its rows (test::dump format), ordered by every compared column. FTS5 shadow
/// tables are compared through their content (events_fts is external content of events).
inline std::map<std::string, std::string> replica_tables(SQLite::Database& db) {
  std::map<std::string, std::string> out;
  std::vector<std::string> tables;
  {
    SQLite::Statement list(db,
                           "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                           "'events_fts%' ORDER BY name");
    while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
  }
  for (const auto& table : tables) {
    if (kPerReplicaColumns.count({table, "*"}) != 0) continue;
    std::string columns;
    SQLite::Statement info(db, "SELECT name FROM pragma_table_info(?1) ORDER BY cid");
    info.bind(1, table);
    while (info.executeStep()) {
      const std::string column = info.getColumn(0).getString();
      if (kPerReplicaColumns.count({table, column}) != 0) continue;
      const auto as = kComparedAs.find({table, column});
      if (!columns.empty()) columns += ", ";
      columns += as != kComparedAs.end() ? as->second : "\"" + column + "\"";
    }
    out[table] = dump(db, "SELECT " + columns + " FROM \"" + table + "\" ORDER BY " + columns);
  }
  return out;
}

/// Lines of `a` not in `b` and of `b` not in `a` (as multisets), and the first of each, for a
/// failure message.
inline std::string row_differences(const std::string& a, const std::string& b) {
  std::multiset<std::string> left, right;
  std::istringstream sa(a), sb(b);
  for (std::string line; std::getline(sa, line);) left.insert(line);
  for (std::string line; std::getline(sb, line);) right.insert(line);
  std::size_t only_left = 0, only_right = 0;
  std::string first_left, first_right;
  for (const auto& line : left) {
    if (right.count(line) < left.count(line)) {
      if (only_left++ == 0) first_left = line;
    }
  }
  for (const auto& line : right) {
    if (left.count(line) < right.count(line)) {
      if (only_right++ == 0) first_right = line;
    }
  }
  return std::to_string(left.size()) + " rows against " + std::to_string(right.size()) + "; " +
         std::to_string(only_left) + " only in the first (" + first_left.substr(0, 300) + "), " +
         std::to_string(only_right) + " only in the second (" + first_right.substr(0, 300) + ")";
}

}  // namespace reflectd::test
