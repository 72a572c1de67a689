#pragma once
// The cluster job's last step per namespace (jobs/clustering.hpp, step 5): the entity merges
// that aliases learnt in the run ask for (jobs/entity_merge.hpp), then the communities of the
// namespace's entity graph (jobs/communities.hpp), due whenever the cluster watermark moved
// past the one the stored communities were detected at (job_state "communities_watermark").
// The namespace's last chunk starts Louvain on another thread once its graph is final
// (start_partition()); detect_if_due() waits for it, or partitions here when none was begun.
//
// Thread-safety: used by the job's thread; the one other thread runs partition() on a
// CommunityDetection it owns, needing no database. Errors: SQLite::Exception, JobCancelled,
// and whatever partition() threw, rethrown by detect_if_due().

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "jobs/clustering.hpp"
#include "jobs/communities.hpp"
#include "jobs/entities.hpp"
#include "jobs/job.hpp"
#include "jobs/job_state.hpp"

namespace reflectd::jobs::clustering {

class CommunityStep {
 public:
  /// Every reference must outlive the step; `state` is the cluster job's.
  CommunityStep(JobContext& ctx, const ClusterParams& params, EntityStore& entities,
                JobState& state);
  CommunityStep(const CommunityStep&) = delete;
  CommunityStep& operator=(const CommunityStep&) = delete;
  ~CommunityStep();

  /// Executes the merges that aliases learnt ask for in `ns`, in the open transaction, and
  /// drops the entity caches (they hold the merged entities and their edges).
  void merge_pending(const std::string& ns);

  /// Reads the graph of `ns` in the open transaction (after the chunk's entities and edges
  /// are flushed) and partitions it on another thread (here, in detect_if_due(), when no
  /// thread is to be had). Nothing but this job writes entities and edges, so the graph read
  /// here is the one detect_if_due() would read after the commit.
  void start_partition(const std::string& ns);

  /// When the communities of `ns` are due: detects them (merging first when no partition was
  /// started), stores them with the new communities_watermark in a transaction of its own, and
  /// adds the detection's counts to result().
  void detect_if_due(const std::string& ns);

  /// seed 003 CommunityDetectionResult summed over the namespaces detected (communities_created,
  /// communities_reinforced, communities_retired, clusters_in_communities; skipped and
  /// skip_reason: "no new events" when none was detected, else the last detection's reason
  /// while every one skipped).
  const nlohmann::json& result() const { return result_; }
  /// Entities merged by merge_pending() in the run.
  std::int64_t merges_executed() const { return merges_executed_; }

 private:
  // A namespace's communities being partitioned since its last chunk (start_partition()).
  struct PendingPartition {
    PendingPartition(std::string name, std::unique_ptr<CommunityDetection> d, std::future<void> f)
        : ns(std::move(name)), detection(std::move(d)), done(std::move(f)) {}
    PendingPartition(PendingPartition&&) noexcept = default;
    // Not assignable: assigning over a running task would free its detection first.
    PendingPartition& operator=(PendingPartition&&) = delete;
    PendingPartition(const PendingPartition&) = delete;
    PendingPartition& operator=(const PendingPartition&) = delete;
    // A std::async future waits for its task when destroyed: declared after the detection
    // the task uses, it is destroyed first, also when an exception leaves the run.
    ~PendingPartition() {
      if (done.valid()) done.wait();
    }
    std::string ns;
    std::unique_ptr<CommunityDetection> detection;
    std::future<void> done;
  };

  std::unique_ptr<CommunityDetection> prepare(const std::string& ns);
  std::unique_ptr<CommunityDetection> finish_partition(const std::string& ns);
  void add_to_result(const nlohmann::json& r);

  JobContext& ctx_;
  const ClusterParams& p_;
  SQLite::Database& db_;
  EntityStore& entities_;
  JobState& state_;
  std::int64_t merges_executed_ = 0;
  nlohmann::json result_;
  std::optional<PendingPartition> partition_;
};

}  // namespace reflectd::jobs::clustering
