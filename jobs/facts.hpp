#pragma once
// The `facts` job: the fact ledger of seed 003 (MemoryFact,
// MemoryFactEntityLink), filled from new events by the rules of text/fact_extraction.hpp and
// stored through store/fact_store.hpp.
//
// Events are read in seq order above the job's watermark (job_state: facts / "" / seq), in
// chunks of kFactsChunkEvents seqs; each chunk's facts, supersessions and the watermark commit
// in one transaction, so a rerun adds nothing, a crash repeats nothing, and where chunks end
// changes nothing (supersession follows seq order). Only active events are read (archived
// ones are excluded from jobs, as everywhere). A run asked for one namespace still reads every
// namespace's new events: the watermark is one, and reading the others costs what the next
// run would.
//
// Result (seed 003 has none for facts; the names follow MemifyResult's): events_read,
// facts_added, facts_superseded, entity_links, watermark_seq.
//
// Errors: SQLite::Exception, JobCancelled (between chunks). Thread-safety: one run at a time
// on the jobs' connection (the scheduler's rule).

#include <nlohmann/json.hpp>

#include <cstdint>

#include "jobs/job.hpp"

namespace reflectd::jobs {

/// Seqs read per transaction.
constexpr std::int64_t kFactsChunkEvents = 20'000;

/// Runs the job once over every event above the watermark.
nlohmann::json run_facts(JobContext& ctx);

}  // namespace reflectd::jobs
