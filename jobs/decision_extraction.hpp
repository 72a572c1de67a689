#pragma once
// Decision extraction rules (seed 000 MemoryDecision: title, rationale,
// confidence, evidence), pure: no database, no clock. The consolidation job
// (jobs/consolidation.hpp) stores what these functions return as knowledge rows of kind
// `decision`; docs/JOBS.md ("Decisions from the events") lists the rules for readers.
//
// Two sources:
//   - A message that states a problem and its solution, in libzmq's C4 convention and its
//     variants: a line starting "Problem:" or "Issue:" and a line starting "Solution:" or
//     "Fix:". The statement is the solution paragraph (its lines up to a blank line or the next
//     label, joined), the rationale the problem paragraph, both in the message's own words.
//     A solution of fewer than five words, or whose first two words point back at the problem
//     (it, them, this, these, that), is stated with its problem ("Unused variables warnings:
//     fix them", "Zmq_poller* are not yet stable APIs: mark them as DRAFT APIs").
//   - A trajectory (tool calls of one task) whose final result succeeded: the statement is the
//     reasoning of its last change: the thought of the last call before the last submission whose
//     tool edits, creates or writes and whose thought is not about repairing the edit command
//     (mentions "edit command", "indentation", "syntax" or "try again"); else of the last call
//     before the submission. The thought is quoted from its first sentence that says what to do
//     ("to fix", "should", "need to", "instead", "let's", "we can", "I will", "we will"). The
//     rationale is the task (task_problem()).
// Texts longer than 300 bytes end at their last sentence in the second half, else at a word
// (marked "...").
//
// Confidence in [0,1] (ours; seed 000 gives no rule for a single stated decision):
//   base 0.6 when the decision was applied (a commit_change, or a trajectory that submitted),
//   0.5 for a problem and solution only stated (any other kind);
//   +0.2 when it was verified: the commit changed a test file (a path with a component that
//   starts with "test" or ends in "_test"/"_tests"), or the trajectory ran a test or its
//   reproduction (a call with tool python or pytest, or whose command names "test" or
//   "reproduce") after its last change, with a successful result.
// The decay job then lowers it with inactivity to no less than decay.min_confidence_share of
// it (docs/JOBS.md "Vitality decay").
//
// Thread-safety: all functions are thread-safe (no shared state). Errors: none; a message or
// trajectory that matches no rule yields std::nullopt.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::jobs {

/// A decision found in the events.
struct ExtractedDecision {
  std::string statement;  ///< What was decided, as written (first letter upper case), ≤ 300 bytes.
  std::string rationale;       ///< The problem it answers, as written, ≤ 300 bytes.
  double confidence = 0;       ///< [0,1], by the rule in the header.
  bool verified = false;       ///< A test or reproduction backed it (the +0.2 of the rule).
  std::size_t call_index = 0;  ///< For a trajectory: the call whose thought is the statement.
};

/// The paragraph after the first line that starts with one of `labels` ("Problem:"): that
/// line's text after the label and the lines after it up to a blank line or a line that starts
/// with another "Word:" label, joined by single spaces and cut at a word to ≤ max_bytes.
/// Empty when no line starts with a label or the paragraph is empty.
std::string labelled_paragraph(std::string_view text, std::span<const std::string_view> labels,
                               std::size_t max_bytes = 300);

/// A decision from a problem-and-solution message (first source above). `kind` is the event's
/// kind, `files` its context.files. nullopt when the message lacks either label.
std::optional<ExtractedDecision> decision_from_message(std::string_view kind,
                                                       std::string_view content,
                                                       std::span<const std::string> files);

/// One call of a trajectory, with whether the result that answered it succeeded.
struct TrajectoryCall {
  std::string tool;     ///< context.tool ("edit", "python", "submit").
  std::string command;  ///< The call's content (the command as run).
  std::string thought;  ///< context.thought.
  bool succeeded = false;
};

/// A decision from a trajectory that ended in success (second source above): `task` is the
/// content of its task event (empty when none), `calls` its calls in order. nullopt when no
/// call before the submission carries a thought, or the task states no problem (no task).
std::optional<ExtractedDecision> decision_from_trajectory(std::string_view task,
                                                          std::span<const TrajectoryCall> calls);

/// The problem a task event states: the first line after "ISSUE:", else the sentence that
/// names the challenge ('The CTF challenge is a ... problem named "X", worth 10 points.'), else
/// its first line; ≤ 300 bytes.
std::string task_problem(std::string_view task);

/// `text` cut at a word boundary to at most `max_bytes` (never inside a UTF-8 sequence): at
/// the end of its last sentence when one ends in the second half, else at a word, marked
/// "...". Unchanged when it fits.
std::string clip_words(std::string text, std::size_t max_bytes);

/// `text` with every run of white space (line breaks included) collapsed into one space and
/// none at either end.
std::string one_line(std::string_view text);

/// True for a test file: a path with a component that starts with "test" or ends in
/// "_test"/"_tests" (before its extension).
bool is_test_path(std::string_view path);

}  // namespace reflectd::jobs
