#pragma once
// The `cluster` job (seed 003 ClusteringResult, MemoryCluster; CommunityDetectionResult):
// entities, lexical clusters and entity communities, deterministic and without an LLM or an
// embedding call. Per namespace, over the events after its watermark, in chunks that each
// commit their rows together with the watermark (one transaction):
//
// 1. Entities: jobs/entities.hpp (extraction rules in text/entity_extraction.hpp).
// 2. Lexical vector of the content (first 16 KiB, commit trailer lines such as
//    "Signed-off-by:" removed: they say who, not what): the Tokenizer (Unicode letters and
//    digits, lower-cased, English stop words dropped, Snowball English stems). Each event
//    counts once in the namespace's document frequencies, then its terms are weighted
//      w(t) = (1 + ln tf(t)) * (ln((1 + N) / (1 + df(t))) + 1)
//    (sublinear TF and smoothed IDF as in scikit-learn's TfidfVectorizer), N and df counted
//    over the namespace's events up to and including this one; the `vector_terms` heaviest
//    terms are kept and L2-normalised. Events without terms join no cluster.
// 3. Candidate clusters come from an inverted index (cluster_postings): each cluster is
//    indexed under the `index_terms` heaviest terms of its centroid; each posting list is read
//    as the `candidates_per_term` most recently touched clusters. The event's
//    `query_terms` heaviest terms select at most query_terms * candidates_per_term candidates;
//    no run ever scans all clusters. The candidate with the highest cosine to its centroid
//    (ties: the older cluster) is joined when the cosine reaches `similarity_threshold`;
//    otherwise the event seeds a new cluster, whose cluster_id is the seed's seq (an id in
//    event order, whatever order runs visited the namespaces in: docs/CLUSTER.md).
// 4. Joining: if the event's cosine to the cluster's medoid reaches `duplicate_threshold`
//    (0.95) it is a near-duplicate: counted as reinforcement (duplicate_count, role
//    'duplicate') without changing the centroid. Otherwise it is a member: its vector is added
//    to the centroid (kept to the `centroid_terms` heaviest terms) and it becomes the medoid
//    when its cosine to the new centroid beats the current medoid's (so the medoid is the
//    member closest to the centroid, re-examined whenever a member joins). The label is the
//    5 heaviest centroid terms (their first surface form); the summary is the medoid's text
//    (first lines, at most 300 bytes; extractive).
// 5. Communities (jobs/communities.hpp) over the namespace's entity graph, after its chunks,
//    when this run processed events of the namespace; the entity merges that aliases learnt
//    in the run ask for are executed first (jobs/entity_merge.hpp).
//
// Every row is a function of the events in seq order and the configuration, independent of
// how the events were split into runs and chunks: caches are write-through at each chunk
// commit and the posting windows read back exactly what the in-memory ones held.
// Thread-safety: run_clustering() is called by one thread at a time per database (the
// scheduler's); it starts a worker for the parsing and one for Louvain, which touch no
// SQLite connection. A Tokenizer is not thread-safe (Snowball state); run_clustering uses its own.
//
// The code, one file per step (jobs/clustering.cpp, the orchestrator, lists them):
//   text/tokenizer.hpp    the tokenizer (also used by recall, facts, medallions)
//   jobs/clustering_text.hpp         what is vectorized of an event, a medoid's summary
//   jobs/clustering_events.hpp       reading a chunk's events, the per-event extraction
//   jobs/clustering_terms.hpp        interned terms and the vector arithmetic (cosine())
//   jobs/clustering_index.hpp        document frequencies and posting windows
//   jobs/clustering_vectorize.hpp    an event's TF-IDF vector (step 2)
//   jobs/clustering_assign.hpp       candidates, joining or seeding (steps 3-4)
//   jobs/clustering_clusters.hpp     the clusters' cache and rows
//   jobs/clustering_communities.hpp  merges and communities (step 5)

#include <nlohmann/json.hpp>

#include <cstdint>

// The Tokenizer and cosine(), which the job's readers use too, come with the job's header.
#include "jobs/clustering_terms.hpp"
#include "jobs/communities.hpp"
#include "jobs/entities.hpp"
#include "jobs/job.hpp"
#include "text/tokenizer.hpp"

namespace reflectd::jobs {

/// The job's parameters (config keys clustering.*, jobs.cluster.*; steps above).
struct ClusterParams {
  /// Cosine to a candidate's centroid from which an event joins it (step 3).
  double similarity_threshold = 0.3;
  /// Cosine to the medoid from which a joining event is a near-duplicate (step 4).
  double duplicate_threshold = 0.95;
  std::int64_t vector_terms = 24;         ///< terms kept in an event's vector (step 2)
  std::int64_t centroid_terms = 32;       ///< terms kept in a centroid (step 4)
  std::int64_t index_terms = 6;           ///< centroid terms a cluster is indexed under
  std::int64_t query_terms = 6;           ///< event terms whose posting windows are read
  std::int64_t candidates_per_term = 32;  ///< clusters per posting window
  /// Events per transaction (most: a chunk also ends when a writer waits at the write gate).
  /// 20,000 rather than 5,000: each distinct edge, cluster, term and posting a chunk touches is
  /// written once per chunk (cluster job, full 300k: 38.1 -> 27.3 s CPU).
  std::int64_t chunk_events = 20000;
  EntityParams entities;
  CommunityParams communities;
};

/// Runs the job. Returns seed 003 ClusteringResult (clusters_created, clusters_reinforced,
/// summaries_generated, facts_assigned) plus events_processed, duplicates_merged,
/// merges_executed (entities merged into the one an alias learnt in the run names,
/// jobs/entity_merge.hpp),
/// events_without_terms, entities_created, edges_created, edges_reinforced, mentions_stored,
/// skipped/skip_reason, and "communities": seed 003 CommunityDetectionResult per run (summed
/// over namespaces). Throws JobCancelled (via ctx.cancel) or SQLite::Exception.
nlohmann::json run_clustering(JobContext& ctx, const ClusterParams& params);

}  // namespace reflectd::jobs
