#include "store/access_counts.hpp"

#include <algorithm>

namespace reflectd::store {

void AccessBatch::record(std::int64_t seq, std::int64_t at_us) {
  auto& [count, last] = counts_[seq];
  ++count;
  last = std::max(last, at_us);
}

AccessBatch AccessBatch::take() {
  AccessBatch out;
  out.counts_.swap(counts_);
  return out;
}

void AccessBatch::merge(const AccessBatch& other) {
  for (const auto& [seq, entry] : other.counts_) {
    auto& [count, last] = counts_[seq];
    count += entry.first;
    last = std::max(last, entry.second);
  }
}

std::int64_t AccessBatch::apply(SQLite::Database& db) const {
  SQLite::Statement update(db,
                           "UPDATE events SET access_count = access_count + ?2, "
                           "last_accessed_us = max(coalesce(last_accessed_us, 0), ?3) "
                           "WHERE seq = ?1");
  std::int64_t updated = 0;
  for (const auto& [seq, entry] : counts_) {
    update.bind(1, seq);
    update.bind(2, entry.first);
    update.bind(3, entry.second);
    updated += update.exec();
    update.reset();
  }
  return updated;
}

}  // namespace reflectd::store
