#pragma once
// Entity merges (seed 003 MemifyResult.merges_executed): the mentions, edges,
// cluster memberships and facts of one entity move to another of the same namespace, and the
// first is deleted. Two sources ask for a merge:
//   - a declared alias (entity_aliases, learnt by the `cluster` job from an event) whose alias
//     key already had an entity of its own: later mentions resolve to the canonical entity as
//     soon as the alias is known, the earlier ones move at the end of the `cluster` job's
//     run over the namespace, before its communities are detected (execute_pending_merges;
//     the `decay` sweep runs it too, for merges a cancelled run left). A merge's result does
//     not depend on when it runs: the alias's entity gets no mention after the alias is
//     learnt, and the merged edge's strength, the larger of the two at the later reference
//     time, commutes with later Hebbian steps and decay (both monotone), so replicas whose
//     runs merged at other moments agree (docs/CLUSTER.md);
//   - an operator's merge_entities (memory_ops/entity_merges.hpp), recorded in entity_merges,
//     which the entity store also resolves through, so a rebuild after a forget keeps it.
//
// What a merge of F into T does, in the caller's transaction:
//   - event_entities: F's rows become T's; where the event also mentions T, the one row left
//     is primary when either was. The table's triggers (store/schema.sql) mark the
//     summaries, mention weights and importance of both entities for recomputation.
//   - entity_relationships: F's edges are re-pointed at T; an edge that would join T to itself
//     is deleted; co_occurs edges keep their rule (from the smaller canonical key to the
//     larger); where T already has the same edge, the two become one: mention counts add,
//     the earliest evidence and validity start and the latest evidence are kept, and the
//     strength is the larger of the two evaluated at the later reference time
//     (edge_strength_at, jobs/entities.hpp), which becomes the reference.
//   - cluster_entities: mentions per cluster add; community_members name T.
//   - facts and fact_entity_links naming F's key name T's.
//   - entity_aliases pointing at F's key point at T's, and F's key becomes an alias of T's.
//   - entities: T's mention_count is its rows in event_entities, first and last seen the
//     extremes of both, sensitivity the higher; F's row and its cached summary state go.
// Not thread-safe: one connection, on the jobs' thread (never beside the `cluster` job, whose
// entity caches a merge would invalidate).

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reflectd::jobs {

/// One stored entity, as a merge names it.
struct EntityRef {
  std::int64_t id = 0;
  std::string ns;
  std::string key;  ///< canonical_key, e.g. "person:alice".
  std::string display_name;
  std::int64_t mention_count = 0;
};

/// What one merge changed (counts of rows).
struct EntityMergeCounts {
  std::int64_t mentions_moved = 0;   ///< event_entities rows re-pointed at the target.
  std::int64_t mentions_joined = 0;  ///< rows dropped: the event already named the target.
  std::int64_t edges_moved = 0;      ///< edges re-pointed at the target.
  std::int64_t edges_joined = 0;     ///< edges folded into the target's same edge.
  std::int64_t edges_dropped = 0;    ///< edges between the two entities (would be self-loops).
  std::int64_t facts_moved = 0;      ///< facts and fact links renamed to the target's key.

  nlohmann::json to_json() const;
};

/// The entities of namespace `ns` that `key` names: the one with that canonical key, else
/// those whose display name equals it (ASCII case-insensitive), at most `limit`, by entity id.
/// Throws SQLite::Exception.
std::vector<EntityRef> find_entities(SQLite::Database& db, const std::string& ns,
                                     const std::string& key, int limit = 5);

/// find_entities() when it finds exactly one entity, else nullopt. Throws SQLite::Exception.
std::optional<EntityRef> find_entity(SQLite::Database& db, const std::string& ns,
                                     const std::string& key);

/// Merges `from` into `into` (same namespace, distinct ids; asserted), as described above,
/// in the caller's transaction. `edge_half_life_s` (entities.edge_half_life_days, seconds,
/// > 0) evaluates the strengths of two edges that become one. Throws SQLite::Exception.
EntityMergeCounts merge_entity(SQLite::Database& db, const EntityRef& from, const EntityRef& into,
                               std::int64_t edge_half_life_s);

/// Whether execute_pending_merges(db, ns, ...) has a merge to execute. Throws
/// SQLite::Exception.
bool has_pending_merges(SQLite::Database& db, const std::string& ns);

/// Executes the merges the aliases ask for: every entity of namespace `ns` (all namespaces
/// when empty) whose canonical key is an alias (entity_aliases or entity_merges) moves into
/// the entity the alias resolves to (following aliases up to 4 hops, as the entity store
/// does); when that entity does not exist yet, the entity is renamed to it instead. Each merge
/// gets an audit row (record_type 'entity', action 'merge', actor `actor`, the counts as its
/// previous state). Returns the merges executed. Throws SQLite::Exception.
std::int64_t execute_pending_merges(SQLite::Database& db, const std::string& ns,
                                    std::int64_t edge_half_life_s, const std::string& actor,
                                    std::int64_t now_us);

}  // namespace reflectd::jobs
