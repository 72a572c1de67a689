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

namespace reflectd::jobs {
namespace {

constexpr std::size_t kMaxLineBytes = 140;

std::string first_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      if (line.size() > kMaxLineBytes) {
        line.resize(utf8_boundary(line, kMaxLineBytes));
        line += "...";
      }
      return line;
    }
    start = end + 1;
  }
  return {};
}

// A mentioned event as the salience order sees it.
struct Candidate {
  std::int64_t seq;
  double salience;
  std::int64_t hits;
};

// Highest salience base, then most hits, then newest: a total order (seq is unique).
bool more_salient(const Candidate& a, const Candidate& b) {
  if (a.salience != b.salience) return a.salience > b.salience;
  if (a.hits != b.hits) return a.hits > b.hits;
  return a.seq > b.seq;
}

// What a search over all of an entity's mentions finds: the two most salient active mentioned
// events (best first), how many mentions there are and the largest mention seq.
struct Searched {
  std::array<Candidate, 2> top{};
  std::size_t size = 0;  // of top
  std::int64_t count = 0;
  std::int64_t through = 0;

  void add(const Candidate& c, bool active) {
    ++count;
    through = std::max(through, c.seq);
    if (!active) return;
    if (size < 2) {
      top[size++] = c;
      if (size == 2 && more_salient(top[1], top[0])) std::swap(top[0], top[1]);
    } else if (more_salient(c, top[1])) {
      top[1] = c;
      if (more_salient(top[1], top[0])) std::swap(top[0], top[1]);
    }
  }
};

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

// The new mentions read in step 1's pass: `from` = the namespace's watermark they follow,
// `seqs` = per entity of those namespaces with any, in seq order; `epoch` = the summary inputs'
// version they were read at (-1: none read).
struct NewMentions {
  std::map<std::string, std::int64_t> from;
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> seqs;
  std::int64_t epoch = -1;
};

struct DirtyEntity {
  std::int64_t id;
  bool full;
  std::string ns, display_name, type;
  std::int64_t mentions, first_us, last_us;
  double importance;
  std::string summary_before;
  bool has_state;
  std::optional<std::int64_t> top1, top2;
  std::int64_t state_mentions;  // mentions the kept two were chosen from
  std::int64_t through_seq;
  std::string key;       // canonical_key
  int sensitivity_rank;  // public 0, low 1, medium 2, high 3, hyper 4
};

// A record's sensitivity as a rank (public 0 ... hyper 4), in SQL.
constexpr const char* kRank =
    "(CASE sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' "
    "THEN 3 ELSE 4 END)";

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

// What step 4 computes for one marked entity, written afterwards on the jobs' connection.
struct Refreshed {
  std::int64_t id = 0;
  std::vector<Candidate> top;  // its two most salient events (at most), best first
  std::int64_t count = 0;      // its mentions
  std::int64_t through = 0;    // the largest seq among them
  std::string summary;
  bool changed = false;   // summary differs from the stored one
  bool searched = false;  // its two came from a search over all its mentions
  bool in_pass = false;   // that search was the pass's
};

// Step 4's reads and computation for one marked entity, on one connection (its statements
// and caches are its own): one per thread, not thread-safe. `read_ahead` and `bulk` are only
// read, and must not change while compute() runs.
class SummaryComputer {
 public:
  SummaryComputer(SQLite::Database& db, double half_life_s, const NewMentions& read_ahead,
                  const std::unordered_map<std::int64_t, Searched>& bulk)
      : half_life_s_(half_life_s),
        read_ahead_(read_ahead),
        bulk_(bulk),
        // One pass over every mention (no sort): the count, the largest seq and the best two.
        all_mentions_(db,
                      "SELECT ee.seq, e.salience_base, e.hit_count, e.status = 'active' FROM "
                      "event_entities ee JOIN events e ON e.seq = ee.seq WHERE ee.entity_id = ?1"),
        new_mentions_(
            db, "SELECT seq FROM event_entities WHERE entity_id = ?1 AND seq > ?2 ORDER BY seq"),
        event_row_(db,
                   "SELECT salience_base, hit_count, status = 'active', content FROM events "
                   "WHERE seq = ?1"),
        event_inputs_(
            db, "SELECT salience_base, hit_count, status = 'active' FROM events WHERE seq = ?1"),
        // The links as stored: only the strongest few need their target's key (a hub entity
        // has thousands of edges, and joining `entities` on each was a lookup per edge).
        links_(db,
               "SELECT r.target_id, r.strength_base, r.strength_ref_us FROM entity_relationships "
               "r WHERE r.namespace = ?1 AND r.source_id = ?2"),
        target_key_(db, "SELECT canonical_key FROM entities WHERE entity_id = ?1"),
        // What is known of the entity (seed 003 facts, jobs/facts.hpp): its current facts,
        // single-valued attributes first, then dated ones, newest first. Never one more
        // sensitive than the entity (?3, its rank): the summary is read at the entity's.
        facts_(db,
               std::string("SELECT fact_text, valid_from_us FROM facts WHERE namespace = ?1 AND "
                           "entity_key = ?2 AND is_stale = 0 AND ") +
                   kRank +
                   " <= ?3 ORDER BY attribute_key IS NULL, whole_days DESC, "
                   "valid_from_us DESC, fact_id DESC LIMIT 3"),
        // What was decided on a module, and what was undone (consolidation step 9).
        decisions_(db, std::string("SELECT title, last_seen_us FROM knowledge WHERE namespace = "
                                   "?1 AND target = ?2 AND kind = 'decision' AND status = ?3 "
                                   "AND ") +
                           kRank + " <= ?5 ORDER BY last_seen_us DESC, decision_id LIMIT ?4") {}

  // The summary inputs' version changed: the event inputs read so far no longer hold.
  void forget_inputs() { inputs_read_.clear(); }

  // Leaves no statement on a row: one would keep its read transaction open past the commit
  // (WAL), and the next BEGIN IMMEDIATE would fail with SQLITE_BUSY_SNAPSHOT once another
  // connection has committed in between.
  void end_reads() {
    for (SQLite::Statement* q : {&all_mentions_, &new_mentions_, &event_row_, &event_inputs_,
                                 &links_, &target_key_, &facts_, &decisions_})
      q->reset();
  }

  Refreshed compute(const DirtyEntity& e) {
    Refreshed r;
    r.id = e.id;
    r.through = e.through_seq;
    r.count = e.state_mentions;
    std::vector<Candidate>& top = r.top;
    bool searched = e.full || !e.has_state;
    if (searched) {
      search_all(e.id, r);
    } else {
      // The kept two (still active and unchanged, or the row would be marked full) and the new
      // mentions.
      for (const auto& seq : {e.top1, e.top2}) {
        if (!seq) continue;
        const std::optional<EventInputs>& event = inputs_of(*seq);
        if (!event || !event->active) {
          searched = true;
          break;
        }
        top.push_back(event->candidate);
      }
      if (searched) {
        search_all(e.id, r);
      } else {
        mention_seqs_.clear();
        if (read_ahead_.from.contains(e.ns)) {
          // Those of the pass after the entity's own through_seq. The pass has none at or
          // below the namespace's watermark: those (a mention stored out of seq order, or left
          // by a run cut before it refreshed the entity) make the count below fall short, and
          // the entity is searched, with the result of a read of every new mention.
          if (const auto it = read_ahead_.seqs.find(e.id); it != read_ahead_.seqs.end()) {
            const auto& seqs = it->second;
            mention_seqs_.assign(std::upper_bound(seqs.begin(), seqs.end(), e.through_seq),
                                 seqs.end());
          }
        } else {
          new_mentions_.reset();
          new_mentions_.bind(1, e.id);
          new_mentions_.bind(2, e.through_seq);
          while (new_mentions_.executeStep())
            mention_seqs_.push_back(new_mentions_.getColumn(0).getInt64());
          new_mentions_.reset();
        }
        for (const std::int64_t seq : mention_seqs_) {
          const std::optional<EventInputs>& event = inputs_of(seq);
          if (!event) continue;  // as the join with events left it out
          r.through = std::max(r.through, seq);
          ++r.count;
          if (event->active) top.push_back(event->candidate);
        }
        std::sort(top.begin(), top.end(), more_salient);
        if (top.size() > 2) top.resize(2);
        // A mention stored below the kept seq (out of order) was not seen: search them all.
        if (r.count != e.mentions) search_all(e.id, r);
      }
    }

    std::array<char, 32> importance{};
    std::snprintf(importance.data(), importance.size(), "%.2f", e.importance);
    r.summary = e.display_name + " (" + e.type + "): " + std::to_string(e.mentions) +
                " mentions from " + format_rfc3339_us(e.first_us).substr(0, 10) + " to " +
                format_rfc3339_us(e.last_us).substr(0, 10) + ", importance " + importance.data() +
                ".";
    std::string quotes;
    for (const Candidate& c : top) {
      event_row_.reset();
      event_row_.bind(1, c.seq);
      if (!event_row_.executeStep()) continue;
      const std::string line = first_line(event_row_.getColumn(3).getString());
      if (!line.empty()) quotes += (quotes.empty() ? " Most salient: \"" : "; \"") + line + "\"";
    }
    event_row_.reset();
    r.summary += known(e);
    r.summary += quotes.empty() ? "" : quotes + ".";
    r.summary += strongest_links(e);
    r.changed = r.summary != e.summary_before;
    return r;
  }

 private:
  struct EventInputs {
    Candidate candidate;
    bool active;
  };

  // The summary inputs of an event read this run, by seq (nullopt: no such event). An event is
  // mentioned by ~5 entities, each refreshed on its own: joining `events` for each mention read
  // every new event ~5 times. Valid while the summary inputs' version (migration 14) is the one
  // they were read at (forget_inputs()), like the pass.
  const std::optional<EventInputs>& inputs_of(std::int64_t seq) {
    auto [it, added] = inputs_read_.try_emplace(seq);
    if (added) {
      event_inputs_.reset();
      event_inputs_.bind(1, seq);
      if (event_inputs_.executeStep()) {
        it->second = EventInputs{
            {seq, event_inputs_.getColumn(0).getDouble(), event_inputs_.getColumn(1).getInt64()},
            event_inputs_.getColumn(2).getInt() != 0};
      }
      event_inputs_.reset();
    }
    return it->second;
  }

  // Exact re-search over every mention: from the pass when nothing it read has changed since
  // (checked at the start of each write transaction), else from the tables.
  void search_all(std::int64_t id, Refreshed& r) {
    r.searched = true;
    const Searched* result = nullptr;
    if (const auto it = bulk_.find(id); it != bulk_.end()) {
      result = &it->second;
      r.in_pass = true;
    } else {
      searched_now_ = Searched{};
      all_mentions_.reset();
      all_mentions_.bind(1, id);
      while (all_mentions_.executeStep()) {
        searched_now_.add(
            {all_mentions_.getColumn(0).getInt64(), all_mentions_.getColumn(1).getDouble(),
             all_mentions_.getColumn(2).getInt64()},
            all_mentions_.getColumn(3).getInt() != 0);
      }
      all_mentions_.reset();
      result = &searched_now_;
    }
    r.top.assign(result->top.begin(),
                 result->top.begin() + static_cast<std::ptrdiff_t>(result->size));
    r.count = result->count;
    r.through = result->through;
  }

  std::optional<std::string> key_of(std::int64_t id) {
    target_key_.reset();
    target_key_.bind(1, static_cast<std::int64_t>(id));
    std::optional<std::string> key;
    if (target_key_.executeStep()) key = target_key_.getColumn(0).getString();
    target_key_.reset();
    return key;
  }

  // " Known: <fact> (<valid from>); ..." from the entity's current facts, and for a module
  // " Decided: <decision> (<date>); ... Reverted: <decision> (<date>)." (each empty without).
  std::string known(const DirtyEntity& e) {
    std::string out;
    facts_.reset();
    facts_.bind(1, e.ns);
    facts_.bind(2, e.key);
    facts_.bind(3, e.sensitivity_rank);
    while (facts_.executeStep()) {
      std::string statement = clipped(facts_.getColumn(0).getString(), 160);
      if (statement.ends_with('.') && !statement.ends_with("...")) statement.pop_back();
      out += (out.empty() ? " Known: " : "; ") + statement + " (" +
             format_rfc3339_us(facts_.getColumn(1).getInt64()).substr(0, 10) + ")";
    }
    facts_.reset();
    if (!out.empty()) out += ".";
    constexpr std::string_view kModule = "module:";
    if (!e.key.starts_with(kModule)) return out;
    // The newest three active decisions, then the newest reverted one.
    for (const auto& [status, label, limit] :
         {std::tuple{"active", " Decided: ", 3}, std::tuple{"falsified", " Reverted: ", 1}}) {
      decisions_.reset();
      decisions_.bind(1, e.ns);
      decisions_.bind(2, e.key.substr(kModule.size()));
      decisions_.bind(3, status);
      decisions_.bind(4, limit);
      decisions_.bind(5, e.sensitivity_rank);
      std::string list;
      while (decisions_.executeStep()) {
        list += (list.empty() ? label : "; ") + clipped(decisions_.getColumn(0).getString(), 120) +
                " (" + format_rfc3339_us(decisions_.getColumn(1).getInt64()).substr(0, 10) + ")";
      }
      decisions_.reset();
      if (!list.empty()) out += list + ".";
    }
    return out;
  }

  // Cut at a word to at most max_bytes, with "..." (never inside a UTF-8 sequence).
  static std::string clipped(std::string text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    std::size_t cut = text.rfind(' ', max_bytes - 3);
    if (cut == std::string::npos || cut < max_bytes / 2) {
      cut = utf8_boundary(text, max_bytes - 3);
    }
    text.resize(cut);
    return text + "...";
  }

  // " Strongest links: a, b, c." (empty without links).
  std::string strongest_links(const DirtyEntity& e) {
    links_.reset();
    links_.bind(1, e.ns);
    links_.bind(2, e.id);
    std::vector<std::pair<double, std::int64_t>> edges;  // (strength rank key, target id)
    bool comparable = true;                              // no NaN rank key
    while (links_.executeStep()) {
      const double base = links_.getColumn(1).getDouble();
      const double key = std::log2(base) + static_cast<double>(links_.getColumn(2).getInt64()) /
                                               1'000'000.0 / half_life_s_;
      comparable = comparable && !std::isnan(key);
      edges.emplace_back(key, links_.getColumn(0).getInt64());
    }
    links_.reset();
    // The three strongest links by (rank key descending, target key ascending), among the
    // edges whose target exists (as the join with `entities` had them). Equal rank keys are
    // taken as a group, so that their targets' keys order them; a NaN rank key has no order,
    // so then every target's key is read and ranked as before.
    std::vector<std::tuple<double, std::string>> ranked;  // (strength rank key, target key)
    if (comparable) {
      std::sort(edges.begin(), edges.end(),
                [](const auto& a, const auto& b) { return a.first > b.first; });
      for (std::size_t i = 0; i < edges.size() && ranked.size() < 3;) {
        std::size_t end = i;
        const std::size_t group_start = ranked.size();
        for (; end < edges.size() && edges[end].first == edges[i].first; ++end) {
          if (auto key = key_of(edges[end].second)) ranked.emplace_back(edges[i].first, *key);
        }
        std::sort(ranked.begin() + static_cast<std::ptrdiff_t>(group_start), ranked.end());
        i = end;
      }
    } else {
      for (const auto& [rank_key, id] : edges) {
        if (auto key = key_of(id)) ranked.emplace_back(rank_key, std::move(*key));
      }
    }
    const std::size_t shown = std::min<std::size_t>(3, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(shown),
                      ranked.end(), [](const auto& a, const auto& b) {
                        return std::get<0>(a) != std::get<0>(b) ? std::get<0>(a) > std::get<0>(b)
                                                                : std::get<1>(a) < std::get<1>(b);
                      });
    std::string linked;
    for (std::size_t k = 0; k < shown; ++k)
      linked += (linked.empty() ? " Strongest links: " : ", ") + std::get<1>(ranked[k]);
    return linked.empty() ? "" : linked + ".";
  }

  double half_life_s_;
  const NewMentions& read_ahead_;
  const std::unordered_map<std::int64_t, Searched>& bulk_;
  SQLite::Statement all_mentions_;
  SQLite::Statement new_mentions_;
  SQLite::Statement event_row_;
  SQLite::Statement event_inputs_;
  SQLite::Statement links_;
  SQLite::Statement target_key_;
  SQLite::Statement facts_;
  SQLite::Statement decisions_;
  std::unordered_map<std::int64_t, std::optional<EventInputs>> inputs_read_;
  Searched searched_now_;
  std::vector<std::int64_t> mention_seqs_;
};

}  // namespace

SummaryMarks::SummaryMarks(SQLite::Database& db)
    : mark_(db,
            "INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 0 FROM entities "
            "WHERE namespace = ?1 AND canonical_key = ?2 AND is_active = 1 "
            "ON CONFLICT (entity_id) DO NOTHING") {}

void SummaryMarks::mark(const std::string& ns, const std::string& canonical_key) {
  mark_.reset();
  mark_.bind(1, ns);
  mark_.bind(2, canonical_key);
  mark_.exec();
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
  // 1. The entities with mentions after their namespace's watermark, read in a snapshot (no
  // write-gate turn: the first run reads every mention). Nothing the writer thread does in
  // the meantime adds mentions or changes which entities are active (only jobs do, on this
  // thread).
  std::vector<std::int64_t> added_ids;
  std::map<std::string, std::int64_t> watermarks;
  std::int64_t in_scope = 0;
  // Each namespace's mentions after its watermark when they came from one pass (below), per
  // entity in seq order, valid for the entities' new mentions in step 4 while the summary
  // inputs' version (migration 14, which every removed or moved mention changes) is the one
  // they were read at: new mentions come only from the cluster job, never at the same time.
  NewMentions read_ahead;
  SQLite::Statement epoch_query(db, "SELECT changes FROM entity_summary_epoch WHERE id = 1");
  {
    SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
    SQLite::Statement q(db,
                        "SELECT DISTINCT namespace FROM entities WHERE ?1 = '' OR namespace = ?1");
    q.bind(1, ctx.ns);
    while (q.executeStep()) watermarks[q.getColumn(0).getString()] = 0;
    SQLite::Statement w(db,
                        "SELECT through_seq FROM entity_summary_watermarks WHERE namespace = ?1");
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
    for (auto& [ns, through] : watermarks) {
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
          if (first) added_ids.push_back(id);
          it->second.push_back(seq);
          newest = std::max(newest, seq);
        });
      } else {
        added.reset();
        added.bind(1, ns);
        added.bind(2, before);
        while (added.executeStep()) {
          added_ids.push_back(added.getColumn(0).getInt64());
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
    in_scope = count.getColumn(0).getInt64();
    count.reset();
    snapshot.commit();  // it only read
  }
  // 2. They become marks in entity_summary_dirty (active ones: an inactive entity is marked
  // when it is reactivated), with the watermarks, in one transaction. From then on all the
  // work left is in that table, so step 3 can commit in slices and a cancelled or killed run
  // leaves nothing out: the next one carries on.
  {
    WriteTransaction transaction(ctx);
    SQLite::Statement mark(
        db,
        "INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 0 FROM entities "
        "WHERE entity_id = ?1 AND is_active = 1 ON CONFLICT (entity_id) DO NOTHING");
    for (const std::int64_t id : added_ids) {
      mark.reset();
      mark.bind(1, id);
      mark.exec();
    }
    SQLite::Statement save(
        db,
        "INSERT INTO entity_summary_watermarks (namespace, through_seq) VALUES (?1, ?2) "
        "ON CONFLICT (namespace) DO UPDATE SET through_seq = excluded.through_seq");
    for (const auto& [ns, through] : watermarks) {
      save.reset();
      save.bind(1, ns);
      save.bind(2, through);
      save.exec();
    }
    transaction.commit();
  }
  // 3. Searched entity by entity, a search reads every mention's event at random; when most
  // marked entities need one (a first run), one pass in seq order does them all beforehand.
  std::int64_t bulk_epoch = -1;
  std::unordered_map<std::int64_t, Searched> bulk = search_in_bulk(ctx, epoch_query, bulk_epoch);
  std::int64_t searches = 0;
  std::int64_t searched_in_pass = 0;
  // 4. The marked active entities in scope, in id order, a batch at a time; each transaction
  // ends when the writer waits (its entities are refreshed and unmarked together, so a
  // trigger's mark made in between is never lost).
  SQLite::Statement next_batch(
      db,
      "SELECT e.entity_id, d.full, e.namespace, e.display_name, e.entity_type, e.mention_count, "
      "e.first_seen_us, e.last_seen_us, e.importance_score, coalesce(e.summary_text, ''), "
      "s.entity_id IS NOT NULL, s.top1_seq, s.top2_seq, coalesce(s.mentions, 0), "
      "coalesce(s.through_seq, 0), e.canonical_key, (CASE e.sensitivity WHEN 'public' THEN 0 "
      "WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) FROM "
      "entity_summary_dirty d JOIN entities e "
      "ON e.entity_id = "
      "d.entity_id LEFT JOIN entity_summary_state s ON s.entity_id = e.entity_id WHERE "
      "d.entity_id > ?2 AND e.is_active = 1 AND (?1 = '' OR e.namespace = ?1) "
      "ORDER BY d.entity_id LIMIT ?3");
  SQLite::Statement save_state(
      db,
      "INSERT INTO entity_summary_state (entity_id, top1_seq, top2_seq, mentions, "
      "through_seq) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (entity_id) DO UPDATE SET "
      "top1_seq = excluded.top1_seq, top2_seq = excluded.top2_seq, mentions = "
      "excluded.mentions, through_seq = excluded.through_seq");
  SQLite::Statement clean(db, "DELETE FROM entity_summary_dirty WHERE entity_id = ?1");
  SQLite::Statement update(db, "UPDATE entities SET summary_text = ?2 WHERE entity_id = ?1");
  std::int64_t refreshed = 0;
  auto write = [&](const Refreshed& r) {
    save_state.reset();
    save_state.bind(1, r.id);
    if (!r.top.empty())
      save_state.bind(2, r.top[0].seq);
    else
      save_state.bind(2);
    if (r.top.size() > 1)
      save_state.bind(3, r.top[1].seq);
    else
      save_state.bind(3);
    save_state.bind(4, r.count);
    save_state.bind(5, r.through);
    save_state.exec();
    clean.reset();
    clean.bind(1, r.id);
    clean.exec();
    searches += r.searched ? 1 : 0;
    searched_in_pass += r.in_pass ? 1 : 0;
    if (!r.changed) return;
    update.reset();
    update.bind(1, r.id);
    update.bind(2, r.summary);
    update.exec();
    ++refreshed;
  };

  // The batch's entities are computed on this connection and on a read-only connection of
  // their own on a worker thread (SummaryComputer), each taking the next one; the results are
  // written here, in id order. What the worker reads is what this connection
  // would: this transaction holds the write lock, so no connection commits between the
  // batch's first read and its writes, and it has written nothing of its own before them.
  // Nothing the batch writes is read by the batch: an entity's state and marks come from
  // next_batch, read first.
  const double half_life_s = static_cast<double>(std::max<std::int64_t>(1, edge_half_life_s));
  SummaryComputer mine(db, half_life_s, read_ahead, bulk);
  std::optional<SQLite::Database> reader = open_read_only_twin(db);
  std::optional<SummaryComputer> theirs;
  if (reader) theirs.emplace(*reader, half_life_s, read_ahead, bulk);
  constexpr std::int64_t kBatch = 256;
  std::int64_t cursor = std::numeric_limits<std::int64_t>::min();
  std::int64_t inputs_epoch = -1;
  std::vector<DirtyEntity> batch;
  std::vector<Refreshed> results;    // by position in the batch
  std::vector<unsigned char> taken;  // results[i] was computed
  std::atomic<std::size_t> next{0};  // the batch's next entity to compute
  std::atomic<bool> abandon{false};  // a yield: compute no more
  // Declared after what its tasks touch: leaving by an exception destroys the pool first, and
  // its destructor waits for a running task.
  std::optional<boost::asio::thread_pool> worker;
  for (bool done = false; !done;) {
    ctx.cancel.check();
    WriteTransaction transaction(ctx);
    // This transaction holds the write lock: nothing can change between this check and its
    // commit. A change since the pass (another connection's hits, archiving, a forgotten
    // mention) retires all it found: the searches read the tables again.
    const std::int64_t epoch = summary_epoch(epoch_query);
    if (!bulk.empty() && epoch != bulk_epoch) bulk.clear();
    if (epoch != inputs_epoch) {
      mine.forget_inputs();
      if (theirs) theirs->forget_inputs();
      inputs_epoch = epoch;
    }
    if (epoch != read_ahead.epoch) read_ahead = {};
    batch.clear();
    next_batch.reset();
    next_batch.bind(1, ctx.ns);
    next_batch.bind(2, cursor);
    next_batch.bind(3, kBatch);
    while (next_batch.executeStep()) {
      const SQLite::Statement& q = next_batch;
      batch.push_back(
          {q.getColumn(0).getInt64(), q.getColumn(1).getInt() != 0, q.getColumn(2).getString(),
           q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getInt64(),
           q.getColumn(6).getInt64(), q.getColumn(7).getInt64(), q.getColumn(8).getDouble(),
           q.getColumn(9).getString(), q.getColumn(10).getInt() != 0, optional_int(q.getColumn(11)),
           optional_int(q.getColumn(12)), q.getColumn(13).getInt64(), q.getColumn(14).getInt64(),
           q.getColumn(15).getString(), q.getColumn(16).getInt()});
    }
    next_batch.reset();
    done = static_cast<std::int64_t>(batch.size()) < kBatch;
    // Each thread takes the batch's next entity until none is left (the worker's connection
    // starts with a cold page cache, so a fixed split left this thread waiting for it).
    const std::size_t n = batch.size();
    results.assign(n, Refreshed{});
    taken.assign(n, 0);
    next = 0;
    abandon = false;
    std::future<void> computed;
    if (theirs && n >= kParallelEntities) {
      if (!worker) worker.emplace(1);
      computed = boost::asio::post(*worker, boost::asio::use_future([&, n] {
        for (std::size_t i; !abandon && (i = next++) < n;) {
          results[i] = theirs->compute(batch[i]);
          taken[i] = 1;
        }
        theirs->end_reads();
      }));
    }
    bool yielded = false;
    for (std::size_t i; !yielded && (i = next++) < n;) {
      results[i] = mine.compute(batch[i]);
      taken[i] = 1;
      yielded = transaction.should_yield();
    }
    mine.end_reads();
    abandon = yielded;
    if (computed.valid()) computed.get();
    // The refreshed entities in id order, up to the first one not computed (after a yield).
    for (std::size_t i = 0; i < n && taken[i] != 0; ++i) {
      write(results[i]);
      cursor = results[i].id;
    }
    if (yielded) done = false;
    transaction.commit();
  }
  return {{"summaries_refreshed", refreshed},
          {"summaries_skipped", in_scope - refreshed},
          {"summaries_searched", searches},
          {"summaries_searched_in_pass", searched_in_pass}};
}

}  // namespace reflectd::jobs
