#include "store/medallion_store.hpp"
#include "store/bound_exec.hpp"

#include <SQLiteCpp/VariadicBind.h>

namespace reflectd::store {

using json = nlohmann::json;

std::int64_t put_medallion(SQLite::Database& db, const json& medallion, const std::string& ns,
                           const std::string& config_hash, const std::string& previous_content) {
  const json& meta = medallion.at("meta");
  const std::string id = meta.at("medallion_id").get<std::string>();
  std::int64_t version = 0;
  if (!previous_content.empty()) {
    SQLite::Statement next(db,
                           "SELECT coalesce(max(version), 0) + 1 FROM medallion_history "
                           "WHERE medallion_id = ?1");
    next.bind(1, id);
    next.executeStep();
    version = next.getColumn(0).getInt64();
    SQLite::Statement history(db,
                              "INSERT INTO medallion_history (medallion_id, version, updated_at, "
                              "content_json) VALUES (?1, ?2, ?3, ?4)");
    history.bind(1, id);
    history.bind(2, version);
    history.bind(3, json::parse(previous_content)["meta"].value("updated_at", ""));
    history.bind(4, previous_content);
    history.exec();
  }
  const json& scope = medallion.at("scope");
  const json nodes = scope.value("graph_nodes", json::array());
  const json tags = scope.value("tags", json::array());
  SQLite::Statement upsert(db, R"sql(
INSERT INTO medallions (id, content_json, created_at, updated_at, status, scope_graph_nodes, scope_tags,
                        knowledge_min_ts, knowledge_max_ts, schema_version)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'medallion.v1')
ON CONFLICT (id) DO UPDATE SET content_json = excluded.content_json, updated_at = excluded.updated_at,
  status = excluded.status, scope_graph_nodes = excluded.scope_graph_nodes,
  scope_tags = excluded.scope_tags, knowledge_min_ts = excluded.knowledge_min_ts,
  knowledge_max_ts = excluded.knowledge_max_ts)sql");
  upsert.bind(1, id);
  upsert.bind(2, medallion.dump());
  upsert.bind(3, meta.at("created_at").get<std::string>());
  upsert.bind(4, meta.at("updated_at").get<std::string>());
  upsert.bind(5, meta.value("status", std::string("active")));
  upsert.bind(6, nodes.dump());
  upsert.bind(7, tags.dump());
  int column = 8;
  for (const char* key : {"knowledge_min_ts", "knowledge_max_ts"}) {
    const auto found = meta.find(key);
    if (found != meta.end() && found->is_string()) {
      upsert.bind(column, found->get<std::string>());
    } else {
      upsert.bind(column);
    }
    ++column;
  }
  upsert.exec();
  SQLite::Statement scope_row(db,
                              "INSERT INTO medallion_scopes (medallion_id, namespace, config_hash) "
                              "VALUES (?1, ?2, ?3) ON CONFLICT (medallion_id) DO UPDATE SET "
                              "namespace = excluded.namespace, config_hash = excluded.config_hash");
  SQLite::bind(scope_row, id, ns, config_hash);
  scope_row.exec();
  for (const auto& [table, values] :
       {std::pair{"medallion_nodes", &nodes}, std::pair{"medallion_tags", &tags}}) {
    SQLite::Statement clear(db, std::string("DELETE FROM ") + table + " WHERE medallion_id = ?1");
    clear.bind(1, id);
    clear.exec();
    SQLite::Statement insert(db,
                             std::string("INSERT OR IGNORE INTO ") + table + " VALUES (?1, ?2)");
    for (const json& value : *values) {
      store::exec_bound(insert, id, value.get<std::string>());
    }
  }
  return version;
}

}  // namespace reflectd::store
