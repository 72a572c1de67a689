#include "jobs/entities.hpp"
#include "store/bound_exec.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>
#include <unordered_set>

namespace reflectd::jobs {
namespace {

// A namespace's edges and all edges, for read_edges_by_table().
constexpr const char* kCountEdges =
    "SELECT count(*), (SELECT count(*) FROM entity_relationships) FROM entity_relationships "
    "WHERE namespace = ?1";

}  // namespace

double edge_strength_at(double base, std::int64_t ref_us, std::int64_t now_us,
                        std::int64_t half_life_s) {
  if (now_us <= ref_us || half_life_s <= 0) return base;
  const double dt_s = static_cast<double>(now_us - ref_us) / 1'000'000.0;
  return base * std::exp2(-dt_s / static_cast<double>(half_life_s));
}

double hebbian_step(double base, std::int64_t ref_us, std::int64_t t_us, double eta, double step,
                    std::int64_t half_life_s) {
  const double s = edge_strength_at(base, ref_us, t_us, half_life_s);
  return std::clamp(s + eta * step * (1.0 - s), 0.0, 1.0);
}

EntityStore::EntityStore(SQLite::Database& db, const EntityParams& params)
    : p_(params),
      find_entity_(
          db,
          "SELECT entity_id, mention_count, first_seen_us, last_seen_us, sensitivity FROM entities "
          "WHERE namespace = ?1 AND canonical_key = ?2"),
      insert_entity_(
          db,
          "INSERT INTO entities (entity_id, namespace, canonical_key, display_name, entity_type, "
          "mention_count, first_seen_us, last_seen_us) VALUES (?6, ?1, ?2, ?3, ?4, 0, ?5, ?5)"),
      update_entity_(
          db,
          "UPDATE entities SET mention_count = ?2, first_seen_us = ?3, last_seen_us = ?4, "
          "sensitivity = ?5 WHERE entity_id = ?1"),
      // An operator's merge (jobs/entity_merge.hpp) wins over an alias learnt from an event.
      find_alias_(db,
                  "SELECT canonical_key FROM entity_merges WHERE namespace = ?1 AND alias_key = "
                  "?2 UNION ALL SELECT canonical_key FROM entity_aliases WHERE namespace = ?1 AND "
                  "alias = ?2 LIMIT 1"),
      insert_alias_(
          db,
          "INSERT OR IGNORE INTO entity_aliases (namespace, alias, canonical_key, origin, "
          "first_seq) VALUES (?1, ?2, ?3, ?4, ?5)"),
      // The parties whose name begins with ?2's: aliases "agent:<name>" -> "person:<name>"
      // in the key range just after "agent:<nickname>" (the primary key's order).
      find_party_(db,
                  "SELECT DISTINCT canonical_key FROM entity_aliases WHERE namespace = ?1 AND "
                  "alias > 'agent:' || ?2 AND alias < 'agent:' || ?2 || char(127) AND "
                  "canonical_key = 'person:' || substr(alias, 7) LIMIT 2"),
      links_(db, "INSERT OR IGNORE INTO event_entities (seq, entity_id, is_primary, source) VALUES",
             4,
             [](SQLite::Statement& statement, int base, const Link& link) {
               statement.bind(base + 1, static_cast<std::int64_t>(link.seq));
               statement.bind(base + 2, static_cast<std::int64_t>(link.entity_id));
               statement.bind(base + 3, link.primary ? 1 : 0);
               statement.bind(base + 4, to_string(link.source));
             }),
      count_edges_(db, kCountEdges),
      // Through the (namespace, ...) index or by one pass over the table: read_edges_by_table().
      edges_by_index_(db,
                      "SELECT source_id, target_id, rel_type, relationship_id, strength_base, "
                      "strength_ref_us, mention_count, evidence_seq, last_evidence_seq, "
                      "valid_from_us FROM entity_relationships WHERE namespace = ?1"),
      edges_by_table_(db,
                      "SELECT source_id, target_id, rel_type, relationship_id, strength_base, "
                      "strength_ref_us, mention_count, evidence_seq, last_evidence_seq, "
                      "valid_from_us FROM entity_relationships NOT INDEXED WHERE namespace = ?1"),
      find_edge_(
          db,
          "SELECT relationship_id, strength_base, strength_ref_us, mention_count, evidence_seq, "
          "last_evidence_seq, valid_from_us FROM entity_relationships WHERE namespace = ?1 AND "
          "source_id = ?2 AND target_id = ?3 AND rel_type = ?4"),
      insert_edge_(
          db,
          "INSERT INTO entity_relationships (relationship_id, namespace, source_id, target_id, "
          "rel_type, strength, strength_base, strength_ref_us, mention_count, evidence_seq, "
          "last_evidence_seq, valid_from_us) VALUES (?11, ?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, "
          "?10)"),
      // OR FAIL: last_evidence_seq is a foreign key, so the UPDATE counts as one that may write
      // several rows, and with the default ABORT its NOT NULL checks would give it a
      // statement journal (a copy of each page it changes; migration 16). Updating one row,
      // FAIL stops the statement exactly as ABORT would.
      update_edge_(db,
                   "UPDATE OR FAIL entity_relationships SET strength = ?2, strength_base = ?2, "
                   "strength_ref_us = ?3, mention_count = ?4, last_evidence_seq = ?5 "
                   "WHERE relationship_id = ?1") {}

const std::string& EntityStore::cache_key_of(const std::string& ns, const std::string& key) {
  key_buffer_.assign(ns);
  key_buffer_ += '\n';
  key_buffer_ += key;
  return key_buffer_;
}

std::string EntityStore::resolve(const std::string& ns, const std::string& key) {
  std::string current = key;
  for (int hop = 0; hop < 4; ++hop) {
    const std::string& cache_key = cache_key_of(ns, current);
    auto it = aliases_.find(cache_key);
    if (it == aliases_.end()) {
      find_alias_.reset();
      find_alias_.bind(1, ns);
      find_alias_.bind(2, current);
      std::string target;
      if (find_alias_.executeStep()) target = find_alias_.getColumn(0).getString();
      find_alias_.reset();
      it = aliases_.emplace(cache_key, target).first;
    }
    if (it->second.empty() || it->second == key) break;
    current = it->second;
  }
  return current;
}

EntityStore::Entity& EntityStore::entity(const std::string& ns, const text::Mention& mention,
                                         std::int64_t seq, std::int64_t ts_us) {
  const std::string& cache_key = cache_key_of(ns, mention.key);
  auto it = entities_.find(cache_key);
  if (it != entities_.end()) return it->second;
  Entity e;
  find_entity_.reset();
  find_entity_.bind(1, ns);
  find_entity_.bind(2, mention.key);
  if (find_entity_.executeStep()) {
    e.id = find_entity_.getColumn(0).getInt64();
    e.mentions = find_entity_.getColumn(1).getInt64();
    e.first_us = find_entity_.getColumn(2).getInt64();
    e.last_us = find_entity_.getColumn(3).getInt64();
    e.sensitivity = stored_sensitivity_rank(find_entity_.getColumn(4).getText());
    find_entity_.reset();
  } else {
    find_entity_.reset();
    insert_entity_.reset();
    insert_entity_.bind(1, ns);
    insert_entity_.bind(2, mention.key);
    insert_entity_.bind(3, mention.display.empty() ? mention.key.substr(mention.key.find(':') + 1)
                                                   : mention.display);
    insert_entity_.bind(4, mention.type);
    insert_entity_.bind(5, static_cast<std::int64_t>(ts_us));
    e.id = entity_ids_.next(seq);
    insert_entity_.bind(6, e.id);
    insert_entity_.exec();
    e.first_us = ts_us;
    e.last_us = ts_us;
    ++entities_created_;
  }
  return entities_.emplace(cache_key, e).first->second;
}

EntityStore::Edge EntityStore::stored_edge(const SQLite::Statement& row, int first) {
  Edge e;
  e.id = row.getColumn(first).getInt64();
  e.base = row.getColumn(first + 1).getDouble();
  e.ref_us = row.getColumn(first + 2).getInt64();
  e.mentions = row.getColumn(first + 3).getInt64();
  e.evidence_seq = row.getColumn(first + 4).getInt64();
  e.last_evidence_seq = row.getColumn(first + 5).getInt64();
  e.valid_from_us = row.getColumn(first + 6).getInt64();
  return e;
}

std::uint32_t EntityStore::type_index(const std::string& type) {
  for (std::size_t i = 0; i < types_.size(); ++i) {
    if (types_[i] == type) return static_cast<std::uint32_t>(i);
  }
  types_.push_back(type);
  return static_cast<std::uint32_t>(types_.size() - 1);
}

void EntityStore::reinforce(const std::string& ns, std::int64_t source, std::int64_t target,
                            std::uint32_t type, double step, std::int64_t seq, std::int64_t ts_us) {
  const std::string* stored_ns = &*namespaces_.insert(ns).first;
  const EdgeKey key{stored_ns, source, target, type};
  auto it = edges_.find(key);
  if (it == edges_.end() && complete_edges_.contains(ns)) {
    Edge e;
    e.ref_us = ts_us;
    e.evidence_seq = seq;
    e.valid_from_us = ts_us;
    it = edges_.emplace(key, CachedEdge{stored_ns, e}).first;
  } else if (it == edges_.end()) {
    Edge e;
    find_edge_.reset();
    find_edge_.bind(1, ns);
    find_edge_.bind(2, static_cast<std::int64_t>(source));
    find_edge_.bind(3, static_cast<std::int64_t>(target));
    find_edge_.bind(4, types_[type]);
    if (find_edge_.executeStep()) {
      e = stored_edge(find_edge_, 0);
    } else {
      e.ref_us = ts_us;
      e.evidence_seq = seq;
      e.valid_from_us = ts_us;
    }
    find_edge_.reset();
    it = edges_.emplace(key, CachedEdge{stored_ns, e}).first;
  }
  Edge& e = it->second.edge;
  if (!e.dirty) dirty_edges_.emplace_back(key, &it->second);
  if (e.mentions == 0) {
    ++edges_created_;
  } else {
    ++edges_reinforced_;
  }
  e.base = hebbian_step(e.base, e.ref_us, ts_us, p_.hebbian_rate, step, p_.edge_half_life_s);
  e.ref_us = std::max(e.ref_us, ts_us);
  ++e.mentions;
  e.last_evidence_seq = seq;
  e.dirty = true;
}

std::string EntityStore::nickname_of(const std::string& ns, const std::string& key,
                                     std::int64_t seq) {
  constexpr std::size_t kMinLetters = 3;
  if (!key.starts_with("name:")) return {};
  const std::string_view name = std::string_view(key).substr(5);
  if (name.size() < kMinLetters ||
      !std::all_of(name.begin(), name.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; })) {
    return {};
  }
  std::string cache_key = ns + '\n' + key;
  if (not_nicknames_.contains(cache_key)) return {};
  find_party_.reset();
  find_party_.bind(1, ns);
  find_party_.bind(2, std::string(name));
  std::vector<std::string> parties;
  while (find_party_.executeStep()) parties.push_back(find_party_.getColumn(0).getString());
  find_party_.reset();
  if (parties.size() != 1) {
    not_nicknames_.insert(std::move(cache_key));
    return {};
  }
  store::exec_bound(insert_alias_, ns, key, parties.front(), "nickname", seq);
  aliases_[cache_key] = parties.front();
  return parties.front();
}

std::vector<std::int64_t> EntityStore::add_event(const std::string& ns, std::int64_t seq,
                                                 std::int64_t ts_us,
                                                 const text::Extraction& extraction,
                                                 int sensitivity) {
  // Aliases this event teaches, before its own mentions resolve.
  for (const auto& alias : extraction.aliases) {
    const std::string canonical = resolve(ns, alias.canonical_key);
    if (canonical == alias.alias || resolve(ns, alias.alias) != alias.alias) continue;
    store::exec_bound(insert_alias_, ns, alias.alias, canonical,
                      alias.alias.starts_with("file:") ? "path" : "declared",
                      static_cast<std::int64_t>(seq));
    aliases_[ns + '\n' + alias.alias] = canonical;
    if (alias.alias.starts_with("agent:")) not_nicknames_.clear();  // a new party
  }

  // Resolved mentions, unique by key, plus relation endpoints not mentioned otherwise.
  std::vector<text::Mention> mentions;
  std::unordered_set<std::string> seen;
  auto add = [&](text::Mention m) {
    m.key = resolve(ns, m.key);
    if (m.type == "name") {
      if (std::string party = nickname_of(ns, m.key, seq); !party.empty()) m.key = party;
    }
    m.type = m.key.substr(0, m.key.find(':'));
    if (mentions.size() < kMaxMentionsPerEvent && seen.insert(m.key).second) {
      mentions.push_back(std::move(m));
    }
  };
  for (const auto& m : extraction.mentions) add(m);
  std::vector<std::tuple<std::string, std::string, std::string, double>> relations;
  for (const auto& r : extraction.relations) {
    if (relations.size() == kMaxRelationsPerEvent) break;
    const std::string a = resolve(ns, r.source_key);
    const std::string b = resolve(ns, r.target_key);
    if (a == b) continue;
    for (const auto& k : {a, b}) {
      if (!seen.contains(k)) {
        text::Mention m;
        m.key = k;
        m.display = k.substr(k.find(':') + 1);
        m.source = text::Source::kExplicit;
        add(std::move(m));
      }
    }
    relations.emplace_back(a, b, r.rel_type, r.weight);
  }

  std::vector<std::int64_t> ids;
  std::unordered_map<std::string, std::int64_t> id_of;
  std::vector<std::int64_t> mention_ids;  // aligned with mentions
  mention_ids.reserve(mentions.size());
  for (const auto& m : mentions) {
    Entity& e = entity(ns, m, seq, ts_us);
    ++e.mentions;
    e.first_us = std::min(e.first_us, ts_us);
    e.last_us = std::max(e.last_us, ts_us);
    e.sensitivity = std::max(e.sensitivity, sensitivity);
    if (!e.dirty) dirty_entities_.push_back(&e);
    e.dirty = true;
    id_of[m.key] = e.id;
    mention_ids.push_back(e.id);
    links_.add({seq, e.id, m.primary, m.source});
    ++mentions_stored_;
    if (static_cast<std::int64_t>(ids.size()) < p_.max_co_mentions) ids.push_back(e.id);
  }
  // co_occurs: undirected, stored from the smaller canonical key to the larger; none for
  // events naming more than max_co_mentions entities (sweeping changes say little about
  // which entities belong together, and a prefix would favour alphabetically early files).
  const std::size_t n =
      mentions.size() <= static_cast<std::size_t>(p_.max_co_mentions) ? mentions.size() : 0;
  if (n > 1) {
    const std::uint32_t co_occurs = type_index("co_occurs");
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        // Keys are distinct (mentions are unique by key), so a < b decides the direction.
        if (mentions[i].key < mentions[j].key) {
          reinforce(ns, mention_ids[i], mention_ids[j], co_occurs, 1.0, seq, ts_us);
        } else {
          reinforce(ns, mention_ids[j], mention_ids[i], co_occurs, 1.0, seq, ts_us);
        }
      }
    }
  }
  for (const auto& [a, b, type, weight] : relations) {
    const auto ia = id_of.find(a);
    const auto ib = id_of.find(b);
    if (weight > 0 && ia != id_of.end() && ib != id_of.end()) {
      reinforce(ns, ia->second, ib->second, type_index(type), weight, seq, ts_us);
    }
  }
  return ids;
}

void EntityStore::flush() {
  links_.flush();
  // Updates by primary key, in key order: each seek lands on or next to the page of the one
  // before (in the order of first touch, 47,000 edge updates took 35-45% longer).
  std::sort(dirty_entities_.begin(), dirty_entities_.end(),
            [](const Entity* x, const Entity* y) { return x->id < y->id; });
  for (Entity* entity : dirty_entities_) {
    Entity& e = *entity;
    store::exec_bound(update_entity_, static_cast<std::int64_t>(e.id),
                      static_cast<std::int64_t>(e.mentions), static_cast<std::int64_t>(e.first_us),
                      static_cast<std::int64_t>(e.last_us),
                      store::sensitivity_level(e.sensitivity));
    e.dirty = false;
  }
  dirty_entities_.clear();
  // Updates by primary key, in key order (as the entities above), then the new edges. These
  // get their relationship_id in the order of the event that created them, then (namespace,
  // source, target, type): every new edge of a chunk was created after every edge of the
  // chunks before it, so the ids do not depend on where chunks end (chunk size, the write
  // gate's yields).
  const auto fresh = std::partition(dirty_edges_.begin(), dirty_edges_.end(),
                                    [](const auto& x) { return x.second->edge.id != 0; });
  std::sort(dirty_edges_.begin(), fresh,
            [](const auto& x, const auto& y) { return x.second->edge.id < y.second->edge.id; });
  std::sort(fresh, dirty_edges_.end(), [this](const auto& x, const auto& y) {
    if (x.second->edge.evidence_seq != y.second->edge.evidence_seq)
      return x.second->edge.evidence_seq < y.second->edge.evidence_seq;
    if (const int c = x.second->ns->compare(*y.second->ns); c != 0) return c < 0;
    if (x.first.source != y.first.source) return x.first.source < y.first.source;
    if (x.first.target != y.first.target) return x.first.target < y.first.target;
    return types_[x.first.type] < types_[y.first.type];
  });
  for (auto& [key, cached] : dirty_edges_) {
    Edge& e = cached->edge;
    if (e.id == 0) {
      insert_edge_.reset();
      insert_edge_.bind(1, *cached->ns);
      insert_edge_.bind(2, static_cast<std::int64_t>(key.source));
      insert_edge_.bind(3, static_cast<std::int64_t>(key.target));
      insert_edge_.bind(4, types_[key.type]);
      insert_edge_.bind(5, e.base);
      insert_edge_.bind(6, static_cast<std::int64_t>(e.ref_us));
      insert_edge_.bind(7, static_cast<std::int64_t>(e.mentions));
      insert_edge_.bind(8, static_cast<std::int64_t>(e.evidence_seq));
      insert_edge_.bind(9, static_cast<std::int64_t>(e.last_evidence_seq));
      insert_edge_.bind(10, static_cast<std::int64_t>(e.valid_from_us));
      // The fresh edges are sorted by evidence_seq: each event's are numbered together.
      e.id = edge_ids_.next(e.evidence_seq);
      insert_edge_.bind(11, e.id);
      insert_edge_.exec();
    } else {
      store::exec_bound(update_edge_, static_cast<std::int64_t>(e.id), e.base,
                        static_cast<std::int64_t>(e.ref_us), static_cast<std::int64_t>(e.mentions),
                        static_cast<std::int64_t>(e.last_evidence_seq));
    }
    e.dirty = false;
  }
  dirty_edges_.clear();
}

void EntityStore::trim(std::size_t max_entries) {
  assert(dirty_entities_.empty() && dirty_edges_.empty() && "trim() only after flush()");
  if (entities_.size() > max_entries) entities_.clear();
  if (edges_.size() > max_entries) {
    edges_.clear();
    complete_edges_.clear();
  }
  if (aliases_.size() > max_entries) aliases_.clear();
}

std::optional<std::vector<EntityStore::StoredStrength>> EntityStore::namespace_edges(
    const std::string& ns) const {
  assert(dirty_edges_.empty() && "namespace_edges() only after flush()");
  if (!complete_edges_.contains(ns)) return std::nullopt;
  std::vector<StoredStrength> out;
  for (const auto& [key, cached] : edges_) {
    if (*cached.ns != ns) continue;
    out.push_back({key.source, key.target, types_[key.type], cached.edge.base, cached.edge.ref_us});
  }
  return out;
}

std::int64_t EntityStore::preload_edges(const std::string& ns, std::int64_t pending_events,
                                        std::size_t max_entries) {
  assert(dirty_edges_.empty() && "preload_edges() only after flush()");
  if (complete_edges_.contains(ns)) return 0;
  count_edges_.reset();
  count_edges_.bind(1, ns);
  std::int64_t edges = 0;
  std::int64_t all = 0;
  if (count_edges_.executeStep()) {
    edges = count_edges_.getColumn(0).getInt64();
    all = count_edges_.getColumn(1).getInt64();
  }
  count_edges_.reset();
  if (edges > kPreloadLookupsPerEvent * pending_events ||
      static_cast<std::size_t>(edges) > max_entries / 2) {
    return 0;
  }
  const std::string* stored_ns = &*namespaces_.insert(ns).first;
  std::int64_t read = 0;
  SQLite::Statement& rows = read_edges_by_table(edges, all) ? edges_by_table_ : edges_by_index_;
  rows.reset();
  rows.bind(1, ns);
  while (rows.executeStep()) {
    const Edge e = stored_edge(rows, 3);
    const EdgeKey key{stored_ns, rows.getColumn(0).getInt64(), rows.getColumn(1).getInt64(),
                      type_index(rows.getColumn(2).getString())};
    // A cached edge is the stored one (the cache writes through at every flush()).
    edges_.try_emplace(key, CachedEdge{stored_ns, e});
    ++read;
  }
  rows.reset();
  complete_edges_.insert(ns);
  edges_preloaded_ += read;
  return read;
}

std::int64_t newest_mention_seq(SQLite::Database& db) {
  return db.execAndGet("SELECT coalesce(max(seq), 0) FROM event_entities").getInt64();
}

void for_each_mention_after(SQLite::Database& db, std::span<const std::int64_t> sorted_ids,
                            std::int64_t watermark,
                            const std::function<void(std::int64_t, std::int64_t)>& row) {
  SQLite::Statement q(db, "SELECT seq, entity_id FROM event_entities WHERE seq > ?1");
  q.bind(1, watermark);
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(1).getInt64();
    if (std::binary_search(sorted_ids.begin(), sorted_ids.end(), id))
      row(id, q.getColumn(0).getInt64());
  }
}

void for_each_stored_edge(SQLite::Database& db, const std::string& ns,
                          const std::function<void(const EntityStore::StoredStrength&)>& row) {
  SQLite::Statement counts(db, kCountEdges);
  counts.bind(1, ns);
  const bool by_table = counts.executeStep() && read_edges_by_table(counts.getColumn(0).getInt64(),
                                                                    counts.getColumn(1).getInt64());
  SQLite::Statement q(db, by_table
                              ? "SELECT source_id, target_id, rel_type, strength_base, "
                                "strength_ref_us FROM entity_relationships NOT INDEXED "
                                "WHERE namespace = ?1"
                              : "SELECT source_id, target_id, rel_type, strength_base, "
                                "strength_ref_us FROM entity_relationships WHERE namespace = ?1");
  q.bind(1, ns);
  while (q.executeStep()) {
    const SQLite::Column type = q.getColumn(2);
    const char* text = type.getText();  // before getBytes(), as SQLite asks
    row({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
         std::string_view(text, static_cast<std::size_t>(type.getBytes())),
         q.getColumn(3).getDouble(), q.getColumn(4).getInt64()});
  }
}

}  // namespace reflectd::jobs
