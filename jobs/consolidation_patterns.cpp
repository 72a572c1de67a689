#include "jobs/consolidation_patterns.hpp"

#include <algorithm>
#include <limits>
#include <span>

#include "jobs/consolidation_text.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs::consolidation {
namespace {

void bind_signature(SQLite::Statement& q, const std::string& ns, const std::string& signature) {
  q.reset();
  q.bind(1, ns);
  q.bind(2, signature);
}

}  // namespace

Patterns::Patterns(Run& run, Observations& observations)
    : run_(run),
      observations_(observations),
      insert_(run.db,
              "INSERT OR IGNORE INTO problem_occurrences (namespace, signature, seq, "
              "trajectory_id, target, ts_us, is_change) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
      rows_(run.db,
            "SELECT seq, trajectory_id, ts_us, target FROM problem_occurrences WHERE "
            "namespace = ?1 AND signature = ?2 AND seq > ?3"),
      totals_(run.db,
              "SELECT occurrences, max_seq, last_ts_us, trajectories, "
              "newest_floor_seq FROM problem_patterns WHERE namespace = ?1 AND "
              "signature = ?2"),
      targets_(run.db,
               "SELECT target, occurrences FROM problem_pattern_targets WHERE "
               "namespace = ?1 AND signature = ?2"),
      newest_(run.db,
              "SELECT seq FROM problem_occurrences WHERE namespace = ?1 AND "
              "signature = ?2 AND seq <= ?3 ORDER BY seq DESC LIMIT ?4"),
      trajectory_seen_(
          run.db,
          "SELECT 1 FROM problem_occurrences WHERE namespace = ?1 AND signature = ?2 AND "
          "seq < ?4 AND seq >= (SELECT min(seq) FROM event_targets WHERE namespace = ?1 AND "
          "trajectory_id = ?3) AND trajectory_id = ?3 LIMIT 1"),
      save_(run.db,
            "INSERT INTO problem_patterns (namespace, signature, occurrences, max_seq, "
            "last_ts_us, trajectories, newest_floor_seq) VALUES (?1, ?2, ?3, ?4, ?5, "
            "?6, ?7) ON CONFLICT (namespace, signature) DO UPDATE SET occurrences = "
            "excluded.occurrences, max_seq = excluded.max_seq, last_ts_us = "
            "excluded.last_ts_us, trajectories = excluded.trajectories, "
            "newest_floor_seq = excluded.newest_floor_seq"),
      save_target_(run.db,
                   "INSERT INTO problem_pattern_targets (namespace, signature, target, "
                   "occurrences) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (namespace, "
                   "signature, target) DO UPDATE SET occurrences = excluded.occurrences"),
      head_(run.db,
            "SELECT seq, ts_us, trajectory_id FROM problem_occurrences WHERE "
            "namespace = ?1 AND signature = ?2 AND ts_us <= ?3 ORDER BY ts_us, seq"),
      observation_first_(run.db,
                         "SELECT first_detected_us, support_count, supporting_event_ids, "
                         "signature FROM observations WHERE observation_id = ?1") {}

void Patterns::record(const std::string& ns, const std::string& problem, std::int64_t seq,
                      const std::string& trajectory, const std::string& target, std::int64_t ts_us,
                      bool change) {
  if (problem.empty()) return;
  const std::string signature = problem_signature(problem);
  if (signature.empty()) return;
  insert_.reset();
  insert_.bind(1, ns);
  insert_.bind(2, signature);
  insert_.bind(3, static_cast<std::int64_t>(seq));
  insert_.bind(4, trajectory);
  if (target.empty()) {
    insert_.bind(5);
  } else {
    insert_.bind(5, target);
  }
  insert_.bind(6, static_cast<std::int64_t>(ts_us));
  insert_.bind(7, change ? 1 : 0);
  insert_.exec();
  const auto [touched, first] = touched_.try_emplace(signature, ts_us);
  if (!first) touched->second = std::min(touched->second, ts_us);
}

void Patterns::finish_chunk(const std::string& ns) {
  for (const auto& [signature, earliest_ts] : touched_) update(ns, signature, earliest_ts);
}

// A chunk costs what it adds: the history before it is read as kept totals (at 1M events a
// +10,000 run touches nearly every signature, and reading each one's whole history was half
// of the run), the chunk's rows one by one.
void Patterns::update(const std::string& ns, const std::string& signature,
                      std::int64_t earliest_ts) {
  const ConsolidationParams& p = run_.params;
  auto [cached, fresh] = patterns_.try_emplace(ns + '\n' + signature);
  PatternState& s = cached->second;
  if (fresh) {
    s.id = pattern_id(ns, signature);
    load(ns, signature, s);
  }
  extend(ns, signature, s);
  save(ns, signature, s);
  if (s.count < p.pattern_min_occurrences) return;
  if (s.trajectory_count < p.pattern_min_trajectories) {
    return;  // the walk below could not qualify it either
  }
  // This chunk's occurrences all come after the known ones in seq, so one at the qualifying
  // time itself comes after the occurrence that qualified: only an earlier one moves it.
  if (s.qualified_at == 0 || earliest_ts < s.qualified_at) {
    s.qualified_at = qualifying_time(ns, signature, s);
  }
  if (s.qualified_at == 0) return;
  const std::int32_t best_target = most_frequent_target(s.targets, run_.strings);
  const std::string target = best_target < 0 ? std::string() : run_.strings.text(best_target);
  const std::span<const std::int64_t> ids =
      std::span(s.newest).last(std::min(s.newest.size(), kMaxSupportIdsListed));
  // Readers see the problem in the words of its newest occurrence, never the signature's
  // placeholders ("<n> <n> <n> is out need new version").
  const std::string problem = pattern_problem(run_.event_content(s.max_seq), signature);
  const std::string type = "pattern";
  const std::string title = "Recurring problem: " + problem;
  const std::string text = pattern_text(s.count, s.trajectory_count, target, problem);
  observations_.upsert({.id = s.id,
                        .ns = ns,
                        .type = type,
                        .signature = signature,
                        .target = target,
                        .title = title,
                        .text = text,
                        .ids = ids,
                        .support = s.count,
                        .trajectories = s.trajectory_count,
                        .successes = 0,
                        .first_us = s.qualified_at,
                        .last_us = s.last_ts});
}

// The first touch of a signature in a run: the totals of its history before this chunk (kept
// by the chunks before, so that a run's cost does not grow with the log), the newest ids, and
// the qualifying time of that history, which is the observation's first_detected_us (the
// minimum of the values written, and each write had the then qualifying time: see
// Observations::upsert()).
void Patterns::load(const std::string& ns, const std::string& signature, PatternState& s) {
  SQLite::Statement& totals = totals_;
  bind_signature(totals, ns, signature);
  if (totals.executeStep()) {
    s.count = totals.getColumn(0).getInt64();
    s.max_seq = totals.getColumn(1).getInt64();
    s.last_ts = totals.getColumn(2).getInt64();
    s.trajectory_count = totals.getColumn(3).getInt64();
    if (!totals.getColumn(4).isNull()) s.newest_floor = totals.getColumn(4).getInt64();
  }
  totals.reset();
  if (s.count == 0) {  // a new signature: the run sees every occurrence, and keeps them
    s.trajectories_known = true;
    s.head_loaded = true;
    s.head_bound = std::numeric_limits<std::int64_t>::max();
    return;
  }
  SQLite::Statement& targets = targets_;
  bind_signature(targets, ns, signature);
  while (targets.executeStep()) {
    s.targets[run_.strings.intern(targets.getColumn(0).getString())] =
        targets.getColumn(1).getInt64();
  }
  targets.reset();
  // The observation written when the support was s.count lists the newest ids of exactly the
  // occurrences counted now (occurrences are never deleted, and every write lists the newest
  // kMaxSupportIdsListed by seq), so a run reads that one row instead of 200 rows of
  // problem_occurrences per signature (0.4 G instructions of a +10,000 run at 1M events).
  // A list an earlier version wrote in another order (the first one listed by event time)
  // fails newest_from_list()'s checks and the rows are read: every listed id is an occurrence
  // of the signature (only this job writes the list), so a list in ascending order of the
  // right length ending at max_seq is the newest occurrences exactly when as many occurrences
  // lie in its range, that is when it starts at the stored floor (the oldest of that many
  // newest, migration 22). Counting them instead read ~200 index entries a signature: 3% of a
  // +10,000 run at 1M events.
  SQLite::Statement& observed = observation_first_;
  observed.reset();
  observed.bind(1, s.id);
  bool listed = false;
  if (observed.executeStep()) {
    s.qualified_at = observed.getColumn(0).getInt64();
    if (observed.getColumn(1).getInt64() == s.count &&
        observed.getColumn(3).getString() == signature) {
      if (auto newest = newest_from_list(id_lists_, observed.getColumn(2).getString(), s.count,
                                         s.max_seq, s.newest_floor)) {
        s.newest = std::move(*newest);
        listed = true;
      }
    }
  }
  observed.reset();
  if (!listed) read_newest(ns, signature, s);
}

// The newest min(count, kMaxSupportIdsListed) occurrences up to max_seq, ascending.
void Patterns::read_newest(const std::string& ns, const std::string& signature, PatternState& s) {
  SQLite::Statement& newest = newest_;
  bind_signature(newest, ns, signature);
  newest.bind(3, static_cast<std::int64_t>(s.max_seq));
  newest.bind(4, static_cast<std::int64_t>(kMaxSupportIdsListed));
  while (newest.executeStep()) s.newest.push_back(newest.getColumn(0).getInt64());
  newest.reset();
  std::reverse(s.newest.begin(), s.newest.end());
}

// Adds the occurrences above max_seq (this chunk's). A trajectory is new to the signature when
// no earlier occurrence (in seq) has it. Such an occurrence can only lie between the
// trajectory's first event (every event has its event_targets row, with its trajectory) and
// this one, so the probe reads the signature's rows in that range of its primary key (a
// trajectory spans a few events) instead of every trajectory of the history; an index on the
// trajectories would make each occurrence dirty one more random page (+0.45 s of system time
// per +10,000 at 1M events).
void Patterns::extend(const std::string& ns, const std::string& signature, PatternState& s) {
  SQLite::Statement& rows = rows_;
  bind_signature(rows, ns, signature);
  rows.bind(3, static_cast<std::int64_t>(s.max_seq));
  SQLite::Statement& seen = trajectory_seen_;
  const auto middle = static_cast<std::ptrdiff_t>(s.head.size());
  while (rows.executeStep()) {
    const SQLite::Column trajectory = rows.getColumn(1);
    const Occurrence o{rows.getColumn(2).getInt64(), rows.getColumn(0).getInt64(),
                       run_.strings.intern(trajectory.getString())};
    ++s.count;
    s.max_seq = std::max(s.max_seq, o.seq);
    s.last_ts = std::max(s.last_ts, o.ts_us);
    s.newest.push_back(o.seq);
    if (s.trajectories_known) {
      if (s.trajectories.insert(o.trajectory).second) ++s.trajectory_count;
    } else {
      bind_signature(seen, ns, signature);
      seen.bind(3, run_.strings.text(o.trajectory));
      seen.bind(4, static_cast<std::int64_t>(o.seq));
      if (!seen.executeStep()) ++s.trajectory_count;
      seen.reset();
    }
    if (!rows.getColumn(3).isNull()) {
      const std::int32_t target = run_.strings.intern(rows.getColumn(3).getString());
      ++s.targets[target];
      s.changed_targets.push_back(target);
    }
    if (s.head_loaded && o.ts_us <= s.head_bound) s.head.push_back(o);
  }
  rows.reset();
  // Rows come in seq (primary key) order, every new seq above the known ones.
  trim_newest(s.newest);
  std::sort(s.head.begin() + middle, s.head.end());
  std::inplace_merge(s.head.begin(), s.head.begin() + middle, s.head.end());
}

// Writes the totals back (problem_patterns, problem_pattern_targets), in the chunk's
// transaction, so that they always count exactly the stored occurrences.
void Patterns::save(const std::string& ns, const std::string& signature, PatternState& s) {
  SQLite::Statement& save = save_;
  bind_signature(save, ns, signature);
  save.bind(3, static_cast<std::int64_t>(s.count));
  save.bind(4, static_cast<std::int64_t>(s.max_seq));
  save.bind(5, static_cast<std::int64_t>(s.last_ts));
  save.bind(6, static_cast<std::int64_t>(s.trajectory_count));
  // s.newest ends with the newest min(count, kMaxSupportIdsListed) occurrences (load() read
  // that many, extend() appended every later one).
  const std::size_t listed = std::min(s.newest.size(), kMaxSupportIdsListed);
  if (listed == 0) {
    save.bind(7);
  } else {
    s.newest_floor = s.newest[s.newest.size() - listed];
    save.bind(7, static_cast<std::int64_t>(s.newest_floor));
  }
  save.exec();
  std::sort(s.changed_targets.begin(), s.changed_targets.end());
  s.changed_targets.erase(std::unique(s.changed_targets.begin(), s.changed_targets.end()),
                          s.changed_targets.end());
  SQLite::Statement& target = save_target_;
  for (const std::int32_t t : s.changed_targets) {
    bind_signature(target, ns, signature);
    target.bind(3, run_.strings.text(t));
    target.bind(4, static_cast<std::int64_t>(s.targets[t]));
    target.exec();
  }
  s.changed_targets.clear();
}

// The event time at which the occurrences, in (ts_us, seq) order, first met both thresholds
// (0: never). Only occurrences up to the current qualifying time can matter (PatternState),
// so the head keeps those alone, read once per run and cut back as the time moves earlier.
std::int64_t Patterns::qualifying_time(const std::string& ns, const std::string& signature,
                                       PatternState& s) {
  if (const std::int64_t t = walk_head(ns, signature, s); t != 0) return t;
  if (s.head_bound == std::numeric_limits<std::int64_t>::max()) return 0;
  // The stored time was found under other thresholds (consolidation.pattern_min_* raised
  // since): the whole history decides, as it did before the head was kept.
  s.head.clear();
  s.head_loaded = false;
  s.qualified_at = 0;
  return walk_head(ns, signature, s);
}

std::int64_t Patterns::walk_head(const std::string& ns, const std::string& signature,
                                 PatternState& s) {
  if (!s.head_loaded) {
    s.head_bound = s.qualified_at != 0 ? s.qualified_at : std::numeric_limits<std::int64_t>::max();
    SQLite::Statement& rows = head_;
    bind_signature(rows, ns, signature);
    rows.bind(3, static_cast<std::int64_t>(s.head_bound));
    while (rows.executeStep()) {
      s.head.push_back({rows.getColumn(1).getInt64(), rows.getColumn(0).getInt64(),
                        run_.strings.intern(rows.getColumn(2).getString())});
    }
    rows.reset();
    s.head_loaded = true;
  }
  return walk_loaded_head(s, run_.params.pattern_min_occurrences,
                          run_.params.pattern_min_trajectories);
}

}  // namespace reflectd::jobs::consolidation
