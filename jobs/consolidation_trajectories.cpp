#include "jobs/consolidation_trajectories.hpp"

#include <nlohmann/json.hpp>

#include <utility>

namespace reflectd::jobs::consolidation {

using nlohmann::json;

std::string open_trajectory_json(const OpenTrajectory& open) {
  return json{{"id", open.id}, {"last_ts_us", open.last_ts_us}, {"target", open.target}}.dump();
}

OpenTrajectory parse_open_trajectory(const std::optional<std::string>& text) {
  if (!text) return {};
  const auto j = json::parse(*text);
  return {j.value("id", ""), j.value("last_ts_us", std::int64_t{0}), j.value("target", "")};
}

bool starts_trajectory(const OpenTrajectory& open, std::string_view kind, std::int64_t ts_us,
                       std::int64_t gap_us) {
  return open.id.empty() || kind == "prompt" || kind == "task" || ts_us - open.last_ts_us > gap_us;
}

Trajectories::Trajectories(SQLite::Database& db, std::int64_t gap_us)
    : gap_us_(gap_us),
      // A plain INSERT: each event is consolidated once (its row commits with the
      // watermark). OR REPLACE, which could delete a row, made SQLite give every insert a
      // statement journal (a copy of each page it changes, 3% of a +10,000 run at 1M).
      insert_target_(db,
                     "INSERT INTO event_targets (seq, namespace, trajectory_id, target, weight) "
                     "VALUES (?1, ?2, ?3, ?4, ?5)"),
      trajectory_target_(db,
                         "SELECT target FROM event_targets WHERE namespace = ?1 AND "
                         "trajectory_id = ?2 AND target IS NOT NULL ORDER BY seq DESC LIMIT 1") {}

void Trajectories::begin_chunk(const std::string& ns, OpenTrajectory open) {
  ns_ = ns;
  open_ = std::move(open);
  episode_targets_.clear();
}

Placement Trajectories::place(std::int64_t seq, std::string_view kind, std::int64_t ts_us,
                              const std::string& episode, const std::string& own) {
  Placement placement;
  std::string* inherited = nullptr;
  if (!episode.empty()) {
    placement.trajectory = "ep:" + episode;
    auto [it, inserted] = episode_targets_.try_emplace(placement.trajectory);
    if (inserted) it->second = stored_target(placement.trajectory);
    inherited = &it->second;
  } else {
    if (starts_trajectory(open_, kind, ts_us, gap_us_)) {
      open_ = {"tr:" + std::to_string(seq), ts_us, ""};
    }
    open_.last_ts_us = ts_us;
    placement.trajectory = open_.id;
    inherited = &open_.target;
  }
  if (!own.empty()) *inherited = own;
  placement.target = own.empty() ? *inherited : own;
  return placement;
}

void Trajectories::record(std::int64_t seq, const Placement& placement, double weight) {
  insert_target_.reset();
  insert_target_.bind(1, static_cast<std::int64_t>(seq));
  insert_target_.bind(2, ns_);
  insert_target_.bind(3, placement.trajectory);
  if (placement.target.empty()) {
    insert_target_.bind(4);
  } else {
    insert_target_.bind(4, placement.target);
  }
  insert_target_.bind(5, weight);
  insert_target_.exec();
}

// The latest target an episode's earlier events had (an episode may span chunks and runs).
std::string Trajectories::stored_target(const std::string& trajectory) {
  trajectory_target_.reset();
  trajectory_target_.bind(1, ns_);
  trajectory_target_.bind(2, trajectory);
  std::string target;
  if (trajectory_target_.executeStep()) target = trajectory_target_.getColumn(0).getString();
  trajectory_target_.reset();
  return target;
}

}  // namespace reflectd::jobs::consolidation
