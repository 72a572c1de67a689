#include "jobs/consolidation_streams.hpp"
#include "store/bound_exec.hpp"

#include <nlohmann/json.hpp>

namespace reflectd::jobs::consolidation {

void add_to_totals(TargetTotals& totals, std::string_view kind, bool success, double weight) {
  totals.weight += weight;
  ++totals.events;
  totals.commits += kind == "commit_change" ? 1 : 0;
  totals.errors += kind == "error" ? 1 : 0;
  totals.successes += success ? 1 : 0;
  totals.dirty = true;
}

ProposalStreams::ProposalStreams(Run& run, StreamStates& states, StreamEvidence& evidence,
                                 StreamEvaluator& evaluator)
    : run_(run),
      states_(states),
      evidence_(evidence),
      evaluator_(evaluator),
      totals_load_(run.db,
                   "SELECT weight, commits, errors, successes, events FROM consolidation_targets "
                   "WHERE namespace = ?1 AND target = ?2"),
      totals_store_(run.db,
                    "INSERT INTO consolidation_targets (namespace, target, weight, events, "
                    "commits, errors, successes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                    "ON CONFLICT (namespace, target) DO UPDATE SET weight = excluded.weight, "
                    "events = excluded.events, commits = excluded.commits, errors = "
                    "excluded.errors, successes = excluded.successes"),
      create_(run.db,
              "INSERT INTO knowledge (decision_id, namespace, kind, target, title, rationale, "
              "status, provenance, keywords, salience_ref_us, first_seen_us, last_seen_us, "
              "updated_us) VALUES (?1, ?2, 'proposal', ?3, ?4, 'pending evidence', 'draft', "
              "'internal', ?5, ?7, ?7, ?7, ?6)") {}

void ProposalStreams::begin_chunk() {
  totals_.clear();
  streams_.clear();
}

TargetTotals& ProposalStreams::totals_of(const std::string& ns, const std::string& target) {
  auto [it, fresh] = totals_.try_emplace(target);
  if (fresh) {
    SQLite::Statement& q = totals_load_;
    q.reset();
    q.bind(1, ns);
    q.bind(2, target);
    if (q.executeStep()) {
      it->second.weight = q.getColumn(0).getDouble();
      it->second.commits = q.getColumn(1).getInt64();
      it->second.errors = q.getColumn(2).getInt64();
      it->second.successes = q.getColumn(3).getInt64();
      it->second.events = q.getColumn(4).getInt64();
    }
    q.reset();
  }
  return it->second;
}

void ProposalStreams::add_evidence(const std::string& ns, const std::string& target,
                                   const TargetTotals& totals, const Evidence& e) {
  Stream& s = stream_of(ns, target);
  if (!s.active && totals.weight < run_.params.stream_weight_threshold && totals.commits < 1) {
    return;
  }
  bool added = true;
  if (!s.active) {
    if (!s.exists) create(ns, target, s, totals.weight, e.ts_us);
    evidence_.start(ns, target, s, e.seq);
  } else {
    added = evidence_.append(ns, target, s, e);  // false: its evidence already
  }
  if (added) {
    s.dirty = true;
    evaluator_.evaluate(s);
  }
}

void ProposalStreams::mark_dirty(const std::string& ns, const std::string& target) {
  stream_of(ns, target).dirty = true;
}

void ProposalStreams::store_totals(const std::string& ns) {
  for (const auto& [target, t] : totals_) {
    if (!t.dirty) continue;
    SQLite::Statement& q = totals_store_;
    store::exec_bound(q, ns, target, t.weight, static_cast<std::int64_t>(t.events),
                      static_cast<std::int64_t>(t.commits), static_cast<std::int64_t>(t.errors),
                      static_cast<std::int64_t>(t.successes));
  }
}

void ProposalStreams::write_streams(const std::string& ns) {
  for (const auto& [target, stream] : streams_) {
    if (stream.active && stream.dirty) {
      evaluator_.write_proposal(ns, target, stream, totals_of(ns, target));
    }
  }
}

Stream& ProposalStreams::stream_of(const std::string& ns, const std::string& target) {
  auto [it, fresh] = streams_.try_emplace(target);
  if (!fresh) return it->second;
  Stream& s = it->second;
  s.id = stream_id(ns, target);
  states_.load(s);
  return s;
}

// The knowledge row of a job's stream, when its target's totals first qualify at an event of
// time `ts_us`: its salience counts from that event's time, not from the run's (which would
// differ between replicas whose runs came at other moments).
void ProposalStreams::create(const std::string& ns, const std::string& target, Stream& s,
                             double weight, std::int64_t ts_us) {
  SQLite::Statement& create = create_;
  store::exec_bound(create, s.id, ns, target, "Changes in " + target,
                    nlohmann::json::array({target}).dump(), static_cast<std::int64_t>(run_.now),
                    static_cast<std::int64_t>(ts_us));
  run_.audit.append("knowledge", s.id, "create", kActor, run_.now,
                    "evidence weight " + std::to_string(weight) + " for target " + target);
  ++run_.totals.streams_created;
  s.exists = true;
}

}  // namespace reflectd::jobs::consolidation
