#pragma once
// Entity summary refresh (seed 003 SummaryRefreshResult; Arandu's "sleep-time compute" without
// an LLM): an extractive summary_text for every active entity, from its most salient events
// (highest salience base, most hits, newest first) and its strongest relations. An entity
// whose importance or evidence did not change gets the same text and is skipped, so a rerun
// changes nothing. Runs as the first step of the medallion job, whose items name entities.
//
// Errors: SQLite::Exception, JobCancelled.

#include <nlohmann/json.hpp>

#include "jobs/job.hpp"

namespace reflectd::jobs {

/// Refreshes the summaries of ctx.ns's entities (every namespace when empty) in the caller's
/// transaction. Returns {"summaries_refreshed", "summaries_skipped"}; both 0 when the entity
/// tables are absent or empty.
nlohmann::json refresh_entity_summaries(JobContext& ctx);

}  // namespace reflectd::jobs
