#pragma once
// The cluster job's clusters and their rows (jobs/clustering.hpp, steps 3 and 4): the cache of
// the clusters a run has read or seeded, and what it writes of them: clusters (inserted when
// seeded, updated by flush()), event_clusters (one row per clustered event) and
// cluster_entities (mentions of each entity among a cluster's events). Write-through at each
// chunk commit: dropping the cache after a flush changes nothing but speed.
//
// Thread-safety: none; used by the job's thread alone. Errors: SQLite::Exception from the
// statements; std::runtime_error when a cluster named by a posting has no row.

#include <SQLiteCpp/SQLiteCpp.h>
#include <absl/container/node_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jobs/batched_insert.hpp"
#include "jobs/clustering_terms.hpp"

namespace reflectd::jobs::clustering {

/// A clusters row as the run knows it.
struct Cluster {
  std::int64_t id = 0;  ///< the seq of the event that seeded it
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
  std::int64_t first_us = 0;  ///< the earliest and latest ts_us of its events
  std::int64_t last_us = 0;
  std::int64_t members = 0;
  std::int64_t duplicates = 0;
  IdVector centroid;
  double centroid_norm = 0;  ///< norm(centroid)
  std::int64_t medoid_seq = 0;
  IdVector medoid;
  std::string label;
  std::string summary;
  int sensitivity = 0;  ///< rank (store::sensitivity_rank): the highest of its members' events
  bool dirty = false;   ///< changed since the last flush
};

class ClusterStore {
 public:
  /// `terms` (which encodes and decodes the vectors) must outlive the store.
  ClusterStore(SQLite::Database& db, TermSpace& terms);

  /// Cluster `id`, read from its row on its first use (throws std::runtime_error when there
  /// is none). The reference is stable until clear().
  Cluster& get(std::int64_t id) {
    const auto it = clusters_.find(id);
    return it != clusters_.end() ? it->second : read(id);
  }

  /// Inserts the clusters row of a cluster `c` seeded by event c.id in namespace `ns`
  /// (member_count 1, medoid and centroid the seed's vector) and caches it. Returns it.
  Cluster& seed(const std::string& ns, Cluster&& c);

  /// Makes flush() write `c`.
  void mark_dirty(Cluster& c) {
    if (!c.dirty) dirty_.push_back(c.id);
    c.dirty = true;
  }

  /// Event `seq` joined `cluster` as a member or a near-duplicate, with `similarity` (its
  /// cosine to the centroid; 1.0 for the seed). Written by flush_members().
  void add_member(std::int64_t seq, std::int64_t cluster, bool duplicate, double similarity) {
    members_.add({seq, cluster, duplicate, similarity});
  }

  /// Counts one mention of each of `entity_ids` (repeats count again) for `cluster`.
  void add_entities(std::int64_t cluster, const std::vector<std::int64_t>& entity_ids) {
    for (const std::int64_t entity : entity_ids) ++entities_[{cluster, entity}];
  }

  /// Writes the event_clusters rows added since the last call.
  void flush_members() { members_.flush(); }
  /// Writes the changed clusters (by id), then the cluster_entities counts (by key).
  void flush();

  /// Cached clusters.
  std::size_t size() const { return clusters_.size(); }
  /// Drops the cache (after flush(); required before the term space is cleared: the cached
  /// vectors hold its ids).
  void clear() { clusters_.clear(); }

 private:
  // One event_clusters row waiting for flush_members().
  struct Member {
    std::int64_t seq;
    std::int64_t cluster;
    bool duplicate;
    double similarity;
  };

  struct PairHash64 {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& k) const noexcept {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.first) *
                                            0x9E3779B97F4A7C15ULL ^
                                        static_cast<std::uint64_t>(k.second));
    }
  };

  Cluster& read(std::int64_t id);

  TermSpace& terms_;
  SQLite::Statement read_cluster_;
  SQLite::Statement insert_cluster_;
  SQLite::Statement update_cluster_;
  BatchedInsert<Member> members_;
  SQLite::Statement add_cluster_entity_;
  // Abseil's node_hash_map (as the entity caches, jobs/entities.hpp): one probe of a flat
  // control array per lookup, and stable addresses (the assignment's candidates).
  absl::node_hash_map<std::int64_t, Cluster> clusters_;
  std::vector<std::int64_t> dirty_;
  // (cluster, entity) -> mentions added by the chunk.
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, std::int64_t, PairHash64> entities_;
};

}  // namespace reflectd::jobs::clustering
