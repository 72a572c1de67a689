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
//
// How a clear runs (run_pending_clears()): the namespace is first marked in derived_clears, in
// a transaction of its own; then every table is emptied of the namespace's rows a chunk of
// kClearChunkRows at a time, in write transactions that end as soon as the writer waits
// (jobs/job.hpp WriteTransaction::should_yield()), so that ingest goes on beside a clear of
// millions of rows; the last one removes the mark. The steps are idempotent: a clear that a
// crash or a cancellation interrupted runs again from its first step, and a daemon that
// starts with a marked namespace finishes its clear before any job runs
// (daemon/memory_commands.cpp). Until then readers may see the namespace's derived records
// partly gone; the events themselves are deleted only after the clear (memory_ops/forget.hpp).

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobs/job.hpp"

namespace reflectd::memory_ops {

/// The tables run_pending_clears() empties of the namespace's rows (all of them but the
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
/// tables) is purged of the forgotten events by forget.cpp. jetstream_positions stays: a
/// forgotten event must not be pulled from JetStream again.
inline constexpr std::array<std::string_view, 13> kKeptTables{"audit_log",
                                                              "dead_letters",
                                                              "job_runs",
                                                              "fts_state",
                                                              "event_namespaces",
                                                              "event_span_changes",
                                                              "entity_summary_epoch",
                                                              "forget_in_progress",
                                                              "entity_merges",
                                                              "agent_medallions",
                                                              "medallion_evidence",
                                                              "derived_clears",
                                                              "jetstream_positions"};

/// Rows one statement of a chunked clear deletes at most: about 1-3 ms of deleting at 1M
/// events (docs/PERFORMANCE.md, "Forget"), so that a waiting writer waits little longer than
/// the jobs' write slice.
inline constexpr std::int64_t kClearChunkRows = 2000;

/// Marks namespace `ns` for a clear (a derived_clears row; run_pending_clears() does it). Must
/// run inside a write transaction. Errors: SQLite::Exception.
void mark_for_clear(SQLite::Database& db, const std::string& ns, std::int64_t now_us);

/// The namespaces marked for a clear, by name.
std::vector<std::string> pending_clears(SQLite::Database& db);

/// Clears every marked namespace as described above, on the jobs' connection, and inserts each
/// one cleared into `cleared`; adds the write transactions it took to `*transactions` when
/// given. Returns the rows deleted. Run it with foreign keys off on that
/// connection (children go before parents, so no step leaves a dangling reference; with them
/// on, SQLite would look up each deleted row's children). Errors: SQLite::Exception;
/// JobCancelled between two transactions (the mark stays, and the clear is finished by the
/// next run_pending_clears()).
std::int64_t run_pending_clears(jobs::JobContext& ctx, std::set<std::string>& cleared,
                                std::int64_t* transactions = nullptr);

/// The jobs that rebuild a namespace's derived state, in the order to run them. Decay comes
/// before importance: its sweep merges the entities an alias learnt after their first mention
/// names ("agent:ana" and "person:ana"), and importance then sums and summarises the merged
/// entities, so the rebuild ends settled instead of with stale scores and summaries that a
/// second rebuild would change.
inline constexpr std::array<std::string_view, 5> kRebuildJobs{"cluster", "consolidate", "decay",
                                                              "importance", "medallion"};

}  // namespace reflectd::memory_ops
