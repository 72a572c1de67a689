#pragma once
// Decisions (jobs/consolidation.hpp, point 6): a "Problem:"/"Solution:" message (not a
// merge), a commit subject that chooses, a conversation turn that decides, and a successful
// trajectory become knowledge rows of kind decision (jobs/decision_extraction.hpp for the
// rules, store/extracted_decisions.hpp for supersession and falsification); a revert
// falsifies the decisions it undoes. The module entities whose decisions change are marked
// for a new summary.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the stores.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "jobs/commit_decisions.hpp"
#include "jobs/consolidation_events.hpp"
#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_trajectories.hpp"
#include "jobs/decision_extraction.hpp"
#include "jobs/entity_summaries.hpp"
#include "store/extracted_decisions.hpp"

namespace reflectd::jobs::consolidation {

/// One event as the decision rules read it.
struct DecisionEvent {
  const std::string& ns;
  const std::string& kind;
  const std::string& content;
  const EventFields& fields;
  const std::string& target;    ///< Its target (Placement::target); may be empty.
  const std::string& event_id;  ///< events.uid: the decision's id is "decision:<event_id>".
  const std::string& agent_id;  ///< May be empty.
  std::int64_t seq = 0;
  std::int64_t ts_us = 0;
};

/// A successful trajectory's task and calls (jobs/consolidation_outcomes.hpp).
struct TrajectoryTask {
  const std::string& text;  ///< The content of its first task event; empty when none.
  std::int64_t seq = 0;     ///< That event's seq; 0 when none.
  std::int64_t ts_us = 0;
  std::span<const TrajectoryCall> calls;
  std::span<const std::pair<std::int64_t, std::int64_t>> call_events;  ///< (seq, ts) per call.
};

class Decisions {
 public:
  /// Prepares the stores on run.db; `run` must outlive this object.
  explicit Decisions(Run& run);

  /// The decision event `e` states (a problem and its solution, else a commit subject that
  /// chooses: jobs/commit_decisions.hpp, else a conversation turn), or the decisions a revert
  /// falsifies. A reverted change that was no decision is recorded, in its own words, as a
  /// falsified one, so that the medallion can say not to repeat it. True when a decision was
  /// created or changed (the caller then calls mark_changed_targets()).
  bool from_message(const DecisionEvent& e);

  /// The decision a successful trajectory made (decision_from_trajectory()), superseding the
  /// namespace's earlier answer to the same task; marks the changed targets.
  void from_trajectory(const std::string& ns, const Outcome& outcome, const TrajectoryTask& task);

  /// The module entities ("module:<target>") whose decisions changed since the last call show
  /// them in their next summary.
  void mark_changed_targets(const std::string& ns);

 private:
  bool from_revert(const DecisionEvent& e, const Revert& revert);

  Run& run_;
  store::ExtractedDecisionStore decisions_;
  SummaryMarks summary_marks_;
};

}  // namespace reflectd::jobs::consolidation
