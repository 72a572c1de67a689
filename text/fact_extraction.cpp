#include "text/fact_extraction.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>
#include <set>

#include "common/ascii.hpp"
#include "text/chat_spelling.hpp"
#include "text/entity_extraction.hpp"
#include "text/fact_words.hpp"
#include "text/time_expressions.hpp"
#include "text/tokenizer.hpp"

namespace reflectd::text {
namespace {

// Longer "sentences" are tool output or pasted text, not something a person says of
// themselves; more facts per event than this is a document, not a turn.
constexpr std::size_t kMaxSentenceBytes = 400;
constexpr std::size_t kMaxFactsPerEvent = 16;
// A turn's fact says something: fewer content words than this (evaluative words not counted)
// is a reaction or a mood ("I'm so glad the race went well for the kids"), not a memory.
constexpr int kMinTurnContentWords = 4;

using fact_words::adverbs;
using fact_words::evaluative;
using fact_words::fillers;
using fact_words::first_person;
using fact_words::preposition;
using fact_words::reaction_openers;
using fact_words::second_person;
using fact_words::subjectless_opening;
using fact_words::third_person_verb;
using fact_words::unchanged_verbs;
using fact_words::Word;
using fact_words::words_of;

// Relative expressions made absolute: "yesterday" -> "on 7 May 2023", "last week" -> "in the
// week before 8 May 2023"; absolute ones are left as written.
std::string absolute_times(std::string_view s, std::int64_t ts_us) {
  std::string out;
  std::size_t at = 0;
  for (const TimeMention& m : find_time_expressions(s, ts_us)) {
    out.append(s.substr(at, m.begin - at));
    at = m.end;
    if (!m.relative) {
      out.append(s.substr(m.begin, m.end - m.begin));
      continue;
    }
    // A preposition written just before keeps its place ("since yesterday" -> "since 7 May").
    std::size_t back = out.size();
    while (back > 0 && out[back - 1] == ' ') --back;
    std::size_t word_start = back;
    while (word_start > 0 && std::isalpha(static_cast<unsigned char>(out[word_start - 1])) != 0) {
      --word_start;
    }
    const bool has_preposition =
        preposition(ascii_lower(out.substr(word_start, back - word_start)));
    // A day or a weekend is "on" ("on 7 May 2023", "on the weekend of 6 May 2023"); a week,
    // a month or a year is "in".
    const std::string& label = m.range.label;
    const bool day =
        (!label.empty() && std::isdigit(static_cast<unsigned char>(label.front())) != 0 &&
         label.size() > 4) ||
        label.starts_with("the weekend");
    // A time that is the sentence's subject ("Last week was wild") takes no preposition: "The
    // week before 9 July 2023 was wild", not "In the week before 9 July 2023 was wild".
    const std::string_view after = s.substr(m.end);
    const std::size_t next_begin = after.find_first_not_of(' ');
    const std::string next_word =
        next_begin == std::string_view::npos
            ? std::string()
            : ascii_lower(after.substr(next_begin, after.find(' ', next_begin) - next_begin));
    static const std::set<std::string, std::less<>> kSubjectVerbs{
        "was", "is", "has", "had", "will", "would", "seems", "seemed", "felt", "feels", "went"};
    const bool subject = !has_preposition && kSubjectVerbs.contains(next_word);
    if (!has_preposition && !subject) out.append(day ? "on " : "in ");
    std::string written = label;
    const bool sentence_start =
        back == 0 || out[back - 1] == '.' || out[back - 1] == '!' || out[back - 1] == '?';
    if (subject && sentence_start && !written.empty()) {
      written[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(written[0])));
    }
    out.append(written);
  }
  out.append(s.substr(at));
  return out;
}

struct Sentence {
  std::string text;
  bool question = false;
};

// Sentences end at '.', '!' or '?' (and the closing brackets after it) followed by a space (or
// the end), and at line breaks.
std::vector<Sentence> sentences_of(std::string_view text) {
  std::vector<Sentence> out;
  std::string current;
  auto flush = [&](bool question) {
    std::size_t b = current.find_first_not_of(" \t\r");
    std::size_t e = current.find_last_not_of(" \t\r");
    if (b != std::string::npos) out.push_back({current.substr(b, e - b + 1), question});
    current.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      flush(false);
      continue;
    }
    // A spaced dash joins two clauses a speaker could have said apart ("That sounds great -
    // I went there too"): each is read on its own.
    if (c == ' ' && i + 2 < text.size() && text[i + 1] == '-' && text[i + 2] == ' ') {
      flush(false);
      i += 1;
      continue;
    }
    // The same with an em dash, or with a dash written against the word before it
    // ("what's been happening lately- I took a class"); "well-known" has no space after.
    if (c == ' ' && text.compare(i + 1, 4, "\xE2\x80\x94 ") == 0) {
      flush(false);
      i += 3;
      continue;
    }
    if (c == '-' && i > 0 && std::isalpha(static_cast<unsigned char>(text[i - 1])) != 0 &&
        i + 2 < text.size() && text[i + 1] == ' ' &&
        std::isupper(static_cast<unsigned char>(text[i + 2])) != 0) {
      flush(false);
      continue;
    }
    current.push_back(c);
    if (c != '.' && c != '!' && c != '?') continue;
    // Closing brackets after the mark belong to the sentence it ends ("Hah, yeah!) But really
    // …"). A closing quote does not end one: a title is often quoted with its period ("a piece
    // called \"Finding Home.\" It's a script about …"), and the sentence goes on about it.
    std::size_t end = i + 1;
    while (end < text.size() && (text[end] == ')' || text[end] == ']')) ++end;
    if (end == text.size() || text[end] == ' ') {
      current.append(text.substr(i + 1, end - i - 1));
      i = end - 1;
      flush(c == '?');
    }
  }
  flush(false);
  for (Sentence& s : out) {
    if (!s.text.empty() && s.text.back() == '?') s.question = true;
  }
  return out;
}

// Words that carry content: no stop word, pronoun, filler, number alone, nor (when
// `stated` is true) an evaluative word.
int content_words(const std::vector<Word>& words, bool stated = false) {
  int n = 0;
  for (const Word& w : words) {
    if (w.folded.size() < 2 || first_person().contains(w.folded) || fillers().contains(w.folded) ||
        second_person().contains(w.folded) || Tokenizer::is_stop_word(w.folded) ||
        (stated && evaluative().contains(w.folded))) {
      continue;
    }
    if (std::none_of(w.folded.begin(), w.folded.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; })) {
      continue;
    }
    ++n;
  }
  return n;
}

std::string recognised_attribute(const std::string& lowered) {
  struct Rule {
    const char* attribute;
    std::regex pattern;
  };
  static const std::vector<Rule> rules = [] {
    const auto o = std::regex::ECMAScript | std::regex::optimize;
    std::vector<Rule> r;
    r.push_back(
        {"occupation", std::regex(R"(\bi(?:'m| am)? work(?:ing)? as\b|\bmy job (?:is|as)\b)", o)});
    r.push_back({"employer", std::regex(R"(\bi(?:'m| am)? work(?:ing)? (?:at|for)\b)", o)});
    r.push_back(
        {"residence",
         std::regex(R"(\bi (?:just )?(?:live|moved) (?:in|to)\b|\bi(?:'m| am) living in\b)", o)});
    r.push_back(
        {"origin", std::regex(R"(\bi(?:'m| am) (?:originally )?from\b|\bi grew up in\b)", o)});
    r.push_back(
        {"age", std::regex(R"(\bi(?:'m| am) \d+ years old\b|\bi (?:just )?turned \d+\b)", o)});
    r.push_back(
        {"relationship_status",
         std::regex(
             R"(\bi(?:'m| am| got| just got) (?:married|engaged|divorced|single)\b|\bi broke up\b)",
             o)});
    r.push_back(
        {"education", std::regex(R"(\bi(?:'m| am) studying\b|\bi study\b|\bmy major is\b)", o)});
    return r;
  }();
  for (const Rule& rule : rules) {
    if (std::regex_search(lowered, rule.pattern)) return rule.attribute;
  }
  static const std::regex favorite(R"(\bmy fav(?:ou?rite) ([a-z]+) (?:is|are)\b)",
                                   std::regex::ECMAScript | std::regex::optimize);
  std::smatch m;
  if (std::regex_search(lowered, m, favorite)) return "favorite_" + m[1].str();
  return {};
}

std::string apostrophes_folded(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 3, "\xE2\x80\x99") == 0) {
      out.push_back('\'');
      i += 2;
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(s[i]))));
    }
  }
  return out;
}

bool conversational(std::string_view kind) {
  return kind == "prompt" || kind == "conversation" || kind == "response";
}

bool statement_kind(std::string_view kind) {
  return kind == "observation" || kind == "learning" || kind == "discovery" || kind == "pattern";
}

// A leading "Name:" (at most three capitalised words) and the text after it.
std::pair<std::string, std::string_view> speaker_prefix(std::string_view content) {
  const std::size_t colon = content.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 40) return {{}, content};
  const std::string_view head = content.substr(0, colon);
  if (std::isupper(static_cast<unsigned char>(head.front())) == 0) return {{}, content};
  int words = 1;
  for (const char c : head) {
    if (c == ' ') ++words;
    if (std::isalpha(static_cast<unsigned char>(c)) == 0 && c != ' ' && c != '-' && c != '.' &&
        c != '\'') {
      return {{}, content};
    }
  }
  if (words > 3 || colon + 1 >= content.size() || content[colon + 1] != ' ') return {{}, content};
  return {std::string(head), content.substr(colon + 2)};
}

void set_time(ExtractedFact& fact, std::string_view sentence, std::int64_t ts_us) {
  const auto mentions = find_time_expressions(sentence, ts_us);
  if (mentions.empty()) {
    fact.valid_from_us = ts_us;
    return;
  }
  fact.valid_from_us = mentions.front().range.from_us;
  fact.valid_to_us = mentions.front().range.to_us;
  fact.whole_days = true;
}

void link_entities(ExtractedFact& fact, std::string_view sentence, std::string_view kind) {
  EventView view;
  view.kind = kind;
  view.content = sentence;
  for (const Mention& m : extract_entities(view).mentions) {
    if (m.key == fact.entity_key || m.type == "agent") continue;
    fact.linked.emplace_back(m.key, m.display);
  }
}

}  // namespace

std::pair<std::string, std::string_view> turn_speaker(std::string_view content) {
  return speaker_prefix(content);
}

std::string attribute_keywords(std::string_view attribute) {
  static const std::array<std::pair<std::string_view, std::string_view>, 7> words{{
      {"occupation", "work works job career profession"},
      {"employer", "work works job employer company"},
      {"residence", "live lives living home moved reside where"},
      {"origin", "from origin grew born hometown country"},
      {"age", "age old years birthday"},
      {"relationship_status", "married single engaged divorced relationship partner dating"},
      {"education", "study studies studying school university college major education degree"},
  }};
  for (const auto& [name, keywords] : words) {
    if (attribute == name) return std::string(keywords);
  }
  if (attribute.starts_with("favorite_")) {
    return "favorite favourite " + std::string(attribute.substr(9));
  }
  return {};
}

std::string third_person(std::string_view sentence, std::string_view name, std::int64_t ts_us) {
  const std::string s = standard_spelling(absolute_times(sentence, ts_us));
  const std::vector<Word> words = words_of(s);
  std::string out;
  std::size_t at = 0;
  bool conjugate_next = false;
  const std::string n(name);
  for (const Word& w : words) {
    out.append(s, at, w.begin - at);
    at = w.end;
    const std::string& f = w.folded;
    std::string replacement;
    bool replaced = true;
    if (conjugate_next) {
      if (adverbs().contains(f)) {
        out.append(s, w.begin, w.end - w.begin);
        continue;
      }
      conjugate_next = false;
      replacement = third_person_verb(f);
      // Keep the written form when nothing changed (its case, its apostrophe).
      if (replacement == f) replaced = false;
    } else if (f == "i") {
      replacement = n;
      conjugate_next = true;
    } else if (f == "i'm" || f == "im") {
      replacement = n + " is";
    } else if (f == "i've" || f == "ive") {
      replacement = n + " has";
    } else if (f == "i'd") {
      replacement = n + " would";
    } else if (f == "i'll") {
      replacement = n + " will";
    } else if (f == "my" || f == "mine" || f == "our" || f == "ours") {
      replacement = n + "'s";
    } else if (f == "me" || f == "myself") {
      replacement = n;
    } else if (f == "we" || f == "us") {
      replacement = n + " and others";
    } else if (f == "we're") {
      replacement = n + " and others are";
    } else if (f == "we've") {
      replacement = n + " and others have";
    } else if (f == "we'd") {
      replacement = n + " and others would";
    } else if (f == "we'll") {
      replacement = n + " and others will";
    } else if (f == "ourselves") {
      replacement = "themselves";
    } else {
      replaced = false;
    }
    if (replaced) {
      out.append(replacement);
    } else {
      out.append(s, w.begin, w.end - w.begin);
    }
  }
  out.append(s, at);
  return out;
}

namespace {

std::optional<std::string> subjectless(const std::string& sentence, const std::vector<Word>& words,
                                       const std::string& name, std::int64_t ts_us);

// "Caroline went to a support group on 7 May 2023": a sentence of a turn in the third person
// when it reports on the speaker (see the header), else nothing.
std::optional<std::string> self_report(const std::string& sentence, const std::vector<Word>& words,
                                       const std::string& name, std::int64_t ts_us) {
  const bool first = std::any_of(words.begin(), words.end(),
                                 [](const Word& w) { return first_person().contains(w.folded); });
  // "Lost my job" and "Gonna continue my edu" have a first person but no subject: the
  // subject-less reading below comes first unless an "I" or a "we" is written.
  static const std::set<std::string, std::less<>> subjects{
      "i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll"};
  const bool subject = std::any_of(words.begin(), words.end(),
                                   [](const Word& w) { return subjects.contains(w.folded); });
  // "Lost my job yesterday, so I'm starting a business": a past form opening the sentence
  // has the speaker as its subject even when a later clause writes one.
  const std::string& opener = words.front().folded;
  const bool past_opener = opener != "just" && opener != "finally" && opener != "recently" &&
                           !opener.ends_with("ing") && opener != "gonna" && opener != "been" &&
                           subjectless_opening(words);
  if (first && subject && !past_opener) return third_person(sentence, name, ts_us);
  std::optional<std::string> opened = subjectless(sentence, words, name, ts_us);
  if (opened || !first) return opened;
  return third_person(sentence, name, ts_us);
}

// The subject-less reading of self_report(): "Just got new shoes" -> "<name> just got new
// shoes", else nothing.
std::optional<std::string> subjectless(const std::string& sentence, const std::vector<Word>& words,
                                       const std::string& name, std::int64_t ts_us) {
  if (!subjectless_opening(words)) return std::nullopt;
  // "Just got new shoes" is a report; "Just make sure you rest" is advice: after an adverb
  // opener only a past form ("got", "finished") or "been" reads as one.
  const std::string& opener = words.front().folded;
  const std::string next = words.size() > 1 ? words[1].folded : std::string();
  const bool adverb = opener == "just" || opener == "finally" || opener == "recently";
  const bool past = next.ends_with("ed") || unchanged_verbs().contains(next);
  if (adverb && next != "been" && !past) return std::nullopt;
  std::string rest = sentence;
  rest[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(rest[0])));
  const char* subject = opener.ends_with("ing") || opener == "gonna"     ? "I'm "
                        : opener == "been" || (adverb && next == "been") ? "I've "
                                                                         : "I ";
  return third_person(subject + rest, name, ts_us);
}

// "Hey Caroline, that roadtrip was insane!" -> "That roadtrip was insane!": a leading clause of
// greetings, fillers and names (at most three words, then a comma) addresses the listener.
std::string without_vocative(const std::string& sentence) {
  const std::size_t comma = sentence.find(',');
  if (comma == std::string::npos || comma + 2 >= sentence.size()) return sentence;
  const std::vector<Word> head = words_of(std::string_view(sentence).substr(0, comma));
  if (head.empty() || head.size() > 3) return sentence;
  for (const Word& w : head) {
    const bool name = std::isupper(static_cast<unsigned char>(sentence[w.begin])) != 0 &&
                      !first_person().contains(w.folded);
    if (!name && !fillers().contains(w.folded) && !evaluative().contains(w.folded)) {
      return sentence;
    }
  }
  const std::size_t start = sentence.find_first_not_of(' ', comma + 1);
  if (start == std::string::npos) return sentence;
  std::string rest = sentence.substr(start);
  rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
  return rest;
}

void append_sentence(std::string& to, const std::string& sentence) {
  if (sentence.empty()) return;
  if (!to.empty()) to.push_back(' ');
  const std::size_t first = to.size();
  to.append(sentence);
  // A clause split off at a dash starts a sentence of its own.
  to[first] = static_cast<char>(std::toupper(static_cast<unsigned char>(to[first])));
  const char last = to.back();
  if (last != '.' && last != '!' && last != ')' && last != '"') to.push_back('.');
}

// Shared photos ("[shares a photo: a photo of a sunset]", LoCoMo's and chat exports' form)
// taken out of a turn's text: the text without them, and "<name> shared a photo: …" for each.
std::pair<std::string, std::string> without_shared(std::string_view text,
                                                   const std::string& subject_name) {
  static const std::regex photo(
      R"(\[(?:shares?|shared) (?:an? )?(photo|image|picture|video)[^:\]]*:\s*([^\]]+)\])",
      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  std::string body;
  std::string shared;
  std::size_t at = 0;
  const std::string whole(text);
  for (auto it = std::sregex_iterator(whole.begin(), whole.end(), photo);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    body.append(whole, at, static_cast<std::size_t>(m.position(0)) - at);
    at = static_cast<std::size_t>(m.position(0) + m.length(0));
    std::string caption = m[2].str();
    while (!caption.empty() && caption.back() == ' ') caption.pop_back();
    append_sentence(shared, subject_name + " shared a " + ascii_lower(m[1].str()) + ": " + caption);
  }
  body.append(whole, at);
  return {std::move(body), std::move(shared)};
}

// "I took your advice" -> "I took Nate's advice": a sentence that opens with the speaker as its
// subject and has the listener only as an object ("with you") or a possessor ("your") tells
// something the speaker did or holds that involves the listener. Any other second person ("you
// should", "you're", "I hope your day went well") is addressed to them: nothing.
std::optional<std::string> listener_named(const std::string& sentence,
                                          const std::vector<Word>& words,
                                          std::string_view listener) {
  static const std::set<std::string, std::less<>> subjects{
      "i", "i'm", "im", "i've", "ive", "i'd", "i'll", "we", "we're", "we've", "we'd", "we'll"};
  // Verbs of opinion and wishing whose object is the listener's affairs, not the speaker's.
  static const std::set<std::string, std::less<>> opinion{
      "hope",  "think",   "bet",        "guess", "wish",  "know",  "believe",
      "agree", "imagine", "understand", "mean",  "feel",  "can't", "cant",
      "could", "would",   "should",     "hear",  "heard", "am",    "was"};
  static const std::set<std::string, std::less<>> object_of{"with", "about",  "like",  "without",
                                                            "than", "around", "beside"};
  if (listener.empty() || words.empty()) return std::nullopt;
  std::size_t at = 0;
  while (at < words.size() && adverbs().contains(words[at].folded)) ++at;
  if (at >= words.size() || !subjects.contains(words[at].folded)) return std::nullopt;
  ++at;
  while (at < words.size() && adverbs().contains(words[at].folded)) ++at;
  if (at < words.size() && opinion.contains(words[at].folded)) return std::nullopt;
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& f = words[i].folded;
    if (!second_person().contains(f)) continue;
    std::string name(listener);
    if (f == "your" || f == "yours") {
      name += "'s";
    } else if (f != "yourself" &&
               (f != "you" || i == 0 ||
                !(preposition(words[i - 1].folded) || object_of.contains(words[i - 1].folded)))) {
      return std::nullopt;
    }
    out.append(sentence, copied, words[i].begin - copied);
    out += name;
    copied = words[i].end;
  }
  out.append(sentence, copied);
  return out;
}

// What a turn's sentences report of its speaker (see the header): the kept sentences in the
// third person, as said, whether one reports and how many content words they hold.
struct TurnReport {
  std::string statement;
  std::string written;  // the kept sentences as said, for the time, attribute and links
  bool reports = false;
  int substance = 0;
  bool dated = false;  // a reporting sentence names a time ("Dyed my hair last week")
};

TurnReport report_of(const std::string& body, const std::string& subject_name,
                     std::string_view listener, std::int64_t ts_us) {
  TurnReport r;
  for (const Sentence& said_as : sentences_of(body)) {
    if (said_as.question || said_as.text.size() > kMaxSentenceBytes) continue;
    Sentence sentence{without_vocative(said_as.text), false};
    std::vector<Word> words = words_of(sentence.text);
    const int stated = words.empty() ? 0 : content_words(words, true);
    if (stated < 2) continue;
    // "Wanted to let you know I read a book about castles" tells the listener a report:
    // the "you" of such a phrase is no address.
    static const std::regex telling(
        R"(\b(?:let|tell|show|told|showed) (?:you|ya)\b)",
        std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    const std::string addressed = std::regex_replace(sentence.text, telling, "");
    const std::vector<Word> addressed_words = words_of(addressed);
    const bool to_listener =
        std::any_of(addressed_words.begin(), addressed_words.end(),
                    [](const Word& w) { return second_person().contains(w.folded); });
    // "Let's keep making memories" proposes to the listener; it reports nothing that happened.
    const bool proposal = std::any_of(words.begin(), words.end(), [](const Word& w) {
      return w.folded == "let's" || w.folded == "lets";
    });
    if (proposal) continue;
    if (to_listener) {
      std::optional<std::string> named = listener_named(sentence.text, words, listener);
      if (!named) continue;
      sentence.text = std::move(*named);
      words = words_of(sentence.text);
    }
    std::optional<std::string> said = self_report(sentence.text, words, subject_name, ts_us);
    // "It brings us closer", "Nature has a way of humbling us": a first person only as a
    // plural object says what holds for people in general, no report ("our team" and a
    // subject-less "Just got back" stay reports).
    auto plural_object = [](const Word& w) { return w.folded == "us" || w.folded == "ourselves"; };
    const bool generic = said && std::any_of(words.begin(), words.end(), plural_object) &&
                         std::none_of(words.begin(), words.end(), [&](const Word& w) {
                           return first_person().contains(w.folded) && !plural_object(w);
                         });
    const bool reports = said.has_value() && !generic;
    r.reports = r.reports || reports;
    r.dated = r.dated || (reports && !find_time_expressions(sentence.text, ts_us).empty());
    // A sentence with no first person is kept beside a report when it is no reaction to
    // the other person ("The transgender stories were so inspiring" after "I went to ...").
    if (!said && (reaction_openers().contains(words.front().folded) ||
                  std::any_of(words.begin(), words.end(), [](const Word& w) {
                    return w.folded == "sounds" || w.folded == "seems";
                  }))) {
      continue;
    }
    append_sentence(r.statement,
                    said ? *said : standard_spelling(absolute_times(sentence.text, ts_us)));
    append_sentence(r.written, sentence.text);
    r.substance += stated;
  }
  return r;
}

}  // namespace

std::vector<ExtractedFact> extract_facts(const FactSource& event) {
  std::vector<ExtractedFact> out;
  // A "Name:" prefix names the speaker of a turn only: a commit's "Problem:" is no speaker.
  const bool turn = conversational(event.kind);
  auto [speaker, text] = turn ? speaker_prefix(event.content)
                              : std::pair<std::string, std::string_view>{{}, event.content};
  if (!turn && !statement_kind(event.kind)) return out;

  std::string subject_name;
  std::string subject_key;
  if (turn) {
    subject_name = speaker.empty() ? std::string(event.agent_id) : speaker;
    if (subject_name.empty()) return out;
    subject_key = canonical_key("person:" + subject_name).value_or("");
  } else if (!event.primary_key.empty()) {
    subject_key = std::string(event.primary_key);
    subject_name = std::string(event.primary_name);
  } else if (!event.agent_id.empty()) {
    subject_key = canonical_key("agent:" + std::string(event.agent_id)).value_or("");
    subject_name = std::string(event.agent_id);
  }
  if (subject_key.empty()) return out;
  const std::string subject_type = subject_key.substr(0, subject_key.find(':'));

  auto fact_for = [&](int index, std::string statement, std::string_view written) {
    ExtractedFact f;
    f.sentence_index = index;
    f.entity_key = subject_key;
    f.entity_name = subject_name;
    f.entity_type = subject_type;
    f.statement = std::move(statement);
    set_time(f, written, event.ts_us);
    link_entities(f, written, event.kind);
    return f;
  };

  if (!turn) {
    int index = 0;
    for (const Sentence& sentence : sentences_of(text)) {
      if (out.size() >= kMaxFactsPerEvent) break;
      const int this_index = index++;
      if (sentence.question || sentence.text.size() > kMaxSentenceBytes) continue;
      const std::vector<Word> words = words_of(sentence.text);
      if (words.empty() || content_words(words) < 2) continue;
      out.push_back(
          fact_for(this_index, absolute_times(sentence.text, event.ts_us), sentence.text));
    }
    return out;
  }

  // A turn gives at most one fact: what it reports of its speaker, in the speaker's order;
  // shared photos are told after it.
  auto [body, shared] = without_shared(text, subject_name);
  auto [statement, written, reports, substance, dated] =
      report_of(body, subject_name, event.listener_name, event.ts_us);
  // A single-valued property ("I work as a nurse") and a dated happening ("Dyed my hair last
  // week") are worth keeping however briefly said.
  const std::string attribute = recognised_attribute(apostrophes_folded(written));
  if (!reports || (substance < kMinTurnContentWords && attribute.empty() && !dated)) return out;
  if (!shared.empty()) append_sentence(statement, shared);
  ExtractedFact f = fact_for(0, std::move(statement), written + " " + shared);
  f.attribute = attribute;
  out.push_back(std::move(f));
  return out;
}

}  // namespace reflectd::text
