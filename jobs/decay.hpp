#pragma once
// The vitality decay job (Membrane's decay sweep, LedgerMind's vitality, Arandu's memify),
// set-based and closed-form, so a sweep every minute and one every day give the same tables:
//
// - knowledge: vitality = rd_vitality(last evidence or use, now) and confidence =
//   rd_confidence(confidence at the last evidence, ...), one UPDATE; every vitality change
//   gets an audit row (action decay) with the previous state, in the same transaction.
// - events: rows whose stored archive time (model::archive_at_us, fixed at write time from the
//   resolved decay profile) has passed become `archived` (kept on disk, excluded from jobs),
//   with an audit row each. manual_only and never policies have no archive time.
// - entity edges (jobs/entities.hpp): not rewritten. An edge's strength at any time is
//   strength_base * 2^(-(t - strength_ref_us) / edge_half_life_s) (edge_strength_at), evaluated
//   by its readers, so a sweep writes nothing per stored edge; edges_reinforced counts the
//   edges the `cluster` job reinforced since the previous sweep: those whose last_evidence_seq
//   is above the watermark the previous sweep left for their namespace
//   (decay_edge_watermarks), one read of every edge in scope.
// - entity merges (jobs/entity_merge.hpp): entities whose key has become an alias move into
//   the entity it names (merges_executed), each with an audit row.
// Nothing else is deleted here.

#include <nlohmann/json.hpp>

#include "jobs/job.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs {

// The jobs compute in the memory model's terms (model/formulas.hpp: phases, vitality, salience).
using namespace model;  // NOLINT(google-build-using-namespace)

/// Runs one sweep at ctx.clock's now. Returns seed 003 MemifyResult (facts_scored,
/// facts_marked_stale, edges_reinforced, merges_executed) plus events_archived,
/// knowledge_decaying, knowledge_dormant and knowledge_reactivated. `params` must be the
/// VitalityParams registered on ctx.db (register_sql_functions). `edge_half_life_s`
/// (entities.edge_half_life_days, seconds, > 0) weighs two edges a merge joins.
/// Throws SQLite::Exception.
nlohmann::json run_decay(JobContext& ctx, const VitalityParams& params,
                         std::int64_t edge_half_life_s = std::int64_t{90} * 86400);

}  // namespace reflectd::jobs
