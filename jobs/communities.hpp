#pragma once
// Entity communities (seed 003 CommunityDetectionResult): Louvain modularity optimisation
// (Blondel et al. 2008, igraph_community_multilevel from Debian's libigraph) over one
// namespace's entity graph, stored as `community` observations (migration 2) whose entities
// and clusters are listed in community_members (migration 4).
//
// Graph: vertices are the namespace's entities with at least one edge, sorted by canonical
// key; one undirected edge per entity pair whose weight is the sum over its relationships
// of their strength at the namespace's latest event time (closed form, jobs/entities.hpp), so
// the result depends on the data only, never on the clock. igraph's RNG is seeded with a
// fixed value before each call, so the same graph gives the same membership, bit for bit.
//
// A community of at least `min_entities` entities is identified by its anchor: the member
// with the largest weighted degree (ties: smaller key); its observation id is
// "community:<ns>:<first 16 hex of sha256(anchor key)>". A cluster belongs to the community of
// its dominant entity (most mentions among its events; ties: smaller key). The stored
// communities are those of the current graph, whatever earlier runs found: an existing
// observation is rewritten when any of its columns or members differ (audit row
// 'reinforce'; times_reinforced stays 0, a count of runs would differ between replicas), and
// one no longer found is deleted with its members (audit row 'delete' with its title).
// first_detected_us / last_reinforced_us are the
// newest first_seen_us / last_seen_us of the members (data time).
//
// Thread-safety: uses igraph's process-wide RNG and error handler; one detection at a time
// in the process (the scheduler runs one job at a time). Its Louvain step uses no database
// and may run on another thread than the reading and storing (CommunityDetection: the
// cluster job overlaps it with its last chunk's writes). Errors: SQLite::Exception,
// std::runtime_error when igraph fails.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobs/entities.hpp"
#include "jobs/job.hpp"

namespace reflectd::jobs {

struct CommunityParams {
  double resolution = 1.0;        ///< Louvain resolution (1 = classic modularity).
  std::int64_t min_entities = 3;  ///< Smaller communities are not stored.
  std::int64_t max_listed = 10;   ///< Entities and clusters named in an observation's text.
};

/// One namespace's detection in three steps, so that the Louvain step, which needs no
/// database, can run on another thread while the connection's thread goes on writing
/// (~55 ms of a +10,000 run after 1M events). detect_communities() runs the three in a row;
/// splitting them changes nothing in the result as long as nothing writes `entities` or
/// `entity_relationships` of `ns` between the constructor and store().
///
/// The constructor reads the namespace's entities and edges; partition() builds the weighted
/// graph from them and runs Louvain; store() writes.
///
/// Thread-safety: the constructor and store() use `db` (and store() the caller's write
/// transaction), on the thread that uses the connection; partition() touches neither `db`
/// nor any state of the caller and may run on any one thread in between, once.
class CommunityDetection {
 public:
  /// Reads the namespace's entities and edges, for a graph at `graph_time_us` (see
  /// detect_communities() for `cached_edges`; `cancel` must outlive partition()). Errors:
  /// SQLite::Exception, JobCancelled.
  CommunityDetection(SQLite::Database& db, const std::string& ns, const CommunityParams& params,
                     std::int64_t edge_half_life_s, std::int64_t graph_time_us,
                     const CancelToken& cancel,
                     const std::optional<std::vector<EntityStore::StoredStrength>>& cached_edges);
  ~CommunityDetection();
  CommunityDetection(const CommunityDetection&) = delete;
  CommunityDetection& operator=(const CommunityDetection&) = delete;

  /// Builds the graph and runs Louvain over it (nothing when it has fewer entities than
  /// min_entities). Errors: std::runtime_error when igraph fails, JobCancelled.
  void partition();

  /// Stores what partition() found, in the caller's transaction; returns what
  /// detect_communities() returns. `now_us` stamps the audit rows. Errors:
  /// SQLite::Exception, JobCancelled, std::logic_error before partition().
  nlohmann::json store(std::int64_t now_us, const CancelToken& cancel);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Detects and stores the communities of `ns` in the caller's transaction. Returns
/// {communities_created, communities_reinforced, communities_retired,
///  clusters_in_communities, communities, skipped, skip_reason}.
/// `graph_time_us` is the time edge strengths are evaluated at (the namespace's latest event);
/// `now_us` stamps the audit rows.
/// `cached_edges`, when given, are every row of entity_relationships of `ns` (the cluster job's
/// edge cache after it read the namespace at once: EntityStore::namespace_edges()); else they are
/// read from the table (for_each_stored_edge()). Either way the result is the same.
nlohmann::json detect_communities(
    SQLite::Database& db, const std::string& ns, const CommunityParams& params,
    std::int64_t edge_half_life_s, std::int64_t graph_time_us, std::int64_t now_us,
    const CancelToken& cancel,
    const std::optional<std::vector<EntityStore::StoredStrength>>& cached_edges = std::nullopt);

}  // namespace reflectd::jobs
