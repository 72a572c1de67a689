#include "jobs/clustering_clusters.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "jobs/entities.hpp"
#include "store/bound_exec.hpp"
#include "store/event.hpp"

namespace reflectd::jobs::clustering {

ClusterStore::ClusterStore(SQLite::Database& db, TermSpace& terms)
    : terms_(terms),
      read_cluster_(db,
                    "SELECT first_seq, last_seq, first_seen_us, last_seen_us, member_count, "
                    "duplicate_count, centroid, medoid_seq, medoid_vector, label, summary_text, "
                    "sensitivity FROM clusters WHERE cluster_id = ?1"),
      insert_cluster_(
          db,
          // A cluster's id is the seq of the event that seeded it (jobs/clustering.hpp).
          "INSERT INTO clusters (cluster_id, namespace, label, summary_text, medoid_seq, "
          "medoid_vector, centroid, member_count, first_seq, last_seq, first_seen_us, "
          "last_seen_us, sensitivity) "
          "VALUES (?4, ?1, ?2, ?3, ?4, ?5, ?5, 1, ?4, ?4, ?6, ?6, ?7)"),
      update_cluster_(
          db,
          // OR FAIL, as the edges' UPDATE in jobs/entities.cpp: no statement journal.
          "UPDATE OR FAIL clusters SET label = ?2, summary_text = ?3, medoid_seq = ?4, "
          "medoid_vector = ?5, centroid = ?6, member_count = ?7, duplicate_count = ?8, "
          "last_seq = ?9, first_seen_us = ?10, last_seen_us = ?11, sensitivity = ?12 WHERE "
          "cluster_id = ?1"),
      members_(db,
               "INSERT OR IGNORE INTO event_clusters (seq, cluster_id, role, similarity) VALUES", 4,
               [](SQLite::Statement& statement, int base, const Member& m) {
                 statement.bind(base + 1, static_cast<std::int64_t>(m.seq));
                 statement.bind(base + 2, static_cast<std::int64_t>(m.cluster));
                 statement.bind(base + 3, m.duplicate ? "duplicate" : "member");
                 statement.bind(base + 4, m.similarity);
               }),
      add_cluster_entity_(db,
                          "INSERT INTO cluster_entities (cluster_id, entity_id, mentions) VALUES "
                          "(?1, ?2, ?3) ON CONFLICT (cluster_id, entity_id) DO UPDATE SET "
                          "mentions = mentions + excluded.mentions") {}

Cluster& ClusterStore::read(std::int64_t id) {
  Cluster c;
  c.id = id;
  read_cluster_.reset();
  read_cluster_.bind(1, static_cast<std::int64_t>(id));
  if (!read_cluster_.executeStep())
    throw std::runtime_error("cluster " + std::to_string(id) + " is missing");
  c.first_seq = read_cluster_.getColumn(0).getInt64();
  c.last_seq = read_cluster_.getColumn(1).getInt64();
  c.first_us = read_cluster_.getColumn(2).getInt64();
  c.last_us = read_cluster_.getColumn(3).getInt64();
  c.members = read_cluster_.getColumn(4).getInt64();
  c.duplicates = read_cluster_.getColumn(5).getInt64();
  c.centroid =
      terms_.decode(read_cluster_.getColumn(6).getBlob(), read_cluster_.getColumn(6).getBytes());
  c.centroid_norm = norm(c.centroid);
  c.medoid_seq = read_cluster_.getColumn(7).getInt64();
  c.medoid =
      terms_.decode(read_cluster_.getColumn(8).getBlob(), read_cluster_.getColumn(8).getBytes());
  c.label = read_cluster_.getColumn(9).getString();
  c.summary = read_cluster_.getColumn(10).getString();
  c.sensitivity = stored_sensitivity_rank(read_cluster_.getColumn(11).getText());
  read_cluster_.reset();
  return clusters_.emplace(id, std::move(c)).first->second;
}

Cluster& ClusterStore::seed(const std::string& ns, Cluster&& c) {
  insert_cluster_.reset();
  insert_cluster_.bind(1, ns);
  insert_cluster_.bind(2, c.label);
  insert_cluster_.bind(3, c.summary);
  insert_cluster_.bind(4, static_cast<std::int64_t>(c.id));
  const std::string blob = terms_.encode(c.centroid);
  insert_cluster_.bind(5, blob.data(), static_cast<int>(blob.size()));
  insert_cluster_.bind(6, static_cast<std::int64_t>(c.first_us));
  insert_cluster_.bind(7, store::sensitivity_level(c.sensitivity));
  insert_cluster_.exec();
  const std::int64_t id = c.id;
  return clusters_.emplace(id, std::move(c)).first->second;
}

void ClusterStore::flush() {
  std::sort(dirty_.begin(), dirty_.end());
  for (const std::int64_t id : dirty_) {
    Cluster& c = clusters_.find(id)->second;
    update_cluster_.reset();
    update_cluster_.bind(1, static_cast<std::int64_t>(c.id));
    update_cluster_.bind(2, c.label);
    update_cluster_.bind(3, c.summary);
    update_cluster_.bind(4, static_cast<std::int64_t>(c.medoid_seq));
    const std::string medoid = terms_.encode(c.medoid);
    const std::string centroid = terms_.encode(c.centroid);
    update_cluster_.bind(5, medoid.data(), static_cast<int>(medoid.size()));
    update_cluster_.bind(6, centroid.data(), static_cast<int>(centroid.size()));
    update_cluster_.bind(7, static_cast<std::int64_t>(c.members));
    update_cluster_.bind(8, static_cast<std::int64_t>(c.duplicates));
    update_cluster_.bind(9, static_cast<std::int64_t>(c.last_seq));
    update_cluster_.bind(10, static_cast<std::int64_t>(c.first_us));
    update_cluster_.bind(11, static_cast<std::int64_t>(c.last_us));
    update_cluster_.bind(12, store::sensitivity_level(c.sensitivity));
    update_cluster_.exec();
    c.dirty = false;
  }
  dirty_.clear();
  // cluster_entities is a WITHOUT ROWID table keyed by what is written, so the order of these
  // upserts does not change its content; key order keeps each seek next to the one before.
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>> counts(
      entities_.begin(), entities_.end());
  std::sort(counts.begin(), counts.end());
  for (const auto& [key, count] : counts) {
    store::exec_bound(add_cluster_entity_, static_cast<std::int64_t>(key.first),
                      static_cast<std::int64_t>(key.second), static_cast<std::int64_t>(count));
  }
  entities_.clear();
}

}  // namespace reflectd::jobs::clustering
