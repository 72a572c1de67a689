#pragma once
// The per-entity half of the entity summary refresh (jobs/entity_summaries.hpp says what a
// summary holds and when it is recomputed): the inputs of one marked entity as the refresh
// reads them, and SummaryComputer, which reads its mentions, facts, decisions and links on one
// connection and composes its summary_text. The refresh's steps (marks, watermarks, batches,
// writes) stay in jobs/entity_summaries.cpp.

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace reflectd::jobs::entity_summary {

// A mentioned event as the salience order sees it.
struct Candidate {
  std::int64_t seq;
  double salience;
  std::int64_t hits;
};

// Highest salience base, then most hits, then newest: a total order (seq is unique).
inline bool more_salient(const Candidate& a, const Candidate& b) {
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
// read, and must outlive the computer and not change while compute() runs. The statements are
// prepared in the constructor (SQLite::Exception when a table is missing).
class SummaryComputer {
 public:
  SummaryComputer(SQLite::Database& db, double half_life_s, const NewMentions& read_ahead,
                  const std::unordered_map<std::int64_t, Searched>& bulk);
  ~SummaryComputer();
  SummaryComputer(const SummaryComputer&) = delete;
  SummaryComputer& operator=(const SummaryComputer&) = delete;
  SummaryComputer(SummaryComputer&&) noexcept;
  SummaryComputer& operator=(SummaryComputer&&) noexcept;

  // The summary inputs' version changed (migration 14): the event inputs read so far no longer
  // hold.
  void forget_inputs();
  // Leaves no statement on a row, so that no read transaction stays open past the commit.
  void end_reads();
  // The entity's two most salient events, mention count and summary_text (SQLite::Exception on
  // a storage error).
  Refreshed compute(const DirtyEntity& e);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reflectd::jobs::entity_summary
