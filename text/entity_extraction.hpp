#pragma once
// Entity extraction rules, pure: no database, no clock, so each rule unit-tests on
// its own. The `cluster` job (jobs/entities.hpp) stores what these functions return.
//
// Sources, in order of trust (Source below; a key found by several sources keeps the most
// trusted one):
//   1. kExplicit     the event's `entities` ("type:name", seed 002/003 entity keys)
//   2. kTarget       `context.target` (seed 000 TargetStr) -> "component:<target>", or the key
//                    itself when it already reads "type:name" with a known type
//   3. kAgent        `agent_id` -> "agent:<id>"; `context.tool` -> "tool:<name>"
//   4. kFiles        `context.files` -> "file:<path>" plus "module:<first directory>"
//   5. kContentPath  file paths in the content (a known extension or file name, see
//                    looks_like_file_path()), same keys as kFiles
//   6. kTypedToken   "type:name" tokens in the content whose type is known (seed 001 graph
//                    nodes such as repo:muse); "file:" ones must look like a file path
//   7. kMention      "@name" (not inside an e-mail address, not a doc tag such as @param,
//                    not a file name) -> "person:<name>"
//   8. kSpeaker      a leading "Name:" speaker prefix -> "person:<name>"; in commit_change
//                    events the leading "area:" of the subject (libzmq's convention) or a
//                    conventional-commit scope "fix(area):" -> "component:<area>" instead
//                    ("issue:<key>" for a tracker key such as ZMQII-10, "file:" for a file);
//                    trailer lines "Signed-off-by: Name <mail>" (and Co-authored-by,
//                    Reviewed-by, Acked-by, Reported-by, Tested-by) -> "person:<name>"
//   9. kCapitalised  runs of capitalised words (an upper-case letter followed by letters with
//                    at least one lower-case one, at most 24 characters, e.g. "Martin Sustrik",
//                    "ZeroMQ", "Windows") with stop words (articles, pronouns, commit verbs,
//                    labels) trimmed from both ends and a possessive "'s" dropped; a lone
//                    sentence-initial word only with an inner capital ("ZeroMQ") -> "name:<run>".
//                    Not applied to result and error events (tool output: headers, log levels),
//                    nor to day and month names ("Friday", "Fri", "May": times, not entities).
//
// Aliases of a party (docs/ENTITIES.md "One entity per party"): every "person:X" mention
// returns the alias "name:X" -> "person:X"; a speaker prefix equal to the publishing agent's id
// also returns "agent:X" -> "person:X". (Nicknames need the namespace's parties: the entity
// store learns them, jobs/entities.hpp.)
//
// Canonical keys are "type:name". The type is ASCII lower case. Names are Unicode NFC
// (utf8proc); they are also case-folded (utf8proc CASEFOLD) except for file and module
// names, which keep their case because POSIX paths are case-sensitive. Trailing punctuation
// is trimmed; paths are normalised (normalize_path()). When the event's content shows the
// SWE-agent working directory "(Current directory: /repo)" (or EventView::working_directory
// remembers it from an earlier event of the episode), absolute paths below it become relative
// and the absolute spelling is returned as an alias of the relative key.
//
// Relations: explicit `relations` {predicate, target|target_id, weight} give typed edges from
// the event's primary entity (its first explicit, target or file entity; else its agent) to
// the target's key (predicate "alias_of"/"same_as" declares an alias instead); a message with
// "Problem:" and "Solution:" lines gives "solved_by" edges from every entity named in the
// problem line to every entity named in the solution line, or to the event's file entities
// when the solution line names none.
//
// Thread-safety: all functions are thread-safe (no shared state).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::text {

/// Where a mention came from, most trusted first.
enum class Source {
  kExplicit,
  kTarget,
  kAgent,
  kFiles,
  kContentPath,
  kTypedToken,
  kMention,
  kSpeaker,
  kCapitalised,
};
const char* to_string(Source source);

/// One entity named by an event.
struct Mention {
  std::string key;      ///< Canonical "type:name".
  std::string type;     ///< The part before the first ':'.
  std::string display;  ///< The surface form as written (trimmed), for display_name.
  Source source = Source::kExplicit;
  bool primary =
      false;  ///< From a structured field (explicit, target, files): the event is about it.
};

/// A typed edge between two canonical keys.
struct TypedRelation {
  std::string source_key;
  std::string target_key;
  std::string rel_type;  ///< The predicate (lower case) or "solved_by".
  double weight = 1.0;   ///< In [0, 1]; scales the Hebbian step.
};

/// A surface spelling that resolves to a canonical key.
struct Alias {
  std::string alias;  ///< Canonical form of the other spelling ("file:/repo/a.py", "person:mel").
  std::string canonical_key;  ///< What it resolves to.
};

/// What one event names. `mentions` are unique by key, in source order then first appearance.
struct Extraction {
  std::vector<Mention> mentions;
  std::vector<TypedRelation> relations;
  std::vector<Alias> aliases;
};

/// The fields of an event the rules read (columns of the events table, JSON already parsed;
/// null JSON for absent fields).
struct EventView {
  std::string_view kind;
  std::string_view content;
  std::string_view agent_id;  ///< Empty when absent.
  const nlohmann::json* context = nullptr;
  const nlohmann::json* entities = nullptr;
  const nlohmann::json* relations = nullptr;
  /// The working directory known from earlier events of the same episode (SWE-agent shows
  /// it only in observations); used when the content shows none. Empty when unknown.
  std::string_view working_directory;
};

/// The SWE-agent working directory shown in `content` ("(Current directory: /repo)", the last
/// one), normalised; empty when there is none or it is not absolute.
std::string working_directory(std::string_view content);

/// Applies every rule. Never throws on odd input (invalid UTF-8 is replaced by U+FFFD).
Extraction extract_entities(const EventView& event);

/// Unicode NFC, and case folding when `fold` is true (utf8proc). Invalid UTF-8 bytes become
/// U+FFFD. Returns the input unchanged when utf8proc fails.
std::string unicode_normalize(std::string_view text, bool fold);

/// Canonical key of "type:name" (see the header comment); nullopt when there is no ':' , the
/// type is not [a-z0-9_-]{1,32} after lower-casing, or the name is empty after trimming.
std::optional<std::string> canonical_key(std::string_view key);

/// Path normalisation: trims quotes, brackets and trailing punctuation and a ":<line>"
/// suffix, drops "./" and empty segments, resolves ".." against earlier segments (kept when
/// nothing is left to remove) and strips a trailing '/'. "" when nothing is left.
std::string normalize_path(std::string_view path);

/// True for a token that names a file: no "://", and its last segment has an extension from
/// a fixed list of source/build/doc/data extensions (c, cpp, h, hpp, py, am, ac, in, txt, md,
/// ...) or is a well-known extension-less file (Makefile, README, AUTHORS, NEWS, ChangeLog,
/// COPYING, LICENSE, Dockerfile, ...), with at least one letter before the extension.
bool looks_like_file_path(std::string_view token);

/// The first directory of a relative path, or of an absolute path after its '/'; "" for a
/// path without a directory.
std::string first_directory(std::string_view path);

}  // namespace reflectd::text
