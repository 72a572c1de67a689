#include "jobs/clustering.hpp"

#include <libstemmer.h>
#include <utf8proc.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "jobs/job_state.hpp"

namespace reflectd::jobs {
namespace {

using nlohmann::json;

constexpr const char* kJob = "cluster";
constexpr std::size_t kMaxVectorizedBytes = 16 * 1024;
constexpr std::size_t kSummaryBytes = 300;
constexpr std::size_t kLabelTerms = 5;
constexpr std::size_t kCacheLimit = 200'000;

// English stop words (the Snowball English list) plus commit-message boilerplate.
const std::unordered_set<std::string_view>& stop_words() {
  static const std::unordered_set<std::string_view> words{
      "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
      "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
      "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
      "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
      "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "would",
      "should", "could", "ought", "a", "an", "the", "and", "but", "if", "or", "because", "as",
      "until", "while", "of", "at", "by", "for", "with", "about", "against", "between", "into",
      "through", "during", "before", "after", "above", "below", "to", "from", "up", "down", "in",
      "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there",
      "when", "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other",
      "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than", "too", "very",
      "can", "will", "just", "don", "now", "also", "s", "t", "d", "ll", "m", "re", "ve", "y",
      "isn", "aren", "wasn", "weren", "hasn", "haven", "hadn", "doesn", "didn", "won", "wouldn",
      "shan", "shouldn", "cannot", "couldn", "mustn", "let", "may", "might", "must", "shall",
      "signed", "co", "authored", "com", "http", "https", "www", "merge", "pull", "request",
      "branch", "git", "via", "e", "g", "ie", "eg", "etc"};
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
    case UTF8PROC_CATEGORY_ND:
      return true;
    default:
      return false;
  }
}

void append_utf8(std::string& out, utf8proc_int32_t cp) {
  utf8proc_uint8_t buffer[4];
  const auto n = utf8proc_encode_char(cp, buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(n));
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

// The `n` heaviest entries (ties: smaller term), re-sorted by term.
TermVector heaviest(TermVector v, std::size_t n) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (v.size() > n) v.resize(n);
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> heaviest_terms(const TermVector& v, std::size_t n) {
  TermVector top = v;
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < top.size() && i < n; ++i) out.push_back(top[i].first);
  return out;
}

// Compact exact encoding: [u16 length][bytes][f64] per entry.
std::string encode(const TermVector& v) {
  std::string out;
  for (const auto& [term, weight] : v) {
    const auto len = static_cast<std::uint16_t>(std::min<std::size_t>(term.size(), 65535));
    out.append(reinterpret_cast<const char*>(&len), sizeof len);
    out.append(term.data(), len);
    out.append(reinterpret_cast<const char*>(&weight), sizeof weight);
  }
  return out;
}

TermVector decode(const void* data, int size) {
  TermVector v;
  const auto* p = static_cast<const char*>(data);
  const auto* end = p + size;
  while (p + sizeof(std::uint16_t) <= end) {
    std::uint16_t len = 0;
    std::memcpy(&len, p, sizeof len);
    p += sizeof len;
    if (p + len + sizeof(double) > end) break;
    std::string term(p, len);
    p += len;
    double weight = 0;
    std::memcpy(&weight, p, sizeof weight);
    p += sizeof weight;
    v.emplace_back(std::move(term), weight);
  }
  return v;
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
    out.resize(kSummaryBytes);
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80) != 0) out.pop_back();
  }
  return out;
}

// The text without commit trailer lines ("Signed-off-by: Name <mail>" and the like), which
// say who, not what, and would group commits by author.
std::string without_trailers(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kTrailers{
      "signed-off-by:", "co-authored-by:", "reviewed-by:", "acked-by:", "reported-by:", "tested-by:",
      "(cherry picked from"};
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    const auto a = line.find_first_not_of(" \t");
    bool trailer = false;
    if (a != std::string_view::npos) {
      for (const auto t : kTrailers) {
        if (line.size() - a >= t.size() &&
            std::equal(t.begin(), t.end(), line.begin() + static_cast<std::ptrdiff_t>(a), [](char x, char y) {
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

json parse_or_null(const SQLite::Column& column) {
  if (column.isNull()) return json();
  return json::parse(column.getString(), nullptr, false);
}

struct Cluster {
  std::int64_t id = 0;
  std::int64_t first_seq = 0;
  std::int64_t last_seq = 0;
  std::int64_t first_us = 0;
  std::int64_t last_us = 0;
  std::int64_t members = 0;
  std::int64_t duplicates = 0;
  TermVector centroid;
  double centroid_norm = 0;
  std::int64_t medoid_seq = 0;
  TermVector medoid;
  std::string label;
  std::string summary;
  bool dirty = false;
};

// The most recently touched clusters of one term.
struct Window {
  std::map<std::int64_t, std::int64_t> by_seq;            // touched_seq -> cluster
  std::unordered_map<std::int64_t, std::int64_t> seq_of;  // cluster -> touched_seq
};

struct Totals {
  std::int64_t events_processed = 0;
  std::int64_t clusters_created = 0;
  std::int64_t summaries_generated = 0;
  std::int64_t facts_assigned = 0;
  std::int64_t duplicates_merged = 0;
  std::int64_t events_without_terms = 0;
  std::set<std::int64_t> reinforced;
  json communities = {{"communities_created", 0}, {"communities_reinforced", 0}, {"communities_retired", 0},
                      {"clusters_in_communities", 0}, {"skipped", true}, {"skip_reason", "no new events"}};
};

class Clusterer {
 public:
  Clusterer(JobContext& ctx, const ClusterParams& params)
      : ctx_(ctx),
        p_(params),
        db_(ctx.db),
        state_(db_, kJob),
        entities_(db_, params.entities),
        read_events_(db_, "SELECT seq, kind, ts_us, content, context, entities, relations, agent_id, episode_id "
                          "FROM events WHERE namespace = ?1 AND seq > ?2 AND status = 'active' "
                          "ORDER BY seq LIMIT ?3"),
        find_term_(db_, "SELECT df, surface FROM cluster_terms WHERE namespace = ?1 AND term = ?2"),
        upsert_term_(db_, "INSERT INTO cluster_terms (namespace, term, df, surface) VALUES (?1, ?2, ?3, ?4) "
                          "ON CONFLICT (namespace, term) DO UPDATE SET df = excluded.df"),
        read_window_(db_, "SELECT cluster_id, touched_seq FROM cluster_postings WHERE namespace = ?1 AND "
                          "term = ?2 ORDER BY touched_seq DESC LIMIT ?3"),
        upsert_posting_(db_, "INSERT INTO cluster_postings (namespace, term, cluster_id, touched_seq) VALUES "
                             "(?1, ?2, ?3, ?4) ON CONFLICT (namespace, term, cluster_id) DO UPDATE SET "
                             "touched_seq = excluded.touched_seq"),
        read_cluster_(db_, "SELECT first_seq, last_seq, first_seen_us, last_seen_us, member_count, "
                           "duplicate_count, centroid, medoid_seq, medoid_vector, label, summary_text "
                           "FROM clusters WHERE cluster_id = ?1"),
        insert_cluster_(db_, "INSERT INTO clusters (namespace, label, summary_text, medoid_seq, medoid_vector, "
                             "centroid, member_count, first_seq, last_seq, first_seen_us, last_seen_us) "
                             "VALUES (?1, ?2, ?3, ?4, ?5, ?5, 1, ?4, ?4, ?6, ?6)"),
        update_cluster_(db_, "UPDATE clusters SET label = ?2, summary_text = ?3, medoid_seq = ?4, "
                             "medoid_vector = ?5, centroid = ?6, member_count = ?7, duplicate_count = ?8, "
                             "last_seq = ?9, first_seen_us = ?10, last_seen_us = ?11 WHERE cluster_id = ?1"),
        insert_member_(db_, "INSERT OR IGNORE INTO event_clusters (seq, cluster_id, role, similarity) "
                            "VALUES (?1, ?2, ?3, ?4)"),
        add_cluster_entity_(db_, "INSERT INTO cluster_entities (cluster_id, entity_id, mentions) VALUES "
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
      const std::int64_t before = totals_.events_processed;
      terms_.clear();  // term, window and episode caches are keyed within one namespace
      windows_.clear();
      episode_cwd_.clear();
      while (cluster_chunk(ns)) {
      }
      if (totals_.events_processed > before) {
        ctx_.cancel.check();
        WriteTransaction transaction(ctx_);
        SQLite::Statement latest_query(db_, "SELECT coalesce(max(last_seen_us), 0) FROM entities WHERE namespace = ?1");
        latest_query.bind(1, ns);
        latest_query.executeStep();
        const std::int64_t latest = latest_query.getColumn(0).getInt64();
        const json r = detect_communities(db_, ns, p_.communities, p_.entities.edge_half_life_s,
                                          latest, ctx_.clock.now_us(), ctx_.cancel);
        ctx_.cancel.check();
        transaction.commit();
        for (const char* key : {"communities_created", "communities_reinforced", "communities_retired",
                                "clusters_in_communities"}) {
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
            {"events_without_terms", totals_.events_without_terms},
            {"entities_created", entities_.entities_created()},
            {"edges_created", entities_.edges_created()},
            {"edges_reinforced", entities_.edges_reinforced()},
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
    read_events_.reset();
    read_events_.bind(1, ns);
    read_events_.bind(2, static_cast<std::int64_t>(watermark));
    read_events_.bind(3, static_cast<std::int64_t>(p_.chunk_events));
    std::int64_t last_seq = watermark;
    std::int64_t processed = 0;
    bool yielded = false;
    while (read_events_.executeStep()) {
      const std::int64_t seq = read_events_.getColumn(0).getInt64();
      const std::string kind = read_events_.getColumn(1).getString();
      const std::int64_t ts = read_events_.getColumn(2).getInt64();
      const std::string content = read_events_.getColumn(3).getString();
      const json context = parse_or_null(read_events_.getColumn(4));
      const json entities = parse_or_null(read_events_.getColumn(5));
      const json relations = parse_or_null(read_events_.getColumn(6));
      const std::string agent = read_events_.getColumn(7).isNull() ? "" : read_events_.getColumn(7).getString();
      const std::string episode = read_events_.getColumn(8).isNull() ? "" : read_events_.getColumn(8).getString();
      last_seq = seq;
      ++processed;
      // The episode's working directory, remembered across events (and runs: job_state).
      std::string cwd;
      if (!episode.empty()) {
        const std::string shown = working_directory(content);
        auto it = episode_cwd_.find(episode);
        if (it == episode_cwd_.end()) {
          it = episode_cwd_.emplace(episode, state_.get(ns, "cwd:" + episode).value_or("")).first;
        }
        if (!shown.empty() && shown != it->second) {
          it->second = shown;
          state_.set(ns, "cwd:" + episode, shown);
        }
        cwd = it->second;
      }
      const Extraction extraction =
          extract_entities({kind, content, agent, &context, &entities, &relations, cwd});
      const auto entity_ids = entities_.add_event(ns, seq, ts, extraction);
      cluster_event(ns, seq, ts, content, entity_ids);
      if (processed % 256 == 0) ctx_.cancel.check();
      // Ingest waits for the lock: end the chunk here (chunk ends do not change results).
      if (transaction.should_yield()) {
        yielded = true;
        break;
      }
    }
    read_events_.reset();
    if (processed == 0) return false;
    entities_.flush();
    flush(ns);
    state_.set(ns, "watermark", std::to_string(last_seq));
    state_.set(ns, "documents", std::to_string(documents_));
    ctx_.cancel.check();  // A cancelled run must not commit half of its last chunk.
    transaction.commit();
    totals_.events_processed += processed;
    trim();
    return yielded || processed == p_.chunk_events;
  }

  struct Term {
    std::int64_t df = 0;
    std::string surface;
    bool dirty = false;
  };

  Term& term(const std::string& ns, const std::string& stem) {
    auto it = terms_.find(stem);
    if (it != terms_.end()) return it->second;
    Term t;
    find_term_.reset();
    find_term_.bind(1, ns);
    find_term_.bind(2, stem);
    if (find_term_.executeStep()) {
      t.df = find_term_.getColumn(0).getInt64();
      t.surface = find_term_.getColumn(1).getString();
    }
    find_term_.reset();
    return terms_.emplace(stem, std::move(t)).first->second;
  }

  Window& window(const std::string& ns, const std::string& stem) {
    auto it = windows_.find(stem);
    if (it != windows_.end()) return it->second;
    Window w;
    read_window_.reset();
    read_window_.bind(1, ns);
    read_window_.bind(2, stem);
    read_window_.bind(3, static_cast<std::int64_t>(p_.candidates_per_term));
    while (read_window_.executeStep()) {
      const std::int64_t cluster = read_window_.getColumn(0).getInt64();
      const std::int64_t touched = read_window_.getColumn(1).getInt64();
      w.by_seq.emplace(touched, cluster);
      w.seq_of.emplace(cluster, touched);
    }
    read_window_.reset();
    return windows_.emplace(stem, std::move(w)).first->second;
  }

  void touch(const std::string& ns, const std::string& stem, std::int64_t cluster, std::int64_t seq) {
    Window& w = window(ns, stem);
    if (const auto it = w.seq_of.find(cluster); it != w.seq_of.end()) {
      w.by_seq.erase(it->second);
      w.seq_of.erase(it);
    }
    w.by_seq.emplace(seq, cluster);
    w.seq_of.emplace(cluster, seq);
    while (static_cast<std::int64_t>(w.by_seq.size()) > p_.candidates_per_term) {
      w.seq_of.erase(w.by_seq.begin()->second);
      w.by_seq.erase(w.by_seq.begin());
    }
    dirty_postings_[{stem, cluster}] = seq;
  }

  Cluster& cluster(std::int64_t id) {
    auto it = clusters_.find(id);
    if (it != clusters_.end()) return it->second;
    Cluster c;
    c.id = id;
    read_cluster_.reset();
    read_cluster_.bind(1, static_cast<std::int64_t>(id));
    if (!read_cluster_.executeStep()) throw std::runtime_error("cluster " + std::to_string(id) + " is missing");
    c.first_seq = read_cluster_.getColumn(0).getInt64();
    c.last_seq = read_cluster_.getColumn(1).getInt64();
    c.first_us = read_cluster_.getColumn(2).getInt64();
    c.last_us = read_cluster_.getColumn(3).getInt64();
    c.members = read_cluster_.getColumn(4).getInt64();
    c.duplicates = read_cluster_.getColumn(5).getInt64();
    c.centroid = decode(read_cluster_.getColumn(6).getBlob(), read_cluster_.getColumn(6).getBytes());
    c.centroid_norm = norm(c.centroid);
    c.medoid_seq = read_cluster_.getColumn(7).getInt64();
    c.medoid = decode(read_cluster_.getColumn(8).getBlob(), read_cluster_.getColumn(8).getBytes());
    c.label = read_cluster_.getColumn(9).getString();
    c.summary = read_cluster_.getColumn(10).getString();
    read_cluster_.reset();
    return clusters_.emplace(id, std::move(c)).first->second;
  }

  std::string label_of(const std::string& ns, const TermVector& centroid) {
    std::string label;
    for (const auto& t : heaviest_terms(centroid, kLabelTerms)) {
      if (!label.empty()) label += ", ";
      label += term(ns, t).surface;
    }
    return label;
  }

  TermVector vectorize(const std::string& ns, std::string_view content) {
    std::map<std::string, std::pair<int, std::string>> counts;  // stem -> (tf, surface)
    for (auto& [stem, surface] : tokenizer_.terms(without_trailers(content.substr(0, std::min(content.size(), kMaxVectorizedBytes))))) {
      auto [it, inserted] = counts.try_emplace(stem, 0, surface);
      ++it->second.first;
    }
    if (counts.empty()) return {};
    ++documents_;
    TermVector v;
    for (const auto& [stem, entry] : counts) {
      Term& t = term(ns, stem);
      if (t.df == 0) t.surface = entry.second;
      ++t.df;
      if (!t.dirty) dirty_terms_.emplace_back(stem, &t);
      t.dirty = true;
      const double tf = 1.0 + std::log(static_cast<double>(entry.first));
      const double idf = std::log((1.0 + static_cast<double>(documents_)) / (1.0 + static_cast<double>(t.df))) + 1.0;
      v.emplace_back(stem, tf * idf);
    }
    v = heaviest(std::move(v), static_cast<std::size_t>(p_.vector_terms));
    const double n = norm(v);
    for (auto& [t, w] : v) w /= n;
    return v;
  }

  void cluster_event(const std::string& ns, std::int64_t seq, std::int64_t ts, const std::string& content,
                     const std::vector<std::int64_t>& entity_ids) {
    const TermVector v = vectorize(ns, content);
    if (v.empty()) {
      ++totals_.events_without_terms;
      return;
    }
    std::set<std::int64_t> candidates;
    for (const auto& t : heaviest_terms(v, static_cast<std::size_t>(p_.query_terms))) {
      for (const auto& [touched, id] : window(ns, t).by_seq) candidates.insert(id);
    }
    Cluster* best = nullptr;
    double best_cos = -1;
    for (const std::int64_t id : candidates) {
      Cluster& c = cluster(id);
      const double cos = c.centroid_norm > 0 ? dot(v, c.centroid) / c.centroid_norm : 0.0;
      if (cos > best_cos || (cos == best_cos && best != nullptr && c.first_seq < best->first_seq)) {
        best = &c;
        best_cos = cos;
      }
    }
    std::string role = "member";
    double similarity = 1.0;
    Cluster* target = nullptr;
    if (best != nullptr && best_cos >= p_.similarity_threshold) {
      target = best;
      similarity = best_cos;
      if (!created_ids_.contains(target->id)) totals_.reinforced.insert(target->id);
      if (cosine(v, target->medoid) >= p_.duplicate_threshold) {
        role = "duplicate";
        ++target->duplicates;
        ++totals_.duplicates_merged;
      } else {
        TermVector sum;
        std::size_t i = 0;
        std::size_t j = 0;
        const auto& c = target->centroid;
        while (i < c.size() || j < v.size()) {
          if (j >= v.size() || (i < c.size() && c[i].first < v[j].first)) {
            sum.push_back(c[i++]);
          } else if (i >= c.size() || v[j].first < c[i].first) {
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
        if (cosine(v, target->centroid) > cosine(target->medoid, target->centroid)) {
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
      if (!target->dirty) dirty_clusters_.push_back(target);
      target->dirty = true;
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
      insert_cluster_.reset();
      insert_cluster_.bind(1, ns);
      insert_cluster_.bind(2, c.label);
      insert_cluster_.bind(3, c.summary);
      insert_cluster_.bind(4, static_cast<std::int64_t>(seq));
      const std::string blob = encode(v);
      insert_cluster_.bind(5, blob.data(), static_cast<int>(blob.size()));
      insert_cluster_.bind(6, static_cast<std::int64_t>(ts));
      insert_cluster_.exec();
      c.id = db_.getLastInsertRowid();
      created_ids_.insert(c.id);
      ++totals_.clusters_created;
      ++totals_.summaries_generated;
      target = &clusters_.emplace(c.id, std::move(c)).first->second;
    }
    ++totals_.facts_assigned;
    for (const auto& t : heaviest_terms(target->centroid, static_cast<std::size_t>(p_.index_terms))) {
      touch(ns, t, target->id, seq);
    }
    insert_member_.reset();
    insert_member_.bind(1, static_cast<std::int64_t>(seq));
    insert_member_.bind(2, static_cast<std::int64_t>(target->id));
    insert_member_.bind(3, role);
    insert_member_.bind(4, similarity);
    insert_member_.exec();
    for (const std::int64_t entity : entity_ids) ++cluster_entities_[{target->id, entity}];
  }

  void flush(const std::string& ns) {
    for (auto& [stem, term] : dirty_terms_) {
      Term& t = *term;
      upsert_term_.reset();
      upsert_term_.bind(1, ns);
      upsert_term_.bind(2, stem);
      upsert_term_.bind(3, static_cast<std::int64_t>(t.df));
      upsert_term_.bind(4, t.surface);
      upsert_term_.exec();
      t.dirty = false;
    }
    dirty_terms_.clear();
    for (const auto& [key, seq] : dirty_postings_) {
      upsert_posting_.reset();
      upsert_posting_.bind(1, ns);
      upsert_posting_.bind(2, key.first);
      upsert_posting_.bind(3, static_cast<std::int64_t>(key.second));
      upsert_posting_.bind(4, static_cast<std::int64_t>(seq));
      upsert_posting_.exec();
    }
    dirty_postings_.clear();
    for (Cluster* cluster : dirty_clusters_) {
      Cluster& c = *cluster;
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
      update_cluster_.exec();
      c.dirty = false;
    }
    dirty_clusters_.clear();
    for (const auto& [key, count] : cluster_entities_) {
      add_cluster_entity_.reset();
      add_cluster_entity_.bind(1, static_cast<std::int64_t>(key.first));
      add_cluster_entity_.bind(2, static_cast<std::int64_t>(key.second));
      add_cluster_entity_.bind(3, static_cast<std::int64_t>(count));
      add_cluster_entity_.exec();
    }
    cluster_entities_.clear();
  }

  // Caches are write-through after flush(), so dropping them changes nothing but speed.
  void trim() {
    if (clusters_.size() > kCacheLimit) clusters_.clear();
    if (windows_.size() > kCacheLimit) windows_.clear();
    if (terms_.size() > kCacheLimit) terms_.clear();
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
  SQLite::Statement upsert_term_;
  SQLite::Statement read_window_;
  SQLite::Statement upsert_posting_;
  SQLite::Statement read_cluster_;
  SQLite::Statement insert_cluster_;
  SQLite::Statement update_cluster_;
  SQLite::Statement insert_member_;
  SQLite::Statement add_cluster_entity_;
  std::int64_t documents_ = 0;
  std::unordered_map<std::string, Term> terms_;
  std::unordered_map<std::string, Window> windows_;
  std::unordered_map<std::int64_t, Cluster> clusters_;
  std::unordered_map<std::string, std::string> episode_cwd_;
  std::set<std::int64_t> created_ids_;
  std::map<std::pair<std::string, std::int64_t>, std::int64_t> dirty_postings_;
  // Dirty cache entries for flush() (pointers into terms_/clusters_, cleared only after a
  // flush): walking the whole caches made every short transaction cost tens of ms.
  std::vector<std::pair<std::string, Term*>> dirty_terms_;
  std::vector<Cluster*> dirty_clusters_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> cluster_entities_;
  Totals totals_;
};

}  // namespace

double cosine(const TermVector& a, const TermVector& b) {
  const double na = norm(a);
  const double nb = norm(b);
  if (na == 0 || nb == 0) return 0;
  return dot(a, b) / (na * nb);
}

Tokenizer::Tokenizer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
  if (stemmer_ == nullptr) throw std::runtime_error("libstemmer: cannot create the English stemmer");
}

Tokenizer::~Tokenizer() { sb_stemmer_delete(stemmer_); }

std::vector<std::pair<std::string, std::string>> Tokenizer::terms(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string token;
  std::size_t code_points = 0;
  bool all_digits = true;
  bool all_hex = true;
  bool has_digit = false;
  auto finish = [&] {
    if (code_points >= 2 && !all_digits && !(all_hex && has_digit && code_points >= 7) && token.size() <= 64 &&
        !stop_words().contains(token)) {
      const sb_symbol* stem = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(token.data()),
                                              static_cast<int>(token.size()));
      std::string stemmed = stem != nullptr
                                ? std::string(reinterpret_cast<const char*>(stem),
                                              static_cast<std::size_t>(sb_stemmer_length(stemmer_)))
                                : token;
      if (!stemmed.empty()) out.emplace_back(std::move(stemmed), token);
    }
    token.clear();
    code_points = 0;
    all_digits = true;
    all_hex = true;
    has_digit = false;
  };
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_ssize_t pos = 0;
  while (pos < size) {
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
      ++code_points;
      const bool digit = lower >= '0' && lower <= '9';
      all_digits = all_digits && digit;
      has_digit = has_digit || digit;
      all_hex = all_hex && (digit || (lower >= 'a' && lower <= 'f'));
    } else {
      finish();
    }
  }
  finish();
  return out;
}

json run_clustering(JobContext& ctx, const ClusterParams& params) { return Clusterer(ctx, params).run(); }

}  // namespace reflectd::jobs
