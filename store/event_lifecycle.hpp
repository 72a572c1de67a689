#pragma once
// An event's stored salience lifecycle (seed 002), read back for the operations that change it
// after publication: reinforce (store/reinforcement.hpp), restore, pin and unpin
// (memory_ops/event_state.hpp).
//
// Thread-safety: none (one connection's thread). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>

#include "model/formulas.hpp"

namespace reflectd::store {

struct StoredEventLifecycle {
  std::int64_t seq = 0;
  std::string status;           ///< active|archived.
  model::DecayProfile profile;  ///< As stored at write time (store/lifecycle.hpp).
  double salience_base = 1.0;   ///< Salience at salience_ref_us, [0,1].
  std::int64_t salience_ref_us = 0;
  std::int64_t received_us = 0;
  std::int64_t hit_count = 0;
  /// Salience at `now_us` (model::salience_at; the profile's floor when it has none).
  double salience_at(std::int64_t now_us) const;
};

/// The event with this uid, or nullopt.
std::optional<StoredEventLifecycle> read_event_lifecycle(SQLite::Database& db,
                                                         const std::string& uid);

}  // namespace reflectd::store
