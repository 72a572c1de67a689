#include "daemon/settings.hpp"

#include "memory_ops/retention.hpp"

#include "jobs/decay.hpp"
#include "jobs/facts.hpp"
#include "jobs/medallion.hpp"
#include "jobs/sql_functions.hpp"

namespace reflectd::daemon {
namespace {

model::DecayProfile profile(const config::DecayProfileConfig& c) {
  model::DecayProfile p;
  p.curve = model::parse_curve(c.curve).value_or(model::Curve::kExponential);
  p.half_life_s = c.half_life_s;
  p.min_salience = c.min_salience;
  p.max_age_s = c.max_age_s;
  p.reinforcement_gain = c.reinforcement_gain;
  p.deletion_policy =
      model::parse_deletion_policy(c.deletion_policy).value_or(model::DeletionPolicy::kManualOnly);
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
  options.max_pages = config.store.max_pages;
  options.fts_batch_events = config.store.fts_batch_events;
  options.checkpoint_pages = config.store.checkpoint_pages;
  options.cache_mib = config.store.cache_mib;
  options.content_dedup =
      store::parse_content_dedup(config.store.dedup).value_or(store::ContentDedup::kOff);
  options.commit_pipelining = config.store.commit_pipelining;
  return options;
}

store::DatabaseOptions jobs_database_options(const config::Config& config,
                                             const std::string& path) {
  const std::string& store = config.store.synchronous;
  const bool durable_events = store == "full" || store == "extra";
  return {path, durable_events ? config.jobs.synchronous : store, config.store.busy_timeout_ms};
}

model::VitalityParams vitality_params(const config::DecayConfig& decay) {
  return {decay.decaying_after_days, decay.dormant_after_days, decay.decaying_loss_per_week,
          decay.dormant_loss_per_week, decay.min_confidence_share};
}

jobs::ConsolidationParams consolidation_params(const config::Config& config) {
  const auto& c = config.consolidation;
  jobs::ConsolidationParams p;
  p.gap_us = c.gap_minutes * 60 * 1'000'000;
  p.weight_decision = c.weight_decision;
  p.weight_commit_change = c.weight_commit_change;
  p.weight_error = c.weight_error;
  p.weight_result_success = c.weight_result_success;
  p.weight_result_other = c.weight_result_other;
  p.weight_call = c.weight_call;
  p.weight_task = c.weight_task;
  p.weight_prompt = c.weight_prompt;
  p.weight_problem_solution = c.weight_problem_solution;
  p.stream_weight_threshold = c.stream_weight_threshold;
  p.metrics.window_days = c.window_days;
  p.accept_threshold = c.accept_threshold;
  p.pattern_min_occurrences = c.pattern_min_occurrences;
  p.pattern_min_trajectories = c.pattern_min_trajectories;
  p.competence_min_successes = c.competence_min_successes;
  p.vitality = vitality_params(config.decay);
  return p;
}

jobs::MedallionParams medallion_params(const config::Config& config) {
  jobs::MedallionParams params;
  for (const auto& text : config.medallion.scopes) {
    try {
      params.scopes.push_back(jobs::parse_medallion_scope(text));
    } catch (const std::invalid_argument& error) {
      throw config::ConfigError("medallion.scopes: '" + text + "': " + error.what());
    }
  }
  params.vitality = vitality_params(config.decay);
  params.edge_half_life_s =
      static_cast<std::int64_t>(config.entities.edge_half_life_days * 86400.0);
  return params;
}

jobs::ClusterParams cluster_params(const config::Config& config) {
  jobs::ClusterParams p;
  const auto& e = config.entities;
  const auto& c = config.clustering;
  p.entities.hebbian_rate = e.hebbian_rate;
  p.entities.edge_half_life_s = static_cast<std::int64_t>(e.edge_half_life_days * 86400.0);
  p.entities.max_co_mentions = e.max_co_mentions;
  p.similarity_threshold = c.similarity_threshold;
  p.duplicate_threshold = c.duplicate_threshold;
  p.vector_terms = c.vector_terms;
  p.centroid_terms = c.centroid_terms;
  p.index_terms = c.index_terms;
  p.query_terms = c.query_terms;
  p.candidates_per_term = c.candidates_per_term;
  p.communities.resolution = c.community_resolution;
  p.communities.min_entities = c.community_min_entities;
  return p;
}

recall::RecallParams recall_params(const config::Config& config,
                                   std::shared_ptr<const recall::WordNetLoader> wordnet) {
  const auto& r = config.recall;
  recall::RecallParams p;
  p.candidates = r.candidates;
  p.seeds = r.seeds;
  p.entity_events = r.entity_events;
  p.hop1_weight = r.hop1_weight;
  p.hop2_weight = r.hop2_weight;
  p.entity_weight = r.entity_weight;
  p.speaker_weight = r.speaker_weight;
  p.temporal_weight = r.temporal_weight;
  p.salience_weight = r.salience_weight;
  p.max_content_bytes = r.max_content_bytes;
  p.max_term_share = r.max_term_share;
  p.derived_results = r.derived_results;
  p.wordnet = std::move(wordnet);
  p.semantic_weight = r.semantic_weight;
  p.related_words = r.related_words;
  p.related_depth = r.related_depth;
  p.related_postings = r.related_postings;
  return p;
}

jobs::ImportanceParams importance_params(const config::Config& config) {
  jobs::ImportanceParams p;
  const auto& i = config.importance;
  p.half_life_days = i.half_life_days;
  p.damping = i.damping;
  p.max_iterations = i.max_iterations;
  p.tolerance = i.tolerance;
  p.weight_pagerank = i.weight_pagerank;
  p.weight_mentions = i.weight_mentions;
  p.weight_recency = i.weight_recency;
  p.top_entities = i.top_entities;
  p.edge_half_life_s = static_cast<std::int64_t>(config.entities.edge_half_life_days * 86400.0);
  return p;
}

namespace {

jobs::JobSchedule schedule(const config::JobConfig& c) {
  return {c.enabled, c.interval_s, c.jitter_pct, c.timeout_s, c.after_events, c.idle_s};
}

}  // namespace

std::vector<memory_ops::RetentionRule> retention_rules(const config::Config& config) {
  std::vector<memory_ops::RetentionRule> rules;
  for (const auto& text : config.retention.rules) {
    try {
      rules.push_back(memory_ops::parse_retention_rule(text));
    } catch (const std::invalid_argument& error) {
      throw config::ConfigError("retention.rules: '" + text + "': " + error.what());
    }
  }
  return rules;
}

std::vector<jobs::Job> build_jobs(const config::Config& config) {
  std::vector<jobs::Job> out;
  out.push_back({"consolidate", schedule(config.jobs.consolidate),
                 [params = consolidation_params(config)](jobs::JobContext& ctx) {
                   return jobs::run_consolidation(ctx, params);
                 }});
  out.push_back({"medallion", schedule(config.jobs.medallion),
                 [params = medallion_params(config)](jobs::JobContext& ctx) {
                   return jobs::run_medallion_refresh(ctx, params);
                 }});
  out.push_back({"facts", schedule(config.jobs.facts),
                 [](jobs::JobContext& ctx) { return jobs::run_facts(ctx); }});
  out.push_back({"cluster", schedule(config.jobs.cluster),
                 [params = cluster_params(config)](jobs::JobContext& ctx) {
                   return jobs::run_clustering(ctx, params);
                 }});
  out.push_back({"importance", schedule(config.jobs.importance),
                 [params = importance_params(config)](jobs::JobContext& ctx) {
                   return jobs::run_importance(ctx, params);
                 }});
  out.push_back({"retention", schedule(config.jobs.retention),
                 [rules = retention_rules(config)](jobs::JobContext& ctx) {
                   return memory_ops::run_retention(ctx, rules);
                 }});
  out.push_back({"decay", schedule(config.jobs.decay),
                 [params = vitality_params(config.decay),
                  half_life_s = static_cast<std::int64_t>(config.entities.edge_half_life_days *
                                                          86400.0)](jobs::JobContext& ctx) {
                   // The SQL functions point at this closure's copy, alive for the whole run.
                   jobs::register_sql_functions(ctx.db, params);
                   return jobs::run_decay(ctx, params, half_life_s);
                 }});
  return out;
}

}  // namespace reflectd::daemon
