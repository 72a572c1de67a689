#include "jobs/medallion_problems.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "jobs/decision_extraction.hpp"
#include "jobs/medallion_records.hpp"
#include "jobs/medallion_text.hpp"

namespace reflectd::jobs::medallion {
namespace {

using nlohmann::json;

// Problems stated by events and not solved since, one per signature, newest first.
void raised_problems(SQLite::Database& db, const MedallionScope& scope,
                     std::vector<OpenProblem>& out) {
  constexpr const char* kNoLaterSuccess = R"sql(
  NOT EXISTS (SELECT 1 FROM trajectory_outcomes t WHERE t.namespace = o.namespace
              AND t.trajectory_id = o.trajectory_id AND t.success = 1 AND t.final_seq > o.seq)
  AND (o.target IS NULL OR (
    NOT EXISTS (SELECT 1 FROM trajectory_outcomes t WHERE t.namespace = o.namespace
                AND t.target = o.target AND t.success = 1 AND t.final_seq > o.seq)
    AND NOT EXISTS (SELECT 1 FROM knowledge k WHERE k.namespace = o.namespace
                    AND k.target = o.target AND k.kind = 'decision' AND k.status = 'active'
                    AND k.source_event_seq > o.seq))))sql";
  std::map<std::string, std::size_t> by_signature;
  // The occurrences that are no commit are chosen first (is_change = 0, a partial index;
  // MATERIALIZED), so that the later-success tests run on those alone: a commit history has
  // hundreds of thousands of "Problem:" paragraphs in its commits.
  SQLite::Statement problems(db, std::string(R"sql(
WITH o AS MATERIALIZED (
  SELECT o.namespace, o.signature, o.seq, o.target, o.trajectory_id, o.ts_us, e.kind, e.content
  FROM problem_occurrences o JOIN events e ON e.seq = o.seq
  WHERE (?1 = '' OR o.namespace = ?1) AND o.is_change = 0 AND e.status = 'active'
    AND e.content NOT LIKE '%Solution:%')
SELECT o.namespace, o.signature, o.seq, coalesce(o.target, ''), o.ts_us, o.kind, o.content
FROM o WHERE )sql") + kNoLaterSuccess +
                                     " ORDER BY o.seq DESC LIMIT 500");
  problems.bind(1, scope.ns);
  while (problems.executeStep()) {
    const std::string target = problems.getColumn(3).getString();
    if (!in_scope_target(scope, target)) continue;
    const std::string key =
        problems.getColumn(0).getString() + '\n' + problems.getColumn(1).getString();
    if (const auto it = by_signature.find(key); it != by_signature.end()) {
      ++out[it->second].occurrences;
      continue;
    }
    const std::string kind = problems.getColumn(5).getString();
    const std::string content = problems.getColumn(6).getString();
    std::string text = kind == "error" ? first_text_line(content) : problem_line(content);
    if (text.empty()) continue;
    by_signature.emplace(key, out.size());
    out.push_back({"problem:" + problems.getColumn(0).getString() + ":" +
                       std::to_string(problems.getColumn(2).getInt64()),
                   std::move(text), target, json::array({problems.getColumn(2).getInt64()}).dump(),
                   problems.getColumn(4).getInt64(), 1, ""});
  }
}

// Trajectories that ended without success and saw no later success on their target.
void failed_trajectories(SQLite::Database& db, const MedallionScope& scope,
                         std::vector<OpenProblem>& out) {
  SQLite::Statement failed(db, R"sql(
SELECT o.namespace, o.trajectory_id, coalesce(o.target, ''), o.final_seq, o.final_ts_us,
  (SELECT e.content FROM event_targets x JOIN events e ON e.seq = x.seq
   WHERE x.namespace = o.namespace AND x.trajectory_id = o.trajectory_id AND e.kind = 'task'
   ORDER BY x.seq LIMIT 1)
FROM trajectory_outcomes o
WHERE (?1 = '' OR o.namespace = ?1) AND o.success = 0
  AND (o.target IS NULL OR NOT EXISTS (SELECT 1 FROM trajectory_outcomes t
       WHERE t.namespace = o.namespace AND t.target = o.target AND t.success = 1
       AND t.final_seq > o.final_seq))
ORDER BY o.final_seq DESC LIMIT 100)sql");
  failed.bind(1, scope.ns);
  while (failed.executeStep()) {
    const std::string target = failed.getColumn(2).getString();
    if (!in_scope_target(scope, target) || failed.getColumn(5).isNull()) continue;
    std::string text = task_problem(failed.getColumn(5).getString());
    if (text.empty()) continue;
    out.push_back(
        {"trajectory:" + failed.getColumn(0).getString() + ":" + failed.getColumn(1).getString(),
         std::move(text), target, json::array({failed.getColumn(3).getInt64()}).dump(),
         failed.getColumn(4).getInt64(), 1, ""});
  }
}

// Questions asked and not answered (consolidation keeps the newest per trajectory).
void unanswered_questions(SQLite::Database& db, const MedallionScope& scope,
                          std::vector<OpenProblem>& out) {
  SQLite::Statement asked(db, R"sql(
SELECT q.namespace, q.seq, q.agent_id, e.ts_us, e.content, coalesce(t.target, '')
FROM unanswered_questions q JOIN events e ON e.seq = q.seq LEFT JOIN event_targets t ON t.seq = q.seq
WHERE (?1 = '' OR q.namespace = ?1) AND e.status = 'active' ORDER BY q.seq DESC LIMIT 100)sql");
  asked.bind(1, scope.ns);
  while (asked.executeStep()) {
    const std::string target = asked.getColumn(5).getString();
    if (!in_scope_target(scope, target)) continue;
    std::string text = last_text_line(asked.getColumn(4).getString());
    if (text.empty()) continue;
    const std::int64_t ts = asked.getColumn(3).getInt64();
    const std::string agent = asked.getColumn(2).getString();
    out.push_back({"question:" + asked.getColumn(0).getString() + ":" +
                       std::to_string(asked.getColumn(1).getInt64()),
                   "", target, json::array({asked.getColumn(1).getInt64()}).dump(), ts, 1,
                   "Unanswered: \"" + clip(text, 160) + "\" (asked" +
                       (agent.empty() ? std::string() : " by " + agent) + " on " + day(ts) + ")"});
  }
}

}  // namespace

std::vector<OpenProblem> unsolved_problems(SQLite::Database& db, const MedallionScope& scope) {
  std::vector<OpenProblem> out;
  raised_problems(db, scope, out);
  failed_trajectories(db, scope, out);
  unanswered_questions(db, scope, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const OpenProblem& a, const OpenProblem& b) { return a.ts_us > b.ts_us; });
  return out;
}

}  // namespace reflectd::jobs::medallion
