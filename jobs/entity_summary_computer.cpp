#include "jobs/entity_summary_computer.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/timestamp.hpp"
#include "common/utf8.hpp"
#include "jobs/entities.hpp"

namespace reflectd::jobs::entity_summary {
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

// A record's sensitivity as a rank (public 0 ... hyper 4), in SQL.
constexpr const char* kRank =
    "(CASE sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' "
    "THEN 3 ELSE 4 END)";

}  // namespace

class SummaryComputer::Impl {
 public:
  Impl(SQLite::Database& db, double half_life_s, const NewMentions& read_ahead,
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

SummaryComputer::SummaryComputer(SQLite::Database& db, double half_life_s,
                                 const NewMentions& read_ahead,
                                 const std::unordered_map<std::int64_t, Searched>& bulk)
    : impl_(std::make_unique<Impl>(db, half_life_s, read_ahead, bulk)) {}
SummaryComputer::~SummaryComputer() = default;
SummaryComputer::SummaryComputer(SummaryComputer&&) noexcept = default;
SummaryComputer& SummaryComputer::operator=(SummaryComputer&&) noexcept = default;

void SummaryComputer::forget_inputs() { impl_->forget_inputs(); }
void SummaryComputer::end_reads() { impl_->end_reads(); }
Refreshed SummaryComputer::compute(const DirtyEntity& e) { return impl_->compute(e); }

}  // namespace reflectd::jobs::entity_summary
