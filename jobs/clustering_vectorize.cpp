#include "jobs/clustering_vectorize.hpp"

#include <absl/strings/string_view.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace reflectd::jobs::clustering {

Vectorizer::Vectorizer(TermSpace& terms, TermIndex& index, std::int64_t vector_terms)
    : terms_(terms), index_(index), vector_terms_(static_cast<std::size_t>(vector_terms)) {}

IdVector Vectorizer::vectorize(const std::string& ns, std::string_view tokens) {
  // Distinct stems with their term frequency and first surface form (the token, a key of
  // token_ids_: node-based, so the address is stable until clear_tokens()).
  struct Count {
    TermId id;
    int tf;
    const std::string* surface;
  };
  std::vector<Count> counts;
  ++mark_;
  for (std::size_t start = 0; start < tokens.size();) {
    const std::size_t end = tokens.find('\0', start);
    const absl::string_view token(tokens.data() + start, end - start);
    start = end + 1;
    // One lookup per token: token -> interned stem (Tokenizer::terms() would stem, then
    // intern() would hash the stem again).
    auto it = token_ids_.find(token);
    if (it == token_ids_.end()) {
      token_.assign(token.data(), token.size());
      const std::string& stemmed = tokenizer_.stem(token_);
      it = token_ids_.emplace(token_, stemmed.empty() ? kNoTerm : terms_.intern(stemmed)).first;
    }
    const TermId id = it->second;
    if (id == kNoTerm) continue;
    Slot& s = terms_.slot(id);
    if (s.mark != mark_) {
      s.mark = mark_;
      s.pos = static_cast<std::uint32_t>(counts.size());
      counts.push_back({id, 0, &it->first});
    }
    ++counts[s.pos].tf;
  }
  if (counts.empty()) return {};
  std::sort(counts.begin(), counts.end(),
            [this](const Count& a, const Count& b) { return terms_.text_less(a.id, b.id); });
  ++documents_;
  IdVector v;
  v.reserve(counts.size());
  for (const Count& c : counts) {
    const Term& t = index_.count(ns, c.id, *c.surface);
    const double tf = 1.0 + std::log(static_cast<double>(c.tf));
    const double idf =
        std::log((1.0 + static_cast<double>(documents_)) / (1.0 + static_cast<double>(t.df))) + 1.0;
    v.emplace_back(c.id, tf * idf);
  }
  v = terms_.heaviest(std::move(v), vector_terms_);
  const double n = norm(v);
  for (auto& [t, w] : v) w /= n;
  return v;
}

}  // namespace reflectd::jobs::clustering
