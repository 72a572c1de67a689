#pragma once
// The original Porter stemmer (Porter 1980) of Snowball's libstemmer ("porter"): the algorithm
// of FTS5's porter tokenizer, so recall can name the index's term for a query word (its
// document frequency in events_fts_vocab) without asking FTS5 to tokenize.
//
// Thread-safety: none (Snowball keeps state per stemmer); one per thread.
// Errors: the constructor throws std::runtime_error when libstemmer has no "porter".

#include <string>
#include <unordered_map>

struct sb_stemmer;

namespace reflectd::text {

class PorterStemmer {
 public:
  PorterStemmer();
  ~PorterStemmer();
  PorterStemmer(const PorterStemmer&) = delete;
  PorterStemmer& operator=(const PorterStemmer&) = delete;

  /// The stem of a lower-case ASCII word ("fixed" -> "fix"); other text as it is. Cached:
  /// the reference is valid until the next call.
  const std::string& stem(const std::string& word);

 private:
  sb_stemmer* stemmer_;
  // word -> stem; cleared past kCacheLimit entries (the same words recur in every query).
  std::unordered_map<std::string, std::string> cache_;
};

}  // namespace reflectd::text
