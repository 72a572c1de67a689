#include "recall/query.hpp"

#include <algorithm>

#include "text/tokenizer.hpp"

namespace reflectd::recall {
namespace {

bool word_byte(unsigned char c) { return std::isalnum(c) != 0 || c >= 0x80; }

// Words with, for each, whether the previous kept word stood right before it.
struct Word {
  std::string text;
  std::size_t index;  // position among all words (kept or not)
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
    std::string word;
    while (i < text.size() && word_byte(static_cast<unsigned char>(text[i]))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
      ++i;
    }
    out.push_back({std::move(word), index++});
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

}  // namespace

std::vector<std::string> query_words(std::string_view text) {
  std::vector<std::string> out;
  for (Word& w : split(text)) out.push_back(std::move(w.text));
  return out;
}

ParsedQuery parse_query(std::string_view text, std::int64_t now_us) {
  ParsedQuery q;
  const std::vector<Word> words = split(text);
  const Word* previous = nullptr;
  for (const Word& w : words) {
    const bool kept = w.text.size() >= 2 && !text::Tokenizer::is_stop_word(w.text);
    if (!kept) continue;
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
      contains_phrase(words, {"which", "month"}) || contains_phrase(words, {"how", "long", "ago"});
  q.time = text::find_time_expressions(text, now_us);
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
