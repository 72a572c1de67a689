#include "jobs/communities.hpp"

#include <igraph/igraph.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/sha256.hpp"
#include "jobs/entities.hpp"
#include "store/audit_log.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr const char* kActor = "job:cluster";
constexpr igraph_uint_t kSeed = 20090729;  // libzmq's first commit date; any constant works.
constexpr std::size_t kMaxSupportIds = 200;

void check(igraph_error_t code, const char* what) {
  if (code != IGRAPH_SUCCESS) {
    throw std::runtime_error(std::string("igraph: ") + what + " failed: " + igraph_strerror(code));
  }
}

// RAII for the igraph objects used here.
struct Graph {
  igraph_t g{};
  bool made = false;
  ~Graph() {
    if (made) igraph_destroy(&g);
  }
};
struct IntVector {
  igraph_vector_int_t v{};
  explicit IntVector(igraph_integer_t n) { check(igraph_vector_int_init(&v, n), "vector init"); }
  ~IntVector() { igraph_vector_int_destroy(&v); }
};
struct RealVector {
  igraph_vector_t v{};
  explicit RealVector(igraph_integer_t n) { check(igraph_vector_init(&v, n), "vector init"); }
  ~RealVector() { igraph_vector_destroy(&v); }
};

struct Node {
  std::int64_t id;
  std::string key;
  std::string display;
  std::int64_t first_us;
  std::int64_t last_us;
};

// Canonical keys of entities: the namespace's entities (one read in key order; a key's rank
// is its position) plus, looked up one by one, any other entity a row refers to (the tables
// do not forbid it; then its key is compared as text).
class EntityKeys {
 public:
  struct Row {
    std::int64_t id;
    std::string key;
    std::string display;
    std::int64_t first_us;
    std::int64_t last_us;
    bool active;
  };

  EntityKeys(SQLite::Database& db, const std::string& ns)
      : find_(db, "SELECT canonical_key FROM entities WHERE entity_id = ?1") {
    SQLite::Statement q(db,
                        "SELECT entity_id, canonical_key, display_name, first_seen_us, "
                        "last_seen_us, is_active FROM entities WHERE namespace = ?1 "
                        "ORDER BY canonical_key");
    q.bind(1, ns);
    while (q.executeStep()) {
      rank_.emplace(q.getColumn(0).getInt64(), rows_.size());
      rows_.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                       q.getColumn(2).getString(), q.getColumn(3).getInt64(),
                       q.getColumn(4).getInt64(), q.getColumn(5).getInt() == 1});
    }
  }

  const std::vector<Row>& rows() const { return rows_; }

  bool exists(std::int64_t id) { return rank_.contains(id) || other(id) != nullptr; }

  // The position of `id` in rows() (its key's rank in the namespace), or kOutside for an
  // entity of another namespace.
  static constexpr std::size_t kOutside = std::numeric_limits<std::size_t>::max();
  std::size_t rank(std::int64_t id) const {
    const auto it = rank_.find(id);
    return it == rank_.end() ? kOutside : it->second;
  }

  // canonical_key(a) < canonical_key(b); both must exist.
  bool less(std::int64_t a, std::int64_t b) {
    const auto ra = rank_.find(a);
    const auto rb = rank_.find(b);
    if (ra != rank_.end() && rb != rank_.end()) return ra->second < rb->second;
    return key(a) < key(b);
  }

 private:
  const std::string& key(std::int64_t id) {
    if (const auto it = rank_.find(id); it != rank_.end()) return rows_[it->second].key;
    return *other(id);
  }

  // The key of an entity outside the namespace, or nullptr when no such entity exists.
  const std::string* other(std::int64_t id) {
    auto it = others_.find(id);
    if (it == others_.end()) {
      find_.reset();
      find_.bind(1, static_cast<std::int64_t>(id));
      std::optional<std::string> key;
      if (find_.executeStep()) key = find_.getColumn(0).getString();
      find_.reset();
      it = others_.emplace(id, std::move(key)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  SQLite::Statement find_;
  std::vector<Row> rows_;
  std::unordered_map<std::int64_t, std::size_t> rank_;
  std::unordered_map<std::int64_t, std::optional<std::string>> others_;
};

// A relationship as the constructor collects it for build().
struct CommunityEdge {
  std::int64_t a, b;
  std::size_t rank_a, rank_b;  // EntityKeys::rank()
  std::uint32_t type;          // rank of rel_type among the namespace's types
  double base;
  std::int64_t ref_us;
};

}  // namespace

struct CommunityDetection::State {
  State(SQLite::Database& database, const std::string& name, const CommunityParams& p,
        std::int64_t half_life_s, std::int64_t time_us, const CancelToken& token)
      : db(database),
        ns(name),
        params(p),
        keys(database, name),
        edge_half_life_s(half_life_s),
        graph_time_us(time_us),
        cancel(token) {}
  SQLite::Database& db;
  std::string ns;
  CommunityParams params;
  EntityKeys keys;  // after the constructor, every key an edge needs is in it (no reads)
  std::int64_t edge_half_life_s;
  std::int64_t graph_time_us;
  const CancelToken& cancel;
  std::vector<CommunityEdge> stored_edges;  // for build()
  bool all_ranked = true;                   // no edge reaches into another namespace
  // The graph (nodes, weights) from stored_edges: no database, on partition()'s thread.
  void build();
  std::vector<Node> nodes;  // empty: too few entities with edges (skipped)
  // Summed in relationship order per pair: the same rows give the same bits.
  std::map<std::pair<igraph_integer_t, igraph_integer_t>, double> weights;
  std::vector<double> degree;                // by partition()
  std::vector<igraph_integer_t> membership;  // by partition()
  bool partitioned = false;
};

CommunityDetection::CommunityDetection(
    SQLite::Database& db, const std::string& ns, const CommunityParams& params,
    std::int64_t edge_half_life_s, std::int64_t graph_time_us, const CancelToken& cancel,
    const std::optional<std::vector<EntityStore::StoredStrength>>& cached_edges)
    : state_(std::make_unique<State>(db, ns, params, edge_half_life_s, graph_time_us, cancel)) {
  EntityKeys& keys = state_->keys;
  // The namespace's entities in canonical-key order: their position is their key's rank, so
  // ordering by rank is ordering by key (keys are unique within a namespace). The edges and
  // the clusters' entities are read as stored and sorted by these ranks (build()): the same
  // order as joining them with `entities` and sorting by key in SQL, without the two lookups
  // per row and the temporary B-tree over every edge.
  std::vector<CommunityEdge>& stored_edges = state_->stored_edges;
  bool& all_ranked = state_->all_ranked;
  std::vector<std::string> type_names;
  std::unordered_map<std::string, std::uint32_t> type_index;
  auto add = [&](const EntityStore::StoredStrength& e) {
    // The join dropped relationships whose entity row does not exist. (An entity of another
    // namespace is looked up here, once, and its key kept for build()'s comparisons.)
    if (!keys.exists(e.source_id) || !keys.exists(e.target_id)) return;
    auto it = type_index.find(std::string(e.rel_type));
    if (it == type_index.end()) {
      it = type_index.emplace(e.rel_type, static_cast<std::uint32_t>(type_names.size())).first;
      type_names.emplace_back(e.rel_type);
    }
    const std::size_t rank_a = keys.rank(e.source_id);
    const std::size_t rank_b = keys.rank(e.target_id);
    all_ranked = all_ranked && rank_a != EntityKeys::kOutside && rank_b != EntityKeys::kOutside;
    stored_edges.push_back(
        {e.source_id, e.target_id, rank_a, rank_b, it->second, e.strength_base, e.strength_ref_us});
  };
  if (cached_edges) {
    stored_edges.reserve(cached_edges->size());
    for (const auto& e : *cached_edges) add(e);
  } else {
    for_each_stored_edge(db, ns, add);
  }
  // Types by text (BINARY collation: byte order, as std::string compares).
  std::vector<std::uint32_t> order(type_names.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t x, std::uint32_t y) { return type_names[x] < type_names[y]; });
  std::vector<std::uint32_t> type_rank(order.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) type_rank[order[i]] = i;
  for (auto& e : stored_edges) e.type = type_rank[e.type];
  cancel.check();
}

void CommunityDetection::State::build() {
  // (namespace, source, target, type) is unique, so this order is total. Ranks are compared
  // directly when every endpoint has one (two hash lookups per comparison were a fifth of the
  // communities' cost after 1M events); an edge into another namespace needs that entity's
  // key, which the constructor looked up.
  if (all_ranked) {
    std::sort(stored_edges.begin(), stored_edges.end(),
              [](const CommunityEdge& x, const CommunityEdge& y) {
                if (x.rank_a != y.rank_a) return x.rank_a < y.rank_a;
                if (x.rank_b != y.rank_b) return x.rank_b < y.rank_b;
                return x.type < y.type;
              });
  } else {
    std::sort(stored_edges.begin(), stored_edges.end(),
              [this](const CommunityEdge& x, const CommunityEdge& y) {
                if (x.a != y.a) return keys.less(x.a, y.a);
                if (x.b != y.b) return keys.less(x.b, y.b);
                return x.type < y.type;
              });
  }
  cancel.check();
  // Edges first (in key order, so sums over parallel edges add up in the same order whatever
  // the ids), then the vertices: entities with at least one edge, by canonical key.
  struct RawEdge {
    std::int64_t a, b;
    double w;
  };
  std::vector<RawEdge> raw;
  std::unordered_set<std::int64_t> linked;
  for (const auto& e : stored_edges) {
    const double w = edge_strength_at(e.base, e.ref_us, graph_time_us, edge_half_life_s);
    if (e.a == e.b || !(w > 0)) continue;
    raw.push_back({e.a, e.b, w});
    linked.insert(e.a);
    linked.insert(e.b);
  }
  std::vector<CommunityEdge>().swap(stored_edges);

  for (const EntityKeys::Row& row : keys.rows()) {
    if (row.active && linked.contains(row.id)) {
      nodes.push_back({row.id, row.key, row.display, row.first_us, row.last_us});
    }
  }
  if (nodes.size() < static_cast<std::size_t>(std::max<std::int64_t>(params.min_entities, 2))) {
    nodes.clear();
    return;
  }
  std::unordered_map<std::int64_t, igraph_integer_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    index[nodes[i].id] = static_cast<igraph_integer_t>(i);
  for (const auto& e : raw) {
    const auto a = index.find(e.a);
    const auto b = index.find(e.b);
    if (a == index.end() || b == index.end()) continue;
    weights[std::minmax(a->second, b->second)] += e.w;
  }
}

CommunityDetection::~CommunityDetection() = default;

void CommunityDetection::partition() {
  State& st = *state_;
  st.build();
  st.partitioned = true;
  if (st.nodes.empty()) return;
  const auto n = static_cast<igraph_integer_t>(st.nodes.size());
  st.degree.assign(st.nodes.size(), 0.0);
  IntVector membership(0);
  {
    IntVector edges(static_cast<igraph_integer_t>(2 * st.weights.size()));
    RealVector w(static_cast<igraph_integer_t>(st.weights.size()));
    igraph_integer_t e = 0;
    for (const auto& [pair, weight] : st.weights) {
      VECTOR(edges.v)[2 * e] = pair.first;
      VECTOR(edges.v)[2 * e + 1] = pair.second;
      VECTOR(w.v)[e] = weight;
      st.degree[static_cast<std::size_t>(pair.first)] += weight;
      st.degree[static_cast<std::size_t>(pair.second)] += weight;
      ++e;
    }
    igraph_error_handler_t* previous = igraph_set_error_handler(igraph_error_handler_ignore);
    Graph graph;
    igraph_error_t rc = igraph_create(&graph.g, &edges.v, n, IGRAPH_UNDIRECTED);
    graph.made = rc == IGRAPH_SUCCESS;
    if (rc == IGRAPH_SUCCESS) rc = igraph_rng_seed(igraph_rng_default(), kSeed);
    if (rc == IGRAPH_SUCCESS)
      rc = igraph_community_multilevel(&graph.g, &w.v, st.params.resolution, &membership.v, nullptr,
                                       nullptr);
    igraph_set_error_handler(previous);
    check(rc, "community_multilevel");
  }
  st.membership.resize(st.nodes.size());
  for (std::size_t i = 0; i < st.nodes.size(); ++i)
    st.membership[i] = VECTOR(membership.v)[static_cast<igraph_integer_t>(i)];
  decltype(st.weights)().swap(st.weights);
}

namespace {

// A community as stored: its observation id (from its anchor, the member of highest weighted
// degree), its members by weighted degree, descending, and the clusters whose dominant entity
// is a member, as (member_count, cluster_id).
struct Community {
  std::string id;
  std::size_t anchor;
  std::vector<std::size_t> members;
  std::vector<std::pair<std::int64_t, std::int64_t>> clusters;
};

// The partition's groups of at least params.min_entities members as communities, in label
// order; `community_of[node]` receives each node's community (-1: in none).
std::vector<Community> group_communities(const std::string& ns, const CommunityParams& params,
                                         const std::vector<Node>& nodes,
                                         const std::vector<double>& degree,
                                         const std::vector<igraph_integer_t>& membership,
                                         std::vector<std::int64_t>& community_of) {
  std::map<igraph_integer_t, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < nodes.size(); ++i) groups[membership[i]].push_back(i);
  std::vector<Community> communities;
  community_of.assign(nodes.size(), -1);
  for (auto& [label, members] : groups) {
    if (static_cast<std::int64_t>(members.size()) < params.min_entities) continue;
    std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return degree[a] != degree[b] ? degree[a] > degree[b] : nodes[a].key < nodes[b].key;
    });
    Community c;
    c.anchor = members.front();
    c.members = members;
    c.id = "community:" + ns + ":" + sha256_hex(nodes[c.anchor].key).substr(0, 16);
    for (std::size_t m : members) community_of[m] = static_cast<std::int64_t>(communities.size());
    communities.push_back(std::move(c));
  }
  return communities;
}

// Each cluster joins the community of its dominant entity: most mentions, ties the smaller key
// (the order the SQL join sorted by before); clusters in id order. Returns the clusters placed.
std::int64_t assign_clusters(SQLite::Database& db, const std::string& ns, EntityKeys& keys,
                             const std::vector<Node>& nodes,
                             const std::vector<std::int64_t>& community_of,
                             std::vector<Community>& communities) {
  std::unordered_map<std::int64_t, std::size_t> node_of;
  for (std::size_t i = 0; i < nodes.size(); ++i) node_of[nodes[i].id] = i;
  SQLite::Statement q(db,
                      "SELECT ce.cluster_id, ce.entity_id, ce.mentions, c.member_count "
                      "FROM clusters c JOIN cluster_entities ce ON ce.cluster_id = c.cluster_id "
                      "WHERE c.namespace = ?1");
  q.bind(1, ns);
  struct Dominant {
    std::int64_t entity;
    std::int64_t mentions;
    std::int64_t members;
  };
  std::map<std::int64_t, Dominant> dominant;
  while (q.executeStep()) {
    const std::int64_t cluster = q.getColumn(0).getInt64();
    const std::int64_t entity = q.getColumn(1).getInt64();
    if (!keys.exists(entity)) continue;  // the join dropped it
    const std::int64_t mentions = q.getColumn(2).getInt64();
    const auto [it, inserted] =
        dominant.try_emplace(cluster, Dominant{entity, mentions, q.getColumn(3).getInt64()});
    if (!inserted && (mentions > it->second.mentions ||
                      (mentions == it->second.mentions && keys.less(entity, it->second.entity)))) {
      it->second.entity = entity;
      it->second.mentions = mentions;
    }
  }
  std::int64_t clustered = 0;
  for (const auto& [cluster, d] : dominant) {
    const auto it = node_of.find(d.entity);
    if (it == node_of.end() || community_of[it->second] < 0) continue;
    communities[static_cast<std::size_t>(community_of[it->second])].clusters.emplace_back(d.members,
                                                                                          cluster);
    ++clustered;
  }
  return clustered;
}

// A community's observation row in words.
struct CommunityText {
  std::string title;
  std::string text;
  json support = json::array();  // its clusters' medoid events, ascending
  std::int64_t first_us = 0;
  std::int64_t last_us = 0;
};

// The community's rows in observations and community_members: read, written and their
// statements prepared once per run.
class CommunityRows {
 public:
  explicit CommunityRows(SQLite::Database& db)
      : stored_(db,
                "SELECT member_type, member_id FROM community_members WHERE observation_id = ?1"),
        exists_(db, "SELECT 1 FROM observations WHERE observation_id = ?1"),
        cluster_(db, "SELECT label, medoid_seq FROM clusters WHERE cluster_id = ?1"),
        // Rewritten whenever any column differs, not only when the members did: the text
        // names clusters by their current labels and sizes. A community is recomputed from the
        // whole graph at each run, so it counts no reinforcements (times_reinforced stays 0):
        // that count would say how often this replica's runs happened to see it change.
        upsert_(db, R"sql(
INSERT INTO observations (observation_id, namespace, observation_type, signature, target, title, text,
  supporting_event_ids, support_count, trajectory_count, success_count, confidence, importance,
  times_reinforced, is_active, first_detected_us, last_reinforced_us)
VALUES (?1, ?2, 'community', ?3, ?3, ?4, ?5, ?6, ?7, ?8, 0, min(0.95, 0.5 + 0.05 * ?7),
  min(1.0, log10(1 + ?7) / 2.0), 0, 1, ?9, ?10)
ON CONFLICT (observation_id) DO UPDATE SET title = excluded.title, text = excluded.text,
  supporting_event_ids = excluded.supporting_event_ids, support_count = excluded.support_count,
  trajectory_count = excluded.trajectory_count, confidence = excluded.confidence,
  importance = excluded.importance, is_active = 1, first_detected_us = excluded.first_detected_us,
  last_reinforced_us = excluded.last_reinforced_us
WHERE (title, text, supporting_event_ids, support_count, trajectory_count, first_detected_us,
    last_reinforced_us, is_active) IS NOT (excluded.title, excluded.text,
    excluded.supporting_event_ids, excluded.support_count, excluded.trajectory_count,
    excluded.first_detected_us, excluded.last_reinforced_us, 1))sql"),
        remove_(db,
                "DELETE FROM community_members WHERE observation_id = ?1 AND member_type = ?2 "
                "AND member_id = ?3"),
        add_(db,
             "INSERT INTO community_members (observation_id, member_type, member_id) VALUES "
             "(?1, ?2, ?3)") {}

  using Members = std::set<std::pair<std::string, std::int64_t>>;

  Members stored(const std::string& id) {
    Members out;
    stored_.reset();
    stored_.bind(1, id);
    while (stored_.executeStep())
      out.emplace(stored_.getColumn(0).getString(), stored_.getColumn(1).getInt64());
    stored_.reset();
    return out;
  }

  bool exists(const std::string& id) {
    exists_.reset();
    exists_.bind(1, id);
    const bool found = exists_.executeStep();
    exists_.reset();
    return found;
  }

  // The members by their names, agents (who acted, often under pseudonymous ids) counted
  // rather than named; the title names the central members (the order of c.members).
  CommunityText describe(const Community& c, const std::vector<Node>& nodes,
                         const CommunityParams& params) {
    CommunityText out;
    out.text = "Entities: ";
    std::string central;
    std::int64_t listed = 0;
    std::int64_t agents = 0;
    std::int64_t named = 0;
    for (const std::size_t m : c.members) {
      const Node& node = nodes[m];
      out.first_us = std::max(out.first_us, node.first_us);
      out.last_us = std::max(out.last_us, node.last_us);
      if (node.key.starts_with("agent:")) {
        ++agents;
        continue;
      }
      ++named;
      const std::string name = node.display.empty() ? node.key : node.display;
      if (named <= 3) central += (named > 1 ? ", " : "") + name;
      if (listed < params.max_listed) out.text += (listed++ > 0 ? ", " : "") + name;
    }
    if (named > listed) out.text += " and " + std::to_string(named - listed) + " more";
    if (listed == 0) out.text += "none named";
    if (agents > 0) {
      out.text += "; " + std::to_string(agents) + (agents == 1 ? " agent" : " agents");
    }
    if (!c.clusters.empty()) {
      out.text += ". Clusters: ";
      std::vector<std::int64_t> medoids;
      for (std::size_t i = 0; i < c.clusters.size(); ++i) {
        if (static_cast<std::int64_t>(i) >= params.max_listed && medoids.size() >= kMaxSupportIds)
          break;
        cluster_.reset();
        cluster_.bind(1, static_cast<std::int64_t>(c.clusters[i].second));
        if (!cluster_.executeStep()) continue;
        if (static_cast<std::int64_t>(i) < params.max_listed) {
          out.text += (i > 0 ? "; " : "") + cluster_.getColumn(0).getString() + " (" +
                      std::to_string(c.clusters[i].first) + ")";
        }
        if (medoids.size() < kMaxSupportIds) medoids.push_back(cluster_.getColumn(1).getInt64());
      }
      cluster_.reset();
      std::sort(medoids.begin(), medoids.end());
      for (auto m : medoids) out.support.push_back(m);
    }
    out.title =
        (central.empty() ? std::string("Agents who work together") : "Related: " + central) +
        (named > 3 ? " and " + std::to_string(named - 3) + " more" : "");
    return out;
  }

  // Inserts or updates the observation row; true when a row was written.
  bool upsert(const Community& c, const std::string& ns, const Node& anchor,
              const CommunityText& t) {
    upsert_.reset();
    upsert_.bind(1, c.id);
    upsert_.bind(2, ns);
    upsert_.bind(3, anchor.key);
    upsert_.bind(4, t.title);
    upsert_.bind(5, t.text);
    upsert_.bind(6, t.support.dump());
    upsert_.bind(7, static_cast<std::int64_t>(c.members.size()));
    upsert_.bind(8, static_cast<std::int64_t>(c.clusters.size()));
    upsert_.bind(9, t.first_us);
    upsert_.bind(10, t.last_us);
    return upsert_.exec() > 0;
  }

  // Only the members that changed: a large community gains or loses a few per run, and
  // rewriting all of its rows (thousands) was most of a run's writes here.
  void update_members(const std::string& id, const Members& stored, const Members& members) {
    auto write_member = [&id](SQLite::Statement& statement, const auto& member) {
      store::exec_bound(statement, id, member.first, static_cast<std::int64_t>(member.second));
    };
    for (const auto& member : stored) {
      if (!members.contains(member)) write_member(remove_, member);
    }
    for (const auto& member : members) {
      if (!stored.contains(member)) write_member(add_, member);
    }
  }

 private:
  SQLite::Statement stored_;
  SQLite::Statement exists_;
  SQLite::Statement cluster_;
  SQLite::Statement upsert_;
  SQLite::Statement remove_;
  SQLite::Statement add_;
};

// Communities no longer found are deleted with their members (an audit row keeps the title):
// kept, they would record which partitions this replica's runs happened to see. Returns how
// many.
std::int64_t retire_gone(SQLite::Database& db, const std::string& ns,
                         const std::set<std::string>& current, store::AuditLog& audit,
                         std::int64_t now_us) {
  SQLite::Statement q(db,
                      "SELECT observation_id, title FROM observations WHERE namespace = ?1 AND "
                      "observation_type = 'community' ORDER BY observation_id");
  q.bind(1, ns);
  std::vector<std::pair<std::string, std::string>> gone;
  while (q.executeStep()) {
    if (!current.contains(q.getColumn(0).getString())) {
      gone.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getString());
    }
  }
  q.reset();
  SQLite::Statement members(db, "DELETE FROM community_members WHERE observation_id = ?1");
  SQLite::Statement retire(db, "DELETE FROM observations WHERE observation_id = ?1");
  std::int64_t retired = 0;
  for (const auto& [id, title] : gone) {
    for (auto* statement : {&members, &retire}) {
      statement->reset();
      statement->bind(1, id);
      statement->exec();
    }
    audit.append("observation", id, "delete", kActor, now_us, "community no longer detected",
                 json{{"title", title}}.dump());
    ++retired;
  }
  return retired;
}

}  // namespace

json CommunityDetection::store(std::int64_t now_us, const CancelToken& cancel) {
  State& st = *state_;
  if (!st.partitioned) throw std::logic_error("CommunityDetection::store() before partition()");
  SQLite::Database& db = st.db;
  const std::string& ns = st.ns;
  const std::vector<Node>& nodes = st.nodes;
  if (nodes.empty()) {
    return {{"communities_created", 0},
            {"communities_reinforced", 0},
            {"communities_retired", 0},
            {"clusters_in_communities", 0},
            {"communities", 0},
            {"skipped", true},
            {"skip_reason", "fewer entities with edges than communities.min_entities"}};
  }
  cancel.check();
  std::vector<std::int64_t> community_of;
  std::vector<Community> communities =
      group_communities(ns, st.params, nodes, st.degree, st.membership, community_of);
  const std::int64_t clustered = assign_clusters(db, ns, st.keys, nodes, community_of, communities);
  cancel.check();

  store::AuditLog audit(db);
  CommunityRows rows(db);
  std::int64_t created = 0;
  std::int64_t reinforced = 0;
  std::set<std::string> current;
  for (auto& c : communities) {
    current.insert(c.id);
    std::sort(c.clusters.begin(), c.clusters.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    CommunityRows::Members members;
    for (std::size_t m : c.members) members.emplace("entity", nodes[m].id);
    for (const auto& [size, id] : c.clusters) members.emplace("cluster", id);
    const CommunityRows::Members stored = rows.stored(c.id);
    const bool exists = rows.exists(c.id);
    const CommunityText text = rows.describe(c, nodes, st.params);
    const bool row_changed = rows.upsert(c, ns, nodes[c.anchor], text);
    if (exists && !row_changed && stored == members) continue;
    rows.update_members(c.id, stored, members);
    if (exists) {
      audit.append(
          "observation", c.id, "reinforce", kActor, now_us,
          "members " + std::to_string(stored.size()) + " -> " + std::to_string(members.size()));
      ++reinforced;
    } else {
      audit.append("observation", c.id, "create", kActor, now_us, text.title);
      ++created;
    }
  }
  const std::int64_t retired = retire_gone(db, ns, current, audit, now_us);
  return {{"communities_created", created},
          {"communities_reinforced", reinforced},
          {"communities_retired", retired},
          {"clusters_in_communities", clustered},
          {"communities", static_cast<std::int64_t>(communities.size())},
          {"skipped", false},
          {"skip_reason", nullptr}};
}

json detect_communities(
    SQLite::Database& db, const std::string& ns, const CommunityParams& params,
    std::int64_t edge_half_life_s, std::int64_t graph_time_us, std::int64_t now_us,
    const CancelToken& cancel,
    const std::optional<std::vector<EntityStore::StoredStrength>>& cached_edges) {
  CommunityDetection detection(db, ns, params, edge_half_life_s, graph_time_us, cancel,
                               cached_edges);
  cancel.check();
  detection.partition();
  return detection.store(now_us, cancel);
}

}  // namespace reflectd::jobs
