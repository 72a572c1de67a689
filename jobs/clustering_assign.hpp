#pragma once
// The cluster job's assignment of an event's vector to a cluster (jobs/clustering.hpp, steps
// 3 and 4): candidates from the posting windows of the vector's `query_terms` heaviest terms,
// the best by cosine to its centroid (ties: the older cluster), joined when the cosine reaches
// `similarity_threshold` (as a near-duplicate when the cosine to the medoid reaches
// `duplicate_threshold`), else a new cluster seeded; then the cluster is indexed under its
// centroid's `index_terms` heaviest terms. The formulas are online leader clustering with a
// medoid kept as the member closest to the centroid (docs/ENTITIES.md "Clustering").
//
// Thread-safety: none; used by the job's thread alone. Errors: SQLite::Exception and
// std::runtime_error from the index and the cluster store.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "jobs/clustering.hpp"
#include "jobs/clustering_clusters.hpp"
#include "jobs/clustering_index.hpp"
#include "jobs/clustering_terms.hpp"

namespace reflectd::jobs::clustering {

/// Terms of a cluster's label (their first surface forms).
inline constexpr std::size_t kLabelTerms = 5;

/// What the assignments of a run counted (seed 003 ClusteringResult and ours).
struct AssignCounts {
  std::int64_t clusters_created = 0;
  std::int64_t summaries_generated = 0;  ///< seeds, and members that became the medoid
  std::int64_t facts_assigned = 0;       ///< events that joined or seeded a cluster
  std::int64_t duplicates_merged = 0;
  std::set<std::int64_t> reinforced;  ///< clusters created before the run that events joined
};

/// One event's way into a cluster, as an event of namespace `ns` at seq `seq`.
struct AssignedEvent {
  std::int64_t seq = 0;
  std::int64_t ts = 0;       ///< ts_us
  std::string_view content;  ///< for the summary of a seed or new medoid
  const std::vector<std::int64_t>* entity_ids = nullptr;  ///< its entities (EntityStore::add_event)
  int sensitivity = 0;                                    ///< rank (store::sensitivity_rank)
};

class Assigner {
 public:
  /// Every reference must outlive the assigner.
  Assigner(const ClusterParams& params, TermSpace& terms, TermIndex& index, ClusterStore& clusters);

  /// Assigns event `e` of namespace `ns`, with its non-empty vector `v` (Vectorizer), to a
  /// cluster: updates the cluster, its label and summary, the posting windows and the rows
  /// waiting for ClusterStore::flush().
  void assign(const std::string& ns, const AssignedEvent& e, const IdVector& v);

  /// The label of a centroid: its kLabelTerms heaviest terms' surfaces, joined by ", ".
  std::string label_of(const std::string& ns, const IdVector& centroid);

  const AssignCounts& counts() const { return counts_; }

 private:
  // The candidate with the highest cosine of `v` to its centroid (ties: the lower first_seq)
  // and that cosine; nullptr and -1 without candidates.
  Cluster* best_candidate(const std::string& ns, const IdVector& v, double& best_cos);
  // Adds `v` to `target` as a member or a near-duplicate; returns whether a duplicate.
  bool join(const std::string& ns, const AssignedEvent& e, const IdVector& v, Cluster& target);
  Cluster& seed(const std::string& ns, const AssignedEvent& e, const IdVector& v);

  const ClusterParams& p_;
  TermSpace& terms_;
  TermIndex& index_;
  ClusterStore& clusters_;
  AssignCounts counts_;
  std::vector<std::int64_t> candidates_;
  std::vector<Cluster*> candidate_clusters_;  // best_candidate()'s candidates, into clusters_
  std::unordered_set<std::int64_t> created_ids_;
};

}  // namespace reflectd::jobs::clustering
