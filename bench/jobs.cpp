// bench_jobs: the cost of a full reflection cycle (every job, in the daemon's order) and of an
// incremental one as the number of stored events grows, the memory the jobs need, and the
// daemon's startup time on the resulting database. docs/PERFORMANCE.md ("Jobs") holds the
// figures and the targets: full cycle over 1M events <= 60 s, incremental cycle
// after 10,000 new events <= 1 s, linear growth, RSS <= 300 MB, startup <= 500 ms.
//
// Usage
//   ninja -C build bench_jobs reflectd
//   build/bench/bench_jobs                                  # 100,000, 300,000, 1,000,000 events
//   build/bench/bench_jobs --events 100000 300000           # other sizes
//   build/bench/bench_jobs --incremental 10000 --starts 5   # the defaults
//   build/bench/bench_jobs --dir /var/tmp                   # databases on another disk
//   ctest --test-dir build -R bench_jobs_smoke              # 5,000 + 1,000 events: still runs
// Profiling (docs/PERFORMANCE.md): store once, then profile one cycle on a copy:
//   build/bench/bench_jobs --build /var/tmp/p.db --events 100000
//   perf record -g -- build/bench/bench_jobs --cycle /var/tmp/p.db
// Jobs yielding to a writer that always waits (the write gate's worst case; same tables):
//   build/bench/bench_jobs --cycle /var/tmp/p.db --contend 20
// An incremental cycle: append events 100,000..109,999, then cycle again:
//   build/bench/bench_jobs --build /var/tmp/p.db --first 100000 --events 10000
// Comparing two builds table by table: --cycle DB --now-us T runs the jobs at the fixed time T.
// One job alone (profiling): --cycle DB --only consolidate (the others are not run).
// Where a cycle's SQLite time goes: --cycle DB --sql-profile (per statement, on stderr).
// Which B-trees a cycle wrote: --changed-pages BEFORE AFTER (a copy taken before the cycle).
//
// Events: event i is the real event (i mod n) of the streams in --data (libzmq-commits.jsonl,
// then swe-agent-trajectories.jsonl; n = 9,052) with the id "bench:<i>" and its timestamp moved
// (i div n) days later. From the second pass on, its content becomes its own first line plus
// the first lines of real events (7919 i + 13) mod n and (104729 i + 7) mod n, so documents
// stay distinct (no run degenerates into near-duplicates) while their words, entities and
// namespaces stay real, and its episode_id (if any) gets the suffix "~<i div n>": each pass
// replays the agents' runs as new episodes. Every run builds byte-identical input; storing it is
// not timed.
//
// Per size N, in a fresh database:
//   full         events 0..N-1 stored, then one cycle: consolidate, cluster (entities,
//                clustering, communities), decay, importance, medallion (entity summaries and
//                medallions) -- the order of daemon::build_jobs -- each run to completion over
//                every namespace, as `reflectctl run JOB` would, on a connection set up as the
//                daemon's jobs' connection (page cache, synchronous mode, WAL checkpoints on
//                another thread: store/checkpointer.hpp).
//   incremental  events N..N+I-1 appended (I = --incremental), then the same cycle again.
//   startup      the real reflectd binary started --starts times on that database (every job
//                disabled, sockets on ipc:// in the work directory); time from spawn to the
//                READY=1 datagram on a NOTIFY_SOCKET this program owns; the daemon's VmHWM
//                at READY=1.
// Each cycle runs in a child process (this program re-executed with --cycle), so its peak RSS
// (getrusage ru_maxrss = VmHWM) is the jobs' own memory on top of a bare process: the parent's
// copy of the corpus is not in it.
// Columns: wall-clock seconds per job and in total (then the same as CPU seconds), µs per event
// (full: per stored event; incremental: per new event), peak RSS in MiB, and "growth" = (full-cycle
// cost per event at this size) / (cost per event at the first size): about 1 is linear, about the
// size ratio is quadratic. For the incremental cycle "growth" is its total relative to the first
// size's: about 1 means it does not depend on how much was stored before.
//
// Exit status: 0 on success, 1 on any error (a job failing, an event rejected, a daemon that
// never became ready).

#include <SQLiteCpp/SQLiteCpp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <ctime>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/synthetic_events.hpp"
#include "bus/event_decoder.hpp"
#include "common/clock.hpp"
#include "common/guarded_main.hpp"
#include "common/heap.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/importance.hpp"
#include "jobs/medallion.hpp"
#include "jobs/sql_functions.hpp"
#include "store/checkpointer.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/sqlite_library.hpp"
#include "store/write_gate.hpp"

extern char** environ;

// JobContext is an aggregate that gains optional members (callbacks) over time; the jobs here
// need none of them, so leave them value-initialised without a warning.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

namespace fs = std::filesystem;
using namespace reflectd;
using Seconds = std::chrono::duration<double>;
using nlohmann::json;

#ifndef REFLECTD_DATA_DIR
#define REFLECTD_DATA_DIR "."
#endif
#ifndef REFLECTD_BIN
#define REFLECTD_BIN "reflectd"
#endif

// The daemon's order (daemon::build_jobs).
constexpr std::array<const char*, 5> kJobs = {"consolidate", "cluster", "decay", "importance",
                                              "medallion"};
constexpr std::size_t kJobCount = std::size(kJobs);

// User + system CPU seconds of this process: on a machine shared with other work the wall
// time of a job varies with the load, its CPU time much less.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Time per SQL statement of one connection (sqlite3_trace_v2, SQLITE_TRACE_PROFILE): for
// attributing a cycle's wall time, e.g. to its COMMITs. A statement's time runs from its first
// step to its reset, so a cursor read row by row while a job works (the events of a chunk)
// includes that work; and SQLite's unix clock counts whole milliseconds, so the sum over many
// short statements is an estimate. Not thread-safe: one connection, used by one thread.
class SqlProfile {
 public:
  void attach(SQLite::Database& db) {
    sqlite3_trace_v2(db.getHandle(), SQLITE_TRACE_PROFILE, &SqlProfile::on_profile, this);
  }
  /// The `limit` statements with the most time, most first, as "ms  runs  SQL".
  void print(std::ostream& out, std::size_t limit) const {
    std::vector<std::pair<std::int64_t, const std::string*>> order;
    order.reserve(by_sql_.size());
    for (const auto& [sql, total] : by_sql_) order.emplace_back(total.ns, &sql);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
    out << "ms (SQLite's clock)  runs  statement\n";
    for (std::size_t i = 0; i < order.size() && i < limit; ++i) {
      const Total& total = by_sql_.at(*order[i].second);
      std::string sql = order[i].second->substr(0, 160);
      std::replace(sql.begin(), sql.end(), '\n', ' ');
      out << static_cast<double>(total.ns) / 1e6 << "  " << total.runs << "  " << sql << "\n";
    }
  }

 private:
  struct Total {
    std::int64_t ns = 0;
    std::int64_t runs = 0;
  };
  static int on_profile(unsigned /*type*/, void* self, void* statement, void* elapsed_ns) {
    const char* sql = sqlite3_sql(static_cast<sqlite3_stmt*>(statement));
    Total& total = static_cast<SqlProfile*>(self)->by_sql_[sql != nullptr ? sql : "?"];
    total.ns += *static_cast<const sqlite3_int64*>(elapsed_ns);
    ++total.runs;
    return 0;
  }
  std::map<std::string, Total> by_sql_;
};

// The pages that differ between two copies of one database (`before`, taken before a cycle,
// and `after`), counted by the B-tree (table or index) that owns each in `after` (SQLite's
// dbstat table): what a cycle wrote to the WAL, and so what its commits and checkpoints cost.
int changed_pages(const std::string& before, const std::string& after) {
  SQLite::Database db(after, SQLite::OPEN_READONLY);
  const auto page_size = static_cast<std::size_t>(db.execAndGet("PRAGMA page_size").getInt64());
  std::map<std::int64_t, std::string> owner;
  std::map<std::string, std::int64_t> pages;
  SQLite::Statement q(db, "SELECT name, pageno FROM dbstat");
  while (q.executeStep()) {
    owner[q.getColumn(1).getInt64()] = q.getColumn(0).getString();
    ++pages[q.getColumn(0).getString()];
  }
  std::ifstream a(before, std::ios::binary);
  std::ifstream b(after, std::ios::binary);
  if (!a || !b) throw std::runtime_error("cannot read " + (a ? after : before));
  std::string x(page_size, '\0');
  std::string y(page_size, '\0');
  std::map<std::string, std::int64_t> changed;
  std::int64_t total = 0;
  for (std::int64_t page = 1;; ++page) {
    b.read(y.data(), static_cast<std::streamsize>(page_size));
    if (b.gcount() == 0) break;
    a.read(x.data(), static_cast<std::streamsize>(page_size));
    if (a.gcount() == b.gcount() && x == y) continue;
    const auto it = owner.find(page);
    ++changed[it == owner.end() ? "(free or other)" : it->second];
    ++total;
  }
  std::vector<std::pair<std::int64_t, std::string>> order;
  order.reserve(changed.size());
  for (const auto& [name, n] : changed) order.emplace_back(n, name);
  std::sort(order.begin(), order.end(), [](const auto& l, const auto& r) { return l > r; });
  std::cout << total << " pages of " << page_size << " bytes changed\nchanged  of  B-tree\n";
  for (const auto& [n, name] : order) {
    std::cout << n << "  " << (pages.contains(name) ? pages[name] : 0) << "  " << name << "\n";
  }
  return 0;
}

// --cycle: runs every job once over `path` and prints {"<job>": seconds, ...,
// "<job>_result": result} on one line. Runs in its own process (see the header).
// now_us > 0 fixes "now" for every job (a FakeClock), so two binaries' cycles over copies of one
// database can be compared table by table (scripts/compare-derived.sh).
//
// `contend_slice_ms` > 0: a thread keeps asking for the writer's turn at a write gate shared
// with the jobs (store/write_gate.hpp; job_max_wait 1 ms, slice `contend_slice_ms`), as a
// writer under a sustained flood would, so every chunked-job transaction ends after its
// slice. The timings then include that overhead (more, shorter transactions) and the tables
// must equal an uncontended cycle's (docs/PERFORMANCE.md, "Ingest under jobs").
//
// `cluster_chunk` > 0 replaces the cluster job's events per chunk (ClusterParams::chunk_events)
// for measuring chunk sizes; the tables do not depend on it.
//
// `sql_profile`: the jobs' connection's time per statement (SqlProfile), printed to stderr
// after the JSON line.
int run_cycle(const std::string& path, std::int64_t now_us, std::int64_t contend_slice_ms,
              std::int64_t cluster_chunk, std::int64_t consolidate_chunk,
              const std::vector<std::string>& only, bool sql_profile) {
  keep_freed_heap_mapped();                   // the daemon's heap policy (reflectd's main())
  store::disable_sqlite_memory_statistics();  // and its SQLite settings
  std::optional<store::WriteGate> gate;
  std::atomic<bool> done{false};
  std::thread contender;
  if (contend_slice_ms > 0) {
    gate.emplace(1, contend_slice_ms);
    contender = std::thread([&] {
      while (!done) {
        if (gate->writer_enter(60'000)) gate->writer_exit();
        std::this_thread::yield();
      }
    });
  }
  struct Join {
    std::atomic<bool>& done;
    std::thread& thread;
    ~Join() {
      done = true;
      if (thread.joinable()) thread.join();
    }
  } join{done, contender};
  SystemClock system_clock;
  FakeClock fixed_clock(now_us);
  const Clock& clock = now_us > 0 ? static_cast<const Clock&>(fixed_clock) : system_clock;
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  const auto cfg = config::defaults();
  // The daemon's jobs connection: its synchronous mode (daemon::jobs_database_options:
  // jobs.synchronous, normal by default), and its WAL checkpoints on another thread (the
  // daemon hands them to the writer's checkpointer: daemon::Daemon,
  // store::Writer::share_checkpointer). Declared first, closed last.
  std::optional<store::Checkpointer> checkpointer;
  if (cfg.store.checkpoint_pages > 0) {
    checkpointer.emplace(store::DatabaseOptions{path, cfg.store.synchronous, 5000},
                         cfg.store.checkpoint_pages);
  }
  auto db = store::open_database(daemon::jobs_database_options(cfg, path), store::Access::kWriter);
  jobs::configure_jobs_connection(db);
  if (checkpointer) checkpointer->attach(db);
  SqlProfile profile;
  if (sql_profile) profile.attach(db);
  auto consolidation = daemon::consolidation_params(cfg);
  if (consolidate_chunk > 0) consolidation.chunk_events = consolidate_chunk;
  auto cluster = daemon::cluster_params(cfg);
  if (cluster_chunk > 0) cluster.chunk_events = cluster_chunk;
  const auto vitality = daemon::vitality_params(cfg.decay);
  const auto importance = daemon::importance_params(cfg);
  const auto medallion = daemon::medallion_params(cfg);
  json out = json::object();
  for (const char* job : kJobs) {
    if (!only.empty() && std::find(only.begin(), only.end(), job) == only.end()) continue;
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, gate ? &*gate : nullptr};
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    json result;
    const std::string name = job;
    if (name == "consolidate") {
      result = jobs::run_consolidation(ctx, consolidation);
    } else if (name == "cluster") {
      result = jobs::run_clustering(ctx, cluster);
    } else if (name == "decay") {
      jobs::register_sql_functions(db, vitality);
      result = jobs::run_decay(ctx, vitality);
    } else if (name == "importance") {
      result = jobs::run_importance(ctx, importance);
    } else {
      result = jobs::run_medallion_refresh(ctx, medallion);
    }
    out[name] = Seconds(std::chrono::steady_clock::now() - start).count();
    out[name + "_cpu"] = cpu_seconds() - cpu_start;
    out[name + "_result"] = std::move(result);
  }
  if (gate) {
    out["write_gate"] = {{"job_turns", gate->stats().job_turns.load()},
                         {"job_yields", gate->stats().job_yields.load()}};
  }
  std::cout << out.dump() << "\n";
  if (sql_profile) profile.print(std::cerr, 40);
  return 0;
}

// posix_spawn with stdout (and stderr when given) redirected to files.
pid_t spawn(const std::vector<std::string>& args, const std::vector<std::string>& env_extra,
            const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!err_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings(env_extra);
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "NOTIFY_SOCKET=", 14) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  return pid;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// nlohmann::json's destructor may allocate (it flattens nested values); a bad_alloc there
// ends the process, as it would anywhere else.
struct Cycle {  // NOLINT(bugprone-exception-escape)
  std::array<double, kJobCount> seconds{};
  std::array<double, kJobCount> cpu{};
  double total = 0;
  double cpu_total = 0;
  double peak_rss_mib = 0;
  json results;
};

// One cycle over `db_path` in a child process; its ru_maxrss is the jobs' peak RSS.
Cycle cycle_in_child(const fs::path& work, const std::string& db_path) {
  const std::string out = (work / "cycle.out").string();
  const pid_t pid = spawn({"/proc/self/exe", "--cycle", db_path}, {}, out, "");
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the cycle failed: " + read_file(out));
  Cycle c;
  c.results = json::parse(read_file(out));
  for (std::size_t j = 0; j < kJobCount; ++j) {
    c.seconds[j] = c.results.at(kJobs[j]).get<double>();
    c.total += c.seconds[j];
    c.cpu[j] = c.results.at(std::string(kJobs[j]) + "_cpu").get<double>();
    c.cpu_total += c.cpu[j];
  }
  c.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return c;
}

void expect_processed(const Cycle& c, std::uint64_t count) {
  for (const char* job : {"consolidate", "cluster"}) {
    const auto processed =
        c.results.at(std::string(job) + "_result").at("events_processed").get<std::uint64_t>();
    if (processed != count) {
      throw std::runtime_error(std::string(job) + " processed " + std::to_string(processed) +
                               " events, not " + std::to_string(count));
    }
  }
}

// kB value of `field` in /proc/<pid>/status.
double proc_status_mib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field + ":")) return std::stod(line.substr(field.size() + 1)) / 1024.0;
  }
  return 0;
}

struct Startup {
  std::vector<double> ms;
  double vmhwm_mib = 0;
};

// Starts the real daemon `starts` times on `db_path`; see the header.
Startup measure_startup(const fs::path& work, const std::string& db_path, int starts) {
  const std::string notify_path = (work / "notify.sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket(AF_UNIX) failed");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (notify_path.size() >= sizeof address.sun_path)
    throw std::runtime_error("work directory path too long");
  std::memcpy(address.sun_path, notify_path.c_str(), notify_path.size() + 1);
  fs::remove(notify_path);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot bind " + notify_path);
  }
  std::string config = "log:\n  level: warn\nbus:\n";
  for (const std::string socket : {"ingest", "push", "notify", "control"}) {
    config += "  " + socket + ": [\"ipc://" + (work / socket).string() + "\"]\n";
  }
  config += "store:\n  path: \"" + db_path + "\"\n";
  config += "daemon:\n  metrics_listen: \"127.0.0.1:0\"\nhttp:\n  listen: \"127.0.0.1:0\"\njobs:\n";
  for (const char* job : kJobs) config += std::string("  ") + job + ": {enabled: false}\n";
  const std::string config_path = (work / "reflectd.yaml").string();
  std::ofstream(config_path) << config;
  Startup result;
  for (int i = 0; i < starts; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid =
        spawn({REFLECTD_BIN, "--config", config_path}, {"NOTIFY_SOCKET=" + notify_path},
              (work / "daemon.out").string(), (work / "daemon.log").string());
    bool ready = false;
    while (!ready) {
      pollfd item{fd, POLLIN, 0};
      if (::poll(&item, 1, 120'000) <= 0) break;
      std::array<char, 4096> buffer{};
      const ssize_t size = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (size > 0 && ("\n" + std::string(buffer.data(), static_cast<std::size_t>(size)) + "\n")
                              .find("\nREADY=1\n") != std::string::npos) {
        ready = true;
      }
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ready) result.vmhwm_mib = std::max(result.vmhwm_mib, proc_status_mib(pid, "VmHWM"));
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!ready) {
      ::close(fd);
      throw std::runtime_error("reflectd never sent READY=1: " +
                               read_file((work / "daemon.log").string()));
    }
    result.ms.push_back(ms);
  }
  ::close(fd);
  return result;
}

void remove_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
}

// One size's measures: a full cycle over `events`, the incremental cycle after more, the starts.
struct SizeRow {
  std::uint64_t events;
  Cycle full, incr;
  Startup startup;
};

// For each size: stores that many events of `corpus` in a database of its own under `work`,
// times a full cycle, stores `incremental` more, times the incremental cycle and `starts`
// daemon starts, then removes the database.
std::vector<SizeRow> measure_sizes(const fs::path& work, const std::vector<json>& corpus,
                                   const std::vector<std::uint64_t>& sizes,
                                   std::uint64_t incremental, int starts) {
  SystemClock clock;
  std::vector<SizeRow> rows;
  for (const std::uint64_t count : sizes) {
    const std::string path = (work / ("jobs-" + std::to_string(count) + ".db")).string();
    std::cerr << "storing " << count << " events...\n";
    bench::store_events(path, corpus, 0, count, clock);
    SizeRow row{count, {}, {}, {}};
    std::cerr << "full cycle...\n";
    row.full = cycle_in_child(work, path);
    expect_processed(row.full, count);
    std::cerr << "storing " << incremental << " more events...\n";
    bench::store_events(path, corpus, count, incremental, clock);
    std::cerr << "incremental cycle...\n";
    row.incr = cycle_in_child(work, path);
    expect_processed(row.incr, incremental);
    if (starts > 0) {
      std::cerr << "daemon starts...\n";
      row.startup = measure_startup(work, path, starts);
    }
    // Partial results survive an interrupted multi-size run.
    std::cerr << count << " events: full " << row.full.total << " s (CPU " << row.full.cpu_total
              << " s), +" << incremental << " " << row.incr.total << " s (CPU "
              << row.incr.cpu_total << " s), peak RSS "
              << std::max(row.full.peak_rss_mib, row.incr.peak_rss_mib) << " MiB\n";
    rows.push_back(std::move(row));
    remove_database(path);
  }
  return rows;
}

// The table of the sizes' cycles (seconds per job, per event, RSS, growth against the first
// size), their CPU seconds, and the daemon's startup times.
void print_rows(const std::vector<SizeRow>& rows, std::uint64_t incremental) {
  std::printf("%-8s %10s %9s %9s %9s %9s %9s %9s %8s %8s %7s\n", "cycle", "events", "consol_s",
              "cluster_s", "decay_s", "import_s", "medal_s", "total_s", "us/ev", "rss_MiB",
              "growth");
  const double first_full = rows.front().full.total / static_cast<double>(rows.front().events);
  const double first_incr = rows.front().incr.total;
  auto print = [&](const char* name, std::uint64_t events, const Cycle& c, double per_event,
                   double growth) {
    std::printf("%-8s %10llu", name, static_cast<unsigned long long>(events));
    for (double s : c.seconds) std::printf(" %9.3f", s);
    std::printf(" %9.3f %8.2f %8.1f %7.2f\n", c.total, per_event, c.peak_rss_mib, growth);
  };
  for (const auto& r : rows) {
    const auto ev = static_cast<double>(r.events);
    print("full", r.events, r.full, r.full.total * 1e6 / ev, r.full.total / ev / first_full);
    print("+incr", incremental, r.incr, r.incr.total * 1e6 / static_cast<double>(incremental),
          r.incr.total / first_incr);
  }
  std::printf("CPU seconds (user + system) of the same runs:\n");
  for (const auto& r : rows) {
    for (const auto* c : {&r.full, &r.incr}) {
      std::printf("%-8s %10llu", c == &r.full ? "full" : "+incr",
                  static_cast<unsigned long long>(c == &r.full ? r.events : incremental));
      for (double s : c->cpu) std::printf(" %9.3f", s);
      std::printf(" %9.3f\n", c->cpu_total);
    }
  }
  std::printf(
      "growth: full = seconds per event relative to the first size (~1 is linear); "
      "+incr = total relative to the first size's incremental cycle (~1: independent of the "
      "stored events)\n");
  for (const auto& r : rows) {
    if (r.startup.ms.empty()) continue;
    const unsigned long long stored = r.events + incremental;
    auto ms = r.startup.ms;
    std::sort(ms.begin(), ms.end());
    std::printf(
        "startup to READY=1 on %llu events (%zu starts): min %.1f ms, median %.1f ms, max %.1f "
        "ms; "
        "daemon VmHWM %.1f MiB\n",
        stored, ms.size(), ms.front(), ms[ms.size() / 2], ms.back(), r.startup.vmhwm_mib);
  }
}

int run(int argc, char** argv) {
  CLI::App app{
      "Times a full and an incremental reflection cycle, the jobs' memory and the daemon's startup "
      "as events grow."};
  std::vector<std::uint64_t> sizes{100'000, 300'000, 1'000'000};
  std::uint64_t incremental = 10'000;
  int starts = 5;
  std::string data_dir = REFLECTD_DATA_DIR;
  std::string dir;
  std::string cycle_db;
  std::string build_db;
  std::int64_t now_us = 0;
  std::uint64_t first_event = 0;
  app.add_option("--events", sizes, "Event counts to measure (one or more)")
      ->check(CLI::Range(1000ULL, 100'000'000ULL));
  app.add_option("--incremental", incremental, "New events before the incremental cycle")
      ->check(CLI::Range(1ULL, 10'000'000ULL));
  app.add_option("--starts", starts, "Daemon starts timed per size (0 = none)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--data", data_dir, "Directory of the real streams");
  app.add_option("--dir", dir, "Directory for the temporary databases (default: $TMPDIR)");
  app.add_option("--cycle", cycle_db,
                 "Internal: run one cycle over this database and print its timings")
      ->group("");
  std::int64_t contend_slice_ms = 0;
  app.add_option(
         "--contend", contend_slice_ms,
         "With --cycle: a writer always waits at the write gate; job transactions end after this "
         "many ms (0 = no gate)")
      ->check(CLI::Range(0, 10000));
  std::int64_t cluster_chunk = 0;
  app.add_option("--cluster-chunk", cluster_chunk,
                 "With --cycle: events per chunk of the cluster job (0 = the default)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{10'000'000}))
      ->group("");
  std::int64_t consolidate_chunk = 0;
  app.add_option("--consolidate-chunk", consolidate_chunk,
                 "With --cycle: events per chunk of the consolidate job (0 = the default)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{10'000'000}))
      ->group("");
  std::vector<std::string> only;
  app.add_option("--only", only,
                 "With --cycle: run only these jobs, in the cycle's order (for profiling one job)")
      ->check(CLI::IsMember({"consolidate", "cluster", "decay", "importance", "medallion"}))
      ->group("");
  app.add_option("--first", first_event,
                 "With --build: the index of the first event to store (append to a "
                 "database built before, e.g. for an incremental cycle)")
      ->group("");
  app.add_option("--build", build_db,
                 "For profiling: store the first --events size into this database and exit")
      ->group("");
  bool sql_profile = false;
  app.add_flag("--sql-profile", sql_profile,
               "With --cycle: print the time of each SQL statement of the jobs' connection "
               "(most first) to stderr")
      ->group("");
  std::vector<std::string> page_diff;
  app.add_option("--changed-pages", page_diff,
                 "BEFORE AFTER: count the pages that differ between two copies of a database "
                 "by the table or index that owns them")
      ->expected(2)
      ->group("");
  app.add_option("--now-us", now_us,
                 "With --cycle: a fixed time for every job (microseconds since the epoch)")
      ->group("");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!cycle_db.empty()) {
      return run_cycle(cycle_db, now_us, contend_slice_ms, cluster_chunk, consolidate_chunk, only,
                       sql_profile);
    }
    if (!page_diff.empty()) return changed_pages(page_diff[0], page_diff[1]);
    const auto corpus = bench::read_corpus(data_dir);
    if (!build_db.empty()) {
      SystemClock clock;
      bench::store_events(build_db, corpus, first_event, sizes.front(), clock);
      return 0;
    }
    fs::path base = dir.empty() ? fs::temp_directory_path() : fs::path(dir);
    std::string pattern = (base / "bench_jobs-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed in " + base.string());
    const fs::path work(pattern);
    const std::vector<SizeRow> rows = measure_sizes(work, corpus, sizes, incremental, starts);
    fs::remove_all(work);

    print_rows(rows, incremental);
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "bench_jobs: " << error.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { return reflectd::guarded_main("bench_jobs", run, argc, argv); }
