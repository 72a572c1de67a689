#include "text/porter_stemmer.hpp"

#include <libstemmer.h>

#include <stdexcept>

namespace reflectd::text {
namespace {

constexpr std::size_t kCacheLimit = 200'000;

}  // namespace

PorterStemmer::PorterStemmer() : stemmer_(sb_stemmer_new("porter", "UTF_8")) {
  if (stemmer_ == nullptr) throw std::runtime_error("libstemmer: no \"porter\" stemmer");
}

PorterStemmer::~PorterStemmer() { sb_stemmer_delete(stemmer_); }

const std::string& PorterStemmer::stem(const std::string& word) {
  if (const auto it = cache_.find(word); it != cache_.end()) return it->second;
  if (cache_.size() >= kCacheLimit) cache_.clear();
  const sb_symbol* out = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
  // Snowball returns null only when it runs out of memory: the word stands for itself.
  std::string stemmed = out == nullptr
                            ? word
                            : std::string(reinterpret_cast<const char*>(out),
                                          static_cast<std::size_t>(sb_stemmer_length(stemmer_)));
  return cache_.emplace(word, std::move(stemmed)).first->second;
}

}  // namespace reflectd::text
