#include "memory_ops/proposals.hpp"

#include <SQLiteCpp/VariadicBind.h>

#include <stdexcept>

#include "memory_ops/request_fields.hpp"
#include "store/audit_log.hpp"
#include "store/event_store.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

constexpr std::size_t kMaxProposalIdChars =
    512;  // a job's stream id holds a namespace and a target

const char* target_status(Verdict v) {
  switch (v) {
    case Verdict::kAccept: return "accepted";
    case Verdict::kReject: return "rejected";
    case Verdict::kFalsify: return "falsified";
  }
  return "accepted";
}

const char* action_name(Verdict v) {
  switch (v) {
    case Verdict::kAccept: return "accept";
    case Verdict::kReject: return "reject";
    case Verdict::kFalsify: return "falsify";
  }
  return "accept";
}

bool allowed_from(Verdict v, const std::string& status) {
  if (v == Verdict::kFalsify) return status == "draft" || status == "accepted";
  return status == "draft";
}

}  // namespace

std::optional<ProposalVerdict> parse_proposal_verdict(const json& request, std::string& error) {
  ProposalVerdict v;
  const std::string action = required_text(request, "proposal", "action", 16, error);
  if (!error.empty()) return std::nullopt;
  if (action == "accept") {
    v.verdict = Verdict::kAccept;
  } else if (action == "reject") {
    v.verdict = Verdict::kReject;
  } else if (action == "falsify") {
    v.verdict = Verdict::kFalsify;
  } else {
    error = R"(proposal: action: must be "accept", "reject" or "falsify")";
    return std::nullopt;
  }
  v.proposal_id = required_text(request, "proposal", "proposal_id", kMaxProposalIdChars, error);
  if (error.empty())
    v.rationale = required_text(request, "proposal", "rationale", kMaxRationaleBytes, error);
  if (!error.empty()) return std::nullopt;
  return v;
}

json judge_proposal(SQLite::Database& db, const ProposalVerdict& verdict, const WriteScope& scope,
                    std::int64_t now_us) {
  SQLite::Statement read(db, R"sql(
SELECT k.namespace, k.status,
       coalesce((SELECT CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1
                 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END
                 FROM events e WHERE e.seq = k.source_event_seq), 0)
FROM knowledge k WHERE k.decision_id = ?1 AND k.kind = 'proposal')sql");
  read.bind(1, verdict.proposal_id);
  if (!read.executeStep() || !scope.may_use(read.getColumn(0).getString()) ||
      read.getColumn(2).getInt() > scope.clearance) {
    throw std::invalid_argument("proposal: proposal_id: no proposal '" + verdict.proposal_id +
                                "' in the namespaces you may write");
  }
  const std::string ns = read.getColumn(0).getString();
  const std::string previous = read.getColumn(1).getString();
  const std::string next = target_status(verdict.verdict);
  if (!allowed_from(verdict.verdict, previous)) {
    throw std::invalid_argument(
        std::string("proposal: ") + action_name(verdict.verdict) + ": '" + verdict.proposal_id +
        "' is " + previous + "; " + action_name(verdict.verdict) + " needs " +
        (verdict.verdict == Verdict::kFalsify ? "draft or accepted" : "draft"));
  }
  // A rejected or falsified record takes no evidence from events stored after it (the
  // consolidation job's window for agents' records; the job's own streams keep theirs).
  SQLite::Statement update(db,
                           "UPDATE knowledge SET status = ?2, updated_us = ?3, ended_seq = "
                           "CASE WHEN ?2 IN ('rejected', 'falsified') AND provenance = "
                           "'external' THEN coalesce(ended_seq, (SELECT coalesce(max(seq), 0) "
                           "+ 1 FROM events)) ELSE ended_seq END WHERE decision_id = ?1");
  SQLite::bind(update, verdict.proposal_id, next, static_cast<std::int64_t>(now_us));
  update.exec();
  store::AuditLog(db).append("knowledge", verdict.proposal_id,
                             verdict.verdict == Verdict::kAccept ? "accept" : "deprecate",
                             scope.actor, now_us,
                             std::string(action_name(verdict.verdict)) + ": " + verdict.rationale,
                             json{{"status", previous}}.dump());
  store::mark_medallions_stale(db, ns);  // their open questions list drafts awaiting a verdict
  return {{"proposal_id", verdict.proposal_id},
          {"namespace", ns},
          {"status", next},
          {"previous_status", previous}};
}

}  // namespace reflectd::memory_ops
