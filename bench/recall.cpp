// bench_recall: how well `recall` and `context` give an agent its memory back, on LoCoMo
// (../shared/data/locomo-dev: 2,760 turns of five conversations, 999 questions with the
// evidence turns that answer them), next to plain BM25 measured in the same run.
//
// It stores every turn as the daemon does (wire decoder, EventStore, the FTS index), runs
// the whole job cycle (consolidate, cluster, decay, importance, medallion) at a fixed time,
// then asks every non-adversarial question in its namespace through recall::Recaller and
// recall::build_context, exactly as the control socket's `recall` and `context` do.
//
// Printed, per category and overall: evidence recall@5, @10 and NDCG@10 (binary relevance),
// for recall and for the baseline (SQLite FTS5, porter, every word of the question OR-ed,
// the namespace's turns only); the evidence recall of `context` at 500 / 1,000 / 2,000
// tokens (an evidence id among its `sources`); the share of temporal questions whose gold
// date (LoCoMo writes "7 May 2023", "May 2023", "2022", "The week before 9 June 2023")
// appears in the 1,000-token context_text; recall latency p50 / p99.
//
// --events N first stores N synthetic events (bench/synthetic_events.hpp: the real libzmq and
// SWE-agent streams cycled, as bench_jobs does) so that latency is measured on a large store:
// recall p50 / p99 and context p99 for the LoCoMo questions, and recall p50 / p99 for 200
// questions in the libzmq namespace (the subjects of every 43rd commit, as written).
//
// --min-recall10 X makes it exit 1 when overall recall@10 is below X (the CTest run).
// The figures are deterministic: the same data and configuration give the same numbers.

#include <SQLiteCpp/SQLiteCpp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/locomo.hpp"
#include "bench/synthetic_events.hpp"
#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "common/guarded_main.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/facts.hpp"
#include "jobs/importance.hpp"
#include "jobs/medallion.hpp"
#include "jobs/sql_functions.hpp"
#include "recall/context.hpp"
#include "recall/recall.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

namespace fs = std::filesystem;
using namespace reflectd;
using nlohmann::json;

constexpr std::array<int, 3> kContextBudgets{500, 1000, 2000};

void run_jobs(const std::string& path, const Clock& clock) {
  const auto cfg = config::defaults();
  auto db = store::open_database(daemon::jobs_database_options(cfg, path), store::Access::kWriter);
  jobs::configure_jobs_connection(db);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  const auto vitality = daemon::vitality_params(cfg.decay);
  jobs::register_sql_functions(db, vitality);
  auto ctx = [&] { return jobs::JobContext{db, clock, cancel, "", "demand", 0, {}, nullptr}; };
  {
    auto c = ctx();
    jobs::run_consolidation(c, daemon::consolidation_params(cfg));
  }
  {
    auto c = ctx();
    jobs::run_facts(c);
  }
  {
    auto c = ctx();
    jobs::run_clustering(c, daemon::cluster_params(cfg));
  }
  {
    auto c = ctx();
    jobs::run_decay(c, vitality);
  }
  {
    auto c = ctx();
    jobs::run_importance(c, daemon::importance_params(cfg));
  }
  {
    auto c = ctx();
    jobs::run_medallion_refresh(c, daemon::medallion_params(cfg));
  }
}

struct Scores {
  double r5 = 0, r10 = 0, ndcg10 = 0;
  double r_deep = 0;  // recall at --dump-depth (the whole ranked list)
  int n = 0;
  void add(const std::vector<std::string>& ranked, const std::vector<std::string>& evidence) {
    const std::set<std::string> gold(evidence.begin(), evidence.end());
    auto recall_at = [&](std::size_t k) {
      int found = 0;
      for (std::size_t i = 0; i < std::min(k, ranked.size()); ++i)
        found += static_cast<int>(gold.count(ranked[i]));
      return static_cast<double>(found) / static_cast<double>(gold.size());
    };
    double dcg = 0, ideal = 0;
    for (std::size_t i = 0; i < std::min<std::size_t>(10, ranked.size()); ++i) {
      if (gold.contains(ranked[i])) dcg += 1.0 / std::log2(static_cast<double>(i) + 2);
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(10, gold.size()); ++i) {
      ideal += 1.0 / std::log2(static_cast<double>(i) + 2);
    }
    r5 += recall_at(5);
    r10 += recall_at(10);
    r_deep += recall_at(ranked.size());
    ndcg10 += ideal > 0 ? dcg / ideal : 0;
    ++n;
  }
  double mean(double total) const { return n > 0 ? total / n : 0; }
};

// Plain BM25: FTS5 with the porter tokenizer over the same turns, every word of the question
// OR-ed (quoted), the question's namespace only.
class Baseline {
 public:
  explicit Baseline(const std::vector<json>& turns) : db_(":memory:", SQLite::OPEN_READWRITE) {
    db_.exec(
        "CREATE VIRTUAL TABLE t USING fts5 (content, uid UNINDEXED, ns UNINDEXED, "
        "tokenize = 'porter unicode61 remove_diacritics 2')");
    SQLite::Statement insert(db_, "INSERT INTO t (content, uid, ns) VALUES (?1, ?2, ?3)");
    for (const json& turn : turns) {
      insert.bind(1, turn["content"].get<std::string>());
      insert.bind(2, turn["id"].get<std::string>());
      insert.bind(3, turn["namespace"].get<std::string>());
      insert.exec();
      insert.reset();
    }
  }
  std::vector<std::string> ask(const std::string& question, const std::string& ns) {
    std::string match;
    for (const std::string& w : recall::query_words(question)) {
      if (!match.empty()) match += " OR ";
      match += "\"" + w + "\"";
    }
    std::vector<std::string> out;
    if (match.empty()) return out;
    SQLite::Statement q(db_,
                        "SELECT uid FROM t WHERE t MATCH ?1 AND ns = ?2 ORDER BY bm25(t) LIMIT 10");
    q.bind(1, match);
    q.bind(2, ns);
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  }

 private:
  SQLite::Database db_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

// Milliseconds from `since` to now, on the steady clock.
double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// The WordNet of recall.wordnet_dir, loaded and timed; none when the key is empty.
std::shared_ptr<const recall::WordNetLoader> load_wordnet(const config::Config& cfg) {
  std::shared_ptr<const recall::WordNetLoader> wordnet;
  if (!cfg.recall.wordnet_dir.empty()) {
    const auto load_start = std::chrono::steady_clock::now();
    wordnet = std::make_shared<const recall::WordNetLoader>(cfg.recall.wordnet_dir);
    if (wordnet->get() == nullptr) throw std::runtime_error(wordnet->error());
    std::cout
        << "wordnet: " << wordnet->get()->synset_count() << " synsets loaded in "
        << std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count()
        << " s\n";
  }
  return wordnet;
}

// What the compressed contexts of the questions gave: evidence recall per token budget, the
// gold dates of temporal questions in the 1000-token context, and that context's latency.
struct ContextsSeen {
  std::map<int, std::pair<double, int>> recall;  // budget -> (sum, n)
  int temporal_total = 0, temporal_dated = 0, temporal_found = 0;
  std::vector<double> latency_ms;
};

// The contexts of question `q` at every budget of kContextBudgets, tallied into `seen`.
// Returns the 1000-token context's text (for --dump).
json score_contexts(recall::Recaller& recaller, const recall::RecallRequest& request, const json& q,
                    const recall::ReadScope& scope, std::int64_t now_us, ContextsSeen& seen) {
  const std::string category = q["category"];
  const auto evidence = q["evidence_ids"].get<std::vector<std::string>>();
  json contexts = json::object();
  for (const int budget : kContextBudgets) {
    recall::ContextRequest creq{request, budget};
    const auto context_start = std::chrono::steady_clock::now();
    auto built = recall::build_context(recaller, creq, scope, now_us);
    if (budget == 1000) seen.latency_ms.push_back(elapsed_ms(context_start));
    auto* context = std::get_if<recall::CompressedContext>(&built);
    int found = 0;
    if (context != nullptr) {
      for (const auto& id : evidence) {
        found += std::count(context->sources.begin(), context->sources.end(), id) > 0 ? 1 : 0;
      }
    }
    auto& [sum, n] = seen.recall[budget];
    sum += static_cast<double>(found) / static_cast<double>(evidence.size());
    ++n;
    if (budget == 1000 && category == "temporal") {
      ++seen.temporal_total;
      const std::string gold =
          q["answer"].is_string() ? q["answer"].get<std::string>() : q["answer"].dump();
      if (auto label = bench::gold_date(gold)) {
        ++seen.temporal_dated;
        if (context != nullptr && bench::contains_label(context->context_text, *label))
          ++seen.temporal_found;
      }
    }
    if (budget == 1000 && context != nullptr) contexts = context->context_text;
  }
  return contexts;
}

// Recall@5, recall@10 and NDCG@10 per category, ours beside plain BM25 and their ratio; with
// a --dump-depth over 10, the evidence recall at that depth.
void print_table(const std::map<std::string, Scores>& ours,
                 const std::map<std::string, Scores>& plain, int depth) {
  std::printf("%-12s %5s  %-21s %-21s %-21s\n", "category", "n", "recall@5 (BM25, x)",
              "recall@10 (BM25, x)", "NDCG@10 (BM25, x)");
  for (const auto& [category, s] : ours) {
    const Scores& b = plain.at(category);
    auto cell = [](double v, double base) {
      std::array<char, 64> buf{};
      std::snprintf(buf.data(), buf.size(), "%.3f (%.3f, %.2fx)", v, base,
                    base > 0 ? v / base : 0.0);
      return std::string(buf.data());
    };
    std::printf("%-12s %5d  %-21s %-21s %-21s\n", category.c_str(), s.n,
                cell(s.mean(s.r5), b.mean(b.r5)).c_str(),
                cell(s.mean(s.r10), b.mean(b.r10)).c_str(),
                cell(s.mean(s.ndcg10), b.mean(b.ndcg10)).c_str());
  }
  if (depth > 10) {
    // How much evidence the pipeline ranks at all within the deeper cut: the ceiling of any
    // re-ranking of these candidates.
    std::printf("evidence recall@%d:", depth);
    for (const auto& [category, s] : ours) {
      std::printf(" %s %.3f", category.c_str(), s.mean(s.r_deep));
    }
    std::printf("\n");
  }
}

// Recall latency on libzmq's commit subjects (every 43rd of the synthetic corpus, at most 200).
void print_libzmq_latency(const std::vector<json>& corpus, recall::Recaller& recaller,
                          const recall::ReadScope& scope, std::int64_t now_us) {
  std::vector<double> libzmq_ms;
  for (std::size_t i = 0; i < corpus.size() && libzmq_ms.size() < 200; i += 43) {
    if (corpus[i].value("namespace", "") != "libzmq") continue;
    recall::RecallRequest request;
    const std::string content = corpus[i]["content"];
    request.text = content.substr(0, std::min(content.find('\n'), std::size_t{200}));
    request.ns = "libzmq";
    const auto start = std::chrono::steady_clock::now();
    auto answer = recaller.recall(request, scope, now_us);
    libzmq_ms.push_back(elapsed_ms(start));
    (void)answer;
  }
  std::printf("recall latency (libzmq, %zu commit subjects): p50 %.2f ms, p99 %.2f ms\n",
              libzmq_ms.size(), percentile(libzmq_ms, 0.5), percentile(libzmq_ms, 0.99));
}

// Evidence recall per context budget, the temporal questions' gold dates in the 1000-token
// context, and that context's latency.
void print_contexts(const ContextsSeen& seen) {
  for (const int budget : kContextBudgets) {
    const auto& [sum, n] = seen.recall.at(budget);
    std::printf("context evidence recall at %d tokens: %.3f\n", budget, n > 0 ? sum / n : 0);
  }
  std::printf(
      "temporal questions with the gold date in the 1000-token context: %d of %d "
      "(%.3f; %d have a date as gold answer: %.3f of those)\n",
      seen.temporal_found, seen.temporal_total,
      seen.temporal_total > 0 ? static_cast<double>(seen.temporal_found) / seen.temporal_total : 0,
      seen.temporal_dated,
      seen.temporal_dated > 0 ? static_cast<double>(seen.temporal_found) / seen.temporal_dated : 0);
  std::printf("context latency (1000 tokens): p50 %.2f ms, p99 %.2f ms\n",
              percentile(seen.latency_ms, 0.5), percentile(seen.latency_ms, 0.99));
}

int run(int argc, char** argv) {
  CLI::App app{"bench_recall: recall and context quality on LoCoMo against plain BM25"};
  std::string data = bench::locomo_dev_dir();
  double min_recall10 = 0;
  std::string dump;
  app.add_option("--data", data, "the locomo-dev folder (events.jsonl, questions.jsonl)")
      ->capture_default_str();
  app.add_option("--min-recall10", min_recall10,
                 "exit 1 when overall recall@10 is below this (0: never)")
      ->capture_default_str();
  app.add_option("--dump", dump, "write each question's ranked ids and context as JSON Lines");
  int dump_depth = 10;
  app.add_option("--dump-depth", dump_depth,
                 "how many ranked ids --dump writes per question (scores still use the top 10)")
      ->check(CLI::Range(10, 100))
      ->capture_default_str();
  std::uint64_t extra_events = 0;
  app.add_option("--events", extra_events,
                 "synthetic events (real streams cycled) stored first, for latency at scale")
      ->capture_default_str();
  std::string config_path;
  app.add_option("--config", config_path,
                 "a reflectd YAML file whose recall.* keys replace the defaults")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);

  const std::vector<json> turns = bench::read_lines(data + "/events.jsonl");
  const std::vector<json> questions = bench::read_lines(data + "/questions.jsonl");
  // A fixed "now" a day after the last turn: salience, vitality and relative question times
  // are the same on every run.
  FakeClock clock(bench::day_after_last_turn_us(turns));

  const bench::ScratchDir dir("bench_recall");
  const std::string path = dir.file("recall.db");
  std::vector<json> corpus;
  if (extra_events > 0) {
    corpus = bench::read_corpus(fs::path(data).parent_path().string());
    bench::store_events(path, corpus, 0, extra_events, clock);
  }
  const auto build_start = std::chrono::steady_clock::now();
  bench::store_turns(path, turns, clock);
  run_jobs(path, clock);
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start).count();

  auto db = store::open_database({path, "normal", 5000}, store::Access::kReader);
  const auto cfg = config_path.empty() ? config::defaults() : config::load_file(config_path);
  const auto vitality = daemon::vitality_params(cfg.decay);
  jobs::register_sql_functions(db, vitality);
  const std::shared_ptr<const recall::WordNetLoader> wordnet = load_wordnet(cfg);
  recall::Recaller recaller(db, daemon::recall_params(cfg, wordnet));
  Baseline baseline(turns);
  const recall::ReadScope scope;

  std::map<std::string, Scores> ours, plain;
  ContextsSeen contexts_seen;
  std::vector<double> latency_ms;
  std::ofstream dump_out;
  if (!dump.empty()) dump_out.open(dump);
  for (const json& q : questions) {
    const std::string category = q["category"];
    if (category == "adversarial") continue;
    const auto evidence = q["evidence_ids"].get<std::vector<std::string>>();
    if (evidence.empty()) continue;
    recall::RecallRequest request;
    request.text = q["question"];
    request.ns = q["namespace"];
    request.limit = dump.empty() ? 10 : dump_depth;
    const auto start = std::chrono::steady_clock::now();
    auto answer = recaller.recall(request, scope, clock.now_us());
    latency_ms.push_back(elapsed_ms(start));
    std::vector<std::string> ranked;
    std::vector<double> scores;
    if (auto* found = std::get_if<recall::RecallResponse>(&answer)) {
      for (const auto& hit : found->results) {
        ranked.push_back(hit.id);
        scores.push_back(hit.score);
      }
    }
    ours[category].add(ranked, evidence);
    ours["all"].add(ranked, evidence);
    const auto base = baseline.ask(request.text, request.ns);
    plain[category].add(base, evidence);
    plain["all"].add(base, evidence);

    const json contexts =
        score_contexts(recaller, request, q, scope, clock.now_us(), contexts_seen);
    if (dump_out) {
      dump_out << json{{"id", q["id"]},        {"question", q["question"]}, {"category", category},
                       {"evidence", evidence}, {"ranked", ranked},          {"scores", scores},
                       {"baseline", base},     {"answer", q["answer"]},     {"context", contexts}}
                      .dump()
               << "\n";
    }
  }

  std::printf("bench_recall: %zu turns, %d questions (adversarial left out)\n", turns.size(),
              ours["all"].n);
  print_table(ours, plain, dump.empty() ? 10 : dump_depth);
  print_contexts(contexts_seen);
  std::printf("store: %llu synthetic events + %zu turns; index, jobs: %.1f s\n",
              static_cast<unsigned long long>(extra_events), turns.size(), build_s);
  std::printf("recall latency (LoCoMo questions): p50 %.2f ms, p99 %.2f ms (%zu queries)\n",
              percentile(latency_ms, 0.5), percentile(latency_ms, 0.99), latency_ms.size());
  if (!corpus.empty()) print_libzmq_latency(corpus, recaller, scope, clock.now_us());
  const double overall = ours["all"].mean(ours["all"].r10);
  if (min_recall10 > 0 && overall < min_recall10) {
    std::printf("FAIL: recall@10 %.3f is below --min-recall10 %.3f\n", overall, min_recall10);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return reflectd::guarded_main("bench_recall", run, argc, argv); }
