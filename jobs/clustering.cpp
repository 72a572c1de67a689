#include "jobs/clustering.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <absl/container/node_hash_map.h>
#include <absl/strings/string_view.h>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "common/utf8.hpp"
#include "jobs/batched_insert.hpp"
#include "jobs/entity_merge.hpp"
#include "jobs/event_json.hpp"
#include "jobs/job_state.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr const char* kJob = "cluster";
// job_state key: the cluster watermark the stored communities were detected at.
constexpr const char* kCommunitiesWatermark = "communities_watermark";
constexpr std::size_t kMaxVectorizedBytes = std::size_t{16} * 1024;
constexpr std::size_t kSummaryBytes = 300;
constexpr std::size_t kLabelTerms = 5;
constexpr std::size_t kCacheLimit = 200'000;

// English stop words (the Snowball English list) plus commit-message boilerplate.
const std::unordered_set<std::string_view>& cluster_stop_words() {
  static const std::unordered_set<std::string_view> words{
      "i",        "me",    "my",      "myself",   "we",         "our",     "ours",    "ourselves",
      "you",      "your",  "yours",   "yourself", "yourselves", "he",      "him",     "his",
      "himself",  "she",   "her",     "hers",     "herself",    "it",      "its",     "itself",
      "they",     "them",  "their",   "theirs",   "themselves", "what",    "which",   "who",
      "whom",     "this",  "that",    "these",    "those",      "am",      "is",      "are",
      "was",      "were",  "be",      "been",     "being",      "have",    "has",     "had",
      "having",   "do",    "does",    "did",      "doing",      "would",   "should",  "could",
      "ought",    "a",     "an",      "the",      "and",        "but",     "if",      "or",
      "because",  "as",    "until",   "while",    "of",         "at",      "by",      "for",
      "with",     "about", "against", "between",  "into",       "through", "during",  "before",
      "after",    "above", "below",   "to",       "from",       "up",      "down",    "in",
      "out",      "on",    "off",     "over",     "under",      "again",   "further", "then",
      "once",     "here",  "there",   "when",     "where",      "why",     "how",     "all",
      "any",      "both",  "each",    "few",      "more",       "most",    "other",   "some",
      "such",     "no",    "nor",     "not",      "only",       "own",     "same",    "so",
      "than",     "too",   "very",    "can",      "will",       "just",    "don",     "now",
      "also",     "s",     "t",       "d",        "ll",         "m",       "re",      "ve",
      "y",        "isn",   "aren",    "wasn",     "weren",      "hasn",    "haven",   "hadn",
      "doesn",    "didn",  "won",     "wouldn",   "shan",       "shouldn", "cannot",  "couldn",
      "mustn",    "let",   "may",     "might",    "must",       "shall",   "signed",  "co",
      "authored", "com",   "http",    "https",    "www",        "merge",   "pull",    "request",
      "branch",   "git",   "via",     "e",        "g",          "ie",      "eg",      "etc"};
  return words;
}

bool token_code_point(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND: return true;
    default: return false;
  }
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  std::array<utf8proc_uint8_t, 4> buffer{};
  const auto n = utf8proc_encode_char(cp, buffer.data());
  out.append(reinterpret_cast<const char*>(buffer.data()), static_cast<std::size_t>(n));
}

double norm(const TermVector& v) {
  double sum = 0;
  for (const auto& [t, w] : v) sum += w * w;
  return std::sqrt(sum);
}

double dot(const TermVector& a, const TermVector& b) {
  double sum = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const int c = a[i].first.compare(b[j].first);
    if (c == 0) {
      sum += a[i].second * b[j].second;
      ++i;
      ++j;
    } else if (c < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return sum;
}

std::string summary_of(std::string_view text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size() && out.size() < kSummaryBytes) {
    const auto end = std::min(text.find('\n', start), text.size());
    auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t\r");
    if (a != std::string_view::npos) {
      line = line.substr(a, line.find_last_not_of(" \t\r") - a + 1);
      if (!out.empty()) out += ' ';
      out.append(line);
    }
    start = end + 1;
  }
  if (out.size() > kSummaryBytes) {
    out.resize(utf8_boundary(out, kSummaryBytes));
  }
  return out;
}

// The text without commit trailer lines ("Signed-off-by: Name <mail>" and the like), which
// say who, not what, and would group commits by author.
std::string without_trailers(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kCommitTrailers{
      "signed-off-by:", "co-authored-by:", "reviewed-by:",       "acked-by:",
      "reported-by:",   "tested-by:",      "(cherry picked from"};
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t");
    bool trailer = false;
    if (a != std::string_view::npos) {
      for (const auto t : kCommitTrailers) {
        if (line.size() - a >= t.size() &&
            std::equal(t.begin(), t.end(), line.begin() + static_cast<std::ptrdiff_t>(a),
                       [](char x, char y) {
                         return x == (y >= 'A' && y <= 'Z' ? static_cast<char>(y - 'A' + 'a') : y);
                       })) {
          trailer = true;
        }
      }
    }
    if (!trailer) {
      out.append(line);
      out += '\n';
    }
    start = end + 1;
  }
  return out;
}

// One event of a chunk, as read, and its extraction once extract_batch() has run.
struct ReadEvent {
  std::int64_t seq = 0;
  std::int64_t ts = 0;
  int sensitivity = 0;
  std::string kind;
  std::string content;
  std::optional<std::string> context;
  std::optional<std::string> entities;
  std::optional<std::string> relations;
  std::string agent;
  std::string episode;
  std::string shown_cwd;  // the working directory the content shows (working_directory())
  std::string cwd;        // the episode's working directory at this event
  Extraction extraction;
  // The content's kept tokens (Tokenizer::scan of what vectorize() reads), each ended by '\0'.
  std::string tokens;
  bool extracted = false;  // `extraction` and `tokens` are set (a yield may leave the rest of
                           // a batch without)
};

// What vectorize() reads of an event: its first kMaxVectorizedBytes without commit trailers.
std::string vectorized_text(std::string_view content) {
  return without_trailers(content.substr(0, std::min(content.size(), kMaxVectorizedBytes)));
}

// The pure per-event work (JSON parsing, entity extraction and tokenizing: ~19% of the job on
// one thread), which the chunk loop runs on a second thread for the next batch while it
// stores the current one. Stemming and interning stay on the job's thread (they share its
// caches), so the vectors are the same. Touches nothing but `batch`; skips the events a chunk
// before extracted, and stops early once `abandon` is set (the chunk yielded: the next chunk
// extracts the rest).
void extract_batch(std::vector<ReadEvent>& batch, const std::atomic<bool>& abandon) {
  EventJsonReader reader;
  for (ReadEvent& e : batch) {
    if (abandon.load(std::memory_order_relaxed)) return;
    if (e.extracted) continue;
    const json context = reader.extraction_context(e.context);
    const json entities = reader.extraction_entities(e.entities);
    const json relations = reader.extraction_relations(e.relations);
    e.extraction =
        extract_entities({e.kind, e.content, e.agent, &context, &entities, &relations, e.cwd});
    e.tokens.clear();
    Tokenizer::scan(vectorized_text(e.content), [&e](const std::string& token) {
      e.tokens += token;
      e.tokens += '\0';
    });
    e.extracted = true;
  }
}

// Events per batch of the chunk loop: handing a batch to the worker costs a queue push and a
// wake-up, and a yield carries at most two batches of reads into the next chunk.
constexpr std::size_t kBatchEvents = 64;

// Terms are interned to dense ids for the length of a run (Clusterer::intern) so that hashing,
// equality and the cosine's lookups are integer operations. Every *ordering* still compares
// the terms' text, so vectors, tie-breaks and the order in which floating-point sums are
// accumulated are exactly those of the text-keyed TermVector.
using TermId = std::uint32_t;
using IdVector = std::vector<std::pair<TermId, double>>;  // sorted by the terms' text

struct Cluster {
  std::int64_t id = 0;
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
  std::int64_t first_us = 0;
  std::int64_t last_us = 0;
  std::int64_t members = 0;
  std::int64_t duplicates = 0;
  IdVector centroid;
  double centroid_norm = 0;
  std::int64_t medoid_seq = 0;
  IdVector medoid;
  std::string label;
  std::string summary;
  int sensitivity = 0;  // rank (store::sensitivity_rank): the highest of its members' events
  bool dirty = false;
};

// The most recently touched clusters of one term: (touched_seq, cluster) in ascending
// touched_seq, each cluster once, at most candidates_per_term entries. A flat vector: it
// holds a few dozen entries, so scanning beats a tree.
using Window = std::vector<std::pair<std::int64_t, std::int64_t>>;

double norm(const IdVector& v) {
  double sum = 0;
  for (const auto& [t, w] : v) sum += w * w;
  return std::sqrt(sum);
}

// Heterogeneous lookup (find by string_view without building a std::string).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

struct PairHash {
  std::size_t operator()(const std::pair<TermId, std::int64_t>& k) const noexcept {
    return std::hash<std::uint64_t>{}((static_cast<std::uint64_t>(k.first) << 40) ^
                                      static_cast<std::uint64_t>(k.second));
  }
};

struct PairHash64 {
  std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& k) const noexcept {
    return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.first) * 0x9E3779B97F4A7C15ULL ^
                                      static_cast<std::uint64_t>(k.second));
  }
};

struct Totals {
  std::int64_t events_processed = 0;
  std::int64_t clusters_created = 0;
  std::int64_t summaries_generated = 0;
  std::int64_t facts_assigned = 0;
  std::int64_t duplicates_merged = 0;
  std::int64_t events_without_terms = 0;
  std::int64_t merges_executed = 0;
  std::set<std::int64_t> reinforced;
  json communities = {{"communities_created", 0}, {"communities_reinforced", 0},
                      {"communities_retired", 0}, {"clusters_in_communities", 0},
                      {"skipped", true},          {"skip_reason", "no new events"}};
};

class Clusterer {
 public:
  Clusterer(JobContext& ctx, const ClusterParams& params)
      : ctx_(ctx),
        p_(params),
        db_(ctx.db),
        state_(db_, kJob),
        entities_(db_, params.entities),
        read_events_(db_,
                     "SELECT seq, kind, ts_us, content, context, entities, relations, agent_id, "
                     "episode_id, sensitivity "
                     "FROM events WHERE namespace = ?1 AND seq > ?2 AND status = 'active' "
                     "ORDER BY seq LIMIT ?3"),
        find_term_(db_, "SELECT df, surface FROM cluster_terms WHERE namespace = ?1 AND term = ?2"),
        insert_term_(
            db_,
            "INSERT INTO cluster_terms (namespace, term, df, surface) VALUES (?1, ?2, ?3, ?4)"),
        update_term_(db_, "UPDATE cluster_terms SET df = ?3 WHERE namespace = ?1 AND term = ?2"),
        read_window_(
            db_,
            "SELECT cluster_id, touched_seq FROM cluster_postings WHERE namespace = ?1 AND "
            "term = ?2 ORDER BY touched_seq DESC LIMIT ?3"),
        upsert_posting_(
            db_,
            "INSERT INTO cluster_postings (namespace, term, cluster_id, touched_seq) VALUES "
            "(?1, ?2, ?3, ?4) ON CONFLICT (namespace, term, cluster_id) DO UPDATE SET "
            "touched_seq = excluded.touched_seq"),
        read_cluster_(db_,
                      "SELECT first_seq, last_seq, first_seen_us, last_seen_us, member_count, "
                      "duplicate_count, centroid, medoid_seq, medoid_vector, label, summary_text, "
                      "sensitivity FROM clusters WHERE cluster_id = ?1"),
        insert_cluster_(
            db_,
            // A cluster's id is the seq of the event that seeded it (jobs/clustering.hpp).
            "INSERT INTO clusters (cluster_id, namespace, label, summary_text, medoid_seq, "
            "medoid_vector, centroid, member_count, first_seq, last_seq, first_seen_us, "
            "last_seen_us, sensitivity) "
            "VALUES (?4, ?1, ?2, ?3, ?4, ?5, ?5, 1, ?4, ?4, ?6, ?6, ?7)"),
        update_cluster_(
            db_,
            // OR FAIL, as the edges' UPDATE in jobs/entities.cpp: no statement journal.
            "UPDATE OR FAIL clusters SET label = ?2, summary_text = ?3, medoid_seq = ?4, "
            "medoid_vector = ?5, centroid = ?6, member_count = ?7, duplicate_count = ?8, "
            "last_seq = ?9, first_seen_us = ?10, last_seen_us = ?11, sensitivity = ?12 WHERE "
            "cluster_id = ?1"),
        members_(db_,
                 "INSERT OR IGNORE INTO event_clusters (seq, cluster_id, role, similarity) VALUES",
                 4,
                 [](SQLite::Statement& statement, int base, const Member& m) {
                   statement.bind(base + 1, static_cast<std::int64_t>(m.seq));
                   statement.bind(base + 2, static_cast<std::int64_t>(m.cluster));
                   statement.bind(base + 3, m.duplicate ? "duplicate" : "member");
                   statement.bind(base + 4, m.similarity);
                 }),
        add_cluster_entity_(db_,
                            "INSERT INTO cluster_entities (cluster_id, entity_id, mentions) VALUES "
                            "(?1, ?2, ?3) ON CONFLICT (cluster_id, entity_id) DO UPDATE SET "
                            "mentions = mentions + excluded.mentions") {}

  json run() {
    std::vector<std::string> namespaces;
    if (!ctx_.ns.empty()) {
      namespaces.push_back(ctx_.ns);
    } else {
      namespaces = event_namespaces(db_);
    }
    json communities = totals_.communities;
    for (const auto& ns : namespaces) {
      reset_namespace_caches();  // term, window and episode caches are keyed within one namespace
      episode_cwd_.clear();
      read_cwd_.clear();
      carried_.clear();
      preload_edges(ns);
      while (cluster_chunk(ns)) {
      }
      // Communities are due whenever the graph moved past the last detection, not when this
      // run clustered something: a run killed between its last chunk and the detection left
      // nothing for the next run to cluster, yet the detection is still owed.
      const std::string watermark = state_.get(ns, "watermark").value_or("0");
      if (watermark != "0" && state_.get(ns, kCommunitiesWatermark).value_or("0") != watermark) {
        ctx_.cancel.check();
        WriteTransaction transaction(ctx_);
        std::unique_ptr<CommunityDetection> detection = finish_partition(ns);
        if (!detection) {
          if (has_pending_merges(db_, ns)) merge_pending(ns);
          detection = prepare_communities(ns);
          ctx_.cancel.check();
          detection->partition();
        }
        const json r = detection->store(ctx_.clock.now_us(), ctx_.cancel);
        ctx_.cancel.check();
        state_.set(ns, kCommunitiesWatermark, watermark);
        transaction.commit();
        for (const char* key : {"communities_created", "communities_reinforced",
                                "communities_retired", "clusters_in_communities"}) {
          communities[key] = communities[key].get<std::int64_t>() + r.value(key, std::int64_t{0});
        }
        if (!r.value("skipped", true)) {
          communities["skipped"] = false;
          communities["skip_reason"] = nullptr;
        } else if (communities["skipped"] == true) {
          communities["skip_reason"] = r.value("skip_reason", "");
        }
      }
    }
    const bool nothing = totals_.events_processed == 0;
    return {{"clusters_created", totals_.clusters_created},
            {"clusters_reinforced", static_cast<std::int64_t>(totals_.reinforced.size())},
            {"summaries_generated", totals_.summaries_generated},
            {"facts_assigned", totals_.facts_assigned},
            {"events_processed", totals_.events_processed},
            {"duplicates_merged", totals_.duplicates_merged},
            {"merges_executed", totals_.merges_executed},
            {"events_without_terms", totals_.events_without_terms},
            {"entities_created", entities_.entities_created()},
            {"edges_created", entities_.edges_created()},
            {"edges_reinforced", entities_.edges_reinforced()},
            {"edges_preloaded", entities_.edges_preloaded()},
            {"mentions_stored", entities_.mentions_stored()},
            {"communities", communities},
            {"skipped", nothing},
            {"skip_reason", nothing ? json("no new events") : json()}};
  }

 private:
  bool cluster_chunk(const std::string& ns) {
    ctx_.cancel.check();
    WriteTransaction transaction(ctx_);
    const std::int64_t watermark = std::stoll(state_.get(ns, "watermark").value_or("0"));
    documents_ = std::stoll(state_.get(ns, "documents").value_or("0"));
    // The events the chunk before read ahead but did not store (it yielded) come first; the
    // statement reads on after them. Stored events do not change, and no other job runs
    // meanwhile, so they are what the statement would read again.
    const auto carried = static_cast<std::int64_t>(carried_.size());
    read_events_.reset();
    read_events_.bind(1, ns);
    read_events_.bind(2, carried_.empty() ? watermark : carried_.back().seq);
    read_events_.bind(3, std::max<std::int64_t>(0, p_.chunk_events - carried));
    std::int64_t last_seq = watermark;
    std::int64_t processed = 0;
    bool yielded = false;
    // Two batches in flight: while this thread stores `current` (SQLite, the clusters), a
    // worker extracts `next`. Events are stored in seq order and one at a time, as before,
    // so the results do not change; a yield carries the events read but not stored into the
    // next chunk (carried_), with what the worker extracted of them.
    std::vector<ReadEvent> current;
    std::vector<ReadEvent> next;
    bool more = true;  // read_events_ has not returned its last row yet
    std::atomic<bool> abandon{false};
    // One worker thread for the whole chunk (not a thread start per batch of 64 events),
    // started only if the chunk has a second batch. Declared after
    // what its tasks touch: leaving by an exception destroys the pool first, and its
    // destructor waits for a running task.
    std::optional<boost::asio::thread_pool> worker;
    if (read_batch(ns, current, more)) extract_batch(current, abandon);
    while (!current.empty()) {
      std::future<void> extracted;
      if (read_batch(ns, next, more)) {
        if (!worker) worker.emplace(1);
        extracted = boost::asio::post(
            *worker, boost::asio::use_future([&next, &abandon] { extract_batch(next, abandon); }));
      }
      std::size_t stored = 0;
      for (const ReadEvent& e : current) {
        last_seq = e.seq;
        ++processed;
        ++stored;
        assert(e.extracted && "every stored event was extracted (and tokenized) first");
        remember_working_directory(ns, e);
        const auto entity_ids = entities_.add_event(ns, e.seq, e.ts, e.extraction, e.sensitivity);
        cluster_event(ns, e.seq, e.ts, e.content, e.tokens, entity_ids, e.sensitivity);
        if (processed % 256 == 0) ctx_.cancel.check();
        // Ingest waits for the lock: end the chunk here (chunk ends do not change results).
        if (transaction.should_yield()) {
          yielded = true;
          abandon = true;
          break;
        }
      }
      if (extracted.valid()) extracted.get();
      if (yielded) {
        carry(current, stored, next);
        break;
      }
      std::swap(current, next);
      next.clear();
    }
    // read_cwd_ is ahead of episode_cwd_ by the carried events, which the next chunk needs.
    if (carried_.empty()) read_cwd_.clear();
    read_events_.reset();
    if (processed == 0) return false;
    entities_.flush();
    // The namespace's last chunk: its graph is final once the entities and edges are
    // written, so Louvain runs beside the clusters' writes and the commit (run() stores it).
    // The merges that aliases learnt in this run ask for come first, so that the communities
    // are those of the merged graph whatever runs came before (jobs/entity_merge.hpp);
    // a merge rewrites cluster_entities, so the clusters are written before it.
    if (!yielded && processed < p_.chunk_events) {
      if (has_pending_merges(db_, ns)) {
        flush(ns);
        merge_pending(ns);
      }
      start_partition(ns);
    }
    flush(ns);
    state_.set(ns, "watermark", std::to_string(last_seq));
    state_.set(ns, "documents", std::to_string(documents_));
    ctx_.cancel.check();  // A cancelled run must not commit half of its last chunk.
    transaction.commit();
    totals_.events_processed += processed;
    trim();
    return yielded || processed == p_.chunk_events;
  }

  // Keeps the events a yielding chunk read but did not store (`current` from `stored` on, then
  // `next`) ahead of any still carried, in seq order. Under a contended write gate a chunk may
  // yield after one event; dropping its read-ahead instead would make every chunk read and
  // extract up to two batches again.
  void carry(std::vector<ReadEvent>& current, std::size_t stored, std::vector<ReadEvent>& next) {
    std::deque<ReadEvent> kept;
    for (std::size_t i = stored; i < current.size(); ++i) kept.push_back(std::move(current[i]));
    for (ReadEvent& e : next) kept.push_back(std::move(e));
    for (ReadEvent& e : carried_) kept.push_back(std::move(e));
    carried_ = std::move(kept);
  }

  // Reads the next kBatchEvents events of the chunk (at most) into `batch`, each with its
  // episode's working directory as of that event (read_cwd_: episode_cwd_ advanced over the
  // events read but not stored yet). Returns whether it read any; `more` becomes false
  // after the last row.
  bool read_batch(const std::string& ns, std::vector<ReadEvent>& batch, bool& more) {
    batch.clear();
    while (batch.size() < kBatchEvents && !carried_.empty()) {
      batch.push_back(std::move(carried_.front()));
      carried_.pop_front();
    }
    while (batch.size() < kBatchEvents && more) {
      more = read_events_.executeStep();
      if (!more) break;
      ReadEvent& e = batch.emplace_back();
      e.seq = read_events_.getColumn(0).getInt64();
      e.kind = read_events_.getColumn(1).getString();
      e.ts = read_events_.getColumn(2).getInt64();
      e.content = read_events_.getColumn(3).getString();
      e.context = column_text(read_events_.getColumn(4));
      e.entities = column_text(read_events_.getColumn(5));
      e.relations = column_text(read_events_.getColumn(6));
      e.agent = read_events_.getColumn(7).isNull() ? "" : read_events_.getColumn(7).getString();
      e.sensitivity = stored_sensitivity_rank(read_events_.getColumn(9).getText());
      if (read_events_.getColumn(8).isNull()) continue;
      e.episode = read_events_.getColumn(8).getString();
      if (e.episode.empty()) continue;
      e.shown_cwd = working_directory(e.content);
      auto it = read_cwd_.find(e.episode);
      if (it == read_cwd_.end()) it = read_cwd_.emplace(e.episode, stored_cwd(ns, e.episode)).first;
      if (!e.shown_cwd.empty()) it->second = e.shown_cwd;
      e.cwd = it->second;
    }
    return !batch.empty();
  }

  // The episode's working directory as of the last event stored (cached, and across runs in
  // job_state).
  std::string& stored_cwd(const std::string& ns, const std::string& episode) {
    auto it = episode_cwd_.find(episode);
    if (it == episode_cwd_.end()) {
      it = episode_cwd_.emplace(episode, state_.get(ns, "cwd:" + episode).value_or("")).first;
    }
    return it->second;
  }

  // Stores event `e`'s working directory as its episode's, when the content shows a new one.
  void remember_working_directory(const std::string& ns, const ReadEvent& e) {
    if (e.shown_cwd.empty()) return;
    std::string& known = stored_cwd(ns, e.episode);
    if (known == e.shown_cwd) return;
    known = e.shown_cwd;
    state_.set(ns, "cwd:" + e.episode, known);
  }

  struct Term {
    std::int64_t df = 0;
    std::string surface;
    bool dirty = false;
    bool stored = false;  // its cluster_terms row exists: read from it or written by a flush
  };

  // Everything the run knows about one interned term (term and window: current namespace only).
  struct Slot {
    const std::string* text = nullptr;  // the key in ids_ (node-based, so the address is stable)
    bool has_term = false;
    Term term;
    bool has_window = false;
    Window window;
    std::uint64_t mark = 0;  // == mark_: `pos` belongs to the event vectorize() counts
    std::uint32_t pos = 0;
  };

  TermId intern(std::string_view text) {
    if (const auto it = ids_.find(text); it != ids_.end()) return it->second;
    const auto id = static_cast<TermId>(slots_.size());
    const auto [it, inserted] = ids_.emplace(std::string(text), id);
    Slot slot;
    slot.text = &it->first;
    slots_.push_back(std::move(slot));
    loaded_.push_back(0.0);
    return id;
  }

  const std::string& text(TermId id) const { return *slots_[id].text; }
  bool text_less(TermId a, TermId b) const { return a != b && text(a) < text(b); }

  // Sorts by text (the order of a std::map<std::string, ...> or of sorted TermVector pairs;
  // the terms of one vector are distinct).
  void sort_by_text(IdVector& v) const {
    std::sort(v.begin(), v.end(),
              [this](const auto& a, const auto& b) { return text_less(a.first, b.first); });
  }

  // Heaviest first; ties: smaller term text.
  auto heavier() const {
    return [this](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : text_less(a.first, b.first);
    };
  }

  // The `n` heaviest entries (ties: smaller term), re-sorted by term. heavier() is a total
  // order on the distinct terms of one vector, so selecting the first n (nth_element) picks
  // the same set a full sort would.
  IdVector heaviest(IdVector v, std::size_t n) const {
    if (v.size() > n) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), heavier());
      v.resize(n);
    }
    sort_by_text(v);
    return v;
  }

  // The `n` heaviest terms, heaviest first (the first n of a full sort: heavier() is total).
  std::vector<TermId> heaviest_terms(const IdVector& v, std::size_t n) const {
    IdVector top = v;
    const std::size_t k = std::min(n, top.size());
    std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(k), top.end(),
                      heavier());
    std::vector<TermId> out;
    out.reserve(k);
    for (std::size_t i = 0; i < k; ++i) out.push_back(top[i].first);
    return out;
  }

  // load(a) then dot_loaded(b) == dot(a, b) of the text-keyed vectors bit for bit: b is walked
  // in text order, so the products of the common terms are added in the same order as the
  // sorted merge adds them. `a`'s weights go into a dense array indexed by term id (8 bytes a
  // term, zero elsewhere), so that dot_loaded() has no probe loop and no branch: a term of b
  // that a lacks adds 0.0 * w == +0.0, and every weight is positive (TF-IDF terms and their
  // sums), so the partial sums are >= +0.0 and adding +0.0 leaves them unchanged. unload(a)
  // restores the zeros.
  void load(const IdVector& a) {
    for (const auto& [id, w] : a) loaded_[id] = w;
  }

  void unload(const IdVector& a) {
    for (const auto& [id, w] : a) loaded_[id] = 0.0;
  }

  double dot_loaded(const IdVector& b) const {
    double sum = 0;
    for (const auto& [id, w] : b) sum += loaded_[id] * w;
    return sum;
  }

  double cosine_ids(const IdVector& a, const IdVector& b) {
    const double na = norm(a);
    const double nb = norm(b);
    if (na == 0 || nb == 0) return 0;
    load(a);
    const double d = dot_loaded(b);
    unload(a);
    return d / (na * nb);
  }

  // Compact exact encoding: [u16 length][bytes][f64] per entry.
  std::string encode(const IdVector& v) const {
    std::string out;
    for (const auto& [id, weight] : v) {
      const std::string& term = text(id);
      const auto len = static_cast<std::uint16_t>(std::min<std::size_t>(term.size(), 65535));
      out.append(reinterpret_cast<const char*>(&len), sizeof len);
      out.append(term.data(), len);
      out.append(reinterpret_cast<const char*>(&weight), sizeof weight);
    }
    return out;
  }

  IdVector decode(const void* data, int size) {
    IdVector v;
    const auto* p = static_cast<const char*>(data);
    const auto* end = p + size;
    while (p + sizeof(std::uint16_t) <= end) {
      std::uint16_t len = 0;
      std::memcpy(&len, p, sizeof len);
      p += sizeof len;
      if (p + len + sizeof(double) > end) break;
      const TermId id = intern(std::string_view(p, len));
      p += len;
      double weight = 0;
      std::memcpy(&weight, p, sizeof weight);
      p += sizeof weight;
      v.emplace_back(id, weight);
    }
    return v;
  }

  Term& term(const std::string& ns, TermId id) {
    if (slots_[id].has_term) return slots_[id].term;
    Term t;
    find_term_.reset();
    find_term_.bind(1, ns);
    find_term_.bind(2, text(id));
    if (find_term_.executeStep()) {
      t.df = find_term_.getColumn(0).getInt64();
      t.surface = find_term_.getColumn(1).getString();
      t.stored = true;
    }
    find_term_.reset();
    slots_[id].has_term = true;
    slots_[id].term = std::move(t);
    return slots_[id].term;
  }

  Window& window(const std::string& ns, TermId id) {
    if (slots_[id].has_window) return slots_[id].window;
    Window w;
    read_window_.reset();
    read_window_.bind(1, ns);
    read_window_.bind(2, text(id));
    read_window_.bind(3, static_cast<std::int64_t>(p_.candidates_per_term));
    while (read_window_.executeStep()) {
      const std::int64_t cluster = read_window_.getColumn(0).getInt64();
      const std::int64_t touched = read_window_.getColumn(1).getInt64();
      w.emplace_back(touched, cluster);
    }
    read_window_.reset();
    std::sort(w.begin(), w.end());
    slots_[id].has_window = true;
    slots_[id].window = std::move(w);
    return slots_[id].window;
  }

  void touch(const std::string& ns, TermId id, std::int64_t cluster, std::int64_t seq) {
    Window& w = window(ns, id);
    if (const auto it =
            std::find_if(w.begin(), w.end(), [&](const auto& e) { return e.second == cluster; });
        it != w.end()) {
      w.erase(it);
    }
    const std::pair<std::int64_t, std::int64_t> entry{seq, cluster};
    w.insert(std::upper_bound(w.begin(), w.end(), entry), entry);
    if (static_cast<std::int64_t>(w.size()) > p_.candidates_per_term) {
      w.erase(w.begin(),
              w.begin() + (static_cast<std::int64_t>(w.size()) - p_.candidates_per_term));
    }
    dirty_postings_[{id, cluster}] = seq;
  }

  Cluster& cluster(std::int64_t id) {
    auto it = clusters_.find(id);
    if (it != clusters_.end()) return it->second;
    Cluster c;
    c.id = id;
    read_cluster_.reset();
    read_cluster_.bind(1, static_cast<std::int64_t>(id));
    if (!read_cluster_.executeStep())
      throw std::runtime_error("cluster " + std::to_string(id) + " is missing");
    c.first_seq = read_cluster_.getColumn(0).getInt64();
    c.last_seq = read_cluster_.getColumn(1).getInt64();
    c.first_us = read_cluster_.getColumn(2).getInt64();
    c.last_us = read_cluster_.getColumn(3).getInt64();
    c.members = read_cluster_.getColumn(4).getInt64();
    c.duplicates = read_cluster_.getColumn(5).getInt64();
    c.centroid =
        decode(read_cluster_.getColumn(6).getBlob(), read_cluster_.getColumn(6).getBytes());
    c.centroid_norm = norm(c.centroid);
    c.medoid_seq = read_cluster_.getColumn(7).getInt64();
    c.medoid = decode(read_cluster_.getColumn(8).getBlob(), read_cluster_.getColumn(8).getBytes());
    c.label = read_cluster_.getColumn(9).getString();
    c.summary = read_cluster_.getColumn(10).getString();
    c.sensitivity = stored_sensitivity_rank(read_cluster_.getColumn(11).getText());
    read_cluster_.reset();
    return clusters_.emplace(id, std::move(c)).first->second;
  }

  void mark_dirty(Cluster& c) {
    if (!c.dirty) dirty_clusters_.push_back(c.id);
    c.dirty = true;
  }

  std::string label_of(const std::string& ns, const IdVector& centroid) {
    std::string label;
    for (const TermId t : heaviest_terms(centroid, kLabelTerms)) {
      if (!label.empty()) label += ", ";
      label += term(ns, t).surface;
    }
    return label;
  }

  // `tokens`: ReadEvent::tokens.
  IdVector vectorize(const std::string& ns, std::string_view tokens) {
    // Distinct stems with their term frequency and first surface form (the token, a key of
    // token_ids_: node-based, so the address is stable until trim()).
    struct Count {
      TermId id;
      int tf;
      const std::string* surface;
    };
    std::vector<Count> counts;
    ++mark_;
    for (std::size_t start = 0; start < tokens.size();) {
      const std::size_t end = tokens.find('\0', start);
      const absl::string_view token(tokens.data() + start, end - start);
      start = end + 1;
      // One lookup per token: token -> interned stem (Tokenizer::terms() would stem, then
      // intern() would hash the stem again).
      auto it = token_ids_.find(token);
      if (it == token_ids_.end()) {
        token_.assign(token.data(), token.size());
        const std::string& stemmed = tokenizer_.stem(token_);
        it = token_ids_.emplace(token_, stemmed.empty() ? kNoTerm : intern(stemmed)).first;
      }
      const TermId id = it->second;
      if (id == kNoTerm) continue;
      Slot& s = slots_[id];
      if (s.mark != mark_) {
        s.mark = mark_;
        s.pos = static_cast<std::uint32_t>(counts.size());
        counts.push_back({id, 0, &it->first});
      }
      ++counts[s.pos].tf;
    }
    if (counts.empty()) return {};
    std::sort(counts.begin(), counts.end(),
              [this](const Count& a, const Count& b) { return text_less(a.id, b.id); });
    ++documents_;
    IdVector v;
    v.reserve(counts.size());
    for (const Count& c : counts) {
      Term& t = term(ns, c.id);
      if (t.df == 0) t.surface = *c.surface;
      ++t.df;
      if (!t.dirty) dirty_terms_.push_back(c.id);
      t.dirty = true;
      const double tf = 1.0 + std::log(static_cast<double>(c.tf));
      const double idf =
          std::log((1.0 + static_cast<double>(documents_)) / (1.0 + static_cast<double>(t.df))) +
          1.0;
      v.emplace_back(c.id, tf * idf);
    }
    v = heaviest(std::move(v), static_cast<std::size_t>(p_.vector_terms));
    const double n = norm(v);
    for (auto& [t, w] : v) w /= n;
    return v;
  }

  void cluster_event(const std::string& ns, std::int64_t seq, std::int64_t ts,
                     const std::string& content, std::string_view tokens,
                     const std::vector<std::int64_t>& entity_ids, int sensitivity) {
    const IdVector v = vectorize(ns, tokens);
    if (v.empty()) {
      ++totals_.events_without_terms;
      return;
    }
    std::vector<std::int64_t> candidates;
    for (const TermId t : heaviest_terms(v, static_cast<std::size_t>(p_.query_terms))) {
      for (const auto& [touched, id] : window(ns, t)) candidates.push_back(id);
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    // The candidates' centroids are spread over the heap: look them all up first, then score
    // them while the next one's first cache lines are being fetched.
    candidate_clusters_.clear();
    for (const std::int64_t id : candidates) candidate_clusters_.push_back(&cluster(id));
    Cluster* best = nullptr;
    double best_cos = -1;
    load(v);
    for (std::size_t i = 0; i < candidate_clusters_.size(); ++i) {
      if (i + 1 < candidate_clusters_.size()) {
        const auto* next = candidate_clusters_[i + 1]->centroid.data();
        __builtin_prefetch(next);
        __builtin_prefetch(reinterpret_cast<const char*>(next) + 64);
      }
      Cluster& c = *candidate_clusters_[i];
      const double cos = c.centroid_norm > 0 ? dot_loaded(c.centroid) / c.centroid_norm : 0.0;
      if (cos > best_cos || (cos == best_cos && best != nullptr && c.first_seq < best->first_seq)) {
        best = &c;
        best_cos = cos;
      }
    }
    unload(v);
    std::string role = "member";
    double similarity = 1.0;
    Cluster* target = nullptr;
    if (best != nullptr && best_cos >= p_.similarity_threshold) {
      target = best;
      similarity = best_cos;
      if (!created_ids_.contains(target->id)) totals_.reinforced.insert(target->id);
      if (cosine_ids(v, target->medoid) >= p_.duplicate_threshold) {
        role = "duplicate";
        ++target->duplicates;
        ++totals_.duplicates_merged;
      } else {
        IdVector sum;
        sum.reserve(target->centroid.size() + v.size());
        std::size_t i = 0;
        std::size_t j = 0;
        const auto& c = target->centroid;
        while (i < c.size() || j < v.size()) {
          if (j >= v.size() || (i < c.size() && text_less(c[i].first, v[j].first))) {
            sum.push_back(c[i++]);
          } else if (i >= c.size() || text_less(v[j].first, c[i].first)) {
            sum.push_back(v[j++]);
          } else {
            sum.emplace_back(c[i].first, c[i].second + v[j].second);
            ++i;
            ++j;
          }
        }
        target->centroid = heaviest(std::move(sum), static_cast<std::size_t>(p_.centroid_terms));
        target->centroid_norm = norm(target->centroid);
        ++target->members;
        if (cosine_ids(v, target->centroid) > cosine_ids(target->medoid, target->centroid)) {
          target->medoid = v;
          target->medoid_seq = seq;
          target->summary = summary_of(content);
          ++totals_.summaries_generated;
        }
        target->label = label_of(ns, target->centroid);
      }
      target->last_seq = seq;
      target->first_us = std::min(target->first_us, ts);
      target->last_us = std::max(target->last_us, ts);
      mark_dirty(*target);
    } else {
      Cluster c;
      c.first_seq = c.last_seq = c.medoid_seq = seq;
      c.first_us = c.last_us = ts;
      c.members = 1;
      c.centroid = v;
      c.centroid_norm = norm(v);
      c.medoid = v;
      c.label = label_of(ns, v);
      c.summary = summary_of(content);
      c.sensitivity = sensitivity;
      insert_cluster_.reset();
      insert_cluster_.bind(1, ns);
      insert_cluster_.bind(2, c.label);
      insert_cluster_.bind(3, c.summary);
      insert_cluster_.bind(4, static_cast<std::int64_t>(seq));
      const std::string blob = encode(v);
      insert_cluster_.bind(5, blob.data(), static_cast<int>(blob.size()));
      insert_cluster_.bind(6, static_cast<std::int64_t>(ts));
      insert_cluster_.bind(7, store::sensitivity_level(sensitivity));
      insert_cluster_.exec();
      c.id = seq;
      created_ids_.insert(c.id);
      ++totals_.clusters_created;
      ++totals_.summaries_generated;
      target = &clusters_.emplace(c.id, std::move(c)).first->second;
    }
    ++totals_.facts_assigned;
    for (const TermId t :
         heaviest_terms(target->centroid, static_cast<std::size_t>(p_.index_terms))) {
      touch(ns, t, target->id, seq);
    }
    if (sensitivity > target->sensitivity) {
      target->sensitivity = sensitivity;
      mark_dirty(*target);
    }
    members_.add({seq, target->id, role == "duplicate", similarity});
    for (const std::int64_t entity : entity_ids) ++cluster_entities_[{target->id, entity}];
  }

  // One event_clusters row waiting for flush().
  struct Member {
    std::int64_t seq;
    std::int64_t cluster;
    bool duplicate;
    double similarity;
  };

  void flush(const std::string& ns) {
    members_.flush();
    // Every write below goes in key order, so that each seek lands on or next to the page of
    // the one before (random order made a +10,000 run's updates 35-45% slower).
    // A term whose row is known to exist gets a plain UPDATE of its df (one B-tree seek; an
    // upsert first fails its insert, then seeks again to update); the surface never changes.
    std::sort(dirty_terms_.begin(), dirty_terms_.end(),
              [this](TermId x, TermId y) { return text(x) < text(y); });
    for (const TermId id : dirty_terms_) {
      Term& t = slots_[id].term;
      SQLite::Statement& write = t.stored ? update_term_ : insert_term_;
      write.reset();
      write.bind(1, ns);
      write.bind(2, text(id));
      write.bind(3, static_cast<std::int64_t>(t.df));
      if (!t.stored) write.bind(4, t.surface);
      if (write.exec() != 1)
        throw std::logic_error("cluster: term row of '" + text(id) + "' not written");
      t.dirty = false;
      t.stored = true;
    }
    dirty_terms_.clear();
    // cluster_terms, cluster_postings and cluster_entities are WITHOUT ROWID tables keyed by
    // what is written, so the order of these upserts does not change their content.
    std::vector<std::pair<std::pair<TermId, std::int64_t>, std::int64_t>> postings(
        dirty_postings_.begin(), dirty_postings_.end());
    std::sort(postings.begin(), postings.end(), [this](const auto& x, const auto& y) {
      if (x.first.first != y.first.first) return text(x.first.first) < text(y.first.first);
      return x.first.second < y.first.second;
    });
    for (const auto& [key, seq] : postings) {
      upsert_posting_.reset();
      upsert_posting_.bind(1, ns);
      upsert_posting_.bind(2, text(key.first));
      upsert_posting_.bind(3, static_cast<std::int64_t>(key.second));
      upsert_posting_.bind(4, static_cast<std::int64_t>(seq));
      upsert_posting_.exec();
    }
    dirty_postings_.clear();
    std::sort(dirty_clusters_.begin(), dirty_clusters_.end());
    for (const std::int64_t id : dirty_clusters_) {
      Cluster& c = clusters_.find(id)->second;
      update_cluster_.reset();
      update_cluster_.bind(1, static_cast<std::int64_t>(c.id));
      update_cluster_.bind(2, c.label);
      update_cluster_.bind(3, c.summary);
      update_cluster_.bind(4, static_cast<std::int64_t>(c.medoid_seq));
      const std::string medoid = encode(c.medoid);
      const std::string centroid = encode(c.centroid);
      update_cluster_.bind(5, medoid.data(), static_cast<int>(medoid.size()));
      update_cluster_.bind(6, centroid.data(), static_cast<int>(centroid.size()));
      update_cluster_.bind(7, static_cast<std::int64_t>(c.members));
      update_cluster_.bind(8, static_cast<std::int64_t>(c.duplicates));
      update_cluster_.bind(9, static_cast<std::int64_t>(c.last_seq));
      update_cluster_.bind(10, static_cast<std::int64_t>(c.first_us));
      update_cluster_.bind(11, static_cast<std::int64_t>(c.last_us));
      update_cluster_.bind(12, store::sensitivity_level(c.sensitivity));
      update_cluster_.exec();
      c.dirty = false;
    }
    dirty_clusters_.clear();
    std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>> counts(
        cluster_entities_.begin(), cluster_entities_.end());
    std::sort(counts.begin(), counts.end());
    for (const auto& [key, count] : counts) {
      add_cluster_entity_.reset();
      add_cluster_entity_.bind(1, static_cast<std::int64_t>(key.first));
      add_cluster_entity_.bind(2, static_cast<std::int64_t>(key.second));
      add_cluster_entity_.bind(3, static_cast<std::int64_t>(count));
      add_cluster_entity_.exec();
    }
    cluster_entities_.clear();
  }

  // The communities' input read in the open transaction: the namespace's entities and edges
  // (the edge cache when it holds them all), at the time of its newest entity.
  std::unique_ptr<CommunityDetection> prepare_communities(const std::string& ns) {
    SQLite::Statement latest_query(
        db_, "SELECT coalesce(max(last_seen_us), 0) FROM entities WHERE namespace = ?1");
    latest_query.bind(1, ns);
    latest_query.executeStep();
    const std::int64_t latest = latest_query.getColumn(0).getInt64();
    latest_query.reset();
    return std::make_unique<CommunityDetection>(db_, ns, p_.communities,
                                                p_.entities.edge_half_life_s, latest, ctx_.cancel,
                                                entities_.namespace_edges(ns));
  }

  // Louvain on another thread (it needs no database): a +10,000 run after 1M events spends
  // ~55 ms in it, which the last chunk's cluster writes and commit now cover.
  // Nothing but this job writes entities and edges, so the graph read here is the one run()
  // would read after the commit.
  // Executes the merges that aliases learnt ask for in `ns` (jobs/entity_merge.hpp), before its
  // communities are detected.
  void merge_pending(const std::string& ns) {
    totals_.merges_executed += execute_pending_merges(db_, ns, p_.entities.edge_half_life_s,
                                                      "job:cluster", ctx_.clock.now_us());
    entities_.trim(0);  // its caches hold the merged entities and their edges
  }

  void start_partition(const std::string& ns) {
    partition_.reset();
    auto detection = prepare_communities(ns);
    CommunityDetection* const graph = detection.get();
    std::future<void> done;
    try {
      done = std::async(std::launch::async, [graph] { graph->partition(); });
    } catch (const std::system_error&) {
      // No thread to be had (RLIMIT_NPROC, TasksMax): finish_partition() runs it here.
    }
    partition_.emplace(ns, std::move(detection), std::move(done));
  }

  // The detection start_partition() began for `ns`, partitioned (rethrows what partition()
  // threw), or nullptr when none was begun.
  std::unique_ptr<CommunityDetection> finish_partition(const std::string& ns) {
    if (!partition_ || partition_->ns != ns) {
      partition_.reset();
      return nullptr;
    }
    PendingPartition pending = std::move(*partition_);
    partition_.reset();
    if (pending.done.valid()) {
      pending.done.get();
    } else {
      pending.detection->partition();
    }
    return std::move(pending.detection);
  }

  // A run with many events to cluster reads the namespace's edges at once instead of one by
  // one at their first reinforcement (EntityStore::preload_edges).
  void preload_edges(const std::string& ns) {
    SQLite::Statement pending(db_,
                              "SELECT count(*) FROM events WHERE namespace = ?1 AND seq > ?2 AND "
                              "status = 'active'");
    pending.bind(1, ns);
    pending.bind(2,
                 static_cast<std::int64_t>(std::stoll(state_.get(ns, "watermark").value_or("0"))));
    const std::int64_t events = pending.executeStep() ? pending.getColumn(0).getInt64() : 0;
    pending.reset();
    entities_.preload_edges(ns, events, kCacheLimit);
  }

  // Term and window caches are keyed within one namespace (the interned ids are not).
  void reset_namespace_caches() {
    for (Slot& s : slots_) {
      s.has_term = false;
      s.term = Term{};
      s.has_window = false;
      s.window.clear();
    }
  }

  // Caches are write-through after flush(), so dropping them changes nothing but speed.
  // Cached clusters hold interned ids, so they go when the interned terms go.
  void trim() {
    if (clusters_.size() > kCacheLimit || slots_.size() > kCacheLimit) clusters_.clear();
    if (slots_.size() > kCacheLimit) {
      slots_.clear();
      loaded_.clear();
      ids_.clear();
      token_ids_.clear();
    } else if (token_ids_.size() > kCacheLimit) {
      token_ids_.clear();  // its values are ids of slots_, which stay: nothing else to drop
    }
    entities_.trim(kCacheLimit);
  }

 private:
  JobContext& ctx_;
  const ClusterParams& p_;
  SQLite::Database& db_;
  JobState state_;
  EntityStore entities_;
  Tokenizer tokenizer_;
  SQLite::Statement read_events_;
  SQLite::Statement find_term_;
  SQLite::Statement insert_term_;
  SQLite::Statement update_term_;
  SQLite::Statement read_window_;
  SQLite::Statement upsert_posting_;
  SQLite::Statement read_cluster_;
  SQLite::Statement insert_cluster_;
  SQLite::Statement update_cluster_;
  BatchedInsert<Member> members_;
  SQLite::Statement add_cluster_entity_;
  std::int64_t documents_ = 0;
  std::unordered_map<std::string, TermId, StringHash, std::equal_to<>> ids_;
  std::vector<Slot> slots_;
  std::uint64_t mark_ = 0;
  std::vector<double> loaded_;  // per term id: its weight in the loaded vector, else 0.0
  static constexpr TermId kNoTerm = std::numeric_limits<TermId>::max();
  // Token (lower-cased surface) -> its stem's id, kNoTerm when the stem is empty. Cleared with
  // the interned ids, or alone when it is full (trim()). It and clusters_ are Abseil's
  // node_hash_map (as the entity caches, jobs/entities.hpp): one probe of a flat control array
  // per lookup, and stable addresses (candidate_clusters_). ids_ stays a std::unordered_map:
  // Debian's Abseil hashes absl::string_view, not the std::string_view that intern() looks up.
  absl::node_hash_map<std::string, TermId> token_ids_;
  std::string token_;  // vectorize()'s token missing from token_ids_, as a key
  std::vector<TermId> dirty_terms_;
  absl::node_hash_map<std::int64_t, Cluster> clusters_;
  std::vector<Cluster*> candidate_clusters_;  // cluster_event()'s candidates, into clusters_
  std::vector<std::int64_t> dirty_clusters_;
  std::unordered_map<std::string, std::string> episode_cwd_;  // as of the last event stored
  std::unordered_map<std::string, std::string> read_cwd_;     // as of the last event read
  std::deque<ReadEvent> carried_;  // read ahead by a chunk that yielded before storing them
  std::unordered_set<std::int64_t> created_ids_;
  std::unordered_map<std::pair<TermId, std::int64_t>, std::int64_t, PairHash> dirty_postings_;
  // (cluster, entity) -> mentions added by the chunk.
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, std::int64_t, PairHash64>
      cluster_entities_;
  Totals totals_;
  // A namespace's communities being partitioned since its last chunk (start_partition()).
  struct PendingPartition {
    PendingPartition(std::string name, std::unique_ptr<CommunityDetection> d, std::future<void> f)
        : ns(std::move(name)), detection(std::move(d)), done(std::move(f)) {}
    PendingPartition(PendingPartition&&) noexcept = default;
    // Not assignable: assigning over a running task would free its detection first.
    PendingPartition& operator=(PendingPartition&&) = delete;
    PendingPartition(const PendingPartition&) = delete;
    PendingPartition& operator=(const PendingPartition&) = delete;
    // A std::async future waits for its task when destroyed: declared after the detection
    // the task uses, it is destroyed first, also when an exception leaves the run.
    ~PendingPartition() {
      if (done.valid()) done.wait();
    }
    std::string ns;
    std::unique_ptr<CommunityDetection> detection;
    std::future<void> done;
  };
  std::optional<PendingPartition> partition_;
};

}  // namespace

double cosine(const TermVector& a, const TermVector& b) {
  const double na = norm(a);
  const double nb = norm(b);
  if (na == 0 || nb == 0) return 0;
  return dot(a, b) / (na * nb);
}

Tokenizer::Tokenizer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
  if (stemmer_ == nullptr)
    throw std::runtime_error("libstemmer: cannot create the English stemmer");
}

Tokenizer::~Tokenizer() { sb_stemmer_delete(stemmer_); }

const std::string& Tokenizer::stem(const std::string& token) {
  constexpr std::size_t kStemCacheLimit = 200'000;
  if (const auto it = stems_.find(token); it != stems_.end()) return it->second;
  if (stems_.size() >= kStemCacheLimit) stems_.clear();
  const sb_symbol* stem = sb_stemmer_stem(
      stemmer_, reinterpret_cast<const sb_symbol*>(token.data()), static_cast<int>(token.size()));
  std::string stemmed = stem != nullptr
                            ? std::string(reinterpret_cast<const char*>(stem),
                                          static_cast<std::size_t>(sb_stemmer_length(stemmer_)))
                            : token;
  return stems_.emplace(token, std::move(stemmed)).first->second;
}

std::vector<std::pair<std::string, std::string>> Tokenizer::terms(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  scan(text, [&](const std::string& token) {
    const std::string& stemmed = stem(token);
    if (!stemmed.empty()) out.emplace_back(stemmed, token);
  });
  return out;
}

void Tokenizer::scan(std::string_view text, const std::function<void(const std::string&)>& emit) {
  std::string token;
  std::size_t code_points = 0;
  bool all_digits = true;
  bool all_hex = true;
  bool has_digit = false;
  auto finish = [&] {
    if (code_points >= 2 && !all_digits && !(all_hex && has_digit && code_points >= 7) &&
        token.size() <= 64 && !cluster_stop_words().contains(token)) {
      emit(token);
    }
    token.clear();
    code_points = 0;
    all_digits = true;
    all_hex = true;
    has_digit = false;
  };
  auto add = [&](utf8proc_int32_t lower) {
    ++code_points;
    const bool digit = lower >= '0' && lower <= '9';
    all_digits = all_digits && digit;
    has_digit = has_digit || digit;
    all_hex = all_hex && (digit || (lower >= 'a' && lower <= 'f'));
  };
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t pos = 0;
  while (pos < size) {
    // ASCII without utf8proc: its letters (Lu, Ll) and digits (Nd) are the only ASCII token
    // code points, and lower-casing them is the ASCII mapping.
    if (const utf8proc_uint8_t b = bytes[pos]; b < 0x80) {
      ++pos;
      if ((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9')) {
        token += static_cast<char>(b);
        add(b);
      } else if (b >= 'A' && b <= 'Z') {
        const auto lower = static_cast<char>(b - 'A' + 'a');
        token += lower;
        add(lower);
      } else {
        finish();
      }
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(bytes + pos, size - pos, &cp);
    if (n <= 0) {
      finish();
      ++pos;
      continue;
    }
    pos += n;
    if (token_code_point(cp)) {
      const utf8proc_int32_t lower = utf8proc_tolower(cp);
      append_utf8(token, lower);
      add(lower);
    } else {
      finish();
    }
  }
  finish();
}

json run_clustering(JobContext& ctx, const ClusterParams& params) {
  return Clusterer(ctx, params).run();
}

bool Tokenizer::is_stop_word(std::string_view token) {
  return cluster_stop_words().contains(token);
}

}  // namespace reflectd::jobs
