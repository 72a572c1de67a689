#include "jobs/consolidation_stream_evaluation.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

#include "jobs/consolidation_text.hpp"
#include "model/formulas.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs::consolidation {

using nlohmann::json;

StreamEvaluator::StreamEvaluator(Run& run, StreamStates& states)
    : run_(run),
      states_(states),
      evidence_newest_(run.db,
                       "SELECT event_seq FROM knowledge_evidence WHERE decision_id = ?1 "
                       "ORDER BY event_seq DESC LIMIT ?2"),
      procedure_(run.db,
                 "SELECT procedural FROM trajectory_outcomes WHERE namespace = ?1 AND target = ?2 "
                 "AND success = 1 ORDER BY final_seq DESC LIMIT 1"),
      proposal_update_(run.db, R"sql(
UPDATE knowledge SET rationale = ?2, status = ?3, phase = ?4, vitality = ?5, evidence_event_ids = ?6,
  consequences = ?7, procedural = ?8, frequency = ?9, unique_contexts = ?10, confidence = ?11,
  confidence_base = ?11, stability_score = ?12, reinforcement_density = ?13, coverage = ?14,
  lifetime_days = ?15, estimated_removal_cost = ?16, estimated_utility = ?17, acceptance_score = ?18,
  first_seen_us = ?19, last_seen_us = ?20, updated_us = ?21
WHERE decision_id = ?1)sql"),
      agent_update_(run.db, R"sql(
UPDATE knowledge SET phase = ?2, vitality = ?3, frequency = ?4, unique_contexts = ?5,
  stability_score = ?6, reinforcement_density = ?7, coverage = ?8, lifetime_days = ?9,
  estimated_removal_cost = ?10, estimated_utility = ?11, acceptance_score = ?12,
  first_seen_us = ?13, last_seen_us = ?14, updated_us = ?15
WHERE decision_id = ?1)sql") {}

void StreamEvaluator::evaluate(Stream& s) {
  const std::string& id = s.id;
  const ConsolidationParams& p = run_.params;
  const std::int64_t now = run_.now;
  // Nothing left to decide: the state it would record is never read again.
  if (s.sums.count == 0 || (s.phase == Phase::kCanonical && s.status != "draft")) return;
  const Vitality vitality =
      vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), now, p.vitality);
  const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, now, p.metrics);
  const Phase next = next_phase(s.phase, m, vitality, s.scope);
  const double acceptance = acceptance_score(m);
  const bool accept = !s.external && s.status == "draft" && next != Phase::kPattern &&
                      acceptance >= p.accept_threshold;
  if (next != s.phase || accept) {
    const std::string previous = nlohmann::ordered_json{
        {"status", s.status},
        {"phase", to_string(s.phase)},
        {"vitality", s.vitality},
        {"confidence", s.confidence}}.dump();
    if (next != s.phase) {
      run_.audit.append("knowledge", id, "promote", kActor, now,
                        std::string(to_string(s.phase)) + " -> " + to_string(next) +
                            " at frequency " + std::to_string(m.frequency) +
                            (s.external ? ", evidence confidence " : ", confidence ") +
                            std::to_string(m.confidence),
                        previous);
      ++(s.external ? run_.totals.agent_records_promoted : run_.totals.streams_promoted);
    }
    if (accept) {
      run_.audit.append("knowledge", id, "accept", kActor, now,
                        "acceptance score " + std::to_string(acceptance) +
                            " >= " + std::to_string(p.accept_threshold),
                        previous);
      ++run_.totals.proposals_accepted;
      s.status = "accepted";
    }
    s.phase = next;
  }
  s.vitality = to_string(vitality);
  if (!s.external) s.confidence = m.confidence;  // an agent's record keeps the agent's
}

void StreamEvaluator::write_proposal(const std::string& ns, const std::string& target,
                                     const Stream& s, const TargetTotals& totals) {
  const ConsolidationParams& p = run_.params;
  const std::string id = stream_id(ns, target);
  const Vitality vitality =
      vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), run_.now, p.vitality);
  const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, run_.now, p.metrics);
  const double acceptance = acceptance_score(m);

  // The newest kMaxEvidenceIdsListed seqs, ascending.
  std::vector<std::int64_t> newest;
  evidence_newest_.reset();
  evidence_newest_.bind(1, id);
  evidence_newest_.bind(2, static_cast<std::int64_t>(kMaxEvidenceIdsListed));
  while (evidence_newest_.executeStep()) newest.push_back(evidence_newest_.getColumn(0).getInt64());
  evidence_newest_.reset();
  json recent_ids = json::array();
  std::for_each(newest.rbegin(), newest.rend(),
                [&recent_ids](std::int64_t seq) { recent_ids.push_back(seq); });

  const std::string latest_line = first_line(run_.event_content(s.last_seq), 120);
  const std::string rationale = std::to_string(m.frequency) + " events over " +
                                std::to_string(static_cast<std::int64_t>(m.lifetime_days)) +
                                " days point at " + target + " (" + std::to_string(totals.commits) +
                                " commits, " + std::to_string(totals.errors) + " errors, " +
                                std::to_string(totals.successes) +
                                " successful results). Latest: " + latest_line;

  json consequences = json::array();
  json solutions = json::array();
  for (const auto& [ts, seq] : s.solutions) {
    const std::string line = labelled_line(run_.event_content(seq), "Solution:");
    if (!line.empty()) consequences.push_back(line);
    solutions.push_back({ts, seq});
  }
  procedure_.reset();
  procedure_.bind(1, ns);
  procedure_.bind(2, target);
  const std::string procedural =
      procedure_.executeStep() ? procedure_.getColumn(0).getString() : "";
  procedure_.reset();

  SQLite::Statement& update = proposal_update_;
  update.reset();
  update.bind(1, id);
  update.bind(2, rationale);
  update.bind(3, s.status);
  update.bind(4, to_string(s.phase));
  update.bind(5, to_string(vitality));
  update.bind(6, recent_ids.dump());
  update.bind(7, consequences.dump());
  if (procedural.empty()) {
    update.bind(8);
  } else {
    update.bind(8, procedural);
  }
  update.bind(9, static_cast<std::int64_t>(m.frequency));
  update.bind(10, static_cast<std::int64_t>(s.unique_contexts));
  update.bind(11, m.confidence);
  update.bind(12, m.stability);
  update.bind(13, m.reinforcement_density);
  update.bind(14, m.coverage);
  update.bind(15, m.lifetime_days);
  update.bind(16, m.removal_cost);
  update.bind(17, m.utility);
  update.bind(18, acceptance);
  update.bind(19, static_cast<std::int64_t>(s.sums.first_us));
  update.bind(20, static_cast<std::int64_t>(s.sums.last_us));
  update.bind(21, static_cast<std::int64_t>(run_.now));
  update.exec();
  states_.store(s, solutions);
}

void StreamEvaluator::write_agent_record(const Stream& s) {
  const ConsolidationParams& p = run_.params;
  const Vitality vitality =
      vitality_at(std::max(s.sums.last_us, s.use.last_hit_us), run_.now, p.vitality);
  const StreamMetrics m = compute_metrics(s.sums, s.use, s.phase, s.scope, run_.now, p.metrics);
  SQLite::Statement& update = agent_update_;
  store::exec_bound(update, s.id, to_string(s.phase), to_string(vitality),
                    static_cast<std::int64_t>(m.frequency),
                    static_cast<std::int64_t>(s.unique_contexts), m.stability,
                    m.reinforcement_density, m.coverage, m.lifetime_days, m.removal_cost, m.utility,
                    acceptance_score(m), static_cast<std::int64_t>(s.sums.first_us),
                    static_cast<std::int64_t>(s.sums.last_us), static_cast<std::int64_t>(run_.now));
  states_.store(s, json::array());
}

}  // namespace reflectd::jobs::consolidation
