#include "jobs/importance.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>

#include "jobs/entities.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr double kUsPerDayD = 86'400'000'000.0;

double decay(std::int64_t t_us, std::int64_t now_us, double half_life_days) {
  if (t_us >= now_us || half_life_days <= 0) return 1.0;
  return std::exp2(-(static_cast<double>(now_us - t_us) / kUsPerDayD) / half_life_days);
}

struct Vertex {
  std::int64_t id;
  std::string key;
  std::int64_t mentions;
  std::int64_t last_us;
  double score_before;
  std::string summary_before;
};

json score_namespace(JobContext& ctx, const std::string& ns, const ImportanceParams& p, json& top) {
  SQLite::Database& db = ctx.db;
  const std::int64_t now = ctx.clock.now_us();
  std::vector<Vertex> vertices;
  {
    SQLite::Statement q(db, "SELECT entity_id, canonical_key, mention_count, last_seen_us, importance_score, "
                            "coalesce(summary_text, '') FROM entities WHERE namespace = ?1 AND is_active = 1 "
                            "ORDER BY canonical_key");
    q.bind(1, ns);
    while (q.executeStep()) {
      vertices.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
                          q.getColumn(3).getInt64(), q.getColumn(4).getDouble(), q.getColumn(5).getString()});
    }
  }
  const std::size_t n = vertices.size();
  if (n == 0) return {{"entities_scored", 0}, {"edges", 0}, {"iterations", 0}, {"updated", 0}};
  std::unordered_map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[vertices[i].id] = i;

  // Recency-weighted mentions, summed per entity in seq order.
  std::vector<double> personalization(n, 0.0);
  {
    SQLite::Statement q(db, "SELECT ee.entity_id, ev.ts_us FROM entities en JOIN event_entities ee ON "
                            "ee.entity_id = en.entity_id JOIN events ev ON ev.seq = ee.seq WHERE "
                            "en.namespace = ?1 ORDER BY ee.entity_id, ee.seq");
    q.bind(1, ns);
    std::int64_t rows = 0;
    while (q.executeStep()) {
      const auto it = index.find(q.getColumn(0).getInt64());
      if (it != index.end()) personalization[it->second] += decay(q.getColumn(1).getInt64(), now, p.half_life_days);
      if (++rows % 65536 == 0) ctx.cancel.check();
    }
  }
  ctx.cancel.check();

  // Edges: (from, to) -> weight, in vertex order.
  std::vector<std::map<std::size_t, double>> out(n);
  std::int64_t edge_rows = 0;
  {
    // In key order (ids depend on the order namespaces were processed in), so parallel edges
    // add up in the same order: same tables, same bits.
    SQLite::Statement q(db, "SELECT r.source_id, r.target_id, r.rel_type, r.strength_base, r.strength_ref_us FROM "
                            "entity_relationships r JOIN entities s ON s.entity_id = r.source_id JOIN entities t "
                            "ON t.entity_id = r.target_id WHERE r.namespace = ?1 ORDER BY s.canonical_key, "
                            "t.canonical_key, r.rel_type");
    q.bind(1, ns);
    while (q.executeStep()) {
      const auto a = index.find(q.getColumn(0).getInt64());
      const auto b = index.find(q.getColumn(1).getInt64());
      if (a == index.end() || b == index.end() || a->second == b->second) continue;
      const double w = edge_strength_at(q.getColumn(3).getDouble(), q.getColumn(4).getInt64(), now, p.edge_half_life_s);
      if (!(w > 0)) continue;
      ++edge_rows;
      out[a->second][b->second] += w;
      if (q.getColumn(2).getString() == "co_occurs") out[b->second][a->second] += w;
    }
  }
  Csr csr;
  csr.offsets.reserve(n + 1);
  csr.offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& [j, w] : out[i]) {
      csr.targets.push_back(static_cast<std::int64_t>(j));
      csr.weights.push_back(w);
    }
    csr.offsets.push_back(static_cast<std::int64_t>(csr.targets.size()));
  }
  ctx.cancel.check();
  std::int64_t iterations = 0;
  const std::vector<double> rank =
      personalized_pagerank(csr, personalization, p.damping, p.max_iterations, p.tolerance, &iterations);
  ctx.cancel.check();

  const double max_rank = *std::max_element(rank.begin(), rank.end());
  std::int64_t max_mentions = 0;
  for (const auto& v : vertices) max_mentions = std::max(max_mentions, v.mentions);
  std::vector<double> scores(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double pr = max_rank > 0 ? rank[i] / max_rank : 0.0;
    const double m = max_mentions > 0 ? std::log1p(static_cast<double>(vertices[i].mentions)) /
                                            std::log1p(static_cast<double>(max_mentions))
                                      : 0.0;
    scores[i] = blend_importance(pr, m, decay(vertices[i].last_us, now, p.half_life_days), p);
  }

  // Summaries are the medallion job's (jobs/entity_summaries.hpp): only scores change here.
  SQLite::Statement update(db, "UPDATE entities SET importance_score = ?2 WHERE entity_id = ?1");
  std::int64_t updated = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (scores[i] == vertices[i].score_before) continue;
    update.reset();
    update.bind(1, static_cast<std::int64_t>(vertices[i].id));
    update.bind(2, scores[i]);
    update.exec();
    ++updated;
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : vertices[a].key < vertices[b].key;
  });
  json list = json::array();
  for (std::size_t k = 0; k < order.size() && static_cast<std::int64_t>(k) < p.top_entities; ++k) {
    list.push_back(json::array({vertices[order[k]].key, scores[order[k]]}));
  }
  top[ns] = std::move(list);
  return {{"entities_scored", static_cast<std::int64_t>(n)}, {"edges", edge_rows},
          {"iterations", iterations}, {"updated", updated}};
}

}  // namespace

std::vector<double> personalized_pagerank(const Csr& graph, std::span<const double> personalization,
                                          double damping, std::int64_t max_iterations, double tolerance,
                                          std::int64_t* iterations) {
  const std::size_t n = personalization.size();
  std::vector<double> v(personalization.begin(), personalization.end());
  double total = 0;
  for (double x : v) total += std::max(0.0, x);
  for (double& x : v) x = total > 0 ? std::max(0.0, x) / total : 1.0 / static_cast<double>(n);
  std::vector<double> out_weight(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto k = graph.offsets[i]; k < graph.offsets[i + 1]; ++k) out_weight[i] += graph.weights[static_cast<std::size_t>(k)];
  }
  std::vector<double> x = v;
  std::vector<double> next(n);
  std::int64_t it = 0;
  while (it < max_iterations) {
    ++it;
    double dangling = 0;
    std::fill(next.begin(), next.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (out_weight[i] <= 0) {
        dangling += x[i];
        continue;
      }
      const double share = x[i] / out_weight[i];
      for (auto k = graph.offsets[i]; k < graph.offsets[i + 1]; ++k) {
        next[static_cast<std::size_t>(graph.targets[static_cast<std::size_t>(k)])] += share * graph.weights[static_cast<std::size_t>(k)];
      }
    }
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) {
      next[i] = damping * (next[i] + dangling * v[i]) + (1.0 - damping) * v[i];
      change += std::abs(next[i] - x[i]);
    }
    x.swap(next);
    if (change < tolerance) break;
  }
  if (iterations != nullptr) *iterations = it;
  return x;
}

double blend_importance(double pagerank, double mentions, double recency, const ImportanceParams& p) {
  const double total = p.weight_pagerank + p.weight_mentions + p.weight_recency;
  if (!(total > 0)) return 0.0;
  const double s = (p.weight_pagerank * pagerank + p.weight_mentions * mentions + p.weight_recency * recency) / total;
  return std::clamp(s, 0.0, 1.0);
}

json run_importance(JobContext& ctx, const ImportanceParams& params) {
  std::vector<std::string> namespaces;
  if (!ctx.ns.empty()) {
    namespaces.push_back(ctx.ns);
  } else {
    SQLite::Statement all(ctx.db, "SELECT DISTINCT namespace FROM entities ORDER BY namespace");
    while (all.executeStep()) namespaces.push_back(all.getColumn(0).getString());
  }
  json top = json::object();
  json per = json::object();
  std::int64_t scored = 0;
  for (const auto& ns : namespaces) {
    ctx.cancel.check();
    WriteTransaction transaction(ctx);
    json r = score_namespace(ctx, ns, params, top);
    ctx.cancel.check();
    transaction.commit();
    scored += r["entities_scored"].get<std::int64_t>();
    per[ns] = std::move(r);
  }
  return {{"entities_scored", scored},
          {"top_entities", top},
          {"namespaces", per},
          {"skipped", scored == 0},
          {"skip_reason", scored == 0 ? json("no entities") : json()}};
}

}  // namespace reflectd::jobs
