#include "store/lifecycle.hpp"

namespace reflectd::store {

ResolvedLifecycle resolve_lifecycle(const EventRecord& event, const DecayProfiles& profiles) {
  ResolvedLifecycle out;
  out.profile =
      event.storage_class == StorageClass::kSemantic ? profiles.semantic : profiles.episodic;
  const LifecycleOverride& o = event.lifecycle;
  model::DecayProfile& p = out.profile;
  if (o.curve) p.curve = model::parse_curve(*o.curve).value_or(p.curve);
  if (o.half_life_s) p.half_life_s = *o.half_life_s;
  if (o.min_salience) p.min_salience = *o.min_salience;
  if (o.max_age_s) p.max_age_s = *o.max_age_s;
  if (o.reinforcement_gain) p.reinforcement_gain = *o.reinforcement_gain;
  if (o.pinned) p.pinned = *o.pinned;
  if (o.deletion_policy) {
    p.deletion_policy =
        model::parse_deletion_policy(*o.deletion_policy).value_or(p.deletion_policy);
  }
  out.base = event.salience.value_or(1.0);
  out.ref_us = event.received_us;
  out.archive_at = model::archive_at_us(out.base, out.ref_us, event.received_us, p);
  return out;
}

}  // namespace reflectd::store
