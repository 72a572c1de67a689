#pragma once
// An operator's or agent's entity merge: {"cmd":"merge_entities","namespace",
// "from","into","rationale"?}. `from` and `into` name entities of the namespace by canonical
// key ("person:mel") or, when exactly one entity has it, by display name ("Mel").
//
// The merge is recorded in entity_merges (migration 31: from's key is an alias of into's from
// now on, for new events and for a rebuild after a forget) and executed at once by
// jobs::merge_entity (jobs/entity_merge.hpp: mentions, edges, cluster memberships, community
// members and facts move; from's entity row goes), with an audit row (record_type 'entity',
// record_id from's key, action 'merge', previous {namespace, into, display_name,
// mention_count, moved}).
//
// Refused with a precise error: a namespace the caller may not write, an unknown entity, a
// name several entities share, a merge of an entity onto itself.
//
// Runs on the jobs' thread (a scheduler task, never beside the `cluster` job, whose entity
// caches it would invalidate), in one write transaction. Errors: input errors throw
// std::invalid_argument ("merge_entities: FIELD: RULE"); storage errors SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

struct EntityMergeRequest {
  std::string ns;         ///< "namespace": required.
  std::string from;       ///< "from": canonical key or display name.
  std::string into;       ///< "into": canonical key or display name.
  std::string rationale;  ///< "rationale": optional; default "merged by <actor>".
};

/// Parses the request; nullopt with `error` = "merge_entities: FIELD: RULE".
std::optional<EntityMergeRequest> parse_entity_merge(const nlohmann::json& request,
                                                     std::string& error);

/// Executes the merge at `now_us` (µs since the epoch) in the caller's transaction.
/// `edge_half_life_s` (entities.edge_half_life_days, seconds) weighs joined edges. Returns
/// {"namespace","from","into","moved":{mentions_moved, mentions_joined, edges_moved,
/// edges_joined, edges_dropped, facts_moved}}.
nlohmann::json merge_entities(SQLite::Database& db, const EntityMergeRequest& request,
                              const WriteScope& scope, std::int64_t edge_half_life_s,
                              std::int64_t now_us);

}  // namespace reflectd::memory_ops
