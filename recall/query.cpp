#include "recall/query.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "text/tokenizer.hpp"

namespace reflectd::recall {
namespace {

bool word_byte(unsigned char c) { return std::isalnum(c) != 0 || c >= 0x80; }

// Words with, for each, whether the previous kept word stood right before it.
struct Word {
  std::string text;
  std::size_t index;  // position among all words (kept or not)
  std::size_t begin;  // byte offset in the text
};

std::vector<Word> split(std::string_view text) {
  std::vector<Word> out;
  std::size_t i = 0;
  std::size_t index = 0;
  while (i < text.size()) {
    if (!word_byte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    std::string word;
    while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
      ++i;
    }
    out.push_back({std::move(word), index++, begin});
  }
  return out;
}

bool contains_phrase(const std::vector<Word>& words, std::initializer_list<std::string_view> seq) {
  for (std::size_t i = 0; i + seq.size() <= words.size(); ++i) {
    std::size_t k = 0;
    for (std::string_view w : seq) {
      if (words[i + k].text != w) break;
      ++k;
    }
    if (k == seq.size()) return true;
  }
  return false;
}

// The two words before byte `at`, lower-cased ("as of" before "December 2023").
std::pair<std::string, std::string> words_before(std::string_view text, std::size_t at) {
  const std::vector<Word> words = split(text.substr(0, at));
  const std::size_t n = words.size();
  return {n >= 2 ? words[n - 2].text : std::string(), n >= 1 ? words[n - 1].text : std::string()};
}

// "as of December 2023", "by July 10, 2022", "until …", "up to …": a question about the state
// at that time, so everything up to its end is in range.
void open_start_bounds(std::string_view text, std::vector<text::TimeMention>& time) {
  for (text::TimeMention& m : time) {
    const auto [second_last, last] = words_before(text, m.begin);
    const bool bound = (second_last == "as" && last == "of") ||
                       (second_last == "up" && last == "to") || last == "by" || last == "until" ||
                       last == "till";
    if (!bound) continue;
    m.range.from_us = 0;
    m.range.label = "up to " + m.range.label;
  }
}

bool kept_word(const std::string& w) { return w.size() >= 2 && !text::Tokenizer::is_stop_word(w); }

// The kept words of words[from, to), unique, or nothing when one of them lies in a time
// expression (a side that is a date is a time bound, not an event).
std::optional<std::vector<std::string>> side_terms(const std::vector<Word>& words, std::size_t from,
                                                   std::size_t to,
                                                   const std::vector<text::TimeMention>& time) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < to; ++i) {
    const Word& w = words[i];
    for (const text::TimeMention& m : time) {
      if (w.begin >= m.begin && w.begin < m.end) return std::nullopt;
    }
    // The words that ask for the duration are no event's.
    static constexpr std::array<std::string_view, 12> kDurationWords{
        "long",  "many",  "much",   "day",  "days",  "week",
        "weeks", "month", "months", "year", "years", "passed"};
    if (std::find(kDurationWords.begin(), kDurationWords.end(), w.text) != kDurationWords.end()) {
      continue;
    }
    if (kept_word(w.text) && std::find(out.begin(), out.end(), w.text) == out.end()) {
      out.push_back(w.text);
    }
  }
  return out;
}

// The two events a question asks the span between: "between A and B", or a question of
// duration ("how long", "how many weeks") with "before/after/since/until B". Each side keeps
// only the words the other does not hold.
std::vector<std::vector<std::string>> span_sides(const std::vector<Word>& words,
                                                 const std::vector<text::TimeMention>& time) {
  std::size_t split_at = 0;
  std::size_t a_from = 0;
  for (std::size_t i = 0; i < words.size() && split_at == 0; ++i) {
    if (words[i].text != "between") continue;
    for (std::size_t k = i + 2; k + 1 < words.size(); ++k) {
      if (words[k].text == "and") {
        a_from = i + 1;
        split_at = k;
        break;
      }
    }
  }
  const bool duration = contains_phrase(words, {"how", "long"}) ||
                        contains_phrase(words, {"how", "many", "days"}) ||
                        contains_phrase(words, {"how", "many", "weeks"}) ||
                        contains_phrase(words, {"how", "many", "months"}) ||
                        contains_phrase(words, {"how", "many", "years"});
  if (split_at == 0 && duration) {
    for (std::size_t i = 2; i + 1 < words.size(); ++i) {
      const std::string& w = words[i].text;
      if (w == "before" || w == "after" || w == "since" || w == "until") {
        split_at = i;
        break;
      }
    }
  }
  if (split_at == 0) return {};
  auto a = side_terms(words, a_from, split_at, time);
  auto b = side_terms(words, split_at + 1, words.size(), time);
  if (!a || !b) return {};
  std::vector<std::string> only_a;
  std::vector<std::string> only_b;
  for (const std::string& w : *a) {
    if (std::find(b->begin(), b->end(), w) == b->end()) only_a.push_back(w);
  }
  for (const std::string& w : *b) {
    if (std::find(a->begin(), a->end(), w) == a->end()) only_b.push_back(w);
  }
  if (only_a.empty() || only_b.empty()) return {};
  return {std::move(only_a), std::move(only_b)};
}

}  // namespace

std::vector<std::string> query_words(std::string_view text) {
  std::vector<std::string> out;
  for (Word& w : split(text)) out.push_back(std::move(w.text));
  return out;
}

ParsedQuery parse_query(std::string_view text, std::int64_t now_us) {
  ParsedQuery q;
  const std::vector<Word> words = split(text);
  q.time = text::find_time_expressions(text, now_us);
  const Word* previous = nullptr;
  for (const Word& w : words) {
    if (!kept_word(w.text)) continue;
    if (previous != nullptr && previous->index + 1 == w.index && previous->text != w.text) {
      const std::string phrase = previous->text + " " + w.text;
      if (std::find(q.phrases.begin(), q.phrases.end(), phrase) == q.phrases.end()) {
        q.phrases.push_back(phrase);
      }
    }
    previous = &w;
    if (std::find(q.terms.begin(), q.terms.end(), w.text) == q.terms.end()) {
      q.terms.push_back(w.text);
    }
  }
  q.asks_when =
      contains_phrase(words, {"when"}) || contains_phrase(words, {"what", "date"}) ||
      contains_phrase(words, {"what", "year"}) || contains_phrase(words, {"what", "month"}) ||
      contains_phrase(words, {"what", "day"}) || contains_phrase(words, {"which", "year"}) ||
      contains_phrase(words, {"which", "month"}) || contains_phrase(words, {"which", "day"}) ||
      contains_phrase(words, {"how", "long"});
  for (const char* unit : {"days", "weeks", "months", "years"}) {
    q.asks_when = q.asks_when || contains_phrase(words, {"how", "many", unit});
  }
  open_start_bounds(text, q.time);
  q.sides = span_sides(words, q.time);
  return q;
}

std::string fts_match(const std::vector<std::string>& terms,
                      const std::vector<std::string>& phrases) {
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += " OR ";
    out += '"';
    out += s;  // letters, digits, spaces and non-ASCII bytes only: never a '"'
    out += '"';
  };
  for (const std::string& t : terms) add(t);
  for (const std::string& p : phrases) add(p);
  return out;
}

std::string fts_scoped_match(const std::string& match, const std::string& ns) {
  std::string out = "content : (" + match + ")";
  if (ns.empty()) return out;
  // Namespaces are [A-Za-z0-9._:-] (the wire format): the tokenizer splits them at the
  // punctuation, which becomes spaces inside one quoted phrase.
  std::string phrase;
  for (const char c : ns) {
    phrase.push_back(std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : ' ');
  }
  if (phrase.find_first_not_of(' ') == std::string::npos) return out;
  return "namespace : \"" + phrase + "\" AND " + out;
}

}  // namespace reflectd::recall
