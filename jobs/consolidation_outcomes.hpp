#pragma once
// Trajectory outcomes (jobs/consolidation.hpp, point 5): a finished trajectory's tool
// sequence and, for a success, its procedure (seed 000 ProceduralContent: its calls as steps,
// the thought as rationale, the next observation as expected outcome), its decision
// (jobs/consolidation_decisions.hpp) and the competence of its tool sequence
// (jobs/consolidation_competence.hpp). Outcomes are recorded at the end of the chunk they
// finish in, one by one in event order, not per chunk: an outcome recorded again for the same
// trajectory (a repeated episode) can take a success away from a sequence, so the counts seen
// between outcomes matter.
//
// Thread-safety: ProcedureBuilder is a plain value; Outcomes is one per job run. Errors:
// SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jobs/consolidation_competence.hpp"
#include "jobs/consolidation_decisions.hpp"
#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_trajectories.hpp"
#include "jobs/decision_extraction.hpp"

namespace reflectd::jobs::consolidation {

/// What a trajectory's steps, read in seq order, say of how it went.
class ProcedureBuilder {
 public:
  /// Step `seq` at `ts_us` of `kind` with `content` and its parsed `context` (null when none
  /// or invalid). A call opens a procedure step (action: its first line; rationale: its
  /// context.thought's) and adds context.tool to the tool sequence unless it repeats the last
  /// tool; the next result or error closes it (expected_outcome: that event's first line) and
  /// tells whether the call succeeded (a result whose context.success is truthy()). The first
  /// task event is the trajectory's task.
  void add(std::int64_t seq, const std::string& kind, const std::string& content,
           const nlohmann::json& context, std::int64_t ts_us);

  /// The tools of the calls, consecutive repeats folded, joined by '>' ("edit>python"); empty
  /// when no call named a tool.
  std::string tool_sequence() const;
  /// The procedure steps, a JSON array of {action, rationale, expected_outcome (null until a
  /// result or an error follows the call)}.
  const nlohmann::json& steps() const { return steps_; }
  /// The first task's first line (≤ 200 bytes); empty when there was no task.
  const std::string& task_line() const { return task_; }
  /// The first task's whole content, seq and time (0 when there was no task).
  const std::string& task_text() const { return task_text_; }
  std::int64_t task_seq() const { return task_seq_; }
  std::int64_t task_ts_us() const { return task_ts_; }
  /// Every call, with whether the result that answered it succeeded, and its (seq, ts).
  const std::vector<TrajectoryCall>& calls() const { return calls_; }
  const std::vector<std::pair<std::int64_t, std::int64_t>>& call_events() const {
    return call_events_;
  }

 private:
  nlohmann::json steps_ = nlohmann::json::array();
  std::vector<std::string> tools_;
  std::string task_;
  std::string task_text_;
  std::int64_t task_seq_ = 0;
  std::int64_t task_ts_ = 0;
  std::vector<TrajectoryCall> calls_;
  std::vector<std::pair<std::int64_t, std::int64_t>> call_events_;
  bool awaiting_outcome_ = false;
};

/// The ProceduralContent of a successful `outcome` whose steps `procedure` read: {steps,
/// target_task (the task's line, else the outcome's target), success_evidence_ids [final_seq]}.
/// Pure.
nlohmann::json procedural_content(const Outcome& outcome, const ProcedureBuilder& procedure);

class Outcomes {
 public:
  /// Prepares the statements on run.db; the arguments must outlive this object.
  Outcomes(Run& run, Competences& competences, Decisions& decisions);

  /// Records `outcome` of `ns` (its steps are the trajectory's events up to final_seq): its
  /// trajectory_outcomes row (replacing an earlier one of the trajectory, whose successful run
  /// its sequence then loses) and, for a success, its decision and competence.
  void record(const std::string& ns, const Outcome& outcome);

 private:
  ProcedureBuilder read_steps(const std::string& ns, const Outcome& outcome);
  void forget_previous(const std::string& ns, const Outcome& outcome);
  void upsert(const std::string& ns, const Outcome& outcome, const std::string& sequence,
              const nlohmann::json& procedural);

  Run& run_;
  Competences& competences_;
  Decisions& decisions_;
  SQLite::Statement steps_;
  SQLite::Statement previous_;
  SQLite::Statement upsert_;
};

}  // namespace reflectd::jobs::consolidation
