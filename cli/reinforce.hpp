#pragma once
// `reflectctl reinforce ID [--useful|--misleading]`: tells the daemon an event or knowledge
// record was useful (or misleading) ({"cmd":"reinforce"}) and prints the reinforced record's
// fields, one "key: value" per line.
//
// Error policy: run_reinforce() prints every problem to stderr and returns an exit status.
// Thread-safety: call from one thread at a time.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct ReinforceOptions {
  ControlOptions control;
  std::string id;
  bool useful = true;  ///< false with --misleading.
};

nlohmann::json reinforce_request(const ReinforceOptions& options);
std::string format_reinforced(const nlohmann::json& reply);
int run_reinforce(const ReinforceOptions& options);

}  // namespace reflectd::cli
