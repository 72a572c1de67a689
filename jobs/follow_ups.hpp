#pragma once
// Whether a later text takes up what an earlier one said: a plan of a conversation that someone
// spoke of again (jobs/medallion_people.hpp), a reverted change that a later commit redid
// (jobs/medallion.cpp). Ours; the seeds give no rule. Deterministic and cheap: a topic is the
// set of a text's content words (Snowball English stems of the words the Tokenizer keeps, less
// a list of words to leave out) and of its pairs, two content words written next to each other
// with only spaces between them ("art show" in "an LGBTQ art show"; "art can show" and "art,
// show" are no pair). A text speaks of a topic when it shares one of the topic's pairs, or,
// for a topic with no pair, two of its content words (its only one, when it has one).
//
// Thread-safety: a Topics object is used by one thread at a time (its Tokenizer caches stems).
// Errors: none; the Tokenizer's constructor throws std::runtime_error without a stemmer.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/clustering.hpp"

namespace reflectd::jobs {

/// What a text is about (see the header).
struct Topic {
  std::set<std::string> stems;
  std::set<std::string> pairs;  ///< "<stem> <stem>", in the order written.
};

/// Reads topics, leaving out the stems of the calendar's words (month and day names, "week",
/// "month", "year", "others") and of `names` (people's names, each word of each).
class Topics {
 public:
  Topics(text::Tokenizer& tokenizer, const std::vector<std::string>& names);

  /// The topic of `text`: words of 3+ characters, not all digits, not stop words, not left out.
  Topic of(std::string_view text);

 private:
  text::Tokenizer& tokenizer_;
  std::set<std::string> ignored_;
};

/// True when a text of topic `later` speaks of `earlier` (see the header).
bool speaks_of(const Topic& later, const Topic& earlier);

/// Something said that a later event may take up: its text and the time from which an event
/// counts (µs since the epoch; inclusive).
struct Said {
  std::string text;
  std::int64_t from_us = 0;
};

/// For each of `said`, whether an active event of namespace `ns` of one of `kinds`, timed from its
/// `from_us` up to `until_us`, speaks of its topic (texts of the events that begin with one of
/// `not_from`, such as "Revert", never count). Reads at most `max_events` events, the first
/// from the earliest `from_us`. Errors: SQLite::Exception.
std::vector<bool> taken_up(SQLite::Database& db, const std::string& ns,
                           const std::vector<std::string>& kinds, const std::vector<Said>& said,
                           std::int64_t until_us, const std::vector<std::string>& not_from,
                           Topics& topics, std::size_t max_events);

/// The sentence of `statement` that gives its date (every absolute date the fact rules write
/// ends in a year: "in September 2023"), else the whole statement.
std::string_view dated_sentence(std::string_view statement);

}  // namespace reflectd::jobs
