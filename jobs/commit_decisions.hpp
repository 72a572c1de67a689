#pragma once
// Decisions read from a commit's subject line, and what a revert undoes: the rules for
// histories that do not write "Problem: ... Solution: ..." (jobs/decision_extraction.hpp has
// that convention and trajectories). Pure: no database, no clock. docs/JOBS.md ("Decisions
// from the events") lists the same rules for readers.
//
// The subject. The first line of the message; for a pull-request merge ("Merge pull request
// #N from owner/branch") the first non-empty line after it, its title, with "#N" kept as a
// reference. Read without a conventional-commit type ("feat:", "fix(api):", "cmake:"), a
// gitmoji (":bug:"), trailing issue references ("(#123)") and a final period.
//
// A decision is a subject that chooses: its first word (any case, base or past tense) is one
// of these, with what the verb needs after it:
//   use, adopt, prefer, require, deprecate, drop, introduce          (anything after)
//   switch (to/from), migrate / move / port / convert / rename / change (... to ...)
//   replace (... with / by ...)
//   remove / stop / don't / do not / never (... support / using / use / depend / rely ...)
//   make (... default / optional / mandatory / required)
//   default to; enable / disable (... by default); bump / raise / increase (... minimum /
//   required ...)
// and it is not routine (is_routine_change()): nothing that names a typo, spelling,
// whitespace or indentation, formatting or coding style, clang-format, a README, a changelog, a
// version bump, a license, relicensing or copyright, "wip", a merge of branches, or the removal
// of what is redundant, unused or unnecessary; at least two words. The same test keeps routine
// work out of decision_from_message()'s decisions (the consolidation job applies it). Fixes,
// additions and updates describe work, not a choice between ways of working, so they are not
// decisions by their subject alone.
//
// The rationale, from the message's own words, the first that applies: the "Problem:"
// paragraph; the first body sentence that gives a reason ("because", "so that", "to avoid",
// "since", "in order to", "to prevent", "otherwise", "this allows", "to make sure", "to
// ensure"); the subject's own reason clause ("... because of build failures"); the body's
// first prose paragraph (not a trailer such as "Signed-off-by:", not "This reverts commit");
// else none. The references follow it: "(refs #123)".
//
// Confidence (ours, as for decision_from_message): 0.6 for an applied change, +0.2 when the
// commit changed a test file, -0.1 without a rationale: [0.5, 0.8].
//
// Thread-safety: all functions are thread-safe. Errors: none; a subject no rule matches
// yields std::nullopt.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/decision_extraction.hpp"

namespace reflectd::jobs {

/// A commit message's subject, read as above.
struct CommitSubject {
  std::string line;               ///< The line as written (a merge: its title line).
  std::string text;               ///< Without type, gitmoji, trailing references and period.
  std::vector<std::string> refs;  ///< "#123" references, in order, each once.
};

/// Reads the subject of `content` (a commit message); `merge` is context.merge. Empty `text`
/// for a branch merge without a title and for an empty message.
CommitSubject read_commit_subject(std::string_view content, bool merge);

/// True when `text` names routine work or clean-up (the list above: typo, formatting, ...),
/// which is no decision whatever states it; ASCII case-insensitive.
bool is_routine_change(std::string_view text);

/// A decision stated by the subject of a commit message (rules above). `files` is the commit's
/// context.files.
std::optional<ExtractedDecision> decision_from_commit(std::string_view content, bool merge,
                                                      std::span<const std::string> files);

/// What a revert commit undoes, in the common forms: a subject `Revert "X"`, `Back out "X"` or
/// `Backout "X"` (subject X); a body line "This reverts commit SHA." or a subject "Revert(ing)
/// commit SHA" (commit SHA, 7 to 40 hex digits); or a subject "Revert(ed|ing) X" that names
/// the change in other words (description X, its first clause). "Revert X to Y" and "Revert X
/// back to Y" bring Y back: the description is "X in place of Y"; "Revert to Y" gives
/// "replacing Y". A "to" after a verb or gerund ("Revert adding constexpr to rotr") or before
/// a purpose ("to satisfy C++11 compilers") stays as written. A revert of a revert
/// (`Revert "Revert "X""`) restores X: nullopt, as for a message that is not a revert.
struct Revert {
  std::string subject;      ///< The reverted commit's subject line; may be empty.
  std::string commit;       ///< A prefix of the reverted commit's id, lower case; may be empty.
  std::string description;  ///< The change, in the revert's own words, when no subject is quoted.
};
std::optional<Revert> read_revert(std::string_view content);

}  // namespace reflectd::jobs
