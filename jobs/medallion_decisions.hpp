#pragma once
// The medallion's `decisions` list (jobs/medallion.hpp, docs/JOBS.md "Medallion refresh"):
// the scope's active decisions by importance (decision_importance()), each statement once.
// Thread-safety: uses only the connection passed in; throws SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jobs/medallion.hpp"
#include "jobs/medallion_records.hpp"

namespace reflectd::jobs::medallion {

/// The active decisions of `streams` (kind decision, status active: agents' and those found in
/// the events; the consolidation streams are areas of work, listed as subsystems), ranked by
/// decision_importance() of their confidence, their commit's files, the weighted events of
/// their area (target) after their own event and the days from their last_seen to
/// `newest_event_us` (the scope's newest event, µs), ties by id; a statement already listed
/// (ASCII case-insensitive) is dropped; at most `max_items`. Returns the seed 001 items
/// {id D-<n>, statement (≤ 200 characters), rationale (≤ 300), confidence clamped to [0,1],
/// x_reflectd {source_id, phase, evidence_event_ids: the newest 10}}, registering each id in
/// medallion_items (item_id) under `medallion_id`.
nlohmann::json decision_items(SQLite::Database& db, const std::string& medallion_id,
                              const MedallionScope& scope, const std::vector<Stream>& streams,
                              std::int64_t newest_event_us, std::size_t max_items);

}  // namespace reflectd::jobs::medallion
