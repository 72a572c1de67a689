#include "jobs/consolidation_run.hpp"

namespace reflectd::jobs::consolidation {

using nlohmann::json;

json result_json(const Totals& totals) {
  return {{"events_processed", totals.events_processed},
          {"observations_created", totals.observations_created},
          {"observations_reinforced", totals.observations_reinforced},
          {"skipped", totals.events_processed == 0},
          {"skip_reason", totals.events_processed == 0 ? json("no new events") : json()},
          {"streams_created", totals.streams_created},
          {"streams_reinforced", totals.streams_reinforced},
          {"streams_promoted", totals.streams_promoted},
          {"proposals_accepted", totals.proposals_accepted},
          {"procedures_distilled", totals.procedures_distilled},
          {"competences", totals.competences},
          {"decisions_extracted", totals.decisions_extracted},
          {"decisions_falsified", totals.decisions_falsified},
          {"agent_records_reinforced", totals.agent_records_reinforced},
          {"agent_records_promoted", totals.agent_records_promoted}};
}

std::int32_t Interner::intern(const std::string& text) {
  const auto [it, inserted] = ids_.try_emplace(text, static_cast<std::int32_t>(strings_.size()));
  if (inserted) strings_.push_back(text);
  return it->second;
}

Run::Run(JobContext& job, const ConsolidationParams& parameters)
    : ctx(job),
      params(parameters),
      db(job.db),
      audit(job.db),
      event_content_(job.db, "SELECT content FROM events WHERE seq = ?1") {}

std::string Run::event_content(std::int64_t seq) {
  event_content_.reset();
  event_content_.bind(1, static_cast<std::int64_t>(seq));
  std::string content = event_content_.executeStep() ? event_content_.getColumn(0).getString() : "";
  event_content_.reset();
  return content;
}

}  // namespace reflectd::jobs::consolidation
