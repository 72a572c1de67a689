#pragma once
// The cluster job's terms (jobs/clustering.hpp, steps 2-4): the run's interned term ids, the
// per-namespace caches kept beside each term, and the arithmetic on vectors of term ids.
//
// Terms are interned to dense ids for the length of a run so that hashing, equality and the
// cosine's lookups are integer operations. Every *ordering* still compares the terms' text,
// so vectors, tie-breaks and the order in which floating-point sums are accumulated are
// exactly those of the text-keyed TermVector (jobs/clustering.hpp cosine()).
//
// Thread-safety: none; a TermSpace is used by the job's thread alone. Errors: none but
// std::bad_alloc.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reflectd::jobs {

/// A sparse vector, sorted by term.
using TermVector = std::vector<std::pair<std::string, double>>;

/// Cosine similarity of two term-sorted vectors: dot(a, b) / (|a| |b|), the products of
/// their common terms added in term order; 0 when either is zero. Pure, thread-safe.
double cosine(const TermVector& a, const TermVector& b);

}  // namespace reflectd::jobs

namespace reflectd::jobs::clustering {

using TermId = std::uint32_t;
/// A sparse vector of interned terms, sorted by the terms' text (not by id).
using IdVector = std::vector<std::pair<TermId, double>>;

/// What the namespace's cluster_terms row of a term holds, as the run knows it.
struct Term {
  std::int64_t df = 0;  ///< events of the namespace whose vector counted the term
  std::string surface;  ///< the first lower-cased token that stemmed to it
  bool dirty = false;   ///< changed since the last flush
  bool stored = false;  ///< its cluster_terms row exists: read from it or written by a flush
};

/// The most recently touched clusters of one term: (touched_seq, cluster) in ascending
/// touched_seq, each cluster once, at most candidates_per_term entries. A flat vector: it
/// holds a few dozen entries, so scanning beats a tree.
using Window = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// Everything the run knows about one interned term (term and window: current namespace only).
struct Slot {
  const std::string* text = nullptr;  ///< the key in the ids map (node-based: a stable address)
  bool has_term = false;
  Term term;
  bool has_window = false;
  Window window;
  std::uint64_t mark = 0;  ///< the counting pass that `pos` belongs to (Vectorizer)
  std::uint32_t pos = 0;
};

/// |v|, the Euclidean norm.
double norm(const IdVector& v);

/// The run's interned terms with their slots, and the vector operations that need the
/// terms' text.
class TermSpace {
 public:
  /// The id of `text`, giving it the next id (from 0, dense) on its first call.
  TermId intern(std::string_view text) {
    if (const auto it = ids_.find(text); it != ids_.end()) return it->second;
    const auto id = static_cast<TermId>(slots_.size());
    const auto [it, inserted] = ids_.emplace(std::string(text), id);
    Slot slot;
    slot.text = &it->first;
    slots_.push_back(std::move(slot));
    loaded_.push_back(0.0);
    return id;
  }

  /// Interned terms.
  std::size_t size() const { return slots_.size(); }
  /// The text of an id intern() returned (undefined for any other).
  const std::string& text(TermId id) const { return *slots_[id].text; }
  Slot& slot(TermId id) { return slots_[id]; }
  /// Whether a's text sorts before b's.
  bool text_less(TermId a, TermId b) const { return a != b && text(a) < text(b); }

  /// Sorts by text (the order of a std::map<std::string, ...> or of sorted TermVector pairs;
  /// the terms of one vector are distinct).
  void sort_by_text(IdVector& v) const;

  /// Heaviest first; ties: smaller term text.
  auto heavier() const {
    return [this](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : text_less(a.first, b.first);
    };
  }

  /// The `n` heaviest entries (ties: smaller term), re-sorted by term. heavier() is a total
  /// order on the distinct terms of one vector, so selecting the first n (nth_element) picks
  /// the same set a full sort would.
  IdVector heaviest(IdVector v, std::size_t n) const;

  /// The `n` heaviest terms, heaviest first (the first n of a full sort: heavier() is total).
  std::vector<TermId> heaviest_terms(const IdVector& v, std::size_t n) const;

  /// load(a) then dot_loaded(b) == dot(a, b) of the text-keyed vectors bit for bit: b is
  /// walked in text order, so the products of the common terms are added in the same order as
  /// the sorted merge adds them. `a`'s weights go into a dense array indexed by term id (8
  /// bytes a term, zero elsewhere), so that dot_loaded() has no probe loop and no branch: a
  /// term of b that a lacks adds 0.0 * w == +0.0, and every weight is positive (TF-IDF terms
  /// and their sums), so the partial sums are >= +0.0 and adding +0.0 leaves them unchanged.
  /// unload(a) restores the zeros. One vector is loaded at a time.
  void load(const IdVector& a) {
    for (const auto& [id, w] : a) loaded_[id] = w;
  }
  void unload(const IdVector& a) {
    for (const auto& [id, w] : a) loaded_[id] = 0.0;
  }
  double dot_loaded(const IdVector& b) const {
    double sum = 0;
    for (const auto& [id, w] : b) sum += loaded_[id] * w;
    return sum;
  }

  /// dot(a, b) / (|a| |b|), 0 when either is zero; nothing may be loaded.
  double cosine(const IdVector& a, const IdVector& b);

  /// a + b (terms of both: the sum of their weights), sorted by text.
  IdVector sum(const IdVector& a, const IdVector& b) const;

  /// Compact exact encoding of the stored vectors (clusters.centroid, medoid_vector):
  /// [u16 length][term bytes][f64 weight, native byte order] per entry, in `v`'s order; a term
  /// over 65,535 bytes is cut (the tokenizer keeps tokens of at most 64 bytes).
  std::string encode(const IdVector& v) const;
  /// The entries of an encode()d blob of `size` bytes, interning their terms; a truncated last
  /// entry is dropped.
  IdVector decode(const void* data, int size);

  /// Forgets every slot's term and window (they are of one namespace; the ids stay).
  void reset_namespace_caches();
  /// Forgets every interned term: the ids handed out before mean nothing after.
  void clear();

 private:
  // Heterogeneous lookup (find by string_view without building a std::string).
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  // A std::unordered_map: Debian's Abseil hashes absl::string_view, not the std::string_view
  // that intern() looks up.
  std::unordered_map<std::string, TermId, StringHash, std::equal_to<>> ids_;
  std::vector<Slot> slots_;
  std::vector<double> loaded_;  // per term id: its weight in the loaded vector, else 0.0
};

}  // namespace reflectd::jobs::clustering
