#pragma once
// The inventory of what the jobs derive from a namespace's events, in one place: every table
// (or part of one) the cluster, consolidate, importance, medallion and decay jobs fill for a
// namespace, with their watermarks. A hard forget (memory_ops/forget.hpp) clears it for each
// namespace it touched and asks the jobs to run again: the jobs are deterministic (the same
// events in the same order give the same tables, jobs_test proves it for every split into
// runs), so what they rebuild is what they would hold had the forgotten events never arrived,
// and no text quoted from a forgotten event survives in a summary, a cluster label, a pattern,
// a medallion or its history.
//
// The jobs' own audit rows about those records go with them (their rationales and ids quote
// targets, titles and entity names; the rebuild writes new ones).
//
// Kept: what agents wrote themselves (knowledge of provenance 'external', reset to what their
// own event made: the consolidation job's evaluation of them is derived; medallions listed in
// agent_medallions with their evidence; their audit rows), the
// facts (one global watermark: memory_ops/forget.cpp removes a forgotten event's facts one by
// one), job_runs, dead letters, and the counters triggers keep (event_namespaces,
// event_span_changes, entity_summary_epoch).
//
// A table added to a job must be added here; derived_state_test checks that every table of
// the schema is either cleared here or listed as kept.

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <string>
#include <string_view>

namespace reflectd::memory_ops {

/// The tables clear_derived_state() empties of the namespace's rows (all of them but the
/// knowledge rows of provenance 'external' and the job_state rows of other namespaces).
inline constexpr std::array<std::string_view, 36> kDerivedTables{"knowledge_evidence",
                                                                 "consolidation_streams",
                                                                 "extracted_decisions",
                                                                 "knowledge",
                                                                 "community_members",
                                                                 "observations",
                                                                 "consolidation_targets",
                                                                 "event_targets",
                                                                 "problem_occurrences",
                                                                 "problem_patterns",
                                                                 "problem_pattern_targets",
                                                                 "trajectory_outcomes",
                                                                 "unanswered_questions",
                                                                 "event_clusters",
                                                                 "cluster_entities",
                                                                 "cluster_postings",
                                                                 "cluster_terms",
                                                                 "clusters",
                                                                 "entity_relationships",
                                                                 "event_entities",
                                                                 "entity_mention_weights",
                                                                 "entity_summary_dirty",
                                                                 "entity_summary_state",
                                                                 "entity_aliases",
                                                                 "entities",
                                                                 "medallion_items",
                                                                 "medallion_nodes",
                                                                 "medallion_tags",
                                                                 "medallion_history",
                                                                 "medallions",
                                                                 "medallion_scopes",
                                                                 "medallion_spans",
                                                                 "importance_state",
                                                                 "entity_summary_watermarks",
                                                                 "decay_edge_watermarks",
                                                                 "job_state"};

/// Tables a hard forget edits row by row (memory_ops/forget.cpp).
inline constexpr std::array<std::string_view, 3> kForgetEditedTables{"events", "facts",
                                                                     "fact_entity_links"};

/// Tables no hard forget touches (see above). The full-text index (events_fts and its shadow
/// tables) is purged of the forgotten events by forget.cpp.
inline constexpr std::array<std::string_view, 11> kKeptTables{"audit_log",
                                                              "dead_letters",
                                                              "job_runs",
                                                              "fts_state",
                                                              "event_namespaces",
                                                              "event_span_changes",
                                                              "entity_summary_epoch",
                                                              "forget_in_progress",
                                                              "entity_merges",
                                                              "agent_medallions",
                                                              "medallion_evidence"};

/// Deletes every row the jobs derived for namespace `ns` and their watermarks (job_state rows
/// of the namespace, decay_edge_watermarks, importance_state, entity_summary_watermarks,
/// medallion_spans) and the jobs' audit rows about them, so that the next runs start the
/// namespace from its first event. Must run inside a write transaction that marked itself in
/// forget_in_progress (memory_ops/forget.cpp). Returns the rows deleted. Errors:
/// SQLite::Exception.
std::int64_t clear_derived_state(SQLite::Database& db, const std::string& ns);

/// The jobs that rebuild a namespace's derived state, in the order to run them.
inline constexpr std::array<std::string_view, 5> kRebuildJobs{"cluster", "consolidate",
                                                              "importance", "medallion", "decay"};

}  // namespace reflectd::memory_ops
