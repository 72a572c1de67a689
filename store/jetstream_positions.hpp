#pragma once
// jetstream_positions (migration 37): for each JetStream stream a node reads, the highest
// stream sequence whose events this database has committed. It is written in the same
// transaction as those events, so after any crash it says exactly where to resume: the
// JetStream inlet recreates its consumer at position + 1 (bus/jetstream_inlet.hpp).
//
// Error policy: SQLite::Exception propagates (the writer turns it into a storage error).
// Thread-safety: the connection's.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

namespace reflectd::store {

/// Raises the position of `stream` to `stream_seq` (never lowers it). Run inside the write
/// transaction that commits the events of the messages up to `stream_seq`.
void record_jetstream_position(SQLite::Database& db, const std::string& stream,
                               std::uint64_t stream_seq);

/// The committed position of `stream`: 0 when nothing of it was ever committed.
std::uint64_t jetstream_position(SQLite::Database& db, const std::string& stream);

}  // namespace reflectd::store
