#pragma once
// The lifecycle formulas (jobs/formulas.hpp) as deterministic SQLite functions, so the jobs
// update whole tables with one set-based statement while the math stays in one place:
//
//   rd_salience(base, ref_us, created_us, curve, half_life_s, min_salience, max_age_s,
//               pinned, now_us)                     -> REAL   (jobs::salience_at)
//   rd_vitality(last_activity_us, now_us)           -> TEXT   (jobs::vitality_at)
//   rd_confidence(base, last_activity_us, now_us)   -> REAL   (jobs::decayed_confidence)
//
// rd_vitality and rd_confidence use the VitalityParams given at registration.
// Errors: throws SQLite::Exception when registration fails.

#include <SQLiteCpp/SQLiteCpp.h>

#include "jobs/formulas.hpp"

namespace reflectd::jobs {

/// Registers the functions on `db`. `params` must outlive the connection or the next
/// registration (re-register after a reload).
void register_sql_functions(SQLite::Database& db, const VitalityParams& params);

}  // namespace reflectd::jobs
