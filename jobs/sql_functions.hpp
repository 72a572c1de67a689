#pragma once
// The lifecycle formulas (model/formulas.hpp) as deterministic SQLite functions, so the jobs
// update whole tables with one set-based statement while the math stays in one place:
//
//   rd_salience(base, ref_us, created_us, curve, half_life_s, min_salience, max_age_s,
//               pinned, now_us)                     -> REAL   (model::salience_at)
//   rd_vitality(last_activity_us, now_us)           -> TEXT   (model::vitality_at)
//   rd_confidence(base, last_activity_us, now_us)   -> REAL   (model::decayed_confidence)
//
// rd_vitality and rd_confidence use the VitalityParams given at registration.
// Errors: throws SQLite::Exception when registration fails.

#include <SQLiteCpp/SQLiteCpp.h>

#include "model/formulas.hpp"

namespace reflectd::jobs {

// The jobs compute in the memory model's terms (model/formulas.hpp: phases, vitality, salience).
using namespace model;  // NOLINT(google-build-using-namespace)

/// Registers the functions on `db`. `params` must outlive the connection or the next
/// registration (re-register after a reload).
void register_sql_functions(SQLite::Database& db, const VitalityParams& params);

}  // namespace reflectd::jobs
