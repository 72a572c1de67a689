#include "store/extracted_decisions.hpp"
#include "store/bound_exec.hpp"

#include <nlohmann/json.hpp>

#include <utility>

namespace reflectd::store {
namespace {

constexpr const char* kExists = "SELECT 1 FROM knowledge WHERE decision_id = ?1";

// frequency = the evidence events; salience_ref_us, first_seen_us and last_seen_us = the
// stating event's time, so vitality and confidence decay from it (jobs/decay.hpp).
constexpr const char* kUpsertKnowledge = R"sql(
INSERT INTO knowledge (decision_id, namespace, kind, target, title, rationale, status, provenance,
                       evidence_event_ids, frequency, unique_contexts, confidence, confidence_base,
                       salience_ref_us, first_seen_us, last_seen_us, updated_us, source_event_seq)
VALUES (?1, ?2, 'decision', ?3, ?4, ?5, 'active', 'internal', ?6, ?7, 1, ?8, ?8, ?9, ?9, ?9, ?10,
        ?11)
ON CONFLICT (decision_id) DO UPDATE SET target = excluded.target, title = excluded.title,
  rationale = excluded.rationale, evidence_event_ids = excluded.evidence_event_ids,
  frequency = excluded.frequency, confidence_base = excluded.confidence_base,
  confidence = excluded.confidence, last_seen_us = excluded.last_seen_us,
  updated_us = excluded.updated_us, source_event_seq = excluded.source_event_seq)sql";

constexpr const char* kUpsertSource =
    "INSERT OR REPLACE INTO extracted_decisions (decision_id, namespace, source, "
    "problem_signature, subject, source_seq, source_commit) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
    "(SELECT lower(json_extract(context, '$.commit')) FROM events WHERE seq = ?6))";

constexpr const char* kInsertDecisionEvidence =
    "INSERT OR IGNORE INTO knowledge_evidence (decision_id, event_seq, ts_us, weight) "
    "VALUES (?1, ?2, ?3, 1.0)";

constexpr const char* kSameProblem =
    "SELECT x.decision_id, k.target FROM extracted_decisions x JOIN knowledge k ON "
    "k.decision_id = x.decision_id WHERE x.namespace = ?1 AND x.problem_signature = ?2 AND "
    "x.source_seq < ?3 "
    "AND k.status = 'active' ORDER BY x.source_seq";

constexpr const char* kSameSubject =
    "SELECT x.decision_id, k.target FROM extracted_decisions x JOIN knowledge k ON "
    "k.decision_id = x.decision_id WHERE x.namespace = ?1 AND x.subject = ?2 AND "
    "x.source_seq < ?3 "
    "AND k.status = 'active' ORDER BY x.source_seq";

// The ids that start with the prefix ?2 are those in [?2, ?4), ?4 being ?2 with its last
// character's code raised by one: an index range, however many decisions the namespace holds.
constexpr const char* kSameCommit =
    "SELECT x.decision_id, k.target FROM extracted_decisions x JOIN knowledge k ON "
    "k.decision_id = x.decision_id WHERE x.namespace = ?1 AND x.source_commit >= ?2 AND "
    "x.source_commit < ?4 AND x.source_seq < ?3 AND k.status = 'active' ORDER BY x.source_seq";

constexpr const char* kPreviousDecisionState =
    "SELECT json_object('status', status, 'confidence', confidence, 'superseded_by', "
    "superseded_by) FROM knowledge WHERE decision_id = ?1";

constexpr const char* kSetStatus =
    "UPDATE knowledge SET status = ?2, superseded_by = ?3, updated_us = ?4 WHERE decision_id = ?1";

}  // namespace

ExtractedDecisionStore::ExtractedDecisionStore(SQLite::Database& db)
    : audit_(db),
      exists_(db, kExists),
      upsert_knowledge_(db, kUpsertKnowledge),
      upsert_source_(db, kUpsertSource),
      insert_evidence_(db, kInsertDecisionEvidence),
      same_problem_(db, kSameProblem),
      same_subject_(db, kSameSubject),
      same_commit_(db, kSameCommit),
      previous_state_(db, kPreviousDecisionState),
      set_status_(db, kSetStatus),
      set_supersedes_(db, "UPDATE knowledge SET supersedes = ?2 WHERE decision_id = ?1") {}

bool ExtractedDecisionStore::record(const DecisionRecord& d, std::int64_t now_us,
                                    std::string_view actor) {
  exists_.reset();
  exists_.bind(1, d.decision_id);
  const bool fresh = !exists_.executeStep();
  exists_.reset();

  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& [seq, ts] : d.evidence) evidence.push_back(seq);
  store::exec_bound(upsert_knowledge_, d.decision_id, d.ns, d.target, d.statement, d.rationale,
                    evidence.dump(), static_cast<std::int64_t>(d.evidence.size()), d.confidence,
                    static_cast<std::int64_t>(d.ts_us), static_cast<std::int64_t>(now_us),
                    static_cast<std::int64_t>(d.source_seq));
  upsert_knowledge_.reset();

  upsert_source_.reset();
  upsert_source_.bind(1, d.decision_id);
  upsert_source_.bind(2, d.ns);
  upsert_source_.bind(3, d.source);
  if (d.problem_signature.empty()) {
    upsert_source_.bind(4);
  } else {
    upsert_source_.bind(4, d.problem_signature);
  }
  if (d.subject.empty()) {
    upsert_source_.bind(5);
  } else {
    upsert_source_.bind(5, d.subject);
  }
  upsert_source_.bind(6, static_cast<std::int64_t>(d.source_seq));
  upsert_source_.exec();
  upsert_source_.reset();

  for (const auto& [seq, ts] : d.evidence) {
    store::exec_bound(insert_evidence_, d.decision_id, static_cast<std::int64_t>(seq),
                      static_cast<std::int64_t>(ts));
  }
  insert_evidence_.reset();
  if (!d.target.empty()) changed_targets_.push_back(d.target);
  if (fresh) {
    audit_.append("knowledge", d.decision_id, "create", actor, now_us,
                  "decision from " + d.source + " (seq " + std::to_string(d.source_seq) + ")");
  }

  if (d.problem_signature.empty()) return fresh;
  std::vector<std::string> earlier;
  same_problem_.reset();
  same_problem_.bind(1, d.ns);
  same_problem_.bind(2, d.problem_signature);
  same_problem_.bind(3, static_cast<std::int64_t>(d.source_seq));
  while (same_problem_.executeStep()) {
    earlier.push_back(same_problem_.getColumn(0).getString());
    if (std::string target = same_problem_.getColumn(1).getString(); !target.empty()) {
      changed_targets_.push_back(std::move(target));
    }
  }
  same_problem_.reset();
  if (earlier.empty()) return fresh;
  for (const std::string& old : earlier) {
    change_status(old, "superseded", d.decision_id, "supersede",
                  "the same problem answered again by " + d.decision_id, now_us, actor);
  }
  store::exec_bound(set_supersedes_, d.decision_id, nlohmann::json(earlier).dump());
  set_supersedes_.reset();
  return fresh;
}

int ExtractedDecisionStore::falsify_reverted(const std::string& ns, const std::string& subject,
                                             std::int64_t revert_seq, std::int64_t now_us,
                                             std::string_view actor) {
  return falsify_matching(same_subject_, ns, subject, revert_seq, now_us, actor);
}

int ExtractedDecisionStore::falsify_commit(const std::string& ns, const std::string& commit_prefix,
                                           std::int64_t revert_seq, std::int64_t now_us,
                                           std::string_view actor) {
  if (commit_prefix.empty()) return 0;
  std::string past_prefix = commit_prefix;
  ++past_prefix.back();
  same_commit_.reset();
  same_commit_.bind(4, past_prefix);
  return falsify_matching(same_commit_, ns, commit_prefix, revert_seq, now_us, actor);
}

int ExtractedDecisionStore::falsify_matching(SQLite::Statement& query, const std::string& ns,
                                             const std::string& key, std::int64_t revert_seq,
                                             std::int64_t now_us, std::string_view actor) {
  std::vector<std::string> ids;
  query.reset();
  query.bind(1, ns);
  query.bind(2, key);
  query.bind(3, static_cast<std::int64_t>(revert_seq));
  while (query.executeStep()) {
    ids.push_back(query.getColumn(0).getString());
    if (std::string target = query.getColumn(1).getString(); !target.empty()) {
      changed_targets_.push_back(std::move(target));
    }
  }
  query.reset();
  for (const std::string& id : ids) falsify(id, revert_seq, now_us, actor);
  return static_cast<int>(ids.size());
}

void ExtractedDecisionStore::falsify(const std::string& decision_id, std::int64_t revert_seq,
                                     std::int64_t now_us, std::string_view actor) {
  change_status(decision_id, "falsified", "", "deprecate",
                "reverted by the event of seq " + std::to_string(revert_seq), now_us, actor);
}

void ExtractedDecisionStore::change_status(const std::string& id, const char* status,
                                           const std::string& superseded_by, const char* action,
                                           const std::string& rationale, std::int64_t now_us,
                                           std::string_view actor) {
  previous_state_.reset();
  previous_state_.bind(1, id);
  const std::string previous =
      previous_state_.executeStep() ? previous_state_.getColumn(0).getString() : "";
  previous_state_.reset();
  set_status_.reset();
  set_status_.bind(1, id);
  set_status_.bind(2, status);
  if (superseded_by.empty()) {
    set_status_.bind(3);
  } else {
    set_status_.bind(3, superseded_by);
  }
  set_status_.bind(4, static_cast<std::int64_t>(now_us));
  set_status_.exec();
  set_status_.reset();
  audit_.append("knowledge", id, action, actor, now_us, rationale, previous);
}

std::vector<std::string> ExtractedDecisionStore::take_changed_targets() {
  return std::exchange(changed_targets_, {});
}

}  // namespace reflectd::store
