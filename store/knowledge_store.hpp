#pragma once
// Write-time routing of semantic events into the knowledge table (LedgerMind's router,
// seed 000): decision, constraint, assumption, intervention and proposal events each create a
// DecisionStream row. A new *decision* for a (namespace, target) that already has an active
// decision is refused unless its ResolutionIntent supersedes or deprecates every conflicting
// decision; then the old ones change status atomically with the insert (same transaction).
// Any semantic event (constraint, assumption, intervention, proposal too) may carry a
// ResolutionIntent: the active records it names in its namespace are superseded or deprecated
// with it, each with an audit row.
//
// Thread-safety: none; owned by the writer thread. Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "store/audit_log.hpp"
#include "store/event.hpp"

namespace reflectd::store {

/// Seed 000 reason for a refused conflicting decision.
inline constexpr const char* kConflictReason =
    "CONFLICT: Active decision exists. ResolutionIntent required.";

/// Whether a semantic event may be stored, and what it resolves.
struct Admission {
  bool refused = false;
  std::string reason;                        ///< Refusal reason (seed wording).
  std::vector<std::string> conflicting_ids;  ///< Active decisions on the same target.
  std::string resolution_type;               ///< supersede|deprecate when resolving.
  std::vector<std::string> resolved_ids;     ///< Decisions that change status.
};

/// Seed 000 MemoryDecision.priority (0-10, "importance level") of a stored semantic event.
/// Ours, since the seed gives no formula: the kind's weight in the ledger (constraint 8,
/// decision 7, intervention 6, assumption 5, proposal 4), plus its scope's removal cost
/// (context.scope system +1, infra +2; seed 000 "higher scope decisions are harder to
/// replace"), plus 1 when it supersedes or deprecates other records; at least
/// round(10 x importance) when the event gives an importance in [0, 1]; clamped to [0, 10].
/// Refused and duplicate events have priority 0. Thread-safe (pure).
int semantic_priority(const EventRecord& event, const Admission& admission);

class KnowledgeStore {
 public:
  explicit KnowledgeStore(SQLite::Database& db);

  /// Decides whether `event` (semantic) may be stored. Reads only.
  Admission admit(const EventRecord& event);

  /// Creates the knowledge row of a stored semantic event (decision_id = the event's id) and
  /// applies its admission's resolution, with audit rows. Returns the decision_id.
  std::string record(const EventRecord& event, std::int64_t seq, const Admission& admission,
                     std::int64_t now_us);

 private:
  AuditLog audit_;
  SQLite::Statement active_decisions_;
  SQLite::Statement insert_;
  SQLite::Statement insert_evidence_;
  SQLite::Statement previous_state_;
  SQLite::Statement resolve_;
};

}  // namespace reflectd::store
