// bench_jobs: how the cost of the cluster job (entities + clustering + communities) and of the
// importance job grows with the number of events. It must grow roughly linearly.
//
// Usage
//   ninja -C build bench_jobs
//   build/bench/bench_jobs                          # 100,000 and 300,000 events
//   build/bench/bench_jobs --events 100000 1000000  # the sizes
//   build/bench/bench_jobs --dir /var/tmp           # put the databases on another disk
//   ctest --test-dir build -R bench_jobs_smoke      # 5,000 events: proves it still runs
//
// Events: event i is the real event (i mod n) of the streams in --data (libzmq-commits.jsonl,
// then swe-agent-trajectories.jsonl; n = 9,052) with the id "bench:<i>" and its timestamp moved
// (i div n) days later. From the second pass on, its content becomes its own first line plus
// the first lines of real events (7919 i + 13) mod n and (104729 i + 7) mod n, so documents
// stay distinct (no run degenerates into near-duplicates) while their words, entities and
// namespaces stay real. Every run builds byte-identical input. The events
// are stored with store::EventStore (not timed), then in a fresh database per size:
//   cluster      jobs::run_clustering over everything (one run, default configuration)
//   communities  jobs::detect_communities of the largest namespace, run once more on the final
//                graph (its share of the cluster time)
//   importance   jobs::run_importance (PageRank etc.) over every namespace
// Columns: seconds, µs per event; "growth" = (cost per event at this size) / (cost per event at
// the first size): about 1 means linear, about size ratio means quadratic.
//
// Exit status: 0 on success, 1 on any error.

#include <CLI/CLI.hpp>
#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/communities.hpp"
#include "jobs/importance.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"

// JobContext is an aggregate that gains optional members (callbacks) over time; the jobs here
// need none of them, so leave them value-initialised without a warning.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

namespace fs = std::filesystem;
using namespace reflectd;
using Seconds = std::chrono::duration<double>;

#ifndef REFLECTD_DATA_DIR
#define REFLECTD_DATA_DIR "."
#endif

constexpr const char* kDataFiles[] = {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"};
constexpr std::int64_t kDayUs = 86'400'000'000;

std::vector<nlohmann::json> read_corpus(const std::string& dir) {
  std::vector<nlohmann::json> events;
  for (const char* name : kDataFiles) {
    std::ifstream in(dir + "/" + name);
    if (!in) throw std::runtime_error("cannot open " + dir + "/" + name);
    std::string line;
    while (std::getline(in, line)) events.push_back(nlohmann::json::parse(line));
  }
  if (events.empty()) throw std::runtime_error("no events in " + dir);
  return events;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Stores `count` synthetic events built from `corpus` (see the header) in `path`.
void build_database(const std::string& path, const std::vector<nlohmann::json>& corpus, std::uint64_t count,
                    const Clock& clock) {
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  store::EventStore events(db);
  bus::EventDecoder decoder(clock);
  const auto profiles = daemon::decay_profiles(config::defaults().decay);
  const std::uint64_t n = corpus.size();
  constexpr std::uint64_t kChunk = 5000;
  for (std::uint64_t first = 0; first < count; first += kChunk) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    for (std::uint64_t i = first; i < std::min(count, first + kChunk); ++i) {
      nlohmann::json e = corpus[i % n];
      const auto& other = corpus[(7919 * i + 13) % n];
      e["id"] = "bench:" + std::to_string(i);
      if (i >= n) {
        // Later passes: the subject of this event and of two others, so documents stay
        // distinct and clusters keep growing instead of collapsing into duplicates.
        const auto& third = corpus[(104729 * i + 7) % n];
        e["content"] = first_line(e["content"].get<std::string>()) + "\n" +
                       first_line(other["content"].get<std::string>()) + "\n" +
                       first_line(third["content"].get<std::string>());
      }
      auto decoded = decoder.decode(e.dump(), 1 << 22);
      if (decoded.events.size() != 1 || !decoded.events[0].event) {
        throw std::runtime_error("event " + std::to_string(i) + " rejected");
      }
      store::EventRecord row = std::move(*decoded.events[0].event);
      row.timestamp_us += static_cast<std::int64_t>(i / n) * kDayUs;
      events.insert(row, store::resolve_lifecycle(row, profiles));
    }
    transaction.commit();
  }
}

struct Row {
  std::uint64_t events = 0;
  double cluster_s = 0, communities_s = 0, importance_s = 0;
  std::int64_t clusters = 0, entities = 0, edges = 0;
};

Row measure(const std::string& path, std::uint64_t count) {
  Row row;
  row.events = count;
  SystemClock clock;
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  const auto cfg = config::defaults();
  const auto cluster_params = daemon::cluster_params(cfg);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0};
  auto start = std::chrono::steady_clock::now();
  const auto clustered = jobs::run_clustering(ctx, cluster_params);
  row.cluster_s = Seconds(std::chrono::steady_clock::now() - start).count();
  if (clustered["events_processed"].get<std::uint64_t>() != count) throw std::runtime_error("not every event was processed");
  {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    const std::int64_t latest = db.execAndGet("SELECT max(last_seen_us) FROM entities WHERE namespace = 'libzmq'").getInt64();
    start = std::chrono::steady_clock::now();
    jobs::detect_communities(db, "libzmq", cluster_params.communities, cluster_params.entities.edge_half_life_s, latest,
                             clock.now_us(), cancel);
    row.communities_s = Seconds(std::chrono::steady_clock::now() - start).count();
    transaction.commit();
  }
  start = std::chrono::steady_clock::now();
  jobs::run_importance(ctx, daemon::importance_params(cfg));
  row.importance_s = Seconds(std::chrono::steady_clock::now() - start).count();
  row.clusters = db.execAndGet("SELECT count(*) FROM clusters").getInt64();
  row.entities = db.execAndGet("SELECT count(*) FROM entities").getInt64();
  row.edges = db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times the cluster (entities, clustering, communities) and importance jobs as events grow."};
  std::vector<std::uint64_t> sizes{100'000, 300'000};
  std::string data_dir = REFLECTD_DATA_DIR;
  std::string dir;
  app.add_option("--events", sizes, "Event counts to measure (one or more)")->check(CLI::Range(1000ULL, 100'000'000ULL));
  app.add_option("--data", data_dir, "Directory of the real streams");
  app.add_option("--dir", dir, "Directory for the temporary databases (default: $TMPDIR)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto corpus = read_corpus(data_dir);
    fs::path base = dir.empty() ? fs::temp_directory_path() : fs::path(dir);
    std::string pattern = (base / "bench_jobs-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + base.string());
    const fs::path work(pattern);
    std::vector<Row> rows;
    SystemClock clock;
    for (const std::uint64_t count : sizes) {
      const std::string path = (work / ("jobs-" + std::to_string(count) + ".db")).string();
      std::cerr << "building " << count << " events...\n";
      build_database(path, corpus, count, clock);
      std::cerr << "running the jobs...\n";
      rows.push_back(measure(path, count));
      fs::remove(path);
      fs::remove(path + "-wal");
      fs::remove(path + "-shm");
    }
    fs::remove_all(work);
    std::printf("%10s %9s %8s %9s %8s %9s %8s %9s %8s %8s %8s\n", "events", "cluster_s", "us/ev", "commun_s",
                "us/ev", "import_s", "us/ev", "clusters", "entities", "edges", "growth");
    const double first_cost = (rows.front().cluster_s + rows.front().importance_s) / static_cast<double>(rows.front().events);
    for (const auto& r : rows) {
      const double ev = static_cast<double>(r.events);
      const double cost = (r.cluster_s + r.importance_s) / ev;
      std::printf("%10llu %9.2f %8.1f %9.3f %8.2f %9.3f %8.2f %9lld %8lld %8lld %8.2f\n",
                  static_cast<unsigned long long>(r.events), r.cluster_s, r.cluster_s * 1e6 / ev, r.communities_s,
                  r.communities_s * 1e6 / ev, r.importance_s, r.importance_s * 1e6 / ev,
                  static_cast<long long>(r.clusters), static_cast<long long>(r.entities),
                  static_cast<long long>(r.edges), cost / first_cost);
    }
    std::printf("growth = (cluster + importance seconds per event) relative to the first size; ~1 is linear\n");
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "bench_jobs: " << error.what() << "\n";
    return 1;
  }
}
