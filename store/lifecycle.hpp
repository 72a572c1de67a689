#pragma once
// Resolves an event's decay profile at write time: the configured profile of its storage
// class (config `decay.episodic.*` / `decay.semantic.*`), overridden field by field by the
// event's own `lifecycle` (seed 002). The result is stored with the event, so the decay job
// is a pure function of stored columns and the clock.

#include <cstdint>
#include <optional>

#include "model/formulas.hpp"
#include "store/event.hpp"

namespace reflectd::store {

/// Configured profiles per storage class.
struct DecayProfiles {
  model::DecayProfile episodic;
  model::DecayProfile semantic;
};

/// What is stored for an event's salience.
struct ResolvedLifecycle {
  model::DecayProfile profile;
  double base = 1.0;                       ///< Salience at ref_us: the event's `salience`
                                           ///< when given, else 1.0 (seed 002 initial value).
  std::int64_t ref_us = 0;                 ///< Last reinforcement: when the daemon received it.
  std::optional<std::int64_t> archive_at;  ///< model::archive_at_us().
};

/// Pure; thread-safe.
ResolvedLifecycle resolve_lifecycle(const EventRecord& event, const DecayProfiles& profiles);

}  // namespace reflectd::store
