#pragma once
// The cluster job's tokenizer (jobs/clustering.hpp, step 2), also used by the readers and
// jobs that compare words the way the clusters do (recall, facts, follow-ups, medallions):
// Unicode letters and digits (utf8proc categories), lower-cased, English stop words dropped,
// Snowball English stems (libstemmer).
//
// Thread-safety: a Tokenizer object is not thread-safe (the Snowball stemmer has state, and
// stem() caches); its static members are.

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct sb_stemmer;

namespace reflectd::text {

/// Unicode-aware tokenizer with English stop words and the Snowball English stemmer
/// (libstemmer). Throws std::runtime_error if the stemmer cannot be created.
class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  /// (stem, lower-cased surface) per kept token, in text order. Tokens are maximal runs of
  /// Unicode letters, marks and digits ('_' splits identifiers); kept when at least 2 code
  /// points long, not all digits, not hex-like (>= 7 hex digits), not a stop word.
  std::vector<std::pair<std::string, std::string>> terms(std::string_view text);

  /// The kept tokens of `text` (lower-cased surfaces, the rules of terms()), in text order,
  /// without stemming them: `emit` is called once per token (the reference is valid during
  /// the call only). Uses no tokenizer state: safe from any thread.
  static void scan(std::string_view text, const std::function<void(const std::string&)>& emit);

  /// True when the lower-cased `token` is one of the stop words terms() drops (the Snowball
  /// English list plus commit-message boilerplate such as "signed", "merge"). Thread-safe.
  static bool is_stop_word(std::string_view token);

  /// Snowball English stem of a lower-cased token (may be empty); cached. The reference is
  /// valid until the next call.
  const std::string& stem(const std::string& token);

 private:
  sb_stemmer* stemmer_;
  // token -> stem (Snowball is a pure function of the token; the same words recur in every
  // event). Dropped when it exceeds kStemCacheLimit entries.
  std::unordered_map<std::string, std::string> stems_;
};

}  // namespace reflectd::text
