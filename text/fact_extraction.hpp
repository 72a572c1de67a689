#pragma once
// Fact extraction rules (seed 003 MemoryFact), pure: no database, no clock, so
// every rule unit-tests against a fixed timestamp. The `facts` job (jobs/facts.hpp) stores
// what extract_facts() returns. docs/JOBS.md ("Facts") lists the rules for readers.
//
// Which sentences are facts:
//   - Conversation turns (kinds prompt, conversation, response) give at most one fact each:
//     what the turn reports of its speaker (its leading "Name:", at most three words, else the
//     event's agent_id). Sentences end at . ! ? before a space, at line breaks and at " - ";
//     a leading vocative ("Hey Caroline,") is dropped. A sentence is left out when it is a
//     question, addresses the listener (a second-person word; "let/tell/show you" is none, and
//     a sentence that opens with "I" or "we" and has "you" only as an object or "your" as a
//     possessive names the listener instead: "I took your advice" -> "Joanna took Nate's
//     advice", unless its verb is one of opinion, "I hope/think/bet your …"), or
//     keeps fewer than two content words once stop words, pronouns, fillers and evaluative
//     words are dropped. A kept sentence reports when it has a first-person word or opens with
//     a subject-less first-person verb ("Just got new shoes"); one without is told beside the
//     report unless it opens with a reaction word ("That sounds", "Wow"). The turn gives its
//     fact when a sentence reports and the kept sentences hold four content words together, or
//     when it states an attribute (below). Shared photos ("[shares a photo: a photo of a
//     sunset]") are told at the end of the fact, never alone.
//   - SHODH statements (kinds observation, learning, discovery, pattern): every declarative
//     sentence with at least two content words, about the event's primary entity (its first
//     structured entity, else its agent).
//   Other kinds (commits, tool calls, results) yield no facts: their reflections are the
//     decisions and problems of the consolidation job.
// Measured against LoCoMo's annotated observations by bench/reflection.cpp (docs/JOBS.md).
//
// Normalised statement: the kept sentences in order; first person becomes the subject's name ("I
// went" -> "Caroline went", "I'm" -> "Caroline is", "I love" -> "Caroline loves", "my" ->
// "Caroline's", "we" -> "Caroline and others"), and each relative time expression
// (text/time_expressions.hpp) becomes absolute ("yesterday" -> "on 7 May 2023", "last week" ->
// "in the week before 8 May 2023"). The turn's words are otherwise kept.
//
// Time: the first time expression of the kept sentences gives [valid_from, valid_to) (a day, week,
// month or year, resolved against the event's own timestamp); without one, valid_from is the
// event's timestamp and valid_to is open (the fact holds from when it was said).
//
// Attribute (seed 003 attribute_key), for single-valued properties a later fact replaces:
//   occupation   "I work as", "I'm working as", "my job is/as"
//   employer     "I work at/for"
//   residence    "I live in", "I moved to", "I'm living in"
//   origin       "I'm from", "I am from", "I grew up in"
//   age          "I'm N years old", "I turned N"
//   relationship_status  "I'm/I got married|engaged|divorced|single", "I broke up"
//   education    "I'm studying", "I study", "my major is"
//   favorite_<x> "my favorite <x> is/are" (x one word)
// Every other fact has no attribute and is never superseded.
//
// Thread-safety: all functions are thread-safe (no shared state). Errors: none; text that
// matches no rule yields no facts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::text {

/// The fields of an event the fact rules read.
struct FactSource {
  std::string_view kind;
  std::string_view content;
  std::string_view agent_id;  ///< Empty when absent.
  std::int64_t ts_us = 0;     ///< The event's timestamp, µs since the epoch (UTC).
  /// Canonical key and display name of the event's primary entity, for SHODH statements
  /// (empty: the agent, else no subject).
  std::string_view primary_key;
  std::string_view primary_name;
  /// For a turn: the speaker of the conversation's turn before it (the person "you" is),
  /// empty when unknown. Lets "I took your advice" become "Joanna took Nate's advice".
  std::string_view listener_name;
};

/// One fact found in an event.
struct ExtractedFact {
  /// Position of its sentence in the event (0-based), unique per event; 0 for a turn's fact.
  int sentence_index = 0;
  std::string entity_key;   ///< Canonical "type:name" of the subject ("person:caroline").
  std::string entity_name;  ///< As written ("Caroline").
  std::string entity_type;  ///< The key's type ("person").
  std::string attribute;    ///< See the header; empty when none.
  std::string statement;    ///< The normalised sentence.
  std::int64_t valid_from_us = 0;
  std::optional<std::int64_t> valid_to_us;  ///< Exclusive end; nullopt = still valid.
  bool whole_days = false;  ///< True when the range came from a date (shown as ISO dates).
  /// Other entities the sentence names (capitalised names, "person:" keys), for the fact's
  /// entity links; the subject is not among them.
  std::vector<std::pair<std::string, std::string>> linked;  ///< (key, display name)
};

/// Applies the rules above to one event. Facts come in sentence order.
std::vector<ExtractedFact> extract_facts(const FactSource& event);

/// Words a question about `attribute` uses ("residence" -> "live lives living home ..."), so
/// that recall finds "Ana moved to Denver" for "Where does Ana live?". Empty for no attribute.
std::string attribute_keywords(std::string_view attribute);

/// A turn's leading "Name:" (at most three words, capitalised) and the text after it; an empty
/// name and the whole of `content` when it has none.
std::pair<std::string, std::string_view> turn_speaker(std::string_view content);

/// "Caroline went to a support group on 7 May 2023": `sentence` in the third person about
/// `name`, relative times made absolute against `ts_us`. Exposed for tests.
std::string third_person(std::string_view sentence, std::string_view name, std::int64_t ts_us);

}  // namespace reflectd::text
