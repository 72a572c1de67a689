// The cluster job's orchestrator: the run over namespaces and chunks, and each event's way
// through the steps (jobs/clustering.hpp lists them). Each step is an object of its own,
// owned here:
//   jobs/clustering_events.hpp       EventReader: the chunk's events; extract_batch() beside
//   jobs/entities.hpp                EntityStore: entities, links and edges (step 1)
//   jobs/clustering_vectorize.hpp    Vectorizer: the event's TF-IDF vector (step 2)
//   jobs/clustering_assign.hpp       Assigner: candidates, joining or seeding (steps 3-4)
//   jobs/clustering_index.hpp        TermIndex: document frequencies, posting windows
//   jobs/clustering_clusters.hpp     ClusterStore: the clusters and their rows
//   jobs/clustering_terms.hpp        TermSpace: the interned terms the three above share
//   jobs/clustering_communities.hpp  CommunityStep: merges and communities (step 5)
// Events are stored one at a time in seq order, and every write waits for the chunk's flush(),
// whose order is the order of the tables' rows a rerun must reproduce.

#include "jobs/clustering.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <future>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jobs/clustering_assign.hpp"
#include "jobs/clustering_clusters.hpp"
#include "jobs/clustering_communities.hpp"
#include "jobs/clustering_events.hpp"
#include "jobs/clustering_index.hpp"
#include "jobs/clustering_terms.hpp"
#include "jobs/clustering_vectorize.hpp"
#include "jobs/entity_merge.hpp"
#include "jobs/job_state.hpp"

namespace reflectd::jobs::clustering {
namespace {

using nlohmann::json;

constexpr const char* kJob = "cluster";
// Entries of each cache (terms, clusters, entities, edges) past which it is dropped after a
// chunk's commit.
constexpr std::size_t kCacheLimit = 200'000;

class Clusterer {
 public:
  Clusterer(JobContext& ctx, const ClusterParams& params)
      : ctx_(ctx),
        p_(params),
        db_(ctx.db),
        state_(db_, kJob),
        entities_(db_, params.entities),
        reader_(db_, state_),
        index_(db_, terms_, params.candidates_per_term),
        clusters_(db_, terms_),
        vectorizer_(terms_, index_, params.vector_terms),
        assigner_(params, terms_, index_, clusters_),
        communities_(ctx, params, entities_, state_) {}

  json run() {
    std::vector<std::string> namespaces;
    if (!ctx_.ns.empty()) {
      namespaces.push_back(ctx_.ns);
    } else {
      namespaces = event_namespaces(db_);
    }
    for (const auto& ns : namespaces) {
      terms_.reset_namespace_caches();  // terms and windows are of one namespace
      reader_.start_namespace();
      preload_edges(ns);
      while (cluster_chunk(ns)) {
      }
      communities_.detect_if_due(ns);
    }
    return result();
  }

 private:
  json result() const {
    const AssignCounts& a = assigner_.counts();
    const bool nothing = events_processed_ == 0;
    return {{"clusters_created", a.clusters_created},
            {"clusters_reinforced", static_cast<std::int64_t>(a.reinforced.size())},
            {"summaries_generated", a.summaries_generated},
            {"facts_assigned", a.facts_assigned},
            {"events_processed", events_processed_},
            {"duplicates_merged", a.duplicates_merged},
            {"merges_executed", communities_.merges_executed()},
            {"events_without_terms", events_without_terms_},
            {"entities_created", entities_.entities_created()},
            {"edges_created", entities_.edges_created()},
            {"edges_reinforced", entities_.edges_reinforced()},
            {"edges_preloaded", entities_.edges_preloaded()},
            {"mentions_stored", entities_.mentions_stored()},
            {"communities", communities_.result()},
            {"skipped", nothing},
            {"skip_reason", nothing ? json("no new events") : json()}};
  }

  // One chunk of `ns` in one transaction with its watermark. Returns whether more may follow.
  bool cluster_chunk(const std::string& ns) {
    ctx_.cancel.check();
    WriteTransaction transaction(ctx_);
    const std::int64_t watermark = std::stoll(state_.get(ns, "watermark").value_or("0"));
    vectorizer_.set_documents(std::stoll(state_.get(ns, "documents").value_or("0")));
    reader_.start_chunk(ns, watermark, p_.chunk_events);
    std::int64_t last_seq = watermark;
    std::int64_t processed = 0;
    const bool yielded = store_events(ns, transaction, last_seq, processed);
    reader_.end_chunk();
    if (processed == 0) return false;
    entities_.flush();
    // The namespace's last chunk: its graph is final once the entities and edges are
    // written, so Louvain runs beside the clusters' writes and the commit (run() stores it).
    // The merges that aliases learnt in this run ask for come first, so that the communities
    // are those of the merged graph whatever runs came before (jobs/entity_merge.hpp);
    // a merge rewrites cluster_entities, so the clusters are written before it.
    if (!yielded && processed < p_.chunk_events) {
      if (has_pending_merges(db_, ns)) {
        flush(ns);
        communities_.merge_pending(ns);
      }
      communities_.start_partition(ns);
    }
    flush(ns);
    state_.set(ns, "watermark", std::to_string(last_seq));
    state_.set(ns, "documents", std::to_string(vectorizer_.documents()));
    ctx_.cancel.check();  // A cancelled run must not commit half of its last chunk.
    transaction.commit();
    events_processed_ += processed;
    trim();
    return yielded || processed == p_.chunk_events;
  }

  // Stores the chunk's events, a batch at a time, until the statement ends or the transaction
  // should yield; `last_seq` and `processed` follow the events stored. Returns whether it
  // yielded (the events read but not stored are then carried into the next chunk).
  bool store_events(const std::string& ns, WriteTransaction& transaction, std::int64_t& last_seq,
                    std::int64_t& processed) {
    // Two batches in flight: while this thread stores `current` (SQLite, the clusters), a
    // worker extracts `next`. Events are stored in seq order and one at a time, so the
    // results do not depend on the worker; a yield carries the events read but not stored
    // into the next chunk, with what the worker extracted of them.
    std::vector<ReadEvent> current;
    std::vector<ReadEvent> next;
    bool more = true;  // the reader's statement has not returned its last row yet
    std::atomic<bool> abandon{false};
    // One worker thread for the whole chunk (not a thread start per batch of 64 events),
    // started only if the chunk has a second batch. Declared after what its tasks touch:
    // leaving by an exception destroys the pool first, and its destructor waits for a
    // running task.
    std::optional<boost::asio::thread_pool> worker;
    if (reader_.read_batch(ns, current, more)) extract_batch(current, abandon);
    while (!current.empty()) {
      std::future<void> extracted;
      if (reader_.read_batch(ns, next, more)) {
        if (!worker) worker.emplace(1);
        extracted = boost::asio::post(
            *worker, boost::asio::use_future([&next, &abandon] { extract_batch(next, abandon); }));
      }
      std::size_t stored = 0;
      bool yielded = false;
      for (const ReadEvent& e : current) {
        last_seq = e.seq;
        ++processed;
        ++stored;
        store_event(ns, e);
        if (processed % 256 == 0) ctx_.cancel.check();
        // Ingest waits for the lock: end the chunk here (chunk ends do not change results).
        if (transaction.should_yield()) {
          yielded = true;
          abandon = true;
          break;
        }
      }
      if (extracted.valid()) extracted.get();
      if (yielded) {
        reader_.carry(current, stored, next);
        return true;
      }
      std::swap(current, next);
      next.clear();
    }
    return false;
  }

  // Steps 1-4 for one extracted event.
  void store_event(const std::string& ns, const ReadEvent& e) {
    assert(e.extracted && "every stored event was extracted (and tokenized) first");
    reader_.remember_working_directory(ns, e);
    const auto entity_ids = entities_.add_event(ns, e.seq, e.ts, e.extraction, e.sensitivity);
    const IdVector v = vectorizer_.vectorize(ns, e.tokens);
    if (v.empty()) {
      ++events_without_terms_;
      return;
    }
    assigner_.assign(ns, {e.seq, e.ts, e.content, &entity_ids, e.sensitivity}, v);
  }

  // Writes the chunk's cluster rows; the order is the old single flush's (members, terms,
  // postings, clusters, cluster entities).
  void flush(const std::string& ns) {
    clusters_.flush_members();
    index_.flush(ns);
    clusters_.flush();
  }

  // A run with many events to cluster reads the namespace's edges at once instead of one by
  // one at their first reinforcement (EntityStore::preload_edges).
  void preload_edges(const std::string& ns) {
    SQLite::Statement pending(db_,
                              "SELECT count(*) FROM events WHERE namespace = ?1 AND seq > ?2 AND "
                              "status = 'active'");
    pending.bind(1, ns);
    pending.bind(2,
                 static_cast<std::int64_t>(std::stoll(state_.get(ns, "watermark").value_or("0"))));
    const std::int64_t events = pending.executeStep() ? pending.getColumn(0).getInt64() : 0;
    pending.reset();
    entities_.preload_edges(ns, events, kCacheLimit);
  }

  // Caches are write-through after flush(), so dropping them changes nothing but speed.
  // Cached clusters hold interned ids, so they go when the interned terms go.
  void trim() {
    if (clusters_.size() > kCacheLimit || terms_.size() > kCacheLimit) clusters_.clear();
    if (terms_.size() > kCacheLimit) {
      terms_.clear();
      vectorizer_.clear_tokens();
    } else if (vectorizer_.cached_tokens() > kCacheLimit) {
      vectorizer_.clear_tokens();  // its values are ids of terms_, which stay: nothing else
    }
    entities_.trim(kCacheLimit);
  }

  JobContext& ctx_;
  const ClusterParams& p_;
  SQLite::Database& db_;
  JobState state_;
  EntityStore entities_;
  EventReader reader_;
  TermSpace terms_;
  TermIndex index_;
  ClusterStore clusters_;
  Vectorizer vectorizer_;
  Assigner assigner_;
  std::int64_t events_processed_ = 0;
  std::int64_t events_without_terms_ = 0;
  // Last: a partition still running on another thread is waited for before the rest goes.
  CommunityStep communities_;
};

}  // namespace
}  // namespace reflectd::jobs::clustering

namespace reflectd::jobs {

nlohmann::json run_clustering(JobContext& ctx, const ClusterParams& params) {
  return clustering::Clusterer(ctx, params).run();
}

}  // namespace reflectd::jobs
