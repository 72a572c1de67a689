#include "memory_ops/event_state.hpp"

#include "store/audit_log.hpp"
#include "store/event_lifecycle.hpp"

namespace reflectd::memory_ops {

const char* to_string(StateChange change) {
  switch (change) {
    case StateChange::kRestore: return "restore";
    case StateChange::kPin: return "pin";
    case StateChange::kUnpin: return "unpin";
  }
  return "restore";
}

nlohmann::json change_event_state(SQLite::Database& db, const std::vector<SelectedEvent>& events,
                                  StateChange change, const std::string& actor,
                                  std::int64_t now_us) {
  store::AuditLog audit(db);
  SQLite::Statement update(db,
                           "UPDATE events SET status = ?2, pinned = ?3, salience_base = ?4, "
                           "salience_ref_us = ?5, archive_at_us = ?6 WHERE seq = ?1");
  nlohmann::json changed = nlohmann::json::array();
  nlohmann::json unchanged = nlohmann::json::array();
  for (const auto& selected : events) {
    auto event = store::read_event_lifecycle(db, selected.id);
    if (!event) continue;
    const bool already = (change == StateChange::kRestore && event->status != "archived") ||
                         (change == StateChange::kPin && event->profile.pinned) ||
                         (change == StateChange::kUnpin && !event->profile.pinned);
    if (already) {
      unchanged.push_back(selected.id);
      continue;
    }
    const nlohmann::json previous = {{"status", event->status},
                                     {"pinned", event->profile.pinned},
                                     {"salience_base", event->salience_base}};
    std::string status = event->status;
    double base = event->salience_at(now_us);
    const char* rationale = "";
    switch (change) {
      case StateChange::kRestore:
        status = "active";
        base = 1.0;
        rationale = "restored from the archive";
        break;
      case StateChange::kPin:
        event->profile.pinned = true;
        rationale = "pinned: salience no longer decays";
        break;
      case StateChange::kUnpin:
        event->profile.pinned = false;
        rationale = "unpinned: salience decays again from now";
        break;
    }
    const auto archive_at = model::archive_at_us(base, now_us, event->received_us, event->profile);
    update.reset();
    update.bind(1, static_cast<std::int64_t>(event->seq));
    update.bind(2, status);
    update.bind(3, event->profile.pinned ? 1 : 0);
    update.bind(4, base);
    update.bind(5, static_cast<std::int64_t>(now_us));
    if (archive_at) {
      update.bind(6, static_cast<std::int64_t>(*archive_at));
    } else {
      update.bind(6);
    }
    update.exec();
    audit.append("event", selected.id, "revise", actor, now_us, rationale, previous.dump());
    changed.push_back(selected.id);
  }
  return {{"changed", std::move(changed)}, {"unchanged", std::move(unchanged)}};
}

}  // namespace reflectd::memory_ops
