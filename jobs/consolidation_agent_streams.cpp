#include "jobs/consolidation_agent_streams.hpp"

namespace reflectd::jobs::consolidation {

AgentStreams::AgentStreams(Run& run, StreamStates& states, StreamEvidence& evidence,
                           StreamEvaluator& evaluator)
    : run_(run),
      states_(states),
      evidence_(evidence),
      evaluator_(evaluator),
      records_(run.db,
               "SELECT decision_id, source_event_seq, coalesce(ended_seq, "
               "9223372036854775807) FROM knowledge WHERE namespace = ?1 AND target = ?2 "
               "AND provenance = 'external' AND source_event_seq IS NOT NULL "
               "ORDER BY decision_id") {}

void AgentStreams::begin_chunk() {
  targets_.clear();
  streams_.clear();
}

void AgentStreams::add_evidence(const std::string& ns, const std::string& target,
                                const Evidence& e) {
  for (Stream* agent : records_of(ns, target)) {
    if (e.seq < agent->from_seq || e.seq >= agent->end_seq) continue;
    if (!agent->active) {
      evidence_.start(ns, target, *agent, e.seq);
    } else if (!evidence_.append(ns, target, *agent, e)) {
      continue;
    }
    if (!agent->reinforced) {
      agent->reinforced = true;
      ++run_.totals.agent_records_reinforced;
    }
    agent->dirty = true;
    evaluator_.evaluate(*agent);
  }
}

void AgentStreams::write_records() {
  for (const auto& [id, stream] : streams_) {
    if (stream.active && stream.dirty) evaluator_.write_agent_record(stream);
  }
}

std::vector<Stream*>& AgentStreams::records_of(const std::string& ns, const std::string& target) {
  auto [it, fresh] = targets_.try_emplace(target);
  if (!fresh) return it->second;
  SQLite::Statement& q = records_;
  q.reset();
  q.bind(1, ns);
  q.bind(2, target);
  while (q.executeStep()) {
    auto [record, inserted] = streams_.try_emplace(q.getColumn(0).getString());
    Stream& s = record->second;
    if (inserted) {
      s.id = record->first;
      s.external = true;
      s.from_seq = q.getColumn(1).getInt64();
      s.end_seq = q.getColumn(2).getInt64();
      states_.load(s);
    }
    it->second.push_back(&s);
  }
  q.reset();
  return it->second;
}

}  // namespace reflectd::jobs::consolidation
