#pragma once
// `reflectctl forget`, `restore`, `pin`, `unpin`, `revise`, `proposal` and `audit`: the
// memory operations of memory_ops/ and the audit log's read.
//
// Error policy: the run_*() functions print every problem to stderr and return an exit
// status. Thread-safety: call from one thread at a time.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli/control.hpp"

namespace reflectd::cli {

struct ForgetOptions {
  ControlOptions control;
  std::vector<std::string> ids;  ///< Or a filter:
  std::string ns, agent_id, kind, before, after, text;
  bool hard_delete = false;  ///< --delete: mode "delete" instead of "archive".
  bool dry_run = false;
  bool wait = false;  ///< --wait: answer once the jobs rebuilt the namespaces (delete).
  std::string rationale;
};

/// {"cmd":"forget","ids"|"filter",...}; the filter holds only the fields given.
nlohmann::json forget_request(const ForgetOptions& options);
std::string format_forgotten(const nlohmann::json& reply);
int run_forget(const ForgetOptions& options);

struct EventStateOptions {
  ControlOptions control;
  std::string cmd;  ///< restore | pin | unpin.
  std::vector<std::string> ids;
};

nlohmann::json event_state_request(const EventStateOptions& options);
std::string format_event_state(const nlohmann::json& reply);
int run_event_state(const EventStateOptions& options);

struct ReviseOptions {
  ControlOptions control;
  std::string id, content, rationale;
  std::string context_json;  ///< --context: a JSON object, or empty to keep the old context.
  std::string new_id;
  bool keep_timestamp = false;
};

/// {"cmd":"revise",...}; throws std::invalid_argument when --context is not a JSON object.
nlohmann::json revise_request(const ReviseOptions& options);
std::string format_revised(const nlohmann::json& reply);
int run_revise(const ReviseOptions& options);

struct ProposalOptions {
  ControlOptions control;
  std::string action;  ///< accept | reject | falsify.
  std::string proposal_id, rationale;
};

nlohmann::json proposal_request(const ProposalOptions& options);
std::string format_proposal(const nlohmann::json& reply);
int run_proposal(const ProposalOptions& options);

struct MergeEntitiesOptions {
  ControlOptions control;
  std::string ns, from, into, rationale;
};

/// {"cmd":"merge_entities","namespace","from","into","rationale"?} (memory_ops/entity_merges.hpp).
nlohmann::json merge_entities_request(const MergeEntitiesOptions& options);
/// "person:ann -> person:annie: 1 mention moved, ..." from the daemon's {"merged":{...}}.
std::string format_merged(const nlohmann::json& reply);
int run_merge_entities(const MergeEntitiesOptions& options);

struct AuditOptions {
  ControlOptions control;
  std::string record_id, ns, since;
  int limit = 50;
};

nlohmann::json audit_request(const AuditOptions& options);
std::string format_audit_table(const nlohmann::json& reply);
int run_audit(const AuditOptions& options);

}  // namespace reflectd::cli
