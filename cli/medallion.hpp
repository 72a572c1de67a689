#pragma once
// `reflectctl medallion get ID | query [--node N]... [--tag T]... | history ID | list`: the
// daemon's medallions ({"cmd":"medallion","action":...}). `get` prints one medallion readably
// (meta, high-level summary, subsystems, decisions D-xxx with confidence, open questions Q-xxx
// with priority, affordances); query, history and list print tables. --json: the raw reply.
// `create`, `update` and `set-status` write an agent's medallion (memory_ops/medallions.hpp):
// the medallion JSON comes from a file (- = stdin), the evidence from --evidence and
// --transcript.
//
// Error policy: run_medallion() prints every problem to stderr and returns an exit status
// (kExitUsage for an unreadable or invalid --file).
// Thread-safety: call from one thread at a time.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct MedallionOptions {
  ControlOptions control;
  std::string action;                    ///< get, query, history, list, create, update, set_status.
  std::string id;                        ///< get, history, update, set_status; create: optional.
  std::string ns;                        ///< create.
  std::string file;                      ///< create, update: the medallion JSON ("-" = stdin).
  std::string evidence;                  ///< create, update: Evidence.session_summary.
  std::vector<std::string> transcripts;  ///< create, update: Evidence.transcripts.
  std::string supersedes;                ///< create.
  std::string sensitivity;               ///< create, update; "": the default.
  std::string status;                    ///< set_status.
  std::string superseded_by;             ///< set_status.
  std::string rationale;                 ///< set_status.
  std::vector<std::string> nodes;        ///< query.
  std::vector<std::string> tags;         ///< query.
  int limit = 20;                        ///< history (query and list: when given).
  bool limit_given = false;
};

/// The request for `options`; `medallion` is the parsed --file (create, update).
nlohmann::json medallion_request(const MedallionOptions& options,
                                 const nlohmann::json& medallion = {});
/// The answer to create, update or set_status as one line.
std::string format_medallion_write(const nlohmann::json& reply);
/// One medallion ({"medallion":{...}} reply) as readable text.
std::string format_medallion(const nlohmann::json& reply);
int run_medallion(const MedallionOptions& options);

}  // namespace reflectd::cli
