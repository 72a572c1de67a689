#include "jobs/clustering_communities.hpp"

#include <system_error>

#include "jobs/entity_merge.hpp"

namespace reflectd::jobs::clustering {
namespace {

// job_state key: the cluster watermark the stored communities were detected at.
constexpr const char* kCommunitiesWatermark = "communities_watermark";

}  // namespace

CommunityStep::CommunityStep(JobContext& ctx, const ClusterParams& params, EntityStore& entities,
                             JobState& state)
    : ctx_(ctx),
      p_(params),
      db_(ctx.db),
      entities_(entities),
      state_(state),
      result_({{"communities_created", 0},
               {"communities_reinforced", 0},
               {"communities_retired", 0},
               {"clusters_in_communities", 0},
               {"skipped", true},
               {"skip_reason", "no new events"}}) {}

CommunityStep::~CommunityStep() = default;

void CommunityStep::merge_pending(const std::string& ns) {
  merges_executed_ += execute_pending_merges(db_, ns, p_.entities.edge_half_life_s, "job:cluster",
                                             ctx_.clock.now_us());
  entities_.trim(0);  // its caches hold the merged entities and their edges
}

// The communities' input read in the open transaction: the namespace's entities and edges
// (the edge cache when it holds them all), at the time of its newest entity.
std::unique_ptr<CommunityDetection> CommunityStep::prepare(const std::string& ns) {
  SQLite::Statement latest_query(
      db_, "SELECT coalesce(max(last_seen_us), 0) FROM entities WHERE namespace = ?1");
  latest_query.bind(1, ns);
  latest_query.executeStep();
  const std::int64_t latest = latest_query.getColumn(0).getInt64();
  latest_query.reset();
  return std::make_unique<CommunityDetection>(db_, ns, p_.communities, p_.entities.edge_half_life_s,
                                              latest, ctx_.cancel, entities_.namespace_edges(ns));
}

// Louvain on another thread (it needs no database): a +10,000 run after 1M events spends
// ~55 ms in it, which the last chunk's cluster writes and commit now cover.
void CommunityStep::start_partition(const std::string& ns) {
  partition_.reset();
  auto detection = prepare(ns);
  CommunityDetection* const graph = detection.get();
  std::future<void> done;
  try {
    done = std::async(std::launch::async, [graph] { graph->partition(); });
  } catch (const std::system_error&) {
    // No thread to be had (RLIMIT_NPROC, TasksMax): finish_partition() runs it here.
  }
  partition_.emplace(ns, std::move(detection), std::move(done));
}

// The detection start_partition() began for `ns`, partitioned (rethrows what partition()
// threw), or nullptr when none was begun.
std::unique_ptr<CommunityDetection> CommunityStep::finish_partition(const std::string& ns) {
  if (!partition_ || partition_->ns != ns) {
    partition_.reset();
    return nullptr;
  }
  PendingPartition pending = std::move(*partition_);
  partition_.reset();
  if (pending.done.valid()) {
    pending.done.get();
  } else {
    pending.detection->partition();
  }
  return std::move(pending.detection);
}

void CommunityStep::detect_if_due(const std::string& ns) {
  // Communities are due whenever the graph moved past the last detection, not when this
  // run clustered something: a run killed between its last chunk and the detection left
  // nothing for the next run to cluster, yet the detection is still owed.
  const std::string watermark = state_.get(ns, "watermark").value_or("0");
  if (watermark == "0" || state_.get(ns, kCommunitiesWatermark).value_or("0") == watermark) {
    return;
  }
  ctx_.cancel.check();
  WriteTransaction transaction(ctx_);
  std::unique_ptr<CommunityDetection> detection = finish_partition(ns);
  if (!detection) {
    if (has_pending_merges(db_, ns)) merge_pending(ns);
    detection = prepare(ns);
    ctx_.cancel.check();
    detection->partition();
  }
  const nlohmann::json r = detection->store(ctx_.clock.now_us(), ctx_.cancel);
  ctx_.cancel.check();
  state_.set(ns, kCommunitiesWatermark, watermark);
  transaction.commit();
  add_to_result(r);
}

void CommunityStep::add_to_result(const nlohmann::json& r) {
  for (const char* key : {"communities_created", "communities_reinforced", "communities_retired",
                          "clusters_in_communities"}) {
    result_[key] = result_[key].get<std::int64_t>() + r.value(key, std::int64_t{0});
  }
  if (!r.value("skipped", true)) {
    result_["skipped"] = false;
    result_["skip_reason"] = nullptr;
  } else if (result_["skipped"] == true) {
    result_["skip_reason"] = r.value("skip_reason", "");
  }
}

}  // namespace reflectd::jobs::clustering
