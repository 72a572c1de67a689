#pragma once
// `reflectctl medallion get ID | query [--node N]... [--tag T]... | history ID | list`: the
// daemon's medallions ({"cmd":"medallion","action":...}). `get` prints one medallion readably
// (meta, high-level summary, subsystems, decisions D-xxx with confidence, open questions Q-xxx
// with priority, affordances); query, history and list print tables. --json: the raw reply.
//
// Error policy: run_medallion() prints every problem to stderr and returns an exit status.
// Thread-safety: call from one thread at a time.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct MedallionOptions {
  ControlOptions control;
  std::string action;              ///< get, query, history or list.
  std::string id;                  ///< get, history.
  std::vector<std::string> nodes;  ///< query.
  std::vector<std::string> tags;   ///< query.
  int limit = 20;                  ///< history (query and list: when given).
  bool limit_given = false;
};

nlohmann::json medallion_request(const MedallionOptions& options);
/// One medallion ({"medallion":{...}} reply) as readable text.
std::string format_medallion(const nlohmann::json& reply);
int run_medallion(const MedallionOptions& options);

}  // namespace reflectd::cli
