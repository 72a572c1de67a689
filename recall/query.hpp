#pragma once
// From a question in plain words to what recall searches with (seed 003 ExpandedQuery):
// the lexical terms and their FTS5 expression, the question's time expressions and whether
// it asks for a time. User text never reaches FTS5 as syntax: every term is a run of letters
// and digits, double-quoted.
//
// Rule (docs/RECALL.md, "Lexical"): words are maximal runs of ASCII letters and digits and
// non-ASCII bytes, ASCII-lower-cased; an apostrophe ends a word ("Caroline's" -> "caroline",
// "s"); the store's stop words (text::Tokenizer::is_stop_word: the Snowball English list and
// commit boilerplate) and one-letter words are dropped; duplicates are dropped. FTS5's
// porter tokenizer (migration 24) then stems each term as it stems the index: one tokenizer
// for both. Terms are OR-ed and each adjacent pair of kept words that stood next to each
// other in the text is added as a phrase, so a phrase match adds its own BM25 weight (the
// phrase and proximity bonus).
//
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/time_expressions.hpp"

namespace reflectd::recall {

/// The most bytes of question text recall accepts.
inline constexpr std::size_t kMaxQueryBytes = 4096;

struct ParsedQuery {
  std::vector<std::string> terms;    ///< Kept words, in text order, unique.
  std::vector<std::string> phrases;  ///< "a b" for adjacent kept words.
  /// True when the question asks for a time: it contains "when", "what date/year/month/day",
  /// "which year/month/day", "how long" or "how many days/weeks/months/years".
  bool asks_when = false;
  /// Expressions of the question, resolved against the caller's clock or `as_of`
  /// (temporal_range). One after "as of", "by", "until", "till" or "up to" starts at the
  /// epoch: the question is about the state at that time.
  std::vector<text::TimeMention> time;
  /// The two events a span question relates ("How many weeks passed between Maria adopting
  /// Coco and Shadow?": {maria, adopting, coco} and {shadow}; "How long had Nate had turtles
  /// before he got the third one?"), each side's kept words that the other lacks. Empty
  /// unless the question has "between A and B" or asks a duration with "before", "after",
  /// "since" or "until" an event (not a date).
  std::vector<std::vector<std::string>> sides;
};

/// Parses `text` (at most kMaxQueryBytes; the caller checks) against `now_us` (µs, UTC).
/// Never throws for any input.
ParsedQuery parse_query(std::string_view text, std::int64_t now_us);

/// The FTS5 MATCH expression for `terms` (OR-ed, each double-quoted) and `phrases` (OR-ed
/// too). Empty when both are empty.
std::string fts_match(const std::vector<std::string>& terms,
                      const std::vector<std::string>& phrases);

/// The FTS5 expression of a lexical query: `content : (match)`, and within namespace `ns`
/// (non-empty) `namespace : "<its tokens>" AND content : (match)`, so FTS5 itself narrows
/// the matches to the namespace's (a superset when two namespaces tokenize alike: callers
/// still compare the namespace exactly).
std::string fts_scoped_match(const std::string& match, const std::string& ns);

/// The words of `text` by the rule above, before stop words are dropped (used for `why`).
std::vector<std::string> query_words(std::string_view text);

}  // namespace reflectd::recall
