#include "store/reinforcement.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

#include "store/audit_log.hpp"
#include "store/event_lifecycle.hpp"

namespace reflectd::store {
namespace {

double hits_term(std::int64_t hits) {
  return 0.2 * std::min(1.0, std::log(1.0 + static_cast<double>(hits)) / 2.3);
}

std::string reinforce_knowledge(SQLite::Database& db, const std::string& id, bool useful,
                                const std::string& actor, std::int64_t now,
                                const model::DecayProfile& profile) {
  SQLite::Statement row(db,
                        "SELECT hit_count, salience_base, salience_ref_us, first_seen_us, "
                        "confidence_base, json_object('hit_count', hit_count, 'salience_base', "
                        "salience_base, 'vitality', vitality, 'confidence', confidence) "
                        "FROM knowledge WHERE decision_id = ?1");
  row.bind(1, id);
  if (!row.executeStep()) return {};
  const std::int64_t hits = row.getColumn(0).getInt64();
  const double current =
      model::salience_at(row.getColumn(1).getDouble(), row.getColumn(2).getInt64(),
                         row.getColumn(3).getInt64(), profile, now)
          .value_or(profile.min_salience);
  const double base = row.getColumn(4).getDouble();
  const std::string previous = row.getColumn(5).getString();
  nlohmann::json out = {{"record_type", "knowledge"}, {"id", id}};
  if (useful) {
    const double salience = model::reinforce(current, profile.reinforcement_gain);
    const double confidence = std::clamp(base - hits_term(hits) + hits_term(hits + 1), 0.0, 1.0);
    SQLite::Statement update(db,
                             "UPDATE knowledge SET hit_count = hit_count + 1, last_hit_us = ?2, "
                             "salience_base = ?3, salience_ref_us = ?2, vitality = 'active', "
                             "confidence_base = ?4, confidence = ?4, updated_us = ?2 "
                             "WHERE decision_id = ?1");
    update.bind(1, id);
    update.bind(2, static_cast<std::int64_t>(now));
    update.bind(3, salience);
    update.bind(4, confidence);
    update.exec();
    AuditLog(db).append("knowledge", id, "reinforce", actor, now, "reported useful", previous);
    out.update({{"hit_count", hits + 1},
                {"salience", salience},
                {"vitality", "active"},
                {"confidence", confidence}});
  } else {
    const double salience =
        *model::penalize(current, profile.reinforcement_gain, profile.min_salience);
    SQLite::Statement update(db,
                             "UPDATE knowledge SET salience_base = ?3, salience_ref_us = ?2, "
                             "updated_us = ?2 WHERE decision_id = ?1");
    update.bind(1, id);
    update.bind(2, static_cast<std::int64_t>(now));
    update.bind(3, salience);
    update.exec();
    AuditLog(db).append("knowledge", id, "decay", actor, now, "reported misleading", previous);
    out.update({{"hit_count", hits}, {"salience", salience}});
  }
  return out.dump();
}

std::string reinforce_event(SQLite::Database& db, const std::string& id, bool useful,
                            const std::string& actor, std::int64_t now) {
  const auto event = read_event_lifecycle(db, id);
  if (!event) return {};
  const model::DecayProfile& profile = event->profile;
  const std::int64_t hits = event->hit_count;
  const std::int64_t received = event->received_us;
  const double current = event->salience_at(now);
  const std::string previous = nlohmann::json{
      {"hit_count", hits},
      {"salience_base", event->salience_base},
      {"status", event->status}}.dump();
  const double salience =
      useful ? model::reinforce(current, profile.reinforcement_gain)
             : *model::penalize(current, profile.reinforcement_gain, profile.min_salience);
  const auto archive_at = model::archive_at_us(salience, now, received, profile);
  SQLite::Statement update(db,
                           "UPDATE events SET hit_count = hit_count + ?2, last_hit_us = CASE WHEN "
                           "?2 = 1 THEN ?3 ELSE last_hit_us END, salience_base = ?4, "
                           "salience_ref_us = ?3, archive_at_us = ?5 WHERE uid = ?1");
  update.bind(1, id);
  update.bind(2, useful ? 1 : 0);
  update.bind(3, static_cast<std::int64_t>(now));
  update.bind(4, salience);
  if (archive_at) {
    update.bind(5, static_cast<std::int64_t>(*archive_at));
  } else {
    update.bind(5);
  }
  update.exec();
  AuditLog(db).append("event", id, useful ? "reinforce" : "decay", actor, now,
                      useful ? "reported useful" : "reported misleading", previous);
  return nlohmann::json{{"record_type", "event"},
                        {"id", id},
                        {"hit_count", hits + (useful ? 1 : 0)},
                        {"salience", salience}}
      .dump();
}

}  // namespace

std::string reinforce(SQLite::Database& db, const std::string& id, bool useful,
                      const std::string& actor, std::int64_t now_us,
                      const DecayProfiles& profiles) {
  if (auto out = reinforce_knowledge(db, id, useful, actor, now_us, profiles.semantic);
      !out.empty()) {
    return out;
  }
  if (auto out = reinforce_event(db, id, useful, actor, now_us); !out.empty()) return out;
  throw std::invalid_argument("no knowledge row or event has the id '" + id + "'");
}

}  // namespace reflectd::store
