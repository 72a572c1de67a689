#include "store/event_lifecycle.hpp"

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
  e.seq = row.getColumn(0).getInt64();
  e.status = row.getColumn(1).getString();
  e.hit_count = row.getColumn(2).getInt64();
  e.salience_base = row.getColumn(3).getDouble();
  e.received_us = row.getColumn(5).getInt64();
  e.salience_ref_us = row.getColumn(4).getInt64();
  e.profile.curve =
      model::parse_curve(row.getColumn(6).getString()).value_or(model::Curve::kExponential);
  e.profile.half_life_s = row.getColumn(7).getInt64();
  e.profile.min_salience = row.getColumn(8).getDouble();
  e.profile.max_age_s = row.getColumn(9).getInt64();
  e.profile.reinforcement_gain = row.getColumn(10).getDouble();
  e.profile.pinned = row.getColumn(11).getInt() != 0;
  e.profile.deletion_policy = model::parse_deletion_policy(row.getColumn(12).getString())
                                  .value_or(model::DeletionPolicy::kManualOnly);
  return e;
}

}  // namespace reflectd::store
