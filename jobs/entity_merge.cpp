#include "jobs/entity_merge.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/VariadicBind.h>

#include <algorithm>
#include <cassert>
#include <vector>

#include "jobs/entities.hpp"
#include "store/audit_log.hpp"
#include "store/bound_exec.hpp"
#include "store/columns.hpp"

namespace reflectd::jobs {
using nlohmann::json;

namespace {

// The entities of namespace ?1 (every namespace when '') whose canonical key has become an
// alias: the merges execute_pending_merges() executes.
constexpr const char* kPendingMerges = R"sql(
SELECT e.entity_id, e.namespace, e.canonical_key, e.display_name, e.mention_count
FROM entity_aliases a JOIN entities e ON e.namespace = a.namespace AND e.canonical_key = a.alias
WHERE (?1 = '' OR a.namespace = ?1)
UNION
SELECT e.entity_id, e.namespace, e.canonical_key, e.display_name, e.mention_count
FROM entity_merges m JOIN entities e ON e.namespace = m.namespace AND e.canonical_key = m.alias_key
WHERE (?1 = '' OR m.namespace = ?1))sql";

// The aliases of namespace ?1 (every namespace when '') that facts or fact links name.
constexpr const char* kAliasesNamedByFacts = R"sql(
SELECT a.namespace, a.alias FROM entity_aliases a
WHERE (?1 = '' OR a.namespace = ?1) AND (
  EXISTS (SELECT 1 FROM facts f WHERE f.namespace = a.namespace AND f.entity_key = a.alias)
  OR EXISTS (SELECT 1 FROM fact_entity_links l JOIN facts f USING (fact_id)
             WHERE l.entity_key = a.alias AND f.namespace = a.namespace)))sql";

constexpr const char* kSensitivityRank =
    "CASE %s WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 "
    "ELSE 4 END";

std::string rank_of(const std::string& column) {
  std::string out = kSensitivityRank;
  out.replace(out.find("%s"), 2, column);
  return out;
}

std::int64_t run(SQLite::Database& db, const std::string& sql,
                 const std::vector<std::int64_t>& ints,
                 const std::vector<std::string>& texts = {}) {
  SQLite::Statement statement(db, sql);
  int i = 1;
  for (const auto v : ints) statement.bind(i++, v);
  for (const auto& v : texts) statement.bind(i++, v);
  return statement.exec();
}

struct MergedEdge {
  std::int64_t id = 0;
  std::int64_t source = 0;
  std::int64_t target = 0;
  std::string type;
  double base = 0;
  std::int64_t ref_us = 0;
  std::int64_t mentions = 0;
  std::int64_t evidence_seq = 0;
  std::int64_t last_evidence_seq = 0;
  std::int64_t valid_from_us = 0;
  std::optional<std::int64_t> valid_to_us;
};

constexpr const char* kEdgeColumns =
    "relationship_id, source_id, target_id, rel_type, strength_base, strength_ref_us, "
    "mention_count, evidence_seq, last_evidence_seq, valid_from_us, valid_to_us";

MergedEdge read_edge(const SQLite::Statement& row) {
  MergedEdge e;
  store::Columns(row) >> e.id >> e.source >> e.target >> e.type >> e.base >> e.ref_us >>
      e.mentions >> e.evidence_seq >> e.last_evidence_seq >> e.valid_from_us >> e.valid_to_us;
  return e;
}

void merge_edges(SQLite::Database& db, const EntityRef& from, const EntityRef& into,
                 std::int64_t half_life_s, EntityMergeCounts& counts) {
  std::vector<MergedEdge> edges;
  {
    SQLite::Statement read(db, std::string("SELECT ") + kEdgeColumns +
                                   " FROM entity_relationships WHERE namespace = ?1 AND "
                                   "source_id = ?2 UNION SELECT " +
                                   kEdgeColumns +
                                   " FROM entity_relationships WHERE target_id = ?2 "
                                   "ORDER BY relationship_id");
    read.bind(1, from.ns);
    read.bind(2, from.id);
    while (read.executeStep()) edges.push_back(read_edge(read));
  }
  SQLite::Statement key_of(db, "SELECT canonical_key FROM entities WHERE entity_id = ?1");
  SQLite::Statement find(db, std::string("SELECT ") + kEdgeColumns +
                                 " FROM entity_relationships WHERE namespace = ?1 AND "
                                 "source_id = ?2 AND target_id = ?3 AND rel_type = ?4");
  SQLite::Statement remove(db, "DELETE FROM entity_relationships WHERE relationship_id = ?1");
  SQLite::Statement repoint(db,
                            "UPDATE entity_relationships SET source_id = ?2, target_id = ?3 "
                            "WHERE relationship_id = ?1");
  SQLite::Statement fold(db,
                         "UPDATE entity_relationships SET strength = ?2, strength_base = ?2, "
                         "strength_ref_us = ?3, mention_count = ?4, evidence_seq = ?5, "
                         "last_evidence_seq = ?6, valid_from_us = ?7, valid_to_us = ?8 "
                         "WHERE relationship_id = ?1");
  for (const MergedEdge& e : edges) {
    std::int64_t source = e.source == from.id ? into.id : e.source;
    std::int64_t target = e.target == from.id ? into.id : e.target;
    if (source == target) {
      store::exec_bound(remove, e.id);
      ++counts.edges_dropped;
      continue;
    }
    if (e.type == "co_occurs") {  // stored from the smaller canonical key to the larger
      const std::int64_t other = source == into.id ? target : source;
      key_of.reset();
      key_of.bind(1, other);
      const std::string other_key = key_of.executeStep() ? key_of.getColumn(0).getString() : "";
      key_of.reset();
      source = other_key < into.key ? other : into.id;
      target = other_key < into.key ? into.id : other;
    }
    find.reset();
    find.bind(1, from.ns);
    find.bind(2, source);
    find.bind(3, target);
    find.bind(4, e.type);
    if (!find.executeStep()) {
      find.reset();
      store::exec_bound(repoint, e.id, source, target);
      ++counts.edges_moved;
      continue;
    }
    const MergedEdge kept = read_edge(find);
    find.reset();
    const std::int64_t ref_us = std::max(kept.ref_us, e.ref_us);
    const double strength = std::max(edge_strength_at(kept.base, kept.ref_us, ref_us, half_life_s),
                                     edge_strength_at(e.base, e.ref_us, ref_us, half_life_s));
    // Delete first: the folded edge takes evidence the deleted row was the last to cite.
    store::exec_bound(remove, e.id);
    fold.reset();
    fold.bind(1, kept.id);
    fold.bind(2, strength);
    fold.bind(3, ref_us);
    fold.bind(4, kept.mentions + e.mentions);
    fold.bind(5, std::min(kept.evidence_seq, e.evidence_seq));
    fold.bind(6, std::max(kept.last_evidence_seq, e.last_evidence_seq));
    fold.bind(7, std::min(kept.valid_from_us, e.valid_from_us));
    if (kept.valid_to_us && e.valid_to_us) {
      fold.bind(8, std::max(*kept.valid_to_us, *e.valid_to_us));
    } else {
      fold.bind(8);
    }
    fold.exec();
    ++counts.edges_joined;
  }
}

// Renames the facts and fact links of namespace `ns` that name `from_key` to `into_key` (and
// `into_name`); a fact that links both keys keeps one link. Returns the rows renamed.
std::int64_t move_facts(SQLite::Database& db, const std::string& ns, const std::string& from_key,
                        const std::string& into_key, const std::string& into_name) {
  std::int64_t moved = run(db,
                           "UPDATE facts SET entity_key = ?2, entity_name = ?3 WHERE namespace = "
                           "?1 AND entity_key = ?4",
                           {}, {ns, into_key, into_name, from_key});
  run(db,
      "DELETE FROM fact_entity_links WHERE entity_key = ?2 AND fact_id IN (SELECT fact_id FROM "
      "fact_entity_links WHERE entity_key = ?3) AND fact_id IN (SELECT fact_id FROM facts WHERE "
      "namespace = ?1)",
      {}, {ns, from_key, into_key});
  moved += run(db,
               "UPDATE fact_entity_links SET entity_key = ?3, entity_name = ?4 WHERE entity_key = "
               "?2 AND fact_id IN (SELECT fact_id FROM facts WHERE namespace = ?1)",
               {}, {ns, from_key, into_key, into_name});
  return moved;
}

std::string display_of(const std::string& key) {
  const auto colon = key.find(':');
  return colon == std::string::npos ? key : key.substr(colon + 1);
}

// The key `key` resolves to through the aliases (an operator's merge first), up to 4 hops.
std::string resolve(SQLite::Database& db, const std::string& ns, const std::string& key) {
  SQLite::Statement find(db,
                         "SELECT canonical_key FROM entity_merges WHERE namespace = ?1 AND "
                         "alias_key = ?2 UNION ALL SELECT canonical_key FROM entity_aliases "
                         "WHERE namespace = ?1 AND alias = ?2 LIMIT 1");
  std::string current = key;
  for (int hop = 0; hop < 4; ++hop) {
    find.reset();
    find.bind(1, ns);
    find.bind(2, current);
    if (!find.executeStep()) break;
    std::string next = find.getColumn(0).getString();
    if (next == key || next == current) break;
    current = std::move(next);
  }
  return current;
}

}  // namespace

json EntityMergeCounts::to_json() const {
  return {{"mentions_moved", mentions_moved}, {"mentions_joined", mentions_joined},
          {"edges_moved", edges_moved},       {"edges_joined", edges_joined},
          {"edges_dropped", edges_dropped},   {"facts_moved", facts_moved}};
}

std::vector<EntityRef> find_entities(SQLite::Database& db, const std::string& ns,
                                     const std::string& key, int limit) {
  SQLite::Statement query(
      db,
      "SELECT entity_id, canonical_key, display_name, mention_count FROM "
      "entities WHERE namespace = ?1 AND canonical_key = ?2 UNION ALL "
      "SELECT * FROM (SELECT entity_id, canonical_key, display_name, "
      "mention_count FROM entities WHERE namespace = ?1 AND lower(display_name) "
      "= lower(?2) AND NOT EXISTS (SELECT 1 FROM entities WHERE namespace = ?1 "
      "AND canonical_key = ?2) ORDER BY entity_id) LIMIT ?3");
  SQLite::bind(query, ns, key, limit);
  std::vector<EntityRef> found;
  while (query.executeStep()) {
    found.push_back({query.getColumn(0).getInt64(), ns, query.getColumn(1).getString(),
                     query.getColumn(2).getString(), query.getColumn(3).getInt64()});
  }
  return found;
}

std::optional<EntityRef> find_entity(SQLite::Database& db, const std::string& ns,
                                     const std::string& key) {
  auto found = find_entities(db, ns, key, 2);
  if (found.size() != 1) return std::nullopt;
  return std::move(found.front());
}

EntityMergeCounts merge_entity(SQLite::Database& db, const EntityRef& from, const EntityRef& into,
                               std::int64_t edge_half_life_s) {
  assert(from.id != into.id && from.ns == into.ns);
  EntityMergeCounts counts;
  const std::int64_t f = from.id;
  const std::int64_t t = into.id;

  run(db,
      "UPDATE event_entities SET is_primary = 1 WHERE entity_id = ?2 AND is_primary = 0 AND seq "
      "IN (SELECT seq FROM event_entities WHERE entity_id = ?1 AND is_primary = 1)",
      {f, t});
  counts.mentions_joined = run(db,
                               "DELETE FROM event_entities WHERE entity_id = ?1 AND seq IN "
                               "(SELECT seq FROM event_entities WHERE entity_id = ?2)",
                               {f, t});
  counts.mentions_moved =
      run(db, "UPDATE event_entities SET entity_id = ?2 WHERE entity_id = ?1", {f, t});

  merge_edges(db, from, into, edge_half_life_s, counts);

  run(db,
      "UPDATE cluster_entities SET mentions = mentions + (SELECT m.mentions FROM "
      "cluster_entities m WHERE m.cluster_id = cluster_entities.cluster_id AND m.entity_id = ?1) "
      "WHERE entity_id = ?2 AND cluster_id IN (SELECT cluster_id FROM cluster_entities WHERE "
      "entity_id = ?1)",
      {f, t});
  run(db,
      "DELETE FROM cluster_entities WHERE entity_id = ?1 AND cluster_id IN (SELECT cluster_id "
      "FROM cluster_entities WHERE entity_id = ?2)",
      {f, t});
  run(db, "UPDATE cluster_entities SET entity_id = ?2 WHERE entity_id = ?1", {f, t});
  run(db,
      "DELETE FROM community_members WHERE member_type = 'entity' AND member_id = ?1 AND "
      "observation_id IN (SELECT observation_id FROM community_members WHERE member_type = "
      "'entity' AND member_id = ?2)",
      {f, t});
  run(db,
      "UPDATE community_members SET member_id = ?2 WHERE member_type = 'entity' AND member_id = "
      "?1",
      {f, t});

  counts.facts_moved = move_facts(db, from.ns, from.key, into.key, into.display_name);

  run(db,
      "UPDATE entity_aliases SET canonical_key = ?2 WHERE namespace = ?1 AND canonical_key = ?3",
      {}, {from.ns, into.key, from.key});
  run(db, "UPDATE entity_merges SET canonical_key = ?2 WHERE namespace = ?1 AND canonical_key = ?3",
      {}, {from.ns, into.key, from.key});

  run(db,
      "UPDATE entities SET mention_count = (SELECT count(*) FROM event_entities WHERE entity_id "
      "= ?2), first_seen_us = min(first_seen_us, (SELECT first_seen_us FROM entities WHERE "
      "entity_id = ?1)), last_seen_us = max(last_seen_us, (SELECT last_seen_us FROM entities "
      "WHERE entity_id = ?1)), sensitivity = (SELECT CASE WHEN " +
          rank_of("f.sensitivity") + " > " + rank_of("entities.sensitivity") +
          " THEN f.sensitivity ELSE entities.sensitivity END FROM entities f WHERE f.entity_id = "
          "?1) WHERE entity_id = ?2",
      {f, t});
  run(db, "DELETE FROM entity_mention_weights WHERE entity_id = ?1", {f});
  run(db, "DELETE FROM entity_summary_state WHERE entity_id = ?1", {f});
  run(db, "DELETE FROM entity_summary_dirty WHERE entity_id = ?1", {f});
  run(db,
      "INSERT INTO entity_summary_dirty (entity_id, full) VALUES (?1, 1) ON CONFLICT (entity_id) "
      "DO UPDATE SET full = 1",
      {t});
  run(db, "DELETE FROM entities WHERE entity_id = ?1", {f});
  return counts;
}

bool has_pending_merges(SQLite::Database& db, const std::string& ns) {
  SQLite::Statement query(db, "SELECT EXISTS (" + std::string(kPendingMerges) + ") OR EXISTS (" +
                                  kAliasesNamedByFacts + ")");
  query.bind(1, ns);
  return query.executeStep() && query.getColumn(0).getInt() != 0;
}

std::int64_t execute_pending_merges(SQLite::Database& db, const std::string& ns,
                                    std::int64_t edge_half_life_s, const std::string& actor,
                                    std::int64_t now_us) {
  std::vector<EntityRef> pending;
  {
    SQLite::Statement query(db, std::string(kPendingMerges) + " ORDER BY 1");
    query.bind(1, ns);
    while (query.executeStep()) {
      pending.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(),
                         query.getColumn(2).getString(), query.getColumn(3).getString(),
                         query.getColumn(4).getInt64()});
    }
  }
  store::AuditLog audit(db);
  std::int64_t executed = 0;
  for (const EntityRef& from : pending) {
    const std::string target = resolve(db, from.ns, from.key);
    if (target == from.key) continue;  // an alias cycle: nothing to merge into
    json previous = {{"namespace", from.ns},
                     {"into", target},
                     {"display_name", from.display_name},
                     {"mention_count", from.mention_count}};
    if (const auto into = find_entity(db, from.ns, target); into && into->key == target) {
      previous["moved"] = merge_entity(db, from, *into, edge_half_life_s).to_json();
    } else {
      run(db, "UPDATE entities SET canonical_key = ?2, display_name = ?3 WHERE entity_id = ?1",
          {from.id}, {target, display_of(target)});
      move_facts(db, from.ns, from.key, target, display_of(target));
      run(db,
          "UPDATE entity_aliases SET canonical_key = ?2 WHERE namespace = ?1 AND canonical_key = "
          "?3",
          {}, {from.ns, target, from.key});
      previous["renamed"] = true;
    }
    audit.append("entity", from.key, "merge", actor, now_us,
                 "alias of " + target + ": earlier mentions merged", previous.dump());
    ++executed;
  }
  // Facts that name an alias of which no entity exists: the facts job names what a turn
  // says ("Mel"), whatever aliases the cluster job has learnt by then.
  std::vector<std::pair<std::string, std::string>> named;  // (namespace, alias)
  {
    SQLite::Statement query(db, std::string(kAliasesNamedByFacts) + " ORDER BY 1, 2");
    query.bind(1, ns);
    while (query.executeStep()) {
      named.emplace_back(query.getColumn(0).getString(), query.getColumn(1).getString());
    }
  }
  for (const auto& [alias_ns, alias] : named) {
    const std::string target = resolve(db, alias_ns, alias);
    if (target == alias) continue;
    const auto into = find_entity(db, alias_ns, target);
    move_facts(db, alias_ns, alias, target,
               into && into->key == target ? into->display_name : display_of(target));
  }
  return executed;
}

}  // namespace reflectd::jobs
