#include "store/event_lifecycle.hpp"
#include "store/columns.hpp"

namespace reflectd::store {

double StoredEventLifecycle::salience_at(std::int64_t now_us) const {
  return model::salience_at(salience_base, salience_ref_us, received_us, profile, now_us)
      .value_or(profile.min_salience);
}

std::optional<StoredEventLifecycle> read_event_lifecycle(SQLite::Database& db,
                                                         const std::string& uid) {
  SQLite::Statement row(db,
                        "SELECT seq, status, hit_count, salience_base, salience_ref_us, "
                        "received_us, decay_curve, half_life_s, min_salience, max_age_s, "
                        "reinforcement_gain, pinned, deletion_policy FROM events WHERE uid = ?1");
  row.bind(1, uid);
  if (!row.executeStep()) return std::nullopt;
  StoredEventLifecycle e;
  std::string curve;
  std::string deletion_policy;
  Columns(row) >> e.seq >> e.status >> e.hit_count >> e.salience_base >> e.salience_ref_us >>
      e.received_us >> curve >> e.profile.half_life_s >> e.profile.min_salience >>
      e.profile.max_age_s >> e.profile.reinforcement_gain >> e.profile.pinned >> deletion_policy;
  e.profile.curve = model::parse_curve(curve).value_or(model::Curve::kExponential);
  e.profile.deletion_policy =
      model::parse_deletion_policy(deletion_policy).value_or(model::DeletionPolicy::kManualOnly);
  return e;
}

}  // namespace reflectd::store
