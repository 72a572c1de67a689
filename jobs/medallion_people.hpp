#pragma once
// The people of a namespace, as a medallion tells them to an agent resuming a conversation
// (seed 001 asks for the scope's state and gives no rule for people; ours): who the people
// are, what is known of each now, and what each plans. Read from the fact ledger (seed 003
// MemoryFact, jobs/facts.hpp), so a namespace with no facts about people (a commit history, an
// agent's trajectories) has none.
//
// A person is a `person:` entity with facts in the namespace holding at least 5% of them (the
// speakers of a conversation, not everyone they mention), at most kMaxPeople, most facts first.
// Known: the person's current facts (is_stale = 0): single-valued attributes first, then dated
// facts (a time expression gave their validity), each newest first, as entity summaries list
// them (jobs/entity_summaries.hpp). Plans: facts whose validity starts after the newest event
// of the namespace (said of a day still to come), soonest first. Only facts at sensitivity
// `low` or below are read: a medallion is read at the level of the most sensitive item it
// lists, and the default level of an event is `low`.
//
// Open threads: plans a person told ahead of their date (a fact whose validity starts after the
// turn that told it) whose date has come by the newest event, and of which no turn of the
// namespace said anything on or after that date: no later turn writes two of the content words
// of the plan's dated sentence (the one that gives its date) next to each other as it does ("talent
// show"; content words: Snowball stems, less stop words, the people's names, month and day names),
// or, for a plan with no such pair, shares two of its content words. "How did the talent show go?"
// is what an agent resuming the talk asks next. The turns read are the first kMaxFollowUpTurns from
// the earliest such date.
//
// A `name:` entity that is a person's name or the start of it ("name:mel" for Melanie) is
// that person: is_person_name() says so, and the medallion lists the person instead.
//
// Thread-safety: uses only the connection passed in. Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace reflectd::jobs {

inline constexpr std::size_t kMaxPeople = 6;
inline constexpr std::size_t kMaxFollowUpTurns = 5000;

/// One fact as a medallion quotes it.
struct PersonFact {
  std::int64_t fact_id = 0;
  std::string statement;
  std::int64_t valid_from_us = 0;  ///< µs since the epoch (UTC).
};

/// A person of the namespace with what the medallion says of them.
struct Person {
  std::string key;   ///< Canonical "person:<name>".
  std::string name;  ///< As written ("Caroline").
  std::int64_t facts = 0;
  std::int64_t first_us = 0;  ///< When the first and the last of their facts was told, µs.
  std::int64_t last_us = 0;
  std::vector<PersonFact> known;  ///< At most `per_person`.
  std::vector<PersonFact> plans;  ///< At most `per_person`.
};

/// The people of namespace `ns` (empty: none, a scope over every namespace lists nobody),
/// with at most `per_person` known facts and plans each; `newest_event_us` is the newest event
/// of the scope (µs), after which a fact is a plan.
std::vector<Person> people_of(SQLite::Database& db, const std::string& ns,
                              std::int64_t newest_event_us, std::size_t per_person);

/// A plan of `person` left open (see the header).
struct OpenThread {
  std::string person;           ///< As written ("Caroline").
  PersonFact plan;              ///< valid_from_us: the day it was planned for.
  std::int64_t told_us = 0;     ///< When the turn that told it was said, µs.
  std::int64_t source_seq = 0;  ///< That turn's event.
};

/// The open threads of `people` in namespace `ns`, the most recently due first, at most
/// `limit`; `newest_event_us` as for people_of().
std::vector<OpenThread> open_threads(SQLite::Database& db, const std::string& ns,
                                     const std::vector<Person>& people,
                                     std::int64_t newest_event_us, std::size_t limit);

/// True when canonical `key` is "name:<n>" and <n> (3 letters or more) is the start of one of
/// `people`'s names, case-folded: the person under another key or a nickname.
bool is_person_name(const std::string& key, const std::vector<Person>& people);

/// "127 facts told from 2023-05-08 to 2023-10-22. Known: <fact> (2023-10-20); ... Plans: <fact>
/// (2023-11-01)." with each statement cut to about `max_bytes` at a word (clip_words).
std::string person_notes(const Person& person, std::size_t max_bytes);

}  // namespace reflectd::jobs
