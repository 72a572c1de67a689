#pragma once
// Decisions said in a conversation turn: a speaker's own choice in the first person. Pure: no
// database, no clock. docs/JOBS.md ("Decisions from the events") lists the same rule.
//
// A sentence of a turn (kinds prompt, conversation, response; its "Name:" prefix or agent_id
// is the speaker) states a decision when it is no question and says, in the first person:
//   I/we decided to, I/we have decided to, I/we chose to, I/we made the decision to,
//   I/we'll go with, let's go with, let's use, let's stick with, from now on I/we
// followed by at least two words. The statement is the sentence from that phrase on, in the
// third person about the speaker (text/fact_extraction.hpp third_person(): "I decided to run
// for office again" -> "Jon decided to run for office again"), relative times made absolute.
// The rationale is the sentence's own reason clause ("because ...", "so that ...", "since
// ...", "to make ...") when there is one, else the turn's next sentence, else none.
// Confidence (ours, as for decision_from_message): 0.6, -0.1 without a rationale.
//
// Thread-safety: thread-safe. Errors: none; a turn no rule matches yields std::nullopt.

#include <cstdint>
#include <optional>
#include <string_view>

#include "jobs/decision_extraction.hpp"

namespace reflectd::jobs {

/// The first decision `content` (a conversation turn said at `ts_us`, µs since the epoch, by
/// `agent_id` when it has no "Name:" prefix) states, as above.
std::optional<ExtractedDecision> decision_from_turn(std::string_view content,
                                                    std::string_view agent_id, std::int64_t ts_us);

}  // namespace reflectd::jobs
