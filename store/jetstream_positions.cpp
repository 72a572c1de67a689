#include "store/jetstream_positions.hpp"

namespace reflectd::store {

// One statement per pulled batch (the inlet records a batch's last message only): prepared
// on each call, which costs less than a microsecond per event at the default batch.
void record_jetstream_position(SQLite::Database& db, const std::string& stream,
                               std::uint64_t stream_seq) {
  SQLite::Statement upsert(
      db,
      "INSERT INTO jetstream_positions (stream, stream_seq) VALUES (?1, ?2) "
      "ON CONFLICT (stream) DO UPDATE SET stream_seq = max(stream_seq, excluded.stream_seq)");
  upsert.bind(1, stream);
  upsert.bind(2, static_cast<std::int64_t>(stream_seq));
  upsert.exec();
}

std::uint64_t jetstream_position(SQLite::Database& db, const std::string& stream) {
  SQLite::Statement query(db, "SELECT stream_seq FROM jetstream_positions WHERE stream = ?1");
  query.bind(1, stream);
  return query.executeStep() ? static_cast<std::uint64_t>(query.getColumn(0).getInt64()) : 0;
}

}  // namespace reflectd::store
