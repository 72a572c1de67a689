#include "jobs/consolidation_questions.hpp"

namespace reflectd::jobs::consolidation {

bool asks_question(std::string_view kind, std::string_view content) {
  const auto end = content.find_last_not_of(" \t\r\n");
  return (kind == "prompt" || kind == "task" || kind == "conversation") &&
         end != std::string_view::npos && content[end] == '?';
}

void advance_question(PendingQuestion& pending, std::int64_t seq, std::string_view kind,
                      std::string_view content, const std::string& agent) {
  if (pending.seq != 0 && (agent != pending.agent || kind == "result" || kind == "decision")) {
    pending = {0, "", true};
  }
  if (asks_question(kind, content)) pending = {seq, agent, true};
}

Questions::Questions(SQLite::Database& db)
    : load_(db,
            "SELECT seq, agent_id FROM unanswered_questions WHERE namespace = ?1 AND "
            "trajectory_id = ?2"),
      save_(db,
            "INSERT OR REPLACE INTO unanswered_questions (namespace, trajectory_id, "
            "seq, agent_id) VALUES (?1, ?2, ?3, ?4)"),
      clear_(db,
             "DELETE FROM unanswered_questions WHERE namespace = ?1 AND "
             "trajectory_id = ?2") {}

void Questions::track(const std::string& ns, const std::string& trajectory, std::int64_t seq,
                      const std::string& kind, const std::string& content,
                      const std::string& agent) {
  auto [it, fresh] = chunk_.try_emplace(trajectory);
  PendingQuestion& pending = it->second;
  if (fresh) {
    load_.reset();
    load_.bind(1, ns);
    load_.bind(2, trajectory);
    if (load_.executeStep()) {
      pending.seq = load_.getColumn(0).getInt64();
      pending.agent = load_.getColumn(1).getString();
    }
    load_.reset();
  }
  advance_question(pending, seq, kind, content, agent);
}

void Questions::store(const std::string& ns) {
  for (const auto& [trajectory, pending] : chunk_) {
    if (!pending.dirty) continue;
    SQLite::Statement& q = pending.seq != 0 ? save_ : clear_;
    q.reset();
    q.bind(1, ns);
    q.bind(2, trajectory);
    if (pending.seq != 0) {
      q.bind(3, static_cast<std::int64_t>(pending.seq));
      q.bind(4, pending.agent);
    }
    q.exec();
    q.reset();
  }
}

}  // namespace reflectd::jobs::consolidation
