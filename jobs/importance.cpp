#include "jobs/importance.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jobs/entities.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr double kUsPerDayD = 86'400'000'000.0;

double decay(std::int64_t t_us, std::int64_t now_us, double half_life_days) {
  if (t_us >= now_us || half_life_days <= 0) return 1.0;
  return std::exp2(-(static_cast<double>(now_us - t_us) / kUsPerDayD) / half_life_days);
}

// Reference period of the mention weights: 64 half-lives, so a weight 2^((ts - ref) / h) of a
// mention at most one period after ref stays below 2^64 and never overflows.
constexpr double kRefPeriodHalfLives = 64;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct WeightState {
  double sum = 0;
  std::int64_t mentions = 0;
  std::int64_t through_seq = 0;
};

// Everything a namespace's scoring writes. It is computed in a read-only snapshot, which does
// not take the write gate, and written afterwards in one short write transaction: a full
// recomputation reads every mention (seconds at 1M events) and must not hold ingest back.
// Nothing the writer thread does between the two changes what was computed: it never writes
// the entity tables (only the cluster job does, on this same jobs thread), new events carry
// no mentions until the cluster job has run, and its only write to a table written here is
// a summary-staleness mark, which an insert that does nothing on conflict leaves in place.
struct NamespaceWrites {
  std::vector<std::pair<std::int64_t, WeightState>> weights;  // entity_mention_weights rows
  double half_life_days = 0;                                  // importance_state's row
  std::int64_t ref_us = 0;
  std::int64_t max_ts_us = 0;
  std::int64_t through_seq = 0;
  std::vector<std::pair<std::int64_t, double>> scores;  // changed importance_score values
  std::vector<std::int64_t> summaries_stale;            // printed score changed
  std::int64_t resummed = 0;  // entities whose W(e) was summed again over every mention
};

void write_namespace(SQLite::Database& db, const std::string& ns, const NamespaceWrites& w) {
  SQLite::Statement save(
      db,
      "INSERT INTO entity_mention_weights (entity_id, weight_sum, mentions, through_seq) "
      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (entity_id) DO UPDATE SET weight_sum = "
      "excluded.weight_sum, mentions = excluded.mentions, through_seq = excluded.through_seq");
  for (const auto& [id, weight] : w.weights) {
    store::exec_bound(save, id, weight.sum, weight.mentions, weight.through_seq);
  }
  SQLite::Statement save_ns(
      db,
      "INSERT INTO importance_state (namespace, half_life_days, ref_us, max_ts_us, "
      "through_seq) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (namespace) DO UPDATE SET "
      "half_life_days = excluded.half_life_days, ref_us = excluded.ref_us, max_ts_us = "
      "excluded.max_ts_us, through_seq = excluded.through_seq");
  save_ns.bind(1, ns);
  save_ns.bind(2, w.half_life_days);
  save_ns.bind(3, w.ref_us);
  save_ns.bind(4, w.max_ts_us);
  save_ns.bind(5, w.through_seq);
  save_ns.exec();
  // Summaries are the medallion job's (jobs/entity_summaries.hpp): only scores change here.
  SQLite::Statement update(db, "UPDATE entities SET importance_score = ?2 WHERE entity_id = ?1");
  for (const auto& [id, score] : w.scores) {
    store::exec_bound(update, id, score);
  }
  SQLite::Statement summary_stale(
      db,
      "INSERT INTO entity_summary_dirty (entity_id, full) VALUES (?1, 0) "
      "ON CONFLICT (entity_id) DO NOTHING");
  for (const std::int64_t id : w.summaries_stale) {
    store::exec_bound(summary_stale, id);
  }
}

// The weight of one mention at time ts relative to ref (1 when the half-life is not positive).
double mention_weight(std::int64_t ts_us, std::int64_t ref_us, double half_life_days) {
  if (half_life_days <= 0) return 1.0;
  return std::exp2(static_cast<double>(ts_us - ref_us) / kUsPerDayD / half_life_days);
}

// The ts_us of the events `seqs` (ascending, distinct) that exist. Dense seqs (the new events
// of an incremental run) are read as one range in seq order; sparse ones one by one, so that a
// few mentions far apart never read the events between them.
std::unordered_map<std::int64_t, std::int64_t> event_times(SQLite::Database& db,
                                                           const std::vector<std::int64_t>& seqs) {
  constexpr std::int64_t kRangeSpanPerSeq = 4;
  std::unordered_map<std::int64_t, std::int64_t> ts;
  if (seqs.empty()) return ts;
  ts.reserve(seqs.size());
  const std::int64_t first = seqs.front(), last = seqs.back();
  if ((last - first) / kRangeSpanPerSeq < static_cast<std::int64_t>(seqs.size())) {
    SQLite::Statement range(db, "SELECT seq, ts_us FROM events WHERE seq BETWEEN ?1 AND ?2");
    range.bind(1, first);
    range.bind(2, last);
    auto wanted = seqs.begin();
    while (range.executeStep()) {
      const std::int64_t seq = range.getColumn(0).getInt64();
      wanted = std::lower_bound(wanted, seqs.end(), seq);
      if (wanted != seqs.end() && *wanted == seq) ts.emplace(seq, range.getColumn(1).getInt64());
    }
    return ts;
  }
  SQLite::Statement one(db, "SELECT ts_us FROM events WHERE seq = ?1");
  for (const std::int64_t seq : seqs) {
    one.reset();
    one.bind(1, seq);
    if (one.executeStep()) ts.emplace(seq, one.getColumn(0).getInt64());
  }
  return ts;
}

// Mentions to add, per entity: (seq, ts_us) in seq order.
using MentionLists = std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>;

// The mentions of `ns`'s entities after `watermark`, per entity in seq order, each with its
// event's ts_us (a mention whose event is gone has none and is left out, as a join leaves it
// out). Joining `events` row by row cost a lookup per mention (~5,000 instructions) and a
// sort; the ts_us of the mentioned events are read once per event, in seq order. `rows`
// counts the mentions read (for the cancellation checks).
MentionLists mentions_after(JobContext& ctx, const std::string& ns, std::int64_t watermark,
                            std::int64_t& rows) {
  SQLite::Database& db = ctx.db;
  MentionLists mentions;
  std::vector<std::int64_t> ids;
  {
    SQLite::Statement q(db, "SELECT entity_id FROM entities WHERE namespace = ?1");
    q.bind(1, ns);
    while (q.executeStep()) ids.push_back(q.getColumn(0).getInt64());
  }
  std::vector<std::int64_t> seqs;
  auto add_mention = [&](std::int64_t id, std::int64_t seq) {
    mentions[id].emplace_back(seq, 0);
    seqs.push_back(seq);
    if (++rows % 65536 == 0) ctx.cancel.check();
  };
  if (read_new_mentions_in_one_pass(newest_mention_seq(db) - watermark,
                                    static_cast<std::int64_t>(ids.size()))) {
    // Each entity's mentions come out of the pass in seq order, as from its seek below.
    std::sort(ids.begin(), ids.end());
    for_each_mention_after(db, ids, watermark, add_mention);
  } else {
    SQLite::Statement of_entity(
        db, "SELECT seq FROM event_entities WHERE entity_id = ?1 AND seq > ?2 ORDER BY seq");
    for (const std::int64_t id : ids) {
      of_entity.reset();
      of_entity.bind(1, id);
      of_entity.bind(2, watermark);
      while (of_entity.executeStep()) add_mention(id, of_entity.getColumn(0).getInt64());
    }
  }
  std::sort(seqs.begin(), seqs.end());
  seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
  const std::unordered_map<std::int64_t, std::int64_t> ts = event_times(db, seqs);
  for (auto it = mentions.begin(); it != mentions.end();) {
    auto& list = it->second;
    std::erase_if(list, [&ts](auto& mention) {
      const auto found = ts.find(mention.first);
      if (found == ts.end()) return true;
      mention.second = found->second;
      return false;
    });
    it = list.empty() ? mentions.erase(it) : std::next(it);
  }
  return mentions;
}

// The stored sums of `ns`'s entities that `mentions` can extend, into `state`. An entity
// without a row (new, or dropped by a trigger), or whose mention_count is not the mentions its
// row has summed plus the new ones (a mention stored out of seq order), starts from zero with
// every one of its mentions, in seq order, in `mentions`. Returns how many start from zero.
std::int64_t resume_sums(SQLite::Database& db, const std::string& ns,
                         std::map<std::int64_t, WeightState>& state, MentionLists& mentions) {
  SQLite::Statement q(
      db,
      "SELECT en.entity_id, en.mention_count, w.entity_id IS NOT NULL, "
      "coalesce(w.weight_sum, 0), coalesce(w.mentions, 0), coalesce(w.through_seq, 0) "
      "FROM entities en LEFT JOIN entity_mention_weights w ON w.entity_id = en.entity_id "
      "WHERE en.namespace = ?1");
  q.bind(1, ns);
  std::vector<std::int64_t> rebuild;
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    const auto added = mentions.find(id);
    const std::int64_t new_count =
        added == mentions.end() ? 0 : static_cast<std::int64_t>(added->second.size());
    const WeightState w{q.getColumn(3).getDouble(), q.getColumn(4).getInt64(),
                        q.getColumn(5).getInt64()};
    const bool consistent =
        q.getColumn(2).getInt() != 0 && w.mentions + new_count == q.getColumn(1).getInt64() &&
        (added == mentions.end() || added->second.front().first > w.through_seq);
    if (consistent) {
      state[id] = w;
    } else {
      state[id] = {};
      rebuild.push_back(id);
    }
  }
  SQLite::Statement all(
      db,
      "SELECT ee.seq, ev.ts_us FROM event_entities ee JOIN events ev ON ev.seq = ee.seq "
      "WHERE ee.entity_id = ?1 ORDER BY ee.seq");
  for (const std::int64_t id : rebuild) {
    all.reset();
    all.bind(1, id);
    auto& list = mentions[id];
    list.clear();
    while (all.executeStep())
      list.emplace_back(all.getColumn(0).getInt64(), all.getColumn(1).getInt64());
  }
  return static_cast<std::int64_t>(rebuild.size());
}

// Every mention of `ns`'s entities summed from zero into `state` (which holds every entity),
// in seq order, so each entity's sum gets the same additions in the same order as a
// per-entity read. Joining events row by row for ts_us read the whole events table in random
// order (8.6 s at 1M events, mostly page reads); the namespace's (seq, ts_us) come from the
// covering index instead, and its events' mentions from event_entities' primary key, in seq
// order. Returns the newest seq summed.
std::int64_t sum_every_mention(JobContext& ctx, const std::string& ns, std::int64_t ref, double h,
                               std::map<std::int64_t, WeightState>& state, std::int64_t& rows) {
  SQLite::Database& db = ctx.db;
  std::vector<std::pair<std::int64_t, std::int64_t>> times;  // (seq, ts_us), by seq
  {
    SQLite::Statement q(db,
                        "SELECT seq, ts_us FROM events INDEXED BY events_namespace_active_seq "
                        "WHERE namespace = ?1");
    q.bind(1, ns);
    while (q.executeStep())
      times.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
  }
  std::sort(times.begin(), times.end());
  ctx.cancel.check();
  std::int64_t watermark = 0;
  SQLite::Statement of_event(db, "SELECT entity_id FROM event_entities WHERE seq = ?1");
  for (const auto& [seq, ts] : times) {
    of_event.reset();
    of_event.bind(1, seq);
    while (of_event.executeStep()) {
      const std::int64_t entity = of_event.getColumn(0).getInt64();
      // Always true: the cluster job links an event only to entities of the event's own
      // namespace, and no code moves an event to another namespace.
      if (!state.contains(entity)) continue;
      auto& w = state[entity];
      w.sum += mention_weight(ts, ref, h);
      ++w.mentions;
      w.through_seq = std::max(w.through_seq, seq);
      watermark = std::max(watermark, seq);
    }
    if (++rows % 65536 == 0) ctx.cancel.check();
  }
  return watermark;
}

// Per entity of `ns` (every entity, active or not): the sum in seq order of mention_weight over
// its mentions, brought up to date in entity_mention_weights / importance_state (migration 8).
// A run reads only the mentions after the namespace's watermark, plus every mention of the
// entities whose row a trigger dropped; when the reference time moves (the newest mention is a
// period past it), when the half-life changed or a mention was deleted, everything is summed
// again. Each sum is formed by the same additions in the same order either way, so the stored
// sums equal a recomputation from scratch bit for bit. The rows to store go to `writes`.
std::unordered_map<std::int64_t, double> mention_weights(JobContext& ctx, const std::string& ns,
                                                         const ImportanceParams& p,
                                                         NamespaceWrites& writes) {
  SQLite::Database& db = ctx.db;
  const double h = p.half_life_days;
  const std::int64_t period =
      h > 0 ? std::max<std::int64_t>(1, std::llround(h * kRefPeriodHalfLives * kUsPerDayD)) : 1;
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();  // no event yet
  auto ref_of = [&](std::int64_t newest) {
    return h > 0 && newest != kNone ? floor_div(newest, period) * period : std::int64_t{0};
  };

  bool full = true;
  std::int64_t ref = 0, watermark = 0;
  {
    SQLite::Statement q(
        db,
        "SELECT half_life_days, ref_us, max_ts_us, through_seq FROM importance_state "
        "WHERE namespace = ?1");
    q.bind(1, ns);
    if (q.executeStep() && q.getColumn(0).getDouble() == h) {
      full = false;
      ref = q.getColumn(1).getInt64();
      watermark = q.getColumn(3).getInt64();
    }
  }
  // The reference follows the namespace's newest event (kept by triggers on events), not its
  // newest mention.
  std::int64_t newest = kNone;
  {
    SQLite::Statement q(db, "SELECT max_ts_us FROM event_namespaces WHERE namespace = ?1");
    q.bind(1, ns);
    if (q.executeStep()) newest = q.getColumn(0).getInt64();
  }
  if (!full && ref_of(newest) != ref) full = true;  // the reference moved: sum everything again
  std::map<std::int64_t, WeightState> state;        // entity -> its sum, ordered by id
  std::int64_t rows = 0;
  ref = ref_of(newest);
  if (full) {
    SQLite::Statement ids(db, "SELECT entity_id FROM entities WHERE namespace = ?1");
    ids.bind(1, ns);
    while (ids.executeStep()) state[ids.getColumn(0).getInt64()] = {};
    ctx.cancel.check();
    watermark = sum_every_mention(ctx, ns, ref, h, state, rows);
    for (const auto& [id, w] : state) writes.weights.emplace_back(id, w);
    writes.resummed = static_cast<std::int64_t>(state.size());
  } else {
    MentionLists mentions = mentions_after(ctx, ns, watermark, rows);
    writes.resummed = resume_sums(db, ns, state, mentions);
    for (const auto& [id, list] : mentions) {
      WeightState& w = state[id];
      for (const auto& [seq, ts] : list) {
        w.sum += mention_weight(ts, ref, h);
        ++w.mentions;
        w.through_seq = std::max(w.through_seq, seq);
        watermark = std::max(watermark, seq);
      }
      writes.weights.emplace_back(id, w);
    }
  }
  writes.half_life_days = h;
  writes.ref_us = ref;
  writes.max_ts_us = newest == kNone ? std::int64_t{0} : newest;
  writes.through_seq = watermark;
  std::unordered_map<std::int64_t, double> out;
  out.reserve(state.size());
  for (const auto& [id, w] : state) out.emplace(id, w.sum);
  return out;
}

struct Vertex {
  std::int64_t id;
  std::string key;
  std::int64_t mentions;
  std::int64_t last_us;
  double score_before;
  std::string summary_before;
};

// A namespace's stored edges between active vertices (`index`: entity id -> vertex), by
// (source key, target key, type). Added up in that order (ids depend on the order namespaces
// were processed in), parallel edges sum in the same order: same tables, same bits. Read as
// stored and sorted here: the vertices are in key order, so (source, target, type) by vertex
// index is (source key, target key, type), without two entity lookups per edge and a temp
// B-tree (the job's instructions 1.24 -> 0.91 G). Edges to an entity that is not an active
// vertex add nothing. Errors: SQLite::Exception.
struct ImportanceEdge {
  std::size_t from, to;
  std::uint32_t type;  // index into NamespaceEdges::type_names
  double base;
  std::int64_t ref_us;
};
struct NamespaceEdges {
  std::vector<ImportanceEdge> rows;
  std::vector<std::string> type_names;
};
NamespaceEdges read_edges(SQLite::Database& db, const std::string& ns,
                          const std::unordered_map<std::int64_t, std::size_t>& index) {
  NamespaceEdges edges;
  auto& types = edges.type_names;
  for_each_stored_edge(db, ns, [&](const EntityStore::StoredStrength& e) {
    const auto a = index.find(e.source_id);
    const auto b = index.find(e.target_id);
    if (a == index.end() || b == index.end() || a->second == b->second) return;
    auto known = std::find(types.begin(), types.end(), e.rel_type);
    if (known == types.end()) known = types.emplace(types.end(), e.rel_type);
    edges.rows.push_back({a->second, b->second, static_cast<std::uint32_t>(known - types.begin()),
                          e.strength_base, e.strength_ref_us});
  });
  // (namespace, source, target, type) is unique, so this order is total; types compare by
  // text (BINARY collation: byte order, as std::string compares).
  std::sort(edges.rows.begin(), edges.rows.end(),
            [&](const ImportanceEdge& x, const ImportanceEdge& y) {
              if (x.from != y.from) return x.from < y.from;
              if (x.to != y.to) return x.to < y.to;
              return types[x.type] < types[y.type];
            });
  return edges;
}

// Scores `ns` from the caller's (read) transaction; what changes goes to `writes`.
// `twin`: a read-only connection to the same file (open_read_only_twin()), or nullptr.
// The namespace's edges as PageRank's graph, weighted by their strength at `now_us`
// (co_occurs both ways, the typed relationships from subject to object), parallel edges summed,
// in vertex order. `edge_rows` counts the edges of positive strength.
Csr edge_graph(const NamespaceEdges& edges, std::size_t n, std::int64_t now_us,
               std::int64_t edge_half_life_s, std::int64_t& edge_rows) {
  std::vector<std::map<std::size_t, double>> out(n);
  const auto co_occurs = std::find(edges.type_names.begin(), edges.type_names.end(), "co_occurs");
  const auto co_occurs_type = static_cast<std::uint32_t>(co_occurs - edges.type_names.begin());
  for (const ImportanceEdge& e : edges.rows) {
    const double w = edge_strength_at(e.base, e.ref_us, now_us, edge_half_life_s);
    if (!(w > 0)) continue;
    ++edge_rows;
    out[e.from][e.to] += w;
    if (e.type == co_occurs_type) out[e.to][e.from] += w;
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
  return csr;
}

// The scores that changed go to `writes`, and the entities whose summary prints another
// score: the summary prints it with two decimals, so it is stale only when that text changes.
// Returns how many scores changed.
std::int64_t record_changed_scores(const std::vector<Vertex>& vertices,
                                   const std::vector<double>& scores, NamespaceWrites& writes) {
  std::int64_t updated = 0;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (scores[i] == vertices[i].score_before) continue;
    writes.scores.emplace_back(vertices[i].id, scores[i]);
    ++updated;
    std::array<char, 32> before{};
    std::array<char, 32> after{};
    std::snprintf(before.data(), before.size(), "%.2f", vertices[i].score_before);
    std::snprintf(after.data(), after.size(), "%.2f", scores[i]);
    if (std::strcmp(before.data(), after.data()) != 0)
      writes.summaries_stale.push_back(vertices[i].id);
  }
  return updated;
}

json score_namespace(JobContext& ctx, const std::string& ns, const ImportanceParams& p, json& top,
                     NamespaceWrites& writes, SQLite::Database* twin) {
  SQLite::Database& db = ctx.db;
  const std::int64_t now = ctx.clock.now_us();
  std::vector<Vertex> vertices;
  {
    SQLite::Statement q(
        db,
        "SELECT entity_id, canonical_key, mention_count, last_seen_us, importance_score, "
        "coalesce(summary_text, '') FROM entities WHERE namespace = ?1 AND is_active = 1 "
        "ORDER BY canonical_key");
    q.bind(1, ns);
    while (q.executeStep()) {
      vertices.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                          q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                          q.getColumn(4).getDouble(), q.getColumn(5).getString()});
    }
  }
  const std::size_t n = vertices.size();
  if (n == 0) {
    return {{"entities_scored", 0},
            {"edges", 0},
            {"iterations", 0},
            {"updated", 0},
            {"weights_resummed", 0}};
  }
  std::unordered_map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[vertices[i].id] = i;

  // The edges are read on `twin` (when there is one) on another thread while this one sums
  // the mention weights: the same rows as in this snapshot, since only the cluster job writes
  // entity_relationships and it never runs at the same time as this job (one scheduler
  // thread). When no thread can be started (std::system_error: RLIMIT_NPROC, a unit's
  // TasksMax), they are read here afterwards.
  std::future<NamespaceEdges> edges_read;
  if (twin != nullptr) {
    try {
      edges_read = std::async(std::launch::async,
                              [twin, &ns, &index] { return read_edges(*twin, ns, index); });
    } catch (const std::system_error&) {
      twin = nullptr;
    }
  }
  // Recency-weighted mentions from the incremental per-entity sums (header, migration 8).
  const std::unordered_map<std::int64_t, double> weights = mention_weights(ctx, ns, p, writes);
  std::vector<double> personalization(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (const auto it = weights.find(vertices[i].id); it != weights.end())
      personalization[i] = it->second;
  }
  ctx.cancel.check();
  const NamespaceEdges edges = twin != nullptr ? edges_read.get() : read_edges(db, ns, index);

  std::int64_t edge_rows = 0;
  const Csr csr = edge_graph(edges, n, now, p.edge_half_life_s, edge_rows);
  ctx.cancel.check();
  std::int64_t iterations = 0;
  const std::vector<double> rank = personalized_pagerank(
      csr, personalization, p.damping, p.max_iterations, p.tolerance, &iterations);
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

  const std::int64_t updated = record_changed_scores(vertices, scores, writes);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : vertices[a].key < vertices[b].key;
  });
  json list = json::array();
  for (std::size_t k = 0; k < order.size() && static_cast<std::int64_t>(k) < p.top_entities; ++k) {
    // Ids, not names: a run record outlives a forget of the entity it would name.
    list.push_back(json::array({vertices[order[k]].id, scores[order[k]]}));
  }
  top[ns] = std::move(list);
  return {{"entities_scored", static_cast<std::int64_t>(n)},
          {"edges", edge_rows},
          {"iterations", iterations},
          {"updated", updated},
          {"weights_resummed", writes.resummed}};
}

}  // namespace

std::vector<double> personalized_pagerank(const Csr& graph, std::span<const double> personalization,
                                          double damping, std::int64_t max_iterations,
                                          double tolerance, std::int64_t* iterations) {
  const std::size_t n = personalization.size();
  std::vector<double> v(personalization.begin(), personalization.end());
  double total = 0;
  for (double x : v) total += std::max(0.0, x);
  for (double& x : v) x = total > 0 ? std::max(0.0, x) / total : 1.0 / static_cast<double>(n);
  std::vector<double> out_weight(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto k = graph.offsets[i]; k < graph.offsets[i + 1]; ++k)
      out_weight[i] += graph.weights[static_cast<std::size_t>(k)];
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
        next[static_cast<std::size_t>(graph.targets[static_cast<std::size_t>(k)])] +=
            share * graph.weights[static_cast<std::size_t>(k)];
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

double blend_importance(double pagerank, double mentions, double recency,
                        const ImportanceParams& p) {
  const double total = p.weight_pagerank + p.weight_mentions + p.weight_recency;
  if (!(total > 0)) return 0.0;
  const double s =
      (p.weight_pagerank * pagerank + p.weight_mentions * mentions + p.weight_recency * recency) /
      total;
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
  std::optional<SQLite::Database> twin = open_read_only_twin(ctx.db);
  for (const auto& ns : namespaces) {
    ctx.cancel.check();
    NamespaceWrites writes;
    json r;
    {
      SQLite::Transaction snapshot(ctx.db, SQLite::TransactionBehavior::DEFERRED);
      r = score_namespace(ctx, ns, params, top, writes, twin ? &*twin : nullptr);
      snapshot.commit();  // it only read
    }
    ctx.cancel.check();
    WriteTransaction transaction(ctx);
    write_namespace(ctx.db, ns, writes);
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
