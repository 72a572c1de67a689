#include "jobs/clustering_index.hpp"
#include "store/bound_exec.hpp"

#include <algorithm>
#include <stdexcept>

namespace reflectd::jobs::clustering {

TermIndex::TermIndex(SQLite::Database& db, TermSpace& terms, std::int64_t candidates_per_term)
    : terms_(terms),
      candidates_per_term_(candidates_per_term),
      find_term_(db, "SELECT df, surface FROM cluster_terms WHERE namespace = ?1 AND term = ?2"),
      insert_term_(
          db, "INSERT INTO cluster_terms (namespace, term, df, surface) VALUES (?1, ?2, ?3, ?4)"),
      update_term_(db, "UPDATE cluster_terms SET df = ?3 WHERE namespace = ?1 AND term = ?2"),
      read_window_(db,
                   "SELECT cluster_id, touched_seq FROM cluster_postings WHERE namespace = ?1 AND "
                   "term = ?2 ORDER BY touched_seq DESC LIMIT ?3"),
      upsert_posting_(
          db,
          "INSERT INTO cluster_postings (namespace, term, cluster_id, touched_seq) VALUES "
          "(?1, ?2, ?3, ?4) ON CONFLICT (namespace, term, cluster_id) DO UPDATE SET "
          "touched_seq = excluded.touched_seq") {}

Term& TermIndex::read_term(const std::string& ns, TermId id) {
  Term t;
  find_term_.reset();
  find_term_.bind(1, ns);
  find_term_.bind(2, terms_.text(id));
  if (find_term_.executeStep()) {
    t.df = find_term_.getColumn(0).getInt64();
    t.surface = find_term_.getColumn(1).getString();
    t.stored = true;
  }
  find_term_.reset();
  Slot& s = terms_.slot(id);
  s.has_term = true;
  s.term = std::move(t);
  return s.term;
}

Term& TermIndex::count(const std::string& ns, TermId id, const std::string& surface) {
  Term& t = term(ns, id);
  if (t.df == 0) t.surface = surface;
  ++t.df;
  if (!t.dirty) dirty_terms_.push_back(id);
  t.dirty = true;
  return t;
}

Window& TermIndex::read_window(const std::string& ns, TermId id) {
  Window w;
  read_window_.reset();
  read_window_.bind(1, ns);
  read_window_.bind(2, terms_.text(id));
  read_window_.bind(3, static_cast<std::int64_t>(candidates_per_term_));
  while (read_window_.executeStep()) {
    const std::int64_t cluster = read_window_.getColumn(0).getInt64();
    const std::int64_t touched = read_window_.getColumn(1).getInt64();
    w.emplace_back(touched, cluster);
  }
  read_window_.reset();
  std::sort(w.begin(), w.end());
  Slot& s = terms_.slot(id);
  s.has_window = true;
  s.window = std::move(w);
  return s.window;
}

void TermIndex::touch(const std::string& ns, TermId id, std::int64_t cluster, std::int64_t seq) {
  Window& w = window(ns, id);
  if (const auto it =
          std::find_if(w.begin(), w.end(), [&](const auto& e) { return e.second == cluster; });
      it != w.end()) {
    w.erase(it);
  }
  const std::pair<std::int64_t, std::int64_t> entry{seq, cluster};
  w.insert(std::upper_bound(w.begin(), w.end(), entry), entry);
  if (static_cast<std::int64_t>(w.size()) > candidates_per_term_) {
    w.erase(w.begin(), w.begin() + (static_cast<std::int64_t>(w.size()) - candidates_per_term_));
  }
  dirty_postings_[{id, cluster}] = seq;
}

void TermIndex::flush(const std::string& ns) {
  // Every write below goes in key order, so that each seek lands on or next to the page of
  // the one before (random order made a +10,000 run's updates 35-45% slower).
  // A term whose row is known to exist gets a plain UPDATE of its df (one B-tree seek; an
  // upsert first fails its insert, then seeks again to update); the surface never changes.
  std::sort(dirty_terms_.begin(), dirty_terms_.end(),
            [this](TermId x, TermId y) { return terms_.text(x) < terms_.text(y); });
  for (const TermId id : dirty_terms_) {
    Term& t = terms_.slot(id).term;
    SQLite::Statement& write = t.stored ? update_term_ : insert_term_;
    write.reset();
    write.bind(1, ns);
    write.bind(2, terms_.text(id));
    write.bind(3, static_cast<std::int64_t>(t.df));
    if (!t.stored) write.bind(4, t.surface);
    if (write.exec() != 1)
      throw std::logic_error("cluster: term row of '" + terms_.text(id) + "' not written");
    t.dirty = false;
    t.stored = true;
  }
  dirty_terms_.clear();
  // cluster_terms and cluster_postings are WITHOUT ROWID tables keyed by what is written, so
  // the order of these upserts does not change their content.
  std::vector<std::pair<std::pair<TermId, std::int64_t>, std::int64_t>> postings(
      dirty_postings_.begin(), dirty_postings_.end());
  std::sort(postings.begin(), postings.end(), [this](const auto& x, const auto& y) {
    if (x.first.first != y.first.first)
      return terms_.text(x.first.first) < terms_.text(y.first.first);
    return x.first.second < y.first.second;
  });
  for (const auto& [key, seq] : postings) {
    store::exec_bound(upsert_posting_, ns, terms_.text(key.first),
                      static_cast<std::int64_t>(key.second), static_cast<std::int64_t>(seq));
  }
  dirty_postings_.clear();
}

}  // namespace reflectd::jobs::clustering
