#include "text/tokenizer.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <unordered_set>

namespace reflectd::text {
namespace {

// English stop words (the Snowball English list) plus commit-message boilerplate.
const std::unordered_set<std::string_view>& cluster_stop_words() {
  static const std::unordered_set<std::string_view> words{
      "i",        "me",    "my",      "myself",   "we",         "our",     "ours",    "ourselves",
      "you",      "your",  "yours",   "yourself", "yourselves", "he",      "him",     "his",
      "himself",  "she",   "her",     "hers",     "herself",    "it",      "its",     "itself",
      "they",     "them",  "their",   "theirs",   "themselves", "what",    "which",   "who",
      "whom",     "this",  "that",    "these",    "those",      "am",      "is",      "are",
      "was",      "were",  "be",      "been",     "being",      "have",    "has",     "had",
      "having",   "do",    "does",    "did",      "doing",      "would",   "should",  "could",
      "ought",    "a",     "an",      "the",      "and",        "but",     "if",      "or",
      "because",  "as",    "until",   "while",    "of",         "at",      "by",      "for",
      "with",     "about", "against", "between",  "into",       "through", "during",  "before",
      "after",    "above", "below",   "to",       "from",       "up",      "down",    "in",
      "out",      "on",    "off",     "over",     "under",      "again",   "further", "then",
      "once",     "here",  "there",   "when",     "where",      "why",     "how",     "all",
      "any",      "both",  "each",    "few",      "more",       "most",    "other",   "some",
      "such",     "no",    "nor",     "not",      "only",       "own",     "same",    "so",
      "than",     "too",   "very",    "can",      "will",       "just",    "don",     "now",
      "also",     "s",     "t",       "d",        "ll",         "m",       "re",      "ve",
      "y",        "isn",   "aren",    "wasn",     "weren",      "hasn",    "haven",   "hadn",
      "doesn",    "didn",  "won",     "wouldn",   "shan",       "shouldn", "cannot",  "couldn",
      "mustn",    "let",   "may",     "might",    "must",       "shall",   "signed",  "co",
      "authored", "com",   "http",    "https",    "www",        "merge",   "pull",    "request",
      "branch",   "git",   "via",     "e",        "g",          "ie",      "eg",      "etc"};
  return words;
}

bool token_code_point(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND: return true;
    default: return false;
  }
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  std::array<utf8proc_uint8_t, 4> buffer{};
  const auto n = utf8proc_encode_char(cp, buffer.data());
  out.append(reinterpret_cast<const char*>(buffer.data()), static_cast<std::size_t>(n));
}

}  // namespace

Tokenizer::Tokenizer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
  if (stemmer_ == nullptr)
    throw std::runtime_error("libstemmer: cannot create the English stemmer");
}

Tokenizer::~Tokenizer() { sb_stemmer_delete(stemmer_); }

const std::string& Tokenizer::stem(const std::string& token) {
  constexpr std::size_t kStemCacheLimit = 200'000;
  if (const auto it = stems_.find(token); it != stems_.end()) return it->second;
  if (stems_.size() >= kStemCacheLimit) stems_.clear();
  const sb_symbol* stem = sb_stemmer_stem(
      stemmer_, reinterpret_cast<const sb_symbol*>(token.data()), static_cast<int>(token.size()));
  std::string stemmed = stem != nullptr
                            ? std::string(reinterpret_cast<const char*>(stem),
                                          static_cast<std::size_t>(sb_stemmer_length(stemmer_)))
                            : token;
  return stems_.emplace(token, std::move(stemmed)).first->second;
}

std::vector<std::pair<std::string, std::string>> Tokenizer::terms(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  scan(text, [&](const std::string& token) {
    const std::string& stemmed = stem(token);
    if (!stemmed.empty()) out.emplace_back(stemmed, token);
  });
  return out;
}

void Tokenizer::scan(std::string_view text, const std::function<void(const std::string&)>& emit) {
  std::string token;
  std::size_t code_points = 0;
  bool all_digits = true;
  bool all_hex = true;
  bool has_digit = false;
  auto finish = [&] {
    if (code_points >= 2 && !all_digits && !(all_hex && has_digit && code_points >= 7) &&
        token.size() <= 64 && !cluster_stop_words().contains(token)) {
      emit(token);
    }
    token.clear();
    code_points = 0;
    all_digits = true;
    all_hex = true;
    has_digit = false;
  };
  auto add = [&](utf8proc_int32_t lower) {
    ++code_points;
    const bool digit = lower >= '0' && lower <= '9';
    all_digits = all_digits && digit;
    has_digit = has_digit || digit;
    all_hex = all_hex && (digit || (lower >= 'a' && lower <= 'f'));
  };
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t pos = 0;
  while (pos < size) {
    // ASCII without utf8proc: its letters (Lu, Ll) and digits (Nd) are the only ASCII token
    // code points, and lower-casing them is the ASCII mapping.
    if (const utf8proc_uint8_t b = bytes[pos]; b < 0x80) {
      ++pos;
      if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9')) {
        token += static_cast<char>(b);
        add(b);
      } else if (b >= 'A' && b <= 'Z') {
        const auto lower = static_cast<char>(b - 'A' + 'a');
        token += lower;
        add(lower);
      } else {
        finish();
      }
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, size - pos, &cp);
    if (n <= 0) {
      finish();
      ++pos;
      continue;
    }
    pos += n;
    if (token_code_point(cp)) {
      const utf8proc_int32_t lower = utf8proc_tolower(cp);
      append_utf8(token, lower);
      add(lower);
    } else {
      finish();
    }
  }
  finish();
}

bool Tokenizer::is_stop_word(std::string_view token) {
  return cluster_stop_words().contains(token);
}

}  // namespace reflectd::text
