#include "text/fact_words.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace reflectd::text::fact_words {
namespace {

bool word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) != 0 || c == '\'' || u >= 0x80;
}

// Subject-less first-person openings of a turn ("Just got new shoes", "Went camping").
const WordSet& subjectless_openers() {
  static const std::set<std::string, std::less<>> words{
      "just",   "got",     "went",     "started",  "been",   "finished", "took",    "made",
      "had",    "bought",  "found",    "joined",   "tried",  "spent",    "visited", "saw",
      "met",    "did",     "learned",  "watched",  "played", "won",      "lost",    "moved",
      "signed", "working", "thinking", "planning", "hoping", "trying",   "loving",  "getting",
      "going",  "finally", "recently", "gonna"};
  return words;
}

}  // namespace

// Verb forms that stay as they are after a third-person subject: modals, auxiliaries in the
// past, and irregular past tenses (regular ones end in -ed).
const WordSet& unchanged_verbs() {
  static const std::set<std::string, std::less<>> words{
      "can",        "could",    "will",     "would",     "shall",  "should", "may",    "might",
      "must",       "did",      "had",      "was",       "were",   "used",   "ought",  "gotta",
      "went",       "got",      "saw",      "made",      "took",   "came",   "felt",   "found",
      "bought",     "thought",  "told",     "said",      "knew",   "gave",   "left",   "met",
      "ran",        "read",     "won",      "lost",      "sent",   "spent",  "built",  "began",
      "brought",    "caught",   "taught",   "drove",     "wrote",  "ate",    "drank",  "sang",
      "swam",       "flew",     "fell",     "held",      "kept",   "slept",  "sold",   "stood",
      "understood", "wore",     "chose",    "broke",     "forgot", "became", "heard",  "paid",
      "put",        "let",      "set",      "cut",       "hit",    "hurt",   "quit",   "shut",
      "led",        "rode",     "rose",     "shook",     "spoke",  "stole",  "threw",  "woke",
      "fed",        "fought",   "hung",     "meant",     "sat",    "shot",   "stuck",  "tore",
      "blew",       "grew",     "drew",     "showed",    "bent",   "dealt",  "learnt", "burnt",
      "dreamt",     "lit",      "bet",      "cost",      "spun",   "won't",  "can't",  "didn't",
      "wasn't",     "couldn't", "wouldn't", "shouldn't", "wanna",  "gonna",  "guess"};
  return words;
}

std::vector<Word> words_of(std::string_view s) {
  std::vector<Word> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && !word_char(s[i])) ++i;
    if (i >= s.size()) break;
    const std::size_t b = i;
    std::string folded;
    while (i < s.size() && word_char(s[i])) {
      if (s.compare(i, 3, "\xE2\x80\x99") == 0) {
        folded.push_back('\'');
        i += 3;
        continue;
      }
      folded.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(s[i]))));
      ++i;
    }
    while (!folded.empty() && folded.back() == '\'') folded.pop_back();
    while (!folded.empty() && folded.front() == '\'') folded.erase(0, 1);
    if (!folded.empty()) out.push_back({b, i, std::move(folded)});
  }
  return out;
}

const WordSet& first_person() {
  static const std::set<std::string, std::less<>> words{
      "i",      "i'm", "im",    "i've",  "ive",  "i'd",   "i'll", "my",   "mine", "me",
      "myself", "we",  "we're", "we've", "we'd", "we'll", "our",  "ours", "us",   "ourselves"};
  return words;
}

// A subject-less first-person opening: a listed one, or a regular past form before its object
// ("Dyed my hair", "Painted a lake"); "Excited to see it" and "Based on …" are no report.
bool subjectless_opening(const std::vector<Word>& words) {
  const std::string& opener = words.front().folded;
  if (subjectless_openers().contains(opener)) return true;
  static const std::set<std::string, std::less<>> objects{"my",   "our", "a",  "an",  "the", "some",
                                                          "this", "it",  "up", "out", "back"};
  return opener.size() >= 4 && opener.ends_with("ed") && words.size() > 2 &&
         objects.contains(words[1].folded);
}

// Words that carry no content in a turn besides the stop words (greetings, fillers).
const WordSet& fillers() {
  static const std::set<std::string, std::less<>> words{
      "wow",        "hey",  "hi",    "hello",   "thanks", "thank",   "okay",
      "ok",         "yeah", "yep",   "yes",     "oh",     "sure",    "really",
      "just",       "also", "gonna", "lol",     "haha",   "totally", "definitely",
      "absolutely", "glad", "great", "awesome", "cool",   "woohoo",  "yay",
      "hooray",     "whoa", "omg",   "ugh",     "hmm",    "aww"};
  return words;
}

// After "I": adverbs the verb comes after ("I really love").
const WordSet& adverbs() {
  static const std::set<std::string, std::less<>> words{
      "really",     "just",       "also",       "never",      "always",   "still",   "recently",
      "finally",    "actually",   "even",       "definitely", "totally",  "usually", "sometimes",
      "often",      "already",    "absolutely", "truly",      "honestly", "mostly",  "only",
      "personally", "especially", "certainly",  "now",        "then",     "first",   "once"};
  return words;
}

// Second-person words: a sentence with one is about the listener ("I'm so proud of you"),
// not a report of the speaker's own life.
const WordSet& second_person() {
  static const std::set<std::string, std::less<>> words{"you",      "you're", "youre", "you've",
                                                        "you'd",    "you'll", "your",  "yours",
                                                        "yourself", "u",      "ya"};
  return words;
}

// Words that judge or feel rather than state ("excited", "tough", "amazing"): a sentence made
// of them and stop words says how the speaker feels about the talk, not a thing that happened
// or holds ("It's been tough, but I'm staying positive", "Can't wait!").
const WordSet& evaluative() {
  static const std::set<std::string, std::less<>> words{
      "excited",    "exciting",    "positive",  "negative",  "tough",       "rough",
      "blast",      "nervous",     "grateful",  "thankful",  "happy",       "proud",
      "amazing",    "special",     "fun",       "wonderful", "incredible",  "nice",
      "beautiful",  "lovely",      "inspiring", "inspired",  "hard",        "hope",
      "hoping",     "wait",        "fantastic", "thrilled",  "stoked",      "pumped",
      "appreciate", "appreciated", "best",      "meant",     "mean",        "means",
      "motivated",  "motivating",  "rewarding", "worth",     "lucky",       "blessed",
      "feel",       "feeling",     "felt",      "good",      "bad",         "sad",
      "crazy",      "wild",        "super",     "lot",       "much",        "thing",
      "things",     "stuff",       "way",       "bit",       "kind",        "sort",
      "pretty",     "huge",        "true",      "important", "interesting", "sweet",
      "perfect",    "welcome",     "sorry",     "worry",     "worries",     "keep",
      "going",      "glad",        "great",     "awesome",   "cool",        "stay",
      "staying",    "fine",        "well",      "know",      "think",       "guess",
      "sure",       "bet",         "totally",   "agree",     "always",      "ever",
      "talk",       "talked",      "chat",      "chatted",   "ages",        "time",
      "catch",      "caught",      "hear",      "heard",     "seeing",      "see",
      "lately",     "new"};
  return words;
}

// Openings of a reaction to what the other person said ("That sounds great", "Sounds like a
// plan", "What a view", "Way to go", "Kudos for …", "Bummer about …", "Hang tight"): without a
// first-person word such a sentence is about the listener.
const WordSet& reaction_openers() {
  static const std::set<std::string, std::less<>> words{
      "that",   "that's", "thats",  "those",    "this",
      "sounds", "what",   "wow",    "congrats", "congratulations",
      "aw",     "aww",    "awww",   "omg",      "haha",
      "lol",    "it's",   "its",    "it",       "way",
      "kudos",  "bummer", "nice",   "cool",     "awesome",
      "great",  "hang",   "thanks", "thank"};
  return words;
}

// "love" -> "loves", "go" -> "goes", "try" -> "tries"; irregular and fixed forms first.
std::string third_person_verb(const std::string& verb) {
  static const std::array<std::pair<std::string_view, std::string_view>, 8> irregular{{
      {"am", "is"},
      {"have", "has"},
      {"do", "does"},
      {"don't", "doesn't"},
      {"haven't", "hasn't"},
      {"aren't", "isn't"},
      {"are", "is"},
      {"be", "is"},
  }};
  for (const auto& [from, to] : irregular) {
    if (verb == from) return std::string(to);
  }
  if (unchanged_verbs().contains(verb) || verb.size() < 2) return verb;
  if (verb.ends_with("ed") || verb.find('\'') != std::string::npos) return verb;
  if (verb.ends_with("s") || verb.ends_with("sh") || verb.ends_with("ch") || verb.ends_with("x") ||
      verb.ends_with("z") || verb.ends_with("o")) {
    return verb + "es";
  }
  const char before = verb[verb.size() - 2];
  if (verb.back() == 'y' && std::string_view("aeiou").find(before) == std::string_view::npos) {
    return verb.substr(0, verb.size() - 1) + "ies";
  }
  return verb + "s";
}

bool preposition(std::string_view w) {
  static const std::set<std::string, std::less<>> words{
      "in",     "on",    "at",     "since", "from", "until", "till",   "by",
      "before", "after", "during", "for",   "of",   "to",    "through"};
  return words.contains(w);
}

}  // namespace reflectd::text::fact_words
