#include "jobs/entity_summaries.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/timestamp.hpp"
#include "common/utf8.hpp"
#include "jobs/entities.hpp"
#include "jobs/entity_summary_computer.hpp"
#include "store/bound_exec.hpp"

namespace reflectd::jobs {
namespace {

using entity_summary::DirtyEntity;
using entity_summary::NewMentions;
using entity_summary::Refreshed;
using entity_summary::Searched;
using entity_summary::SummaryComputer;

// A pass over every mention in seq order costs about as much as searching a fifth of them
// entity by entity (each of those reads its event at random; measured at 1M events: 1.9 s
// against ~10 s for all of them): below a quarter, the searches are left to do their own reads.
constexpr std::int64_t kBulkSearchShare = 4;
// The pass keeps ~100 bytes per entity it searches: beyond this many (~25 MB), a run searches
// entity by entity (the same results, slower), within the daemon's memory budget.
constexpr std::size_t kBulkSearchMaxEntities = 250'000;

// `epoch`: SELECT changes FROM entity_summary_epoch, prepared once per run.
std::int64_t summary_epoch(SQLite::Statement& epoch) {
  epoch.reset();
  const std::int64_t changes = epoch.executeStep() ? epoch.getColumn(0).getInt64() : -1;
  epoch.reset();  // no statement may stay on a row into a write transaction (WriteTransaction)
  return changes;
}

// The searches of the marked entities that need one (marked `full`, or without state), all in
// one pass over every mention in seq order, read in a snapshot, with the summary inputs'
// version (migration 14) they were found at. Empty when they are too few to pay for the pass.
std::unordered_map<std::int64_t, Searched> search_in_bulk(JobContext& ctx,
                                                          SQLite::Statement& epoch_query,
                                                          std::int64_t& epoch) {
  SQLite::Database& db = ctx.db;
  std::unordered_map<std::int64_t, Searched> found;
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
  SQLite::Statement marked(
      db,
      "SELECT d.entity_id, e.mention_count FROM entity_summary_dirty d JOIN entities e ON "
      "e.entity_id = d.entity_id LEFT JOIN entity_summary_state s ON s.entity_id = d.entity_id "
      "WHERE e.is_active = 1 AND (?1 = '' OR e.namespace = ?1) AND (d.full = 1 OR s.entity_id "
      "IS NULL)");
  marked.bind(1, ctx.ns);
  std::int64_t marked_mentions = 0;
  bool too_many = false;
  while (marked.executeStep()) {
    too_many = too_many || found.size() == kBulkSearchMaxEntities;
    if (!too_many) found.try_emplace(marked.getColumn(0).getInt64());
    marked_mentions += marked.getColumn(1).getInt64();
  }
  const std::int64_t all_mentions =
      db.execAndGet("SELECT coalesce(sum(mention_count), 0) FROM entities").getInt64();
  if (found.empty() || too_many || marked_mentions * kBulkSearchShare < all_mentions) {
    snapshot.commit();  // it only read
    return {};
  }
  epoch = summary_epoch(epoch_query);
  // CROSS JOIN and ORDER BY keep SQLite on the primary key of event_entities (seq, entity_id):
  // the events are then read in seq order, each once for all its mentions.
  SQLite::Statement all(
      db,
      "SELECT ee.entity_id, ee.seq, e.salience_base, e.hit_count, e.status = 'active' FROM "
      "event_entities ee CROSS JOIN events e ON e.seq = ee.seq ORDER BY ee.seq, ee.entity_id");
  for (std::int64_t rows = 1; all.executeStep(); ++rows) {
    if (rows % 65536 == 0) ctx.cancel.check();
    const auto it = found.find(all.getColumn(0).getInt64());
    if (it == found.end()) continue;
    it->second.add(
        {all.getColumn(1).getInt64(), all.getColumn(2).getDouble(), all.getColumn(3).getInt64()},
        all.getColumn(4).getInt() != 0);
  }
  snapshot.commit();  // it only read
  return found;
}

bool has_table(SQLite::Database& db, const char* name) {
  SQLite::Statement exists(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  exists.bind(1, name);
  return exists.executeStep();
}

std::optional<std::int64_t> optional_int(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getInt64();
}

// A batch is computed by this thread and a worker together from this many entities on:
// below, the hand-over (~50 us) costs more than it saves (~15 us an entity after 1M events).
constexpr std::size_t kParallelEntities = 16;
constexpr std::int64_t kBatch = 256;

// Step 1's findings: the entities with mentions after their namespace's watermark, each
// namespace's watermark after them, and how many active entities are in scope.
struct AddedMentions {
  std::vector<std::int64_t> ids;
  std::map<std::string, std::int64_t> watermarks;
  std::int64_t in_scope = 0;
};

// Step 1, read in a snapshot (no write-gate turn: the first run reads every mention). Nothing
// the writer thread does in the meantime adds mentions or changes which entities are active
// (only jobs do, on this thread). `read_ahead` receives the mentions of the namespaces read in
// one pass.
AddedMentions find_added(JobContext& ctx, SQLite::Statement& epoch_query, NewMentions& read_ahead) {
  SQLite::Database& db = ctx.db;
  AddedMentions found;
  SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
  SQLite::Statement q(db,
                      "SELECT DISTINCT namespace FROM entities WHERE ?1 = '' OR namespace = ?1");
  q.bind(1, ctx.ns);
  while (q.executeStep()) found.watermarks[q.getColumn(0).getString()] = 0;
  SQLite::Statement w(db, "SELECT through_seq FROM entity_summary_watermarks WHERE namespace = ?1");
  // Each entity's newest mention, one probe of event_entities_entity (entity_id, seq) each
  // (SQLite's min/max optimisation): a join grouped by entity read every mention after the
  // watermark, all of them in a first run (1.7 s at 1M events).
  SQLite::Statement added(
      db,
      "SELECT entity_id, newest FROM (SELECT e.entity_id, (SELECT max(ee.seq) FROM "
      "event_entities ee WHERE ee.entity_id = e.entity_id) AS newest FROM entities e WHERE "
      "e.namespace = ?1) WHERE newest > ?2");
  SQLite::Statement entity_ids(db, "SELECT entity_id FROM entities WHERE namespace = ?1");
  const std::int64_t newest_mention = newest_mention_seq(db);
  read_ahead.epoch = summary_epoch(epoch_query);
  for (auto& [ns, through] : found.watermarks) {
    w.reset();
    w.bind(1, ns);
    const std::int64_t before = w.executeStep() ? w.getColumn(0).getInt64() : 0;
    through = before;
    std::vector<std::int64_t> ids;
    entity_ids.reset();
    entity_ids.bind(1, ns);
    while (entity_ids.executeStep()) ids.push_back(entity_ids.getColumn(0).getInt64());
    entity_ids.reset();
    if (read_new_mentions_in_one_pass(newest_mention - before,
                                      static_cast<std::int64_t>(ids.size()))) {
      // One pass finds the entities with new mentions and, kept for step 4, those mentions
      // in seq order, instead of a probe per entity here and a seek per refreshed entity
      // there.
      std::sort(ids.begin(), ids.end());
      read_ahead.from[ns] = before;
      std::int64_t& newest = through;  // a lambda cannot capture a structured binding
      for_each_mention_after(db, ids, before, [&](std::int64_t id, std::int64_t seq) {
        auto [it, first] = read_ahead.seqs.try_emplace(id);
        if (first) found.ids.push_back(id);
        it->second.push_back(seq);
        newest = std::max(newest, seq);
      });
    } else {
      added.reset();
      added.bind(1, ns);
      added.bind(2, before);
      while (added.executeStep()) {
        found.ids.push_back(added.getColumn(0).getInt64());
        through = std::max(through, added.getColumn(1).getInt64());
      }
      added.reset();
    }
    ctx.cancel.check();
  }
  SQLite::Statement count(
      db, "SELECT count(*) FROM entities WHERE is_active = 1 AND (?1 = '' OR namespace = ?1)");
  count.bind(1, ctx.ns);
  count.executeStep();
  found.in_scope = count.getColumn(0).getInt64();
  count.reset();
  snapshot.commit();  // it only read
  return found;
}

// Step 2: the entities found become marks in entity_summary_dirty (active ones: an inactive
// entity is marked when it is reactivated), with the watermarks, in one transaction. From then
// on all the work left is in that table, so step 4 can commit in slices and a cancelled or
// killed run leaves nothing out: the next one carries on.
void mark_added(JobContext& ctx, const AddedMentions& added) {
  SQLite::Database& db = ctx.db;
  WriteTransaction transaction(ctx);
  SQLite::Statement mark(
      db,
      "INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 0 FROM entities "
      "WHERE entity_id = ?1 AND is_active = 1 ON CONFLICT (entity_id) DO NOTHING");
  for (const std::int64_t id : added.ids) {
    store::exec_bound(mark, id);
  }
  SQLite::Statement save(
      db,
      "INSERT INTO entity_summary_watermarks (namespace, through_seq) VALUES (?1, ?2) "
      "ON CONFLICT (namespace) DO UPDATE SET through_seq = excluded.through_seq");
  for (const auto& [ns, through] : added.watermarks) {
    store::exec_bound(save, ns, through);
  }
  transaction.commit();
}

// What step 4 did, for the job's result.
struct RefreshCounts {
  std::int64_t refreshed = 0;         // summary_text changed
  std::int64_t searches = 0;          // entities searched over all their mentions
  std::int64_t searched_in_pass = 0;  // of those, by the pass
};

// Step 4's statements on the jobs' connection: the next batch of marked entities, and the
// writes of each refreshed one (its state, its summary, its mark removed).
class SummaryRows {
 public:
  explicit SummaryRows(SQLite::Database& db)
      : next_batch_(
            db,
            "SELECT e.entity_id, d.full, e.namespace, e.display_name, e.entity_type, "
            "e.mention_count, "
            "e.first_seen_us, e.last_seen_us, e.importance_score, coalesce(e.summary_text, ''), "
            "s.entity_id IS NOT NULL, s.top1_seq, s.top2_seq, coalesce(s.mentions, 0), "
            "coalesce(s.through_seq, 0), e.canonical_key, (CASE e.sensitivity WHEN 'public' THEN 0 "
            "WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) FROM "
            "entity_summary_dirty d JOIN entities e "
            "ON e.entity_id = "
            "d.entity_id LEFT JOIN entity_summary_state s ON s.entity_id = e.entity_id WHERE "
            "d.entity_id > ?2 AND e.is_active = 1 AND (?1 = '' OR e.namespace = ?1) "
            "ORDER BY d.entity_id LIMIT ?3"),
        save_state_(
            db,
            "INSERT INTO entity_summary_state (entity_id, top1_seq, top2_seq, mentions, "
            "through_seq) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (entity_id) DO UPDATE SET "
            "top1_seq = excluded.top1_seq, top2_seq = excluded.top2_seq, mentions = "
            "excluded.mentions, through_seq = excluded.through_seq"),
        clean_(db, "DELETE FROM entity_summary_dirty WHERE entity_id = ?1"),
        update_(db, "UPDATE entities SET summary_text = ?2 WHERE entity_id = ?1") {}

  // The marked active entities of `ns` ('' = all) after `cursor`, in id order, at most kBatch.
  void read_batch(const std::string& ns, std::int64_t cursor, std::vector<DirtyEntity>& batch) {
    batch.clear();
    next_batch_.reset();
    next_batch_.bind(1, ns);
    next_batch_.bind(2, cursor);
    next_batch_.bind(3, kBatch);
    while (next_batch_.executeStep()) {
      const SQLite::Statement& q = next_batch_;
      batch.push_back(
          {q.getColumn(0).getInt64(), q.getColumn(1).getInt() != 0, q.getColumn(2).getString(),
           q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getInt64(),
           q.getColumn(6).getInt64(), q.getColumn(7).getInt64(), q.getColumn(8).getDouble(),
           q.getColumn(9).getString(), q.getColumn(10).getInt() != 0, optional_int(q.getColumn(11)),
           optional_int(q.getColumn(12)), q.getColumn(13).getInt64(), q.getColumn(14).getInt64(),
           q.getColumn(15).getString(), q.getColumn(16).getInt()});
    }
    next_batch_.reset();
  }

  void write(const Refreshed& r, RefreshCounts& counts) {
    save_state_.reset();
    save_state_.bind(1, r.id);
    if (!r.top.empty())
      save_state_.bind(2, r.top[0].seq);
    else
      save_state_.bind(2);
    if (r.top.size() > 1)
      save_state_.bind(3, r.top[1].seq);
    else
      save_state_.bind(3);
    save_state_.bind(4, r.count);
    save_state_.bind(5, r.through);
    save_state_.exec();
    store::exec_bound(clean_, r.id);
    counts.searches += r.searched ? 1 : 0;
    counts.searched_in_pass += r.in_pass ? 1 : 0;
    if (!r.changed) return;
    store::exec_bound(update_, r.id, r.summary);
    ++counts.refreshed;
  }

 private:
  SQLite::Statement next_batch_;
  SQLite::Statement save_state_;
  SQLite::Statement clean_;
  SQLite::Statement update_;
};

// A batch's entities are computed on the jobs' connection and on a read-only connection of
// their own on a worker thread (SummaryComputer), each taking the next one; the results are
// written on the jobs' connection, in id order. What the worker reads is what that connection
// would: the write transaction holds the write lock, so no connection commits between the
// batch's first read and its writes, and it has written nothing of its own before them.
// Nothing the batch writes is read by the batch: an entity's state and marks come from
// SummaryRows::read_batch, read first. Not thread-safe: one per run.
class BatchComputer {
 public:
  BatchComputer(SQLite::Database& db, double half_life_s, const NewMentions& read_ahead,
                const std::unordered_map<std::int64_t, Searched>& bulk)
      : mine_(db, half_life_s, read_ahead, bulk), reader_(open_read_only_twin(db)) {
    if (reader_) theirs_.emplace(*reader_, half_life_s, read_ahead, bulk);
  }

  void forget_inputs() {
    mine_.forget_inputs();
    if (theirs_) theirs_->forget_inputs();
  }

  // Computes `batch` until every entity is done or `transaction` should yield; returns how many
  // entities, from the first, were computed (results()[0, n)). `batch` must outlive this
  // computer: leaving by an exception destroys the worker first, which waits for its task.
  std::size_t compute(const std::vector<DirtyEntity>& batch, WriteTransaction& transaction) {
    // Each thread takes the batch's next entity until none is left (the worker's connection
    // starts with a cold page cache, so a fixed split left this thread waiting for it).
    const std::size_t n = batch.size();
    results_.assign(n, Refreshed{});
    taken_.assign(n, 0);
    next_ = 0;
    abandon_ = false;
    std::future<void> computed;
    if (theirs_ && n >= kParallelEntities) {
      if (!worker_) worker_.emplace(1);
      computed = boost::asio::post(*worker_, boost::asio::use_future([this, &batch, n] {
        for (std::size_t i; !abandon_ && (i = next_++) < n;) {
          results_[i] = theirs_->compute(batch[i]);
          taken_[i] = 1;
        }
        theirs_->end_reads();
      }));
    }
    bool yielded = false;
    for (std::size_t i; !yielded && (i = next_++) < n;) {
      results_[i] = mine_.compute(batch[i]);
      taken_[i] = 1;
      yielded = transaction.should_yield();
    }
    mine_.end_reads();
    abandon_ = yielded;
    if (computed.valid()) computed.get();
    std::size_t done = 0;
    while (done < n && taken_[done] != 0) ++done;
    return done;
  }

  [[nodiscard]] const std::vector<Refreshed>& results() const { return results_; }

 private:
  SummaryComputer mine_;
  std::optional<SQLite::Database> reader_;
  std::optional<SummaryComputer> theirs_;
  std::vector<Refreshed> results_;    // by position in the batch
  std::vector<unsigned char> taken_;  // results_[i] was computed
  std::atomic<std::size_t> next_{0};  // the batch's next entity to compute
  std::atomic<bool> abandon_{false};  // a yield: compute no more
  // Declared after what its tasks touch: destroyed first, its destructor waits for a running
  // task.
  std::optional<boost::asio::thread_pool> worker_;
};

// Step 4: the marked active entities in scope, in id order, a batch at a time; each
// transaction ends when the writer waits (its entities are refreshed and unmarked together,
// so a trigger's mark made in between is never lost).
RefreshCounts refresh_marked(JobContext& ctx, SQLite::Statement& epoch_query,
                             NewMentions& read_ahead,
                             std::unordered_map<std::int64_t, Searched>& bulk,
                             std::int64_t bulk_epoch, std::int64_t edge_half_life_s) {
  SQLite::Database& db = ctx.db;
  RefreshCounts counts;
  SummaryRows rows(db);
  const double half_life_s = static_cast<double>(std::max<std::int64_t>(1, edge_half_life_s));
  std::vector<DirtyEntity> batch;  // before the computer, whose worker reads it
  BatchComputer computer(db, half_life_s, read_ahead, bulk);
  std::int64_t cursor = std::numeric_limits<std::int64_t>::min();
  std::int64_t inputs_epoch = -1;
  for (bool done = false; !done;) {
    ctx.cancel.check();
    WriteTransaction transaction(ctx);
    // This transaction holds the write lock: nothing can change between this check and its
    // commit. A change since the pass (another connection's hits, archiving, a forgotten
    // mention) retires all it found: the searches read the tables again.
    const std::int64_t epoch = summary_epoch(epoch_query);
    if (!bulk.empty() && epoch != bulk_epoch) bulk.clear();
    if (epoch != inputs_epoch) {
      computer.forget_inputs();
      inputs_epoch = epoch;
    }
    if (epoch != read_ahead.epoch) read_ahead = {};
    rows.read_batch(ctx.ns, cursor, batch);
    done = static_cast<std::int64_t>(batch.size()) < kBatch;
    const std::size_t computed = computer.compute(batch, transaction);
    // The refreshed entities in id order, up to the first one not computed (after a yield).
    for (std::size_t i = 0; i < computed; ++i) {
      rows.write(computer.results()[i], counts);
      cursor = computer.results()[i].id;
    }
    if (computed < batch.size()) done = false;
    transaction.commit();
  }
  return counts;
}

}  // namespace

SummaryMarks::SummaryMarks(SQLite::Database& db)
    : mark_(db,
            "INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 0 FROM entities "
            "WHERE namespace = ?1 AND canonical_key = ?2 AND is_active = 1 "
            "ON CONFLICT (entity_id) DO NOTHING") {}

void SummaryMarks::mark(const std::string& ns, const std::string& canonical_key) {
  store::exec_bound(mark_, ns, canonical_key);
  mark_.reset();
}

nlohmann::json refresh_entity_summaries(JobContext& ctx, std::int64_t edge_half_life_s) {
  SQLite::Database& db = ctx.db;
  if (!has_table(db, "entities") || !has_table(db, "entity_summary_dirty")) {
    return {{"summaries_refreshed", 0},
            {"summaries_skipped", 0},
            {"summaries_searched", 0},
            {"summaries_searched_in_pass", 0}};
  }
  // Each namespace's mentions after its watermark when they came from one pass (step 1), per
  // entity in seq order, valid for the entities' new mentions in step 4 while the summary
  // inputs' version (migration 14, which every removed or moved mention changes) is the one
  // they were read at: new mentions come only from the cluster job, never at the same time.
  NewMentions read_ahead;
  SQLite::Statement epoch_query(db, "SELECT changes FROM entity_summary_epoch WHERE id = 1");
  const AddedMentions added = find_added(ctx, epoch_query, read_ahead);
  mark_added(ctx, added);
  // 3. Searched entity by entity, a search reads every mention's event at random; when most
  // marked entities need one (a first run), one pass in seq order does them all beforehand.
  std::int64_t bulk_epoch = -1;
  std::unordered_map<std::int64_t, Searched> bulk = search_in_bulk(ctx, epoch_query, bulk_epoch);
  const RefreshCounts counts =
      refresh_marked(ctx, epoch_query, read_ahead, bulk, bulk_epoch, edge_half_life_s);
  return {{"summaries_refreshed", counts.refreshed},
          {"summaries_skipped", added.in_scope - counts.refreshed},
          {"summaries_searched", counts.searches},
          {"summaries_searched_in_pass", counts.searched_in_pass}};
}

}  // namespace reflectd::jobs
