#include "text/chat_spelling.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace reflectd::text {
namespace {

// Informal spellings of LoCoMo's and chat exports' turns with one standard reading; a word
// with two ("gotta": "got to" or "have to") is left as written.
constexpr std::array<std::pair<std::string_view, std::string_view>, 17> kSpelled{{
    {"fam", "family"},
    {"biz", "business"},
    {"edu", "education"},
    {"pic", "picture"},
    {"pics", "pictures"},
    {"bday", "birthday"},
    {"fave", "favorite"},
    {"fav", "favorite"},
    {"faves", "favorites"},
    {"convo", "conversation"},
    {"gonna", "going to"},
    {"wanna", "want to"},
    {"kinda", "kind of"},
    {"sorta", "sort of"},
    {"cuz", "because"},
    {"'cause", "because"},
    {"'em", "them"},
}};

constexpr std::string_view kCurlyApostrophe = "\xE2\x80\x99";

bool word_byte(std::string_view s, std::size_t i) {
  const auto u = static_cast<unsigned char>(s[i]);
  return std::isalpha(u) != 0 || s[i] == '\'' || s.substr(i, 3) == kCurlyApostrophe;
}

// The standard form of `word`, or empty when it has none.
std::string standard_form(std::string_view word) {
  std::string folded;  // lower case, ’ -> '
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (word.substr(i, 3) == kCurlyApostrophe) {
      folded.push_back('\'');
      i += 2;
      continue;
    }
    folded.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(word[i]))));
  }
  for (const auto& [chat, standard] : kSpelled) {
    if (folded == chat) return std::string(standard);
  }
  // A dropped g ("livin'", "startin'"): the apostrophe ends the word.
  if (folded.size() > 4 && folded.back() == '\'' && folded.front() != '\'' &&
      folded.ends_with("in'")) {
    const std::size_t mark = word.back() == '\'' ? 1 : kCurlyApostrophe.size();
    return std::string(word.substr(0, word.size() - mark)) + "g";
  }
  return {};
}

}  // namespace

std::string standard_spelling(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!word_byte(text, i)) {
      out.push_back(text[i++]);
      continue;
    }
    const std::size_t b = i;
    while (i < text.size() && word_byte(text, i))
      i += text.substr(i, 3) == kCurlyApostrophe ? 3 : 1;
    const std::string_view word = text.substr(b, i - b);
    std::string written = standard_form(word);
    if (written.empty()) {
      out.append(word);
      continue;
    }
    const std::size_t first = word.find_first_not_of("'\xE2\x80\x99");
    if (first != std::string_view::npos &&
        std::isupper(static_cast<unsigned char>(word[first])) != 0) {
      written[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(written[0])));
    }
    out.append(written);
  }
  return out;
}

}  // namespace reflectd::text
