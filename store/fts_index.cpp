#include "store/fts_index.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::store {

FtsLag read_fts_lag(SQLite::Database& db) {
  SQLite::Statement query(db, R"sql(
SELECT s.indexed_seq, (SELECT count(*) FROM events WHERE seq > s.indexed_seq)
FROM fts_state s WHERE s.id = 1)sql");
  FtsLag lag;
  if (query.executeStep()) {
    lag.indexed_through_seq = query.getColumn(0).getInt64();
    lag.lag_events = query.getColumn(1).getInt64();
  }
  return lag;
}

FtsIndex::FtsIndex(SQLite::Database& db)
    : watermark_(db, "SELECT indexed_seq FROM fts_state WHERE id = 1"),
      // The batch's last seq first, so the insert below is a plain rowid range scan.
      last_seq_(
          db, "SELECT max(seq) FROM (SELECT seq FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2)"),
      insert_(db,
              "INSERT INTO events_fts (rowid, content, namespace) "
              "SELECT seq, content, namespace FROM events WHERE seq > ?1 AND seq <= ?2 "
              "ORDER BY seq"),
      advance_(db, "UPDATE fts_state SET indexed_seq = ?1 WHERE id = 1") {}

std::int64_t FtsIndex::indexed_seq() {
  watermark_.reset();
  std::int64_t seq = 0;
  if (watermark_.executeStep()) seq = watermark_.getColumn(0).getInt64();
  watermark_.reset();
  return seq;
}

std::int64_t FtsIndex::index_pending(std::int64_t max_events) {
  const std::int64_t from = indexed_seq();
  last_seq_.reset();
  last_seq_.bind(1, static_cast<std::int64_t>(from));
  last_seq_.bind(2, static_cast<std::int64_t>(max_events));
  std::int64_t through = from;
  if (last_seq_.executeStep() && !last_seq_.getColumn(0).isNull()) {
    through = last_seq_.getColumn(0).getInt64();
  }
  last_seq_.reset();
  if (through == from) return 0;
  insert_.reset();
  insert_.bind(1, static_cast<std::int64_t>(from));
  insert_.bind(2, static_cast<std::int64_t>(through));
  const int indexed = insert_.exec();
  store::exec_bound(advance_, static_cast<std::int64_t>(through));
  return indexed;
}

std::int64_t index_all_pending(SQLite::Database& db, std::int64_t batch_events) {
  FtsIndex index(db);
  std::int64_t total = 0;
  for (;;) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    const std::int64_t indexed = index.index_pending(batch_events);
    transaction.commit();
    if (indexed == 0) return total;
    total += indexed;
  }
}

}  // namespace reflectd::store
