#include "jobs/consolidation_stream_evidence.hpp"

#include <vector>

#include "jobs/consolidation_text.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs::consolidation {

StreamEvidence::StreamEvidence(Run& run)
    : run_(run),
      // Every weighted event of a target in the stream's window becomes its evidence.
      backfill_(run.db,
                "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) "
                "SELECT ?1, t.seq, e.ts_us, t.weight FROM event_targets t JOIN events e ON "
                "e.seq = t.seq WHERE t.namespace = ?2 AND t.target = ?3 AND t.weight > 0 AND "
                "t.seq >= ?4 AND t.seq <= ?5 AND t.seq < ?6"),
      all_(run.db,
           "SELECT ts_us, event_seq FROM knowledge_evidence WHERE decision_id = ?1 "
           "ORDER BY ts_us, event_seq"),
      insert_(run.db,
              "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) "
              "VALUES (?1, ?2, ?3, ?4)"),
      // The neighbours of (ts, seq) in the stream's time order (index knowledge_evidence_time).
      before_(run.db,
              "SELECT ts_us FROM knowledge_evidence WHERE decision_id = ?1 AND ts_us <= ?2 "
              "AND (ts_us < ?2 OR event_seq < ?3) ORDER BY ts_us DESC, event_seq DESC LIMIT 1"),
      after_(run.db,
             "SELECT ts_us FROM knowledge_evidence WHERE decision_id = ?1 AND ts_us >= ?2 "
             "AND (ts_us > ?2 OR event_seq > ?3) ORDER BY ts_us, event_seq LIMIT 1"),
      solutions_latest_(run.db,
                        "SELECT k.ts_us, k.event_seq FROM knowledge_evidence k JOIN events e ON "
                        "e.seq = k.event_seq WHERE k.decision_id = ?1 AND e.content LIKE "
                        "'%Solution:%' ORDER BY k.ts_us DESC, k.event_seq DESC LIMIT 5"),
      contexts_(run.db,
                "SELECT count(DISTINCT trajectory_id) FROM event_targets WHERE namespace = ?1 "
                "AND target = ?2 AND weight > 0 AND seq <= ?3 AND seq >= ?4"),
      context_seen_(run.db,
                    "SELECT 1 FROM event_targets WHERE namespace = ?1 AND target = ?2 AND "
                    "trajectory_id = ?3 AND weight > 0 AND seq <= ?4 AND seq >= ?5 LIMIT 1") {}

void StreamEvidence::start(const std::string& ns, const std::string& target, Stream& s,
                           std::int64_t seq) {
  const std::string& id = s.id;
  store::exec_bound(backfill_, id, ns, target, static_cast<std::int64_t>(s.from_seq),
                    static_cast<std::int64_t>(seq), static_cast<std::int64_t>(s.end_seq));
  std::vector<std::int64_t> dates;
  all_.reset();
  all_.bind(1, id);
  while (all_.executeStep()) {
    dates.push_back(all_.getColumn(0).getInt64());
    s.last_seq = all_.getColumn(1).getInt64();
  }
  all_.reset();
  s.sums = model::EvidenceSums::of(dates);
  s.solutions.clear();
  solutions_latest_.reset();
  solutions_latest_.bind(1, id);
  while (!s.external && solutions_latest_.executeStep()) {
    s.solutions.emplace_back(solutions_latest_.getColumn(0).getInt64(),
                             solutions_latest_.getColumn(1).getInt64());
  }
  solutions_latest_.reset();
  contexts_.reset();
  contexts_.bind(1, ns);
  contexts_.bind(2, target);
  contexts_.bind(3, static_cast<std::int64_t>(seq));
  contexts_.bind(4, static_cast<std::int64_t>(s.from_seq));
  contexts_.executeStep();
  s.unique_contexts = contexts_.getColumn(0).getInt64();
  contexts_.reset();
  s.active = true;
}

bool StreamEvidence::append(const std::string& ns, const std::string& target, Stream& s,
                            const Evidence& e) {
  const std::string& id = s.id;
  insert_.reset();
  insert_.bind(1, id);
  insert_.bind(2, static_cast<std::int64_t>(e.seq));
  insert_.bind(3, static_cast<std::int64_t>(e.ts_us));
  insert_.bind(4, e.weight);
  if (insert_.exec() == 0) return false;
  const bool latest = e.ts_us > s.sums.last_us || (e.ts_us == s.sums.last_us && e.seq > s.last_seq);
  if (latest) {
    s.sums.add(e.ts_us, s.sums.last_us, std::nullopt);
    s.last_seq = e.seq;
  } else {
    // Out of time order: its neighbours in (ts_us, event_seq) order split one gap in two.
    s.sums.add(e.ts_us, neighbour(before_, id, e.ts_us, e.seq),
               neighbour(after_, id, e.ts_us, e.seq));
  }
  // The "Solution:" lines are the job's streams' consequences; an agent's are its own.
  if (!s.external && mentions_solution(*e.content)) add_solution(s.solutions, e.ts_us, e.seq);
  count_context(ns, target, s, e);
  if (!s.external && !s.reinforced) {
    s.reinforced = true;
    ++run_.totals.streams_reinforced;
  }
  return true;
}

std::optional<std::int64_t> StreamEvidence::neighbour(SQLite::Statement& q, const std::string& id,
                                                      std::int64_t ts, std::int64_t seq) {
  q.reset();
  q.bind(1, id);
  q.bind(2, static_cast<std::int64_t>(ts));
  q.bind(3, static_cast<std::int64_t>(seq));
  std::optional<std::int64_t> found;
  if (q.executeStep()) found = q.getColumn(0).getInt64();
  q.reset();
  return found;
}

// A new context when none of the target's earlier weighted events in the stream's window had
// this trajectory (one index probe per trajectory and chunk: its later events in the chunk
// are not new).
void StreamEvidence::count_context(const std::string& ns, const std::string& target, Stream& s,
                                   const Evidence& e) {
  if (!s.chunk_contexts.insert(*e.trajectory).second) return;
  context_seen_.reset();
  context_seen_.bind(1, ns);
  context_seen_.bind(2, target);
  context_seen_.bind(3, *e.trajectory);
  context_seen_.bind(4, static_cast<std::int64_t>(e.seq - 1));
  context_seen_.bind(5, static_cast<std::int64_t>(s.from_seq));
  if (!context_seen_.executeStep()) ++s.unique_contexts;
  context_seen_.reset();
}

}  // namespace reflectd::jobs::consolidation
