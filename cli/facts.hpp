#pragma once
// `reflectctl facts [--namespace NS] [--entity KEY|NAME] [--attribute A] [--current]
// [--limit N] [--after-id ID]`: the fact ledger ({"cmd":"facts"}, seed 003 MemoryFact) as a
// table of id, entity, attribute, validity and statement.
//
// Error policy: run_facts() prints every problem to stderr and returns an exit status; the
// formatter never throws (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct FactsOptions {
  ControlOptions control;
  std::string ns;         ///< Empty: every namespace.
  std::string entity;     ///< Canonical key or name; empty: every entity.
  std::string attribute;  ///< Empty: every attribute.
  bool current = false;   ///< Leave out superseded facts.
  int limit = 50;
  std::int64_t after_id = 0;
};

/// {"cmd":"facts","namespace":…,"entity":…,"attribute":…,"current":…,"limit":…,"after_id":…}.
nlohmann::json facts_request(const FactsOptions& options);

/// The reply's "facts" as a table.
std::string format_facts_table(const nlohmann::json& reply);

/// Runs the command: kExitOk, kExitFailed, kExitUsage or kExitUnreachable.
int run_facts(const FactsOptions& options);

}  // namespace reflectd::cli
