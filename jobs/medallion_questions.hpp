#pragma once
// The medallion's `open_questions` list (jobs/medallion.hpp, docs/JOBS.md "Medallion
// refresh"): problems raised and not solved since, proposals awaiting a verdict, assumptions,
// changes reverted and not redone, and a conversation's open threads. Recurring problems that
// were solved each time are things to avoid repeating (affordances), not questions.
// Thread-safety: uses only the connection passed in; throws SQLite::Exception (and
// std::runtime_error from the Tokenizer without a stemmer, jobs/follow_ups.hpp).

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jobs/medallion.hpp"
#include "jobs/medallion_people.hpp"
#include "jobs/medallion_records.hpp"

namespace reflectd::jobs::medallion {

/// The listed questions, and the text of the first one (what summary.high_level says is
/// open; empty when `items` is).
struct QuestionItems {
  nlohmann::json items = nlohmann::json::array();
  std::string first;
};

/// The scope's open questions, ordered by priority (high, medium, low; question_priority() of
/// the support and the days from when last seen to `now_us`), then support (more first), then
/// source id; at most `max_items`. Reverted changes are read only for a scope with a
/// namespace (the newest three), checked against the commits up to `newest_event_us` (the
/// scope's newest event, µs; jobs/follow_ups.hpp); open threads are those of `people`
/// (jobs/medallion_people.hpp), `medium` when planned within 30 days of `newest_event_us`.
/// Items: {id Q-<n>, question, blocked_on (the target, when there is one), priority,
/// x_reflectd {source_id, evidence_event_ids: the newest 10}}, each id registered in
/// medallion_items (item_id) under `medallion_id`.
QuestionItems question_items(SQLite::Database& db, const std::string& medallion_id,
                             const MedallionScope& scope, const std::vector<Stream>& streams,
                             const std::vector<Person>& people, std::int64_t newest_event_us,
                             std::int64_t now_us, std::size_t max_items);

}  // namespace reflectd::jobs::medallion
