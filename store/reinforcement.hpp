#pragma once
// An agent reports that a memory helped ("useful": a hit) or misled it. A hit increments
// hit_count, sets the last hit time, reinforces salience (seed 002: min(1, s(now) + gain),
// reference time = now) and reactivates a knowledge row (seed 000 vitality: a use makes it
// ACTIVE; its confidence gains the hits term 0.2 * min(1, ln(1 + hits) / 2.3) of
// model::confidence() for the new hit count). "misleading" applies the seed 002 penalty
// max(floor, s(now) - gain) instead. Both write an audit row with the previous state.
//
// Runs on the writer thread (WriteRequest::apply). Errors: std::invalid_argument when no
// knowledge row or event has the id; SQLite::Exception on storage errors.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

#include "store/lifecycle.hpp"

namespace reflectd::store {

/// Applies the report and returns a JSON object text: {"record_type", "id", "hit_count",
/// "salience", "vitality" (knowledge only)}. Knowledge ids are matched first, then event ids.
std::string reinforce(SQLite::Database& db, const std::string& id, bool useful,
                      const std::string& actor, std::int64_t now_us, const DecayProfiles& profiles);

}  // namespace reflectd::store
