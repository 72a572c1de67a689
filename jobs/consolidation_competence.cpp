#include "jobs/consolidation_competence.hpp"

#include <algorithm>

#include "common/sha256.hpp"

namespace reflectd::jobs::consolidation {

std::optional<CompetenceSummary> summarize_competence(std::span<const SuccessfulRun> runs,
                                                      std::int64_t min_successes) {
  if (static_cast<std::int64_t>(runs.size()) < min_successes) return std::nullopt;
  CompetenceSummary summary;
  summary.ids.reserve(runs.size());
  for (const SuccessfulRun& run : runs) {
    summary.ids.push_back(run.final_seq);
    if (run.target >= 0) summary.target = run.target;
  }
  summary.first_us = runs[static_cast<std::size_t>(min_successes - 1)].ts_us;
  summary.last_us = runs.back().ts_us;
  return summary;
}

std::string competence_id(const std::string& ns, const std::string& sequence) {
  return "competence:" + ns + ":" + sha256_hex(sequence).substr(0, 16);
}

Competences::Competences(Run& run, Observations& observations)
    : run_(run),
      observations_(observations),
      // Index-only (trajectory_outcomes_successes, migration 23).
      runs_(run.db,
            "SELECT final_seq, target, final_ts_us FROM trajectory_outcomes WHERE "
            "namespace = ?1 AND tool_sequence = ?2 AND success = 1 ORDER BY "
            "final_ts_us, final_seq") {}

void Competences::forget_run(const std::string& ns, const std::string& sequence,
                             std::int64_t final_seq) {
  if (const auto it = competences_.find(ns + '\n' + sequence); it != competences_.end()) {
    std::erase_if(it->second, [&](const SuccessfulRun& r) { return r.final_seq == final_seq; });
  }
}

void Competences::record_success(const std::string& ns, const std::string& sequence,
                                 std::int64_t ts_us, std::int64_t final_seq,
                                 const std::string& target) {
  if (const auto it = competences_.find(ns + '\n' + sequence); it != competences_.end()) {
    const SuccessfulRun run{ts_us, final_seq, target.empty() ? -1 : run_.strings.intern(target)};
    it->second.insert(std::upper_bound(it->second.begin(), it->second.end(), run), run);
  }
  update(ns, sequence);
}

void Competences::update(const std::string& ns, const std::string& sequence) {
  auto [cached, fresh] = competences_.try_emplace(ns + '\n' + sequence);
  std::vector<SuccessfulRun>& state = cached->second;
  if (fresh) {
    SQLite::Statement& runs = runs_;
    runs.reset();
    runs.bind(1, ns);
    runs.bind(2, sequence);
    while (runs.executeStep()) {
      state.push_back(
          {runs.getColumn(2).getInt64(), runs.getColumn(0).getInt64(),
           runs.getColumn(1).isNull() ? -1 : run_.strings.intern(runs.getColumn(1).getString())});
    }
    runs.reset();
  }
  const auto summary = summarize_competence(state, run_.params.competence_min_successes);
  if (!summary) return;
  const auto count = static_cast<std::int64_t>(state.size());
  const std::string id = competence_id(ns, sequence);
  const std::string type = "competence";
  const std::string target =
      summary->target < 0 ? std::string() : run_.strings.text(summary->target);
  const std::string title = "Competence: " + sequence;
  const std::string text =
      "The tool sequence " + sequence + " succeeded in " + std::to_string(count) + " trajectories.";
  observations_.upsert({.id = id,
                        .ns = ns,
                        .type = type,
                        .signature = sequence,
                        .target = target,
                        .title = title,
                        .text = text,
                        .ids = summary->ids,
                        .support = count,
                        .trajectories = count,
                        .successes = count,
                        .first_us = summary->first_us,
                        .last_us = summary->last_us});
  ++run_.totals.competences;
}

}  // namespace reflectd::jobs::consolidation
