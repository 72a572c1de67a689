#include "recall/porter_stemmer.hpp"

#include <libstemmer.h>

#include <stdexcept>

namespace reflectd::recall {

PorterStemmer::PorterStemmer() : stemmer_(sb_stemmer_new("porter", "UTF_8")) {
  if (stemmer_ == nullptr) throw std::runtime_error("libstemmer: no \"porter\" stemmer");
}

PorterStemmer::~PorterStemmer() { sb_stemmer_delete(stemmer_); }

std::string PorterStemmer::stem(const std::string& word) {
  const sb_symbol* out = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                         static_cast<int>(word.size()));
  if (out == nullptr) return word;  // out of memory inside Snowball: the word itself
  return {reinterpret_cast<const char*>(out),
          static_cast<std::size_t>(sb_stemmer_length(stemmer_))};
}

}  // namespace reflectd::recall
