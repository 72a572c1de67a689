// Replicas agree (docs/CLUSTER.md, "Why replicas agree"): every job's result is a function of
// the events in stream order, not of when the jobs ran. Two stores receive the same events in
// the same order; one runs a full cycle at the end only, the other also runs every job alone
// and full cycles at seeded random stream positions. After a final full cycle on both, every
// table equals, ids included, but for the per-replica columns docs/CLUSTER.md names.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/job.hpp"
#include "jobs/job_state.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/replica_tables.hpp"
#include "support/temp_dir.hpp"

namespace {

using namespace reflectd;

constexpr std::int64_t kSecond = 1'000'000;
// The final cycle's "now" on both stores (2027-01-15); earlier runs are earlier.
constexpr std::int64_t kFinalNow = 1'800'000'000 * kSecond;

// Every stream of ../shared/data, interleaved a line at a time as one shard carrying several
// namespaces would receive them, so that a run's boundary falls inside every namespace.
std::vector<std::string> interleaved_corpus() {
  std::vector<std::vector<std::string>> files;
  for (const char* name : {"libzmq-commits.jsonl", "fmt-commits.jsonl",
                           "swe-agent-trajectories.jsonl", "locomo-dev/events.jsonl"}) {
    auto lines = test::corpus_lines(name);
    if (test::kSanitized && lines.size() > test::kSanitizedCorpusLines) {
      lines.resize(test::kSanitizedCorpusLines);
    }
    files.push_back(std::move(lines));
  }
  std::vector<std::string> out;
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (auto& file : files) {
      if (i < file.size()) {
        out.push_back(std::move(file[i]));
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

// The jobs of the daemon's default configuration, by name.
class Jobs {
 public:
  Jobs() : config_(config::defaults()), jobs_(daemon::build_jobs(config_)) {}

  // Runs `name` once over every namespace at clock's time.
  void run(const std::string& path, const std::string& name, const Clock& clock) {
    auto db =
        store::open_database(daemon::jobs_database_options(config_, path), store::Access::kWriter);
    jobs::configure_jobs_connection(db);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    for (auto& job : jobs_) {
      if (job.name != name) continue;
      jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
      job.run(ctx);
      return;
    }
    FAIL("no job " << name);
  }

  // A full cycle, in the order that leaves every job's inputs settled (memory_ops'
  // kRebuildJobs, with facts).
  void cycle(const std::string& path, const Clock& clock) {
    for (const char* name : kCycle) run(path, name, clock);
  }

  static constexpr std::array<const char*, 6> kCycle{"facts", "cluster",    "consolidate",
                                                     "decay", "importance", "medallion"};

 private:
  config::Config config_;
  std::vector<jobs::Job> jobs_;
};

std::uint64_t seed_from_environment() {
  if (const char* text = std::getenv("REFLECTD_REPLICA_SEED")) return std::stoull(text);
  return std::random_device{}();
}

}  // namespace

TEST_CASE("replicas: the tables of one full cycle, whatever runs came before it") {
  test::TempDir dir;
  const std::vector<std::string> lines = interleaved_corpus();
  const std::uint64_t seed = seed_from_environment();
  std::cout << "replica agreement: seed " << seed << " (REFLECTD_REPLICA_SEED), " << lines.size()
            << " events" << std::endl;
  INFO("seed " << seed << " (REFLECTD_REPLICA_SEED)");
  std::mt19937_64 random(seed);
  Jobs jobs;

  // Both stores receive the same events at the same times, in segments that end at nine
  // seeded stream positions, a day apart; they differ only in when the jobs run. "once" runs
  // a full cycle at the end only; "many" also runs after each segment: each job alone (in a
  // seeded order), then full cycles.
  std::vector<std::size_t> stops;
  stops.reserve(10);
  std::uniform_int_distribution<std::size_t> position(1, lines.size() - 1);
  for (int i = 0; i < 9; ++i) stops.push_back(position(random));
  std::sort(stops.begin(), stops.end());
  stops.push_back(lines.size());
  std::vector<std::string> order(Jobs::kCycle.begin(), Jobs::kCycle.end());
  std::shuffle(order.begin(), order.end(), random);
  const std::string once = dir.file("once.db");
  const std::string many = dir.file("many.db");
  FakeClock clock(kFinalNow - static_cast<std::int64_t>(stops.size()) * 86400 * kSecond);
  std::size_t begin = 0;
  for (std::size_t i = 0; i < stops.size(); ++i) {
    clock.advance_us(86400 * kSecond);
    const std::vector<std::string> segment(lines.begin() + static_cast<std::ptrdiff_t>(begin),
                                           lines.begin() + static_cast<std::ptrdiff_t>(stops[i]));
    REQUIRE(test::load_lines(once, segment, clock) == segment.size());
    REQUIRE(test::load_lines(many, segment, clock) == segment.size());
    if (i + 1 == stops.size()) break;
    if (i < order.size()) {
      INFO("run " << order[i] << " after " << stops[i] << " events");
      jobs.run(many, order[i], clock);
    } else {
      jobs.cycle(many, clock);
    }
    begin = stops[i];
  }
  REQUIRE(clock.now_us() == kFinalNow);
  jobs.cycle(once, clock);
  jobs.cycle(many, clock);

  auto once_db = test::open_writer(once);
  auto many_db = test::open_writer(many);
  // REFLECTD_REPLICA_KEEP=DIR keeps both databases there (once.db, many.db) for inspection.
  if (const char* keep = std::getenv("REFLECTD_REPLICA_KEEP")) {
    for (auto* db : {&once_db, &many_db}) {
      const std::string name = db == &once_db ? "once.db" : "many.db";
      std::filesystem::remove(std::filesystem::path(keep) / name);
      db->exec("VACUUM INTO '" + (std::filesystem::path(keep) / name).string() + "'");
    }
  }
  const auto expected = test::replica_tables(once_db);
  const auto actual = test::replica_tables(many_db);
  REQUIRE(expected.size() == actual.size());
  for (const auto& [table, rows] : expected) {
    // The two dumps are far too long to print: the failure names the table and its rows.
    if (actual.at(table) != rows) {
      FAIL_CHECK("table " << table << ": " << test::row_differences(rows, actual.at(table)));
    }
  }
}
