#pragma once
// The cluster job's per-namespace term statistics and inverted index (jobs/clustering.hpp,
// steps 2 and 3): each term's document frequency and first surface form (cluster_terms), and
// each term's posting window, the clusters most recently touched under it (cluster_postings).
// Both are cached in the terms' slots (jobs/clustering_terms.hpp) and written back, in key
// order, by flush(): write-through at each chunk commit, so dropping the caches after a flush
// changes nothing but speed.
//
// Thread-safety: none; used by the job's thread alone. Errors: SQLite::Exception from the
// statements; std::logic_error when a term's row was not written (a bug).

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "jobs/clustering_terms.hpp"

namespace reflectd::jobs::clustering {

class TermIndex {
 public:
  /// `terms` must outlive the index; a window keeps at most `candidates_per_term` clusters.
  TermIndex(SQLite::Database& db, TermSpace& terms, std::int64_t candidates_per_term);

  /// Term `id` of namespace `ns` as stored (df 0 and no surface when it has no row yet), or as
  /// changed since. The reference is valid until the term space is cleared.
  Term& term(const std::string& ns, TermId id) {
    Slot& s = terms_.slot(id);
    return s.has_term ? s.term : read_term(ns, id);
  }

  /// Counts term `id` once more in the document frequency of `ns` (an event's vector holds it),
  /// taking `surface` as its surface form when it is the term's first. Returns the term.
  Term& count(const std::string& ns, TermId id, const std::string& surface);

  /// The posting window of term `id` in `ns` (Window: ascending touched_seq).
  Window& window(const std::string& ns, TermId id) {
    Slot& s = terms_.slot(id);
    return s.has_window ? s.window : read_window(ns, id);
  }

  /// Records that event `seq` touched `cluster` under term `id`: the cluster moves to the end
  /// of the term's window (the oldest entries beyond candidates_per_term drop out), and its
  /// posting's touched_seq becomes `seq` at the next flush().
  void touch(const std::string& ns, TermId id, std::int64_t cluster, std::int64_t seq);

  /// Writes the changed terms (by term text) and postings (by term text, then cluster) of `ns`.
  void flush(const std::string& ns);

 private:
  Term& read_term(const std::string& ns, TermId id);
  Window& read_window(const std::string& ns, TermId id);

  struct PairHash {
    std::size_t operator()(const std::pair<TermId, std::int64_t>& k) const noexcept {
      return std::hash<std::uint64_t>{}((static_cast<std::uint64_t>(k.first) << 40) ^
                                        static_cast<std::uint64_t>(k.second));
    }
  };

  TermSpace& terms_;
  std::int64_t candidates_per_term_;
  SQLite::Statement find_term_;
  SQLite::Statement insert_term_;
  SQLite::Statement update_term_;
  SQLite::Statement read_window_;
  SQLite::Statement upsert_posting_;
  std::vector<TermId> dirty_terms_;
  // (term, cluster) -> the seq that touched it last.
  std::unordered_map<std::pair<TermId, std::int64_t>, std::int64_t, PairHash> dirty_postings_;
};

}  // namespace reflectd::jobs::clustering
