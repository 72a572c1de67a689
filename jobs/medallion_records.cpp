#include "jobs/medallion_records.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <algorithm>

#include "common/sha256.hpp"

namespace reflectd::jobs::medallion {

bool has_table(SQLite::Database& db, const char* name) {
  SQLite::Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  query.bind(1, name);
  return query.executeStep();
}

std::string knowledge_filter(const MedallionScope& scope) {
  std::string filter = "(?1 = '' OR namespace = ?1)";
  if (!scope.graph_nodes.empty()) {
    filter += " AND target IN (";
    for (std::size_t i = 0; i < scope.graph_nodes.size(); ++i) {
      const auto& node = scope.graph_nodes[i];
      const auto colon = node.find(':');
      const std::string name = colon == std::string::npos ? node : node.substr(colon + 1);
      std::string quoted;
      for (char c : name) {
        quoted += c;
        if (c == '\'') quoted += '\'';
      }
      filter += (i ? ", '" : "'") + quoted + "'";
    }
    filter += ")";
  }
  return filter;
}

bool in_scope_target(const MedallionScope& scope, const std::string& target) {
  return scope.graph_nodes.empty() ||
         std::any_of(scope.graph_nodes.begin(), scope.graph_nodes.end(), [&](const std::string& n) {
           return n.size() > target.size() && n.ends_with(":" + target);
         });
}

std::vector<Stream> read_streams(SQLite::Database& db, const MedallionScope& scope) {
  std::vector<Stream> streams;
  SQLite::Statement knowledge(
      db,
      "SELECT decision_id, target, title, rationale, kind, status, phase, "
      "vitality, confidence, frequency, last_seen_us, evidence_event_ids, provenance, "
      "updated_us, coalesce(source_event_seq, 0), CASE WHEN kind = 'decision' AND status = "
      "'active' THEN coalesce((SELECT json_array_length(e.context, '$.files') FROM events e "
      "WHERE e.seq = knowledge.source_event_seq), 0) ELSE 0 END FROM knowledge WHERE " +
          knowledge_filter(scope) + " ORDER BY decision_id");
  knowledge.bind(1, scope.ns);
  while (knowledge.executeStep()) {
    streams.push_back({knowledge.getColumn(0).getString(), knowledge.getColumn(1).getString(),
                       knowledge.getColumn(2).getString(), knowledge.getColumn(3).getString(),
                       knowledge.getColumn(4).getString(), knowledge.getColumn(5).getString(),
                       knowledge.getColumn(6).getString(), knowledge.getColumn(7).getString(),
                       knowledge.getColumn(8).getDouble(), knowledge.getColumn(9).getInt64(),
                       knowledge.getColumn(10).getInt64(), knowledge.getColumn(11).getString(),
                       knowledge.getColumn(12).getString(), knowledge.getColumn(13).getInt64(),
                       knowledge.getColumn(14).getInt64(), knowledge.getColumn(15).getInt64()});
  }
  return streams;
}

std::vector<Pattern> read_patterns(SQLite::Database& db, const MedallionScope& scope) {
  std::vector<Pattern> patterns;
  SQLite::Statement observations(
      db,
      "SELECT observation_id, coalesce(target, ''), CASE WHEN title LIKE 'Recurring problem: %' "
      "THEN substr(title, 20) ELSE signature END, support_count, "
      "last_reinforced_us, supporting_event_ids FROM observations WHERE "
      "observation_type = 'pattern' AND is_active = 1 AND (?1 = '' OR namespace = ?1) "
      "ORDER BY support_count DESC, observation_id");
  observations.bind(1, scope.ns);
  while (observations.executeStep()) {
    Pattern pattern{observations.getColumn(0).getString(), observations.getColumn(1).getString(),
                    observations.getColumn(2).getString(), observations.getColumn(3).getInt64(),
                    observations.getColumn(4).getInt64(),  observations.getColumn(5).getString()};
    if (!in_scope_target(scope, pattern.target)) continue;
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

std::string item_id(SQLite::Database& db, const std::string& medallion, const char* kind,
                    const std::string& source) {
  std::string id = std::string(kind) + "-" + sha256_hex(source).substr(0, 8);
  SQLite::Statement insert(db,
                           "INSERT OR IGNORE INTO medallion_items (medallion_id, item_kind, "
                           "source_id, item_id) VALUES (?1, ?2, ?3, ?4)");
  SQLite::bind(insert, medallion, kind, source, id);
  insert.exec();
  return id;
}

}  // namespace reflectd::jobs::medallion
