#pragma once
// Read-back: events in full by id (`get`) and an episode in sequence_number
// order (`episode`), under the same namespace and clearance rules as every read: a row one
// level above the caller's clearance comes back with "redacted": true, its content replaced
// by "[redacted: above your clearance]" and its context, tags, entities, relations, metadata,
// resolution and emotion null; a row two or more levels above is reported missing, like an id never
// stored.
//
// Thread-safety: a ReadBack belongs to the thread of its connection (which must have
// rd_salience registered). Errors: bad requests as RecallError; SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <variant>

#include "recall/read_scope.hpp"
#include "recall/recall.hpp"

namespace reflectd::recall {

inline constexpr std::size_t kMaxGetIds = 100;
inline constexpr std::int64_t kMaxEpisodeEvents = 1000;

class ReadBack {
 public:
  explicit ReadBack(SQLite::Database& db);

  /// {"ids":[...]} (1..kMaxGetIds strings) -> {"ok":true,"events":[...],"missing":[...]},
  /// events in the order asked.
  std::variant<nlohmann::json, RecallError> get(const nlohmann::json& request,
                                                const ReadScope& scope, std::int64_t now_us);

  /// {"episode_id":E,"namespace":NS?,"after_sequence_number":N?,"limit":L?} ->
  /// {"ok":true,"episode_id","events":[...]} in (sequence_number, seq) order; at most `limit`
  /// (default 200, at most kMaxEpisodeEvents) after `after_sequence_number`.
  std::variant<nlohmann::json, RecallError> episode(const nlohmann::json& request,
                                                    const ReadScope& scope, std::int64_t now_us);

 private:
  SQLite::Statement by_id_;
  SQLite::Statement by_episode_;
};

}  // namespace reflectd::recall
