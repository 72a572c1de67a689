#pragma once
// restore, pin and unpin: an event's lifecycle changed after publication, with
// an audit row each (seed 002 action 'revise'; previous = {"status","pinned","salience_base"}).
//
//  - restore: an archived event is active again, with the salience of a new event (1.0 at
//    now, seed 002's initial value), so that decay does not archive it again at once.
//  - pin: salience stops decaying (seed 002 `pinned`) at its value now; never archived.
//  - unpin: decay resumes from now, from the value it was pinned at.
// An event already in the asked state is left alone and reported as unchanged.
//
// Runs on the writer thread (WriteRequest::apply), inside its transaction. Errors:
// SQLite::Exception. Thread-safety: one connection's thread.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

enum class StateChange { kRestore, kPin, kUnpin };

/// "restore" | "pin" | "unpin".
const char* to_string(StateChange change);

/// Applies `change` to `events`; returns {"changed":[ids],"unchanged":[ids]}.
nlohmann::json change_event_state(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                                  StateChange change, const std::string& actor,
                                  std::int64_t now_us);

}  // namespace reflectd::memory_ops
