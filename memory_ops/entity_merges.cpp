#include "memory_ops/entity_merges.hpp"

#include <stdexcept>

#include "jobs/entity_merge.hpp"
#include "memory_ops/request_fields.hpp"
#include "store/audit_log.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxNameBytes = 512;

}  // namespace

std::optional<EntityMergeRequest> parse_entity_merge(const json& request, std::string& error) {
  EntityMergeRequest r;
  r.ns = required_text(request, "merge_entities", "namespace", kMaxNameBytes, error);
  if (error.empty())
    r.from = required_text(request, "merge_entities", "from", kMaxNameBytes, error);
  if (error.empty())
    r.into = required_text(request, "merge_entities", "into", kMaxNameBytes, error);
  if (error.empty() && request.contains("rationale")) {
    r.rationale = required_text(request, "merge_entities", "rationale", kMaxRationaleBytes, error);
  }
  if (!error.empty()) return std::nullopt;
  return r;
}

json merge_entities(SQLite::Database& db, const EntityMergeRequest& request,
                    const WriteScope& scope, std::int64_t edge_half_life_s, std::int64_t now_us) {
  if (!scope.may_use(request.ns)) {
    throw std::invalid_argument("merge_entities: namespace: '" + request.ns +
                                "' is not one you may write");
  }
  const auto entity = [&](const std::string& field, const std::string& name) {
    auto found = jobs::find_entities(db, request.ns, name);
    if (found.empty()) {
      throw std::invalid_argument("merge_entities: " + field + ": no entity '" + name +
                                  "' in namespace '" + request.ns +
                                  "' (a canonical key such as person:mel, or a display name "
                                  "exactly one entity has)");
    }
    if (found.size() > 1) {
      std::string keys;
      for (const auto& e : found) keys += (keys.empty() ? "" : ", ") + e.key;
      throw std::invalid_argument("merge_entities: " + field + ": '" + name +
                                  "' is the display name of several entities (" + keys +
                                  "): give a canonical key");
    }
    return std::move(found.front());
  };
  const jobs::EntityRef from = entity("from", request.from);
  const jobs::EntityRef into = entity("into", request.into);
  if (from.id == into.id) {
    throw std::invalid_argument("merge_entities: into: '" + request.into + "' is '" + from.key +
                                "' itself: nothing to merge");
  }
  SQLite::Statement record(db,
                           "INSERT INTO entity_merges (namespace, alias_key, canonical_key, "
                           "actor, merged_us) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT "
                           "(namespace, alias_key) DO UPDATE SET canonical_key = "
                           "excluded.canonical_key, actor = excluded.actor, merged_us = "
                           "excluded.merged_us");
  record.bind(1, request.ns);
  record.bind(2, from.key);
  record.bind(3, into.key);
  record.bind(4, scope.actor);
  record.bind(5, static_cast<std::int64_t>(now_us));
  record.exec();
  const json moved = jobs::merge_entity(db, from, into, edge_half_life_s).to_json();
  store::AuditLog(db).append(
      "entity", from.key, "merge", scope.actor, now_us,
      request.rationale.empty() ? "merged by " + scope.actor : request.rationale,
      json{{"namespace", request.ns},
           {"into", into.key},
           {"display_name", from.display_name},
           {"mention_count", from.mention_count},
           {"moved", moved}}
          .dump());
  return {{"namespace", request.ns}, {"from", from.key}, {"into", into.key}, {"moved", moved}};
}

}  // namespace reflectd::memory_ops
