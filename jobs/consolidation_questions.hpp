#pragma once
// Unanswered questions (jobs/consolidation.hpp, point 7): a prompt, task or conversation turn
// whose text ends in "?" is pending in its trajectory until a later event of the trajectory
// comes from another agent or is a result or a decision. The newest pending question of each
// trajectory is kept in unanswered_questions, read at the trajectory's first event in a chunk
// and written once at the chunk's end.
//
// Thread-safety: none (one per job run). Errors: SQLite::Exception from the statements.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace reflectd::jobs::consolidation {

/// A trajectory's pending question as a chunk sees it.
struct PendingQuestion {
  std::int64_t seq = 0;  ///< The question's event; 0: none pending.
  std::string agent;     ///< Who asked it.
  bool dirty = false;    ///< Changed in this chunk: to be written at its end.
};

/// True when an event of `kind` asks a question: a prompt, task or conversation turn whose
/// content's last character other than whitespace (space, \t, \r, \n) is '?'. Pure.
bool asks_question(std::string_view kind, std::string_view content);

/// The pending question after event `seq` of `kind` with `content` from `agent` in the same
/// trajectory: the event answers a pending question when it comes from another agent or is a
/// result or a decision (the question is then cleared, dirty), and asks one by
/// asks_question() (it then becomes the pending one, dirty). Pure.
void advance_question(PendingQuestion& pending, std::int64_t seq, std::string_view kind,
                      std::string_view content, const std::string& agent);

class Questions {
 public:
  /// Prepares the statements on `db`.
  explicit Questions(SQLite::Database& db);

  /// Forgets the previous chunk's trajectories.
  void begin_chunk() { chunk_.clear(); }

  /// Event `seq` of `trajectory` in `ns` (advance_question()), in seq order.
  void track(const std::string& ns, const std::string& trajectory, std::int64_t seq,
             const std::string& kind, const std::string& content, const std::string& agent);

  /// Writes the chunk's changed trajectories: their pending question, or its removal.
  void store(const std::string& ns);

 private:
  SQLite::Statement load_;
  SQLite::Statement save_;
  SQLite::Statement clear_;
  std::map<std::string, PendingQuestion> chunk_;  // by trajectory, this chunk only
};

}  // namespace reflectd::jobs::consolidation
