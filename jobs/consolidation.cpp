// The consolidation job's orchestrator: the run over namespaces and chunks, and each event's
// way through the steps (jobs/consolidation.hpp lists them). Each step is an object of its
// own, owned here and sharing one consolidation::Run:
//   jobs/consolidation_events.hpp          event fields, own target, evidence weight
//   jobs/consolidation_trajectories.hpp    trajectories and their inherited targets
//   jobs/consolidation_streams.hpp         the job's proposal streams and target totals
//   jobs/consolidation_agent_streams.hpp   the agents' records on a target
//   jobs/consolidation_stream_evidence.hpp, _stream_evaluation.hpp, _stream_state.hpp
//                                          evidence, evaluation and rows of both kinds
//   jobs/consolidation_patterns.hpp        recurring problems (_pattern_walk.hpp: pure parts)
//   jobs/consolidation_outcomes.hpp        trajectory outcomes and procedures
//   jobs/consolidation_competence.hpp      competences of tool sequences
//   jobs/consolidation_decisions.hpp       decisions, reverts, summary marks
//   jobs/consolidation_questions.hpp       unanswered questions
//   jobs/consolidation_observations.hpp    pattern and competence observations
//   jobs/consolidation_text.hpp            the lines and fields the steps quote
// The order of the calls below is the order of the writes and of the audit entries, whose ids
// are part of the tables a rerun must reproduce: a step never writes outside its call here.

#include "jobs/consolidation.hpp"

#include <string>
#include <vector>

#include "jobs/consolidation_agent_streams.hpp"
#include "jobs/consolidation_competence.hpp"
#include "jobs/consolidation_decisions.hpp"
#include "jobs/consolidation_events.hpp"
#include "jobs/consolidation_observations.hpp"
#include "jobs/consolidation_outcomes.hpp"
#include "jobs/consolidation_patterns.hpp"
#include "jobs/consolidation_questions.hpp"
#include "jobs/consolidation_run.hpp"
#include "jobs/consolidation_stream_evaluation.hpp"
#include "jobs/consolidation_stream_evidence.hpp"
#include "jobs/consolidation_stream_state.hpp"
#include "jobs/consolidation_streams.hpp"
#include "jobs/consolidation_trajectories.hpp"
#include "jobs/event_json.hpp"
#include "jobs/job_state.hpp"

namespace reflectd::jobs::consolidation {
namespace {

constexpr const char* kJob = "consolidate";

class Consolidator {
 public:
  Consolidator(JobContext& ctx, const ConsolidationParams& params)
      : run_(ctx, params),
        state_(ctx.db, kJob),
        read_events_(ctx.db,
                     "SELECT seq, kind, ts_us, content, context, entities, episode_id, uid, "
                     "coalesce(agent_id, '') "
                     "FROM events WHERE namespace = ?1 AND seq > ?2 AND status = 'active' "
                     "ORDER BY seq LIMIT ?3"),
        trajectories_(ctx.db, params.gap_us),
        questions_(ctx.db),
        observations_(run_),
        decisions_(run_),
        competences_(run_, observations_),
        outcomes_(run_, competences_, decisions_),
        stream_states_(ctx.db),
        stream_evidence_(run_),
        evaluator_(run_, stream_states_),
        proposals_(run_, stream_states_, stream_evidence_, evaluator_),
        agents_(run_, stream_states_, stream_evidence_, evaluator_),
        patterns_(run_, observations_) {}

  nlohmann::json run() {
    run_.now = run_.ctx.clock.now_us();
    std::vector<std::string> namespaces;
    if (!run_.ctx.ns.empty()) {
      namespaces.push_back(run_.ctx.ns);
    } else {
      namespaces = event_namespaces(run_.db);
    }
    for (const auto& ns : namespaces) {
      while (consolidate_chunk(ns)) {
      }
    }
    return result_json(run_.totals);
  }

 private:
  bool consolidate_chunk(const std::string& ns);
  void consolidate_event(const std::string& ns);
  void finish_chunk(const std::string& ns);

  Run run_;
  JobState state_;
  SQLite::Statement read_events_;
  EventFieldReader field_reader_;
  Trajectories trajectories_;
  Questions questions_;
  Observations observations_;
  Decisions decisions_;
  Competences competences_;
  Outcomes outcomes_;
  StreamStates stream_states_;
  StreamEvidence stream_evidence_;
  StreamEvaluator evaluator_;
  ProposalStreams proposals_;
  AgentStreams agents_;
  Patterns patterns_;
  std::vector<Outcome> outcomes_in_chunk_;  // the trajectories that ended, in seq order
};

// One chunk of one namespace in one transaction. Returns false when nothing was left.
// Promotion and acceptance are decided at each evidence event (StreamEvaluator::evaluate()),
// never at chunk ends, so like cluster a chunk ends at the next event when ingest waits at the
// write gate: where chunks end does not change the tables.
bool Consolidator::consolidate_chunk(const std::string& ns) {
  run_.ctx.cancel.check();
  WriteTransaction transaction(run_.ctx);
  proposals_.begin_chunk();
  agents_.begin_chunk();
  questions_.begin_chunk();
  patterns_.begin_chunk();
  outcomes_in_chunk_.clear();
  const std::int64_t watermark = std::stoll(state_.get(ns, "watermark").value_or("0"));
  trajectories_.begin_chunk(ns, parse_open_trajectory(state_.get(ns, "open_trajectory")));
  read_events_.reset();
  read_events_.bind(1, ns);
  read_events_.bind(2, static_cast<std::int64_t>(watermark));
  read_events_.bind(3, static_cast<std::int64_t>(run_.params.chunk_events));
  std::int64_t last_seq = watermark;
  bool yielded = false;
  std::int64_t processed = 0;
  while (read_events_.executeStep()) {
    last_seq = read_events_.getColumn(0).getInt64();
    ++processed;
    consolidate_event(ns);
    // Ingest waits for the lock: end the chunk here (chunk ends do not change results).
    if (transaction.should_yield()) {
      yielded = true;
      break;
    }
  }
  read_events_.reset();
  if (processed == 0) return false;
  finish_chunk(ns);
  state_.set(ns, "watermark", std::to_string(last_seq));
  state_.set(ns, "open_trajectory", open_trajectory_json(trajectories_.open()));
  run_.ctx.cancel.check();  // A cancelled run must not commit half of its last chunk.
  transaction.commit();
  run_.totals.events_processed += processed;
  return yielded || processed == run_.params.chunk_events;
}

// The event read_events_ is on, through every step, in the order of jobs/consolidation.hpp.
void Consolidator::consolidate_event(const std::string& ns) {
  SQLite::Statement& row = read_events_;
  const std::int64_t seq = row.getColumn(0).getInt64();
  const std::string kind = row.getColumn(1).getString();
  const std::int64_t ts = row.getColumn(2).getInt64();
  const std::string content = row.getColumn(3).getString();
  const EventFields fields =
      field_reader_.read(column_text(row.getColumn(4)), column_text(row.getColumn(5)));
  const std::string episode = row.getColumn(6).isNull() ? "" : row.getColumn(6).getString();

  // 1. Trajectory, and 2. target.
  const Placement placed = trajectories_.place(seq, kind, ts, episode, own_target(fields, content));
  const std::string& trajectory = placed.trajectory;
  const std::string& target = placed.target;
  // 3. Evidence weight.
  const EventEvidence evidence = event_evidence(run_.params, kind, content, fields);
  trajectories_.record(seq, placed, evidence.weight);
  if (!target.empty() && evidence.weight > 0) {
    TargetTotals& totals = proposals_.totals_of(ns, target);
    add_to_totals(totals, kind, evidence.success, evidence.weight);
    const Evidence e{seq, ts, evidence.weight, &trajectory, &content};
    proposals_.add_evidence(ns, target, totals, e);
    agents_.add_evidence(ns, target, e);
  }
  // 4. Recurring problems.
  patterns_.record(ns, evidence.problem, seq, trajectory, target, ts, kind == "commit_change");
  // 5. Decisions stated in the message, and reverts of them.
  const std::string event_id = row.getColumn(7).getString();
  const std::string agent = row.getColumn(8).getString();
  if (decisions_.from_message({.ns = ns,
                               .kind = kind,
                               .content = content,
                               .fields = fields,
                               .target = target,
                               .event_id = event_id,
                               .agent_id = agent,
                               .seq = seq,
                               .ts_us = ts})) {
    decisions_.mark_changed_targets(ns);
  }
  // 6. A question asked, or the one pending in the trajectory answered.
  questions_.track(ns, trajectory, seq, kind, content, agent);
  // 7. End of a trajectory.
  if (kind == "result" && fields.ends_trajectory) {
    outcomes_in_chunk_.push_back({trajectory, target, fields.success, seq, ts});
  }
}

// The chunk's end: outcomes, totals, questions, streams, agents' records, recurring problems.
void Consolidator::finish_chunk(const std::string& ns) {
  for (const Outcome& outcome : outcomes_in_chunk_) {
    outcomes_.record(ns, outcome);
    // The stream shows its target's latest procedure.
    if (!outcome.target.empty()) proposals_.mark_dirty(ns, outcome.target);
  }
  proposals_.store_totals(ns);
  questions_.store(ns);
  proposals_.write_streams(ns);
  agents_.write_records();
  patterns_.finish_chunk(ns);
}

}  // namespace
}  // namespace reflectd::jobs::consolidation

namespace reflectd::jobs {

nlohmann::json run_consolidation(JobContext& ctx, const ConsolidationParams& params) {
  return consolidation::Consolidator(ctx, params).run();
}

}  // namespace reflectd::jobs
