#pragma once
// Medallions (seed 001, Medallion Library v1): the compact, validated checkpoint an agent
// reads when it starts work on a scope. The seed's generator is a stub; reflectd builds each
// medallion extractively from what the other jobs derived (knowledge streams, decisions,
// observations, entities), with every item carrying the ids it came from in an `x_reflectd`
// extension field so an agent can drill down.
//
// Thread-safety: the functions are pure or use only the connection passed in.

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/job.hpp"
#include "model/formulas.hpp"

namespace reflectd::jobs {

// The jobs compute in the memory model's terms (model/formulas.hpp: phases, vitality, salience).
using namespace model;  // NOLINT(google-build-using-namespace)

/// Value of meta.model for every medallion reflectd writes.
inline constexpr const char* kMedallionModel = "reflectd-extractive/1";
/// Seed 001: summary.high_level is at most 300 characters.
inline constexpr std::size_t kHighLevelMaxChars = 300;

/// A scope a medallion covers (seed 001 MedallionScope plus the namespace its events come
/// from; empty = every namespace).
struct MedallionScope {
  std::string name;  ///< The medallion id is "med:<name>".
  std::string ns;
  std::vector<std::string> graph_nodes;
  std::vector<std::string> tags;
  bool automatic = false;  ///< One per namespace, derived, not configured.
};

/// Parses a configured scope, "name=<id>;namespace=<ns>;nodes=<a>,<b>;tags=<t>,<u>"
/// (`name` and one of `nodes`/`tags` required). Throws std::invalid_argument with the problem.
MedallionScope parse_medallion_scope(const std::string& text);

/// Seed 001 validation. Returns the violations, empty when valid: required fields and types,
/// confidence in [0,1], priority low|medium|high, subsystem status unknown|stable|in_progress|
/// deprecated, meta.status active|stale|superseded, updated_at >= created_at (RFC 3339),
/// summary.high_level at most 300 characters.
std::vector<std::string> validate_medallion(const nlohmann::json& medallion);

/// Seed 001 scope query semantics: every query node is one of the medallion's nodes, and the
/// tags overlap (an empty query tag list does not filter on tags).
bool scope_matches(const std::vector<std::string>& query_nodes,
                   const std::vector<std::string>& query_tags,
                   const std::vector<std::string>& medallion_nodes,
                   const std::vector<std::string>& medallion_tags);

/// Open-question priority (ours; the seed gives only the enum): from support s (occurrences
/// or evidence count) and days since last seen d: high when s >= 10 and d <= 30, low when
/// s < 3 or d > 365, else medium.
const char* question_priority(std::int64_t support, double days_since_seen);

/// A decision's importance in [0,1], which orders the medallion's decisions (ours; seed 001
/// asks for the important ones and gives no rule):
///   0.4 * confidence
/// + 0.2 * min(1, ln(1 + files) / ln(21))           how much of the tree its commit touched
/// + 0.2 * min(1, ln(1 + later) / ln(51))           later events in its area: work built on it
/// + 0.2 * min(1, standing_days / 365)              how long it has stood, up to the newest event
/// rounded to 9 decimals, so that ties are exact and are broken by id. A reverted or
/// superseded decision is not ranked: it is not active. Pure.
double decision_importance(double confidence, std::int64_t files, std::int64_t later,
                           double standing_days);

struct MedallionParams {
  std::vector<MedallionScope> scopes;  ///< Configured scopes (automatic ones are added).
  VitalityParams vitality;
  std::size_t max_items = 10;  ///< Per list (decisions, questions, subsystems...).
  std::int64_t edge_half_life_s =
      std::int64_t{90} * 86400;  ///< entities.edge_half_life_days, s: ranks summary links.
};

/// The medallion refresh job: for every scope (one per namespace plus the configured ones)
/// whose medallion is stale — missing, marked stale by new events, covering fewer events than
/// exist, listing a decision that was since superseded or deprecated, or built from another
/// scope configuration — builds, validates and stores the new version (previous one kept in
/// medallion_history) and publishes `medallion.updated` {id, scope, updated_at}. The id is
/// stable per scope, created_at never changes and updated_at strictly increases; D-<n> and
/// Q-<n> item ids are stable across refreshes. Entity summaries are refreshed first
/// (jobs/entity_summaries.hpp). Result: {"medallions_refreshed", "medallions_skipped",
/// "scopes", "summaries_refreshed", "summaries_skipped", "summaries_searched",
/// "summaries_searched_in_pass"}. Throws
/// SQLite::Exception or JobCancelled.
nlohmann::json run_medallion_refresh(JobContext& ctx, const MedallionParams& params);

}  // namespace reflectd::jobs
