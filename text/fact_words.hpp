#pragma once

// The word-level reading of a conversational turn that fact extraction builds on: words with
// their byte spans, and the closed word lists that tell a report of the speaker's own life
// from a reaction, a judgement or talk about the listener (English only). Every function is
// pure and thread-safe: the lists are function-local statics, built once.

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::text::fact_words {

using WordSet = std::set<std::string, std::less<>>;

// A word of a sentence: its byte span [begin, end) in the sentence and its folded form (ASCII
// lower case, the curly apostrophe U+2019 read as ', leading and trailing apostrophes dropped).
struct Word {
  std::size_t begin;
  std::size_t end;
  std::string folded;
};

// The words of `s` in order: runs of letters, digits, apostrophes and non-ASCII bytes.
std::vector<Word> words_of(std::string_view s);

// First-person pronouns and determiners ("i", "my", "we", "our", ...).
const WordSet& first_person();
// True when `words` open with a first-person report that has no subject ("Just got new shoes",
// "Went camping", "Painted a lake"); false for "Excited to see it" or "Based on ...".
bool subjectless_opening(const std::vector<Word>& words);
// Greetings and fillers that carry no content besides the stop words.
const WordSet& fillers();
// Adverbs that may stand between "I" and its verb ("I really love").
const WordSet& adverbs();
// Second-person words: a sentence with one is about the listener.
const WordSet& second_person();
// Words that judge or feel rather than state ("excited", "tough", "amazing").
const WordSet& evaluative();
// Openings of a reaction to what the other person said ("sounds", "what", "kudos", ...).
const WordSet& reaction_openers();
// Verb forms that stay as they are after a third-person subject: modals, past auxiliaries,
// irregular past tenses and negated contractions ("can", "went", "didn't").
const WordSet& unchanged_verbs();
// The third-person present of `verb` ("love" -> "loves", "go" -> "goes", "try" -> "tries",
// "am" -> "is"); modals, past forms and contractions come back unchanged.
std::string third_person_verb(const std::string& verb);
// True for the prepositions a time or place phrase opens with ("in", "on", "since", ...).
bool preposition(std::string_view w);

}  // namespace reflectd::text::fact_words
