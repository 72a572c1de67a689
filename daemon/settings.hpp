#pragma once
// Maps the validated configuration onto the libraries' option structs. The daemon, the
// benchmarks and tests build their options here, so a config key means the same everywhere.

#include <string>

#include "config/config.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/importance.hpp"
#include "jobs/job.hpp"
#include "jobs/medallion.hpp"
#include "memory_ops/retention.hpp"
#include "recall/recall.hpp"
#include "store/lifecycle.hpp"
#include "store/writer.hpp"

namespace reflectd::daemon {

/// The decay profiles of `decay.episodic.*` and `decay.semantic.*`.
store::DecayProfiles decay_profiles(const config::DecayConfig& decay);

/// Writer options for the database at `path` (already resolved, see resolve_store_path()).
store::WriterOptions writer_options(const config::Config& config, const std::string& path);

/// The jobs' connection to the database at `path`: `store.busy_timeout_ms`, and
/// `jobs.synchronous` when `store.synchronous` is full or extra, else `store.synchronous`
/// (jobs are never made more durable than the events they derive from, whose acknowledgement
/// is what `store.synchronous` promises; docs/RELIABILITY.md, "Jobs and readers").
store::DatabaseOptions jobs_database_options(const config::Config& config, const std::string& path);

/// `decay.*_after_days` and `decay.*_loss_per_week`.
model::VitalityParams vitality_params(const config::DecayConfig& decay);

/// `consolidation.*` (and the vitality thresholds used for phase promotion).
jobs::ConsolidationParams consolidation_params(const config::Config& config);

/// `medallion.scopes` parsed; throws config::ConfigError naming a malformed scope.
jobs::MedallionParams medallion_params(const config::Config& config);

/// `entities.*`, `clustering.*` and the community settings of the `cluster` job.
jobs::ClusterParams cluster_params(const config::Config& config);

/// The recall.* keys as recall::RecallParams, with the WordNet of recall.wordnet_dir (null
/// when it is "").
recall::RecallParams recall_params(const config::Config& config,
                                   std::shared_ptr<const recall::WordNetLoader> wordnet);

/// `importance.*` (and entities.edge_half_life_days for edge strength).
jobs::ImportanceParams importance_params(const config::Config& config);

/// The scheduled jobs with their schedules (`jobs.<name>.*`) and run functions.
/// The retention rules of `retention.rules` (memory_ops/retention.hpp). Throws
/// config::ConfigError "retention.rules: '<rule>': <problem>" for a malformed rule.
std::vector<reflectd::memory_ops::RetentionRule> retention_rules(const config::Config& config);

std::vector<jobs::Job> build_jobs(const config::Config& config);

}  // namespace reflectd::daemon
