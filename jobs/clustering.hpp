#pragma once
// The `cluster` job (seed 003 ClusteringResult, MemoryCluster; CommunityDetectionResult):
// entities, lexical clusters and entity communities, deterministic and without an LLM or an
// embedding call. Per namespace, over the events after its watermark, in chunks that each
// commit their rows together with the watermark (one transaction):
//
// 1. Entities: jobs/entities.hpp (extraction rules in jobs/entity_extraction.hpp).
// 2. Lexical vector of the content (first 16 KiB, commit trailer lines such as
//    "Signed-off-by:" removed: they say who, not what): Tokenizer below (Unicode letters and
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
// Thread-safety: a Tokenizer is not thread-safe (Snowball state); run_clustering uses its own.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jobs/communities.hpp"
#include "jobs/entities.hpp"
#include "jobs/job.hpp"

struct sb_stemmer;

namespace reflectd::jobs {

struct ClusterParams {
  double similarity_threshold = 0.3;
  double duplicate_threshold = 0.95;
  std::int64_t vector_terms = 24;
  std::int64_t centroid_terms = 32;
  std::int64_t index_terms = 6;
  std::int64_t query_terms = 6;
  std::int64_t candidates_per_term = 32;
  /// Events per transaction (most: a chunk also ends when a writer waits at the write gate).
  /// 20,000 rather than 5,000: each distinct edge, cluster, term and posting a chunk touches is
  /// written once per chunk (cluster job, full 300k: 38.1 -> 27.3 s CPU).
  std::int64_t chunk_events = 20000;
  EntityParams entities;
  CommunityParams communities;
};

/// A sparse vector, sorted by term.
using TermVector = std::vector<std::pair<std::string, double>>;

/// Cosine similarity of two term-sorted vectors (0 when either is zero).
double cosine(const TermVector& a, const TermVector& b);

/// Unicode-aware tokenizer with English stop words and the Snowball English stemmer
/// (libstemmer). Throws std::runtime_error if the stemmer cannot be created.
class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  /// (stem, lower-cased surface) per kept token, in text order. Tokens are maximal runs of
  /// Unicode letters, marks and digits ('_' splits identifiers); kept when at least 2 code
  /// points long, not all digits, not hex-like (>= 7 hex digits), not a stop word.
  std::vector<std::pair<std::string, std::string>> terms(std::string_view text);

  /// The kept tokens of `text` (lower-cased surfaces, the rules of terms()), in text order,
  /// without stemming them: `emit` is called once per token (the reference is valid during
  /// the call only). Uses no tokenizer state: safe from any thread.
  static void scan(std::string_view text, const std::function<void(const std::string&)>& emit);

  /// True when the lower-cased `token` is one of the stop words terms() drops (the Snowball
  /// English list plus commit-message boilerplate such as "signed", "merge"). Thread-safe.
  static bool is_stop_word(std::string_view token);

  /// Snowball English stem of a lower-cased token (may be empty); cached. The reference is
  /// valid until the next call.
  const std::string& stem(const std::string& token);

 private:
  sb_stemmer* stemmer_;
  // token -> stem (Snowball is a pure function of the token; the same words recur in every
  // event). Dropped when it exceeds kStemCacheLimit entries.
  std::unordered_map<std::string, std::string> stems_;
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
