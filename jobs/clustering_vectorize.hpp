#pragma once
// The cluster job's lexical vector of an event (jobs/clustering.hpp, step 2): its kept tokens
// (Tokenizer::scan of clustering_text.hpp vectorized_text(), done beside the job's thread)
// stemmed, counted once in the namespace's document frequencies, and weighted
//   w(t) = (1 + ln tf(t)) * (ln((1 + N) / (1 + df(t))) + 1)
// (sublinear TF and smoothed IDF as in scikit-learn's TfidfVectorizer: sublinear_tf=True,
// smooth_idf=True), N and df counted over the namespace's events up to and including this
// one; the `vector_terms` heaviest terms (ties: the smaller term) are kept and L2-normalised.
//
// Thread-safety: none; used by the job's thread alone (it shares the run's stem and term
// caches). Errors: SQLite::Exception (a term's first read); std::runtime_error from the
// Tokenizer's constructor.

#include <absl/container/node_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "jobs/clustering_index.hpp"
#include "jobs/clustering_terms.hpp"
#include "text/tokenizer.hpp"

namespace reflectd::jobs::clustering {

class Vectorizer {
 public:
  /// `terms` and `index` must outlive the vectorizer; vectors keep `vector_terms` terms.
  Vectorizer(TermSpace& terms, TermIndex& index, std::int64_t vector_terms);

  /// The vector of one event of namespace `ns` from its `tokens` (each ended by '\0'), sorted
  /// by term text, unit length; empty when no token has a stem (the event then counts in no
  /// frequency). Otherwise counts the event in documents() and its terms' df.
  IdVector vectorize(const std::string& ns, std::string_view tokens);

  /// N: the events of the namespace counted so far (job_state "documents").
  std::int64_t documents() const { return documents_; }
  void set_documents(std::int64_t n) { documents_ = n; }

  /// Tokens whose stem's id is cached.
  std::size_t cached_tokens() const { return token_ids_.size(); }
  /// Drops the token cache (required when the term space is cleared: it holds its ids).
  void clear_tokens() { token_ids_.clear(); }

 private:
  static constexpr TermId kNoTerm = std::numeric_limits<TermId>::max();

  TermSpace& terms_;
  TermIndex& index_;
  std::size_t vector_terms_;
  text::Tokenizer tokenizer_;
  std::int64_t documents_ = 0;
  std::uint64_t mark_ = 0;  // the counting pass of the event being vectorized (Slot::mark)
  // Token (lower-cased surface) -> its stem's id, kNoTerm when the stem is empty. Abseil's
  // node_hash_map (as the entity caches, jobs/entities.hpp): one probe of a flat control
  // array per lookup, and stable keys (a term's first surface points at one).
  absl::node_hash_map<std::string, TermId> token_ids_;
  std::string token_;  // vectorize()'s token missing from token_ids_, as a key
};

}  // namespace reflectd::jobs::clustering
