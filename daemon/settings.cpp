#include "daemon/settings.hpp"

namespace reflectd::daemon {
namespace {

jobs::DecayProfile profile(const config::DecayProfileConfig& c) {
  jobs::DecayProfile p;
  p.curve = jobs::parse_curve(c.curve).value_or(jobs::Curve::kExponential);
  p.half_life_s = c.half_life_s;
  p.min_salience = c.min_salience;
  p.max_age_s = c.max_age_s;
  p.reinforcement_gain = c.reinforcement_gain;
  p.deletion_policy =
      jobs::parse_deletion_policy(c.deletion_policy).value_or(jobs::DeletionPolicy::kManualOnly);
  return p;
}

}  // namespace

store::DecayProfiles decay_profiles(const config::DecayConfig& decay) {
  return {profile(decay.episodic), profile(decay.semantic)};
}

store::WriterOptions writer_options(const config::Config& config, const std::string& path) {
  store::WriterOptions options;
  options.database = {path, config.store.synchronous, config.store.busy_timeout_ms};
  options.profiles = decay_profiles(config.decay);
  options.commit_max_events = config.store.commit_max_events;
  options.commit_max_delay_ms = config.store.commit_max_delay_ms;
  options.queue_capacity_events = config.store.writer_queue_events;
  return options;
}

}  // namespace reflectd::daemon
