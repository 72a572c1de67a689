#include "recall/read_sql.hpp"

#include <fmt/format.h>

namespace reflectd::recall::read_sql {

// The caller's read scope, bound to parameters ?20 (clearance), ?21 (every namespace) and ?22
// (its namespaces, a JSON array) that the read queries test in their WHERE clauses
// (rank_sql, scope_sql), so rows outside it are never read and a LIMIT counts only rows the
// caller may see. Numbered, not named: SQLite gives a named parameter the next free index,
// which collides with the queries' own ?N. ?23 is the redaction marker.
void bind_scope(SQLite::Statement& query, const ReadScope& caller, bool with_clearance) {
  if (with_clearance) query.bind(20, caller.clearance);
  query.bind(21, caller.all_namespaces ? 1 : 0);
  query.bind(22, nlohmann::json(caller.namespaces).dump());
}

// Seed 002 level -> rank; an unknown value counts as the highest level.
std::string rank_sql(const char* column) {
  return fmt::format(
      "(CASE {} WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 "
      "WHEN 'high' THEN 3 ELSE 4 END)",
      column);
}

std::string scope_sql(const char* column) {
  return fmt::format("(?21 = 1 OR {} IN (SELECT value FROM json_each(?22)))", column);
}

nlohmann::json column_value(const SQLite::Column& column) {
  if (column.isNull()) return nullptr;
  if (column.isInteger()) return column.getInt64();
  if (column.isFloat()) return column.getDouble();
  return column.getString();
}

// Rows as JSON objects; columns named *_json hold JSON text and are parsed.
nlohmann::json rows(SQLite::Statement& query) {
  nlohmann::json out = nlohmann::json::array();
  while (query.executeStep()) {
    nlohmann::json row = nlohmann::json::object();
    for (int i = 0; i < query.getColumnCount(); ++i) {
      std::string name = query.getColumnName(i);
      if (name.ends_with("_json")) {
        name.resize(name.size() - 5);
        row[name] = query.getColumn(i).isNull()
                        ? nlohmann::json()
                        : nlohmann::json::parse(query.getColumn(i).getString(), nullptr, false);
      } else {
        row[name] = column_value(query.getColumn(i));
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string level_sql(const std::string& rank) {
  return fmt::format(
      "(CASE {} WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' "
      "ELSE 'hyper' END)",
      rank);
}
std::string redacted_text(const char* column) {
  return fmt::format("CASE WHEN r > ?20 THEN ?23 ELSE {0} END AS {0}", column);
}
std::string hidden(const char* column, const char* alias) {
  return fmt::format("CASE WHEN r > ?20 THEN NULL ELSE {} END AS {}", column,
                     alias ? alias : column);
}

}  // namespace reflectd::recall::read_sql
