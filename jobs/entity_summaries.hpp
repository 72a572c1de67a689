#pragma once
// Entity summary refresh (seed 003 SummaryRefreshResult; Arandu's "sleep-time compute" without
// an LLM): an extractive summary_text for every active entity:
//   "<display name> (<type>): <mentions> mentions from <first day> to <last day>, importance
//   <importance_score %.2f>. Known: <fact> (<valid from>); ... Decided: <decision> (<day>); ...
//   Reverted: <decision> (<day>). Most salient: "<line>"; "<line>". Strongest links: a, b, c."
// Known: the entity's current facts (seed 003 MemoryFact, jobs/facts.hpp; is_stale = 0), at
// most three: single-valued attributes first, then dated ones (a time expression gave their
// valid_from), each newest first by valid_from. Decided and
// Reverted, for a module entity (module:<target>): the newest three active decisions on its
// target and the newest falsified one (jobs/consolidation.hpp step 9). The facts job and the
// consolidation job mark the entities whose facts or decisions they change (SummaryMarks), so
// a refresh sees them as it sees new mentions.
// The two most salient events are the entity's active mentioned events with the highest
// salience_base, then most hits, then newest (seq). The strongest links are the entity's
// outgoing relationships with the highest strength at a common instant, compared as
// log2(strength_base) + strength_ref_us / half-life (the closed form of jobs/entities.hpp,
// base * 2^(-(now - ref) / half-life), ranks edges the same at every now, so the order does not
// depend on when the job runs), ties by the target's canonical key; the first three.
//
// Incremental (migration 8): only two kinds of entities are recomputed: those with mentions
// after their namespace's watermark (entity_summary_watermarks; the cluster job's new mentions
// also bring every count, time and edge change it makes), and those in entity_summary_dirty (set
// by triggers when a mentioned event's salience, hits, status or text changes -- an event that
// only leaves `active` marks just the entities that kept it among their two, or have no state
// yet: nothing else can change for the others --, an entity is
// renamed, retyped, moved or (de)activated, an edge is rewired or deleted, a mention deleted; and
// by the importance job when the printed importance changes). entity_summary_state keeps each
// entity's two most salient mentioned events and how many mentions (up to which seq) they were
// chosen from; when only new mentions were added, the new two are the best of the kept two and
// the new mentions (the order is total, so top2(A u B) = top2(top2(A) u B): the same events as a
// search over every mention). Anything else, or a mention count that does not add up (a mention
// stored out of seq order), re-searches all mentions. The result equals refreshing every entity.
// When the entities to re-search hold at least a quarter of all mentions (a first run, an
// upgrade), their searches come from one pass over every mention in seq order, in a snapshot
// read before the write transactions (one read of each event instead of one random read per
// mention: 11.6 -> 2.4 s CPU at 1M events). The pass is used only while
// entity_summary_epoch.changes (migration 14: counted by the triggers above for every change
// of a mention or of a mentioned event's salience, hits, status or content) still has the
// value it was read with, checked in each write transaction; after any such change the
// searches read the tables again, so the result is the same. New mentions come only from the
// cluster job, which never runs at the same time (one job at a time). An incremental run reads
// each event's summary inputs (salience, hits, status) once and keeps them for every entity
// that mentions it, under the same check: a change of the epoch drops them.
// Runs as the first step of the medallion job, whose items name entities.
//
// Errors: SQLite::Exception, JobCancelled.

#include <nlohmann/json.hpp>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>

#include "jobs/job.hpp"

namespace reflectd::jobs {

/// Marks an entity for the next summary refresh because what is known of it changed outside
/// its mentions: a fact about it (the facts job), a decision on its module (consolidation).
/// In the caller's transaction. An entity that does not exist yet is not marked: its first
/// refresh reads them. Thread-safety: one instance per connection and thread. Errors:
/// SQLite::Exception.
class SummaryMarks {
 public:
  explicit SummaryMarks(SQLite::Database& db);
  /// Marks the active entity `canonical_key` ("person:caroline", "module:src") of `ns`.
  void mark(const std::string& ns, const std::string& canonical_key);

 private:
  SQLite::Statement mark_;
};

/// Refreshes the summaries of ctx.ns's dirty active entities (every namespace when empty) in
/// its own transactions (call it outside any): it reads the new mentions in a snapshot, marks
/// their entities in entity_summary_dirty with the watermarks in one write transaction, then
/// refreshes and unmarks the marked entities in id order in write transactions that end at
/// the write gate (WriteTransaction::should_yield), so ingest is not held back for the
/// seconds a first run takes at 1M events. A cancelled run leaves its remaining marks for the
/// next. Inside each batch's write transaction (no other connection can commit meanwhile, so
/// both read the same state) the calling thread on ctx.db and one worker thread on a read-only
/// connection of its own to the same file (none for a database without a file) each take the
/// batch's next entity to compute; the results are written on ctx.db, in id order.
/// `edge_half_life_s` (entities.edge_half_life_days, seconds, > 0) ranks the links. Returns
/// {"summaries_refreshed": rows whose text changed, "summaries_skipped": the other active entities
/// in scope, "summaries_searched": refreshed entities whose two were searched over all their
/// mentions (marked `full`, without state, a kept one no longer active, or mentions that did not
/// add up) rather than taken from the kept two and the new mentions, "summaries_searched_in_pass":
/// those of them whose search came from the pass in seq order}; all 0 when the entity tables are
/// absent or empty.
nlohmann::json refresh_entity_summaries(JobContext& ctx, std::int64_t edge_half_life_s);

}  // namespace reflectd::jobs
