#pragma once
// The decisions the consolidation job finds in the events
// (jobs/decision_extraction.hpp gives the rules), stored as knowledge rows of kind `decision` and
// provenance `internal`, with their source in table extracted_decisions (migration 27).
//
// Lifecycle (docs/JOBS.md "Decisions from the events"):
//   - A later decision of the namespace answering the same problem (equal problem_signature
//     as the caller computes it: model/formulas.hpp problem_signature() of a "Problem:" line,
//     "task: <task>" for a trajectory) supersedes the earlier one: the earlier row becomes
//     `superseded` with superseded_by, the later lists it in `supersedes`. Nothing is deleted.
//   - A revert commit falsifies the active decisions whose source commit had the subject it
//     quotes (`Revert "<subject>"`) or the id it names ("This reverts commit <sha>") (status
//     `falsified`); jobs/commit_decisions.hpp reads the forms.
// Every change writes an audit row with the previous state.
//
// Agents' own decisions (provenance external) never conflict with these rows
// (store/knowledge_store.hpp checks external decisions only).
//
// Thread-safety: none; one instance per connection and thread. Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/audit_log.hpp"

namespace reflectd::store {

/// One decision to store.
struct DecisionRecord {
  std::string decision_id;        ///< "decision:<event id>" or "decision:<ns>:<trajectory>".
  std::string ns;                 ///< Namespace.
  std::string target;             ///< The events' target; may be empty.
  std::string statement;          ///< knowledge.title.
  std::string rationale;          ///< knowledge.rationale.
  std::string source;             ///< "problem_solution" or "trajectory".
  std::string problem_signature;  ///< Empty: never superseded by signature.
  std::string subject;            ///< First line of the source commit (for reverts); may be empty.
  double confidence = 0;          ///< [0,1]: confidence and confidence_base.
  std::int64_t source_seq = 0;    ///< The event that states it (seq).
  std::int64_t ts_us = 0;         ///< That event's time: first_seen_us and last_seen_us.
  std::vector<std::pair<std::int64_t, std::int64_t>> evidence;  ///< (seq, ts_us), ascending seq.
};

class ExtractedDecisionStore {
 public:
  /// Prepares the statements; the tables must exist (migration 27).
  explicit ExtractedDecisionStore(SQLite::Database& db);

  /// Creates (or, for the same decision_id, replaces the text, confidence and evidence of) the
  /// decision, then supersedes the namespace's other active decision with the same problem
  /// signature. `now_us` stamps updated_us and the audit rows, `actor` names the writer.
  /// Returns true when the decision is new.
  bool record(const DecisionRecord& decision, std::int64_t now_us, std::string_view actor);

  /// Marks `falsified` the active decisions of `ns` whose source commit's subject is
  /// `subject`, citing the revert event `revert_seq`. Returns how many changed.
  int falsify_reverted(const std::string& ns, const std::string& subject, std::int64_t revert_seq,
                       std::int64_t now_us, std::string_view actor);

  /// Marks `falsified` the active decisions of `ns` stated by a commit whose id (the source
  /// event's context.commit) starts with `commit_prefix` (lower-case hex), citing the revert
  /// event `revert_seq`. Returns how many changed.
  int falsify_commit(const std::string& ns, const std::string& commit_prefix,
                     std::int64_t revert_seq, std::int64_t now_us, std::string_view actor);

  /// Marks the decision `decision_id` `falsified`, citing the revert event `revert_seq` (a
  /// reverted change recorded by the revert itself: jobs/commit_decisions.hpp).
  void falsify(const std::string& decision_id, std::int64_t revert_seq, std::int64_t now_us,
               std::string_view actor);

  /// The targets of the decisions created or changed since the last call (non-empty ones, in
  /// the order they changed, possibly repeated), and forgets them: what a caller keeping
  /// per-target summaries must look at again.
  std::vector<std::string> take_changed_targets();

 private:
  // Falsifies the decisions `query` (?1 namespace, ?2 key, ?3 revert seq) selects.
  int falsify_matching(SQLite::Statement& query, const std::string& ns, const std::string& key,
                       std::int64_t revert_seq, std::int64_t now_us, std::string_view actor);

  // Sets `status` (and superseded_by, NULL when empty) with an audit row holding the previous
  // state.
  void change_status(const std::string& id, const char* status, const std::string& superseded_by,
                     const char* action, const std::string& rationale, std::int64_t now_us,
                     std::string_view actor);

  AuditLog audit_;
  SQLite::Statement exists_;
  SQLite::Statement upsert_knowledge_;
  SQLite::Statement upsert_source_;
  SQLite::Statement insert_evidence_;
  SQLite::Statement same_problem_;
  SQLite::Statement same_subject_;
  SQLite::Statement same_commit_;
  SQLite::Statement previous_state_;
  SQLite::Statement set_status_;
  SQLite::Statement set_supersedes_;
  std::vector<std::string> changed_targets_;
};

}  // namespace reflectd::store
