#pragma once
// An agent's or operator's verdict on a proposal (seed 000 AcceptProposalRequest,
// ProposalStatus draft | accepted | rejected | falsified). A proposal is a knowledge row of
// kind `proposal`: an agent's published proposal event, or a hypothesis stream of the
// consolidation job (`proposal:<namespace>:<target>`, docs/JOBS.md).
//
// Transitions (anything else is refused with the proposal's status):
//   accept:  draft -> accepted
//   reject:  draft -> rejected
//   falsify: draft | accepted -> falsified (the hypothesis was tested and proved wrong)
// Each writes an audit row: action `accept` for accept, `deprecate` for reject and falsify
// (the audit log's actions, migration 20), with the rationale and previous {"status"}. The
// consolidation job never changes a verdict: it accepts only drafts (docs/JOBS.md step 6). A
// job's proposal is derived state: a hard forget in its namespace rebuilds it as a draft.
//
// Scope: the proposal's namespace must be one the caller may write and, for an agent's
// proposal, its event at or below the caller's clearance; otherwise it reads as unknown.
//
// Runs on the writer thread (WriteRequest::apply). Errors: input errors throw
// std::invalid_argument ("proposal: FIELD: RULE"); storage errors SQLite::Exception.
// Thread-safety: one connection's thread.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "memory_ops/event_selection.hpp"

namespace reflectd::memory_ops {

enum class Verdict { kAccept, kReject, kFalsify };

struct ProposalVerdict {
  std::string proposal_id;  ///< "proposal_id": knowledge.decision_id of kind proposal.
  Verdict verdict = Verdict::kAccept;
  std::string rationale;  ///< "rationale": required (seed 002 AuditEntry.rationale).
};

/// Parses {"action":"accept"|"reject"|"falsify","proposal_id","rationale"}; nullopt with
/// `error` = "proposal: FIELD: RULE".
std::optional<ProposalVerdict> parse_proposal_verdict(const nlohmann::json& request,
                                                      std::string& error);

/// Applies the verdict at `now_us` (µs since the epoch). Returns {"proposal_id","status",
/// "previous_status","namespace"}. Throws std::invalid_argument per the rules above.
nlohmann::json judge_proposal(SQLite::Database& db, const ProposalVerdict& verdict,
                              const WriteScope& scope, std::int64_t now_us);

}  // namespace reflectd::memory_ops
