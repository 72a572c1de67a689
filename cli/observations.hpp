#pragma once
// `reflectctl observations [--namespace NS] [--type pattern|competence] [--limit N]`: the
// active meta-observations ({"cmd":"observations"}, best supported first) as a table of
// type, support count, trajectory count, target and title.
//
// Error policy: run_observations() prints every problem to stderr and returns an exit
// status; the formatter never throws (missing fields show as "-").
// Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct ObservationsOptions {
  ControlOptions control;
  std::string ns;    ///< Empty: every namespace.
  std::string type;  ///< pattern|competence; empty: every type.
  int limit = 50;
};

/// {"cmd":"observations","namespace":…,"type":…,"limit":…}.
nlohmann::json observations_request(const ObservationsOptions& options);

/// The reply's "observations" rows as a table.
std::string format_observations_table(const nlohmann::json& reply);

/// Runs the command: kExitOk, kExitFailed, kExitUsage or kExitUnreachable.
int run_observations(const ObservationsOptions& options);

}  // namespace reflectd::cli
