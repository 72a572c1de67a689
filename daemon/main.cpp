// reflectd: thin entry point. Flags -> config -> Daemon; everything else lives in libraries.

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>

#include "bus/security.hpp"
#include "common/clock.hpp"
#include "common/guarded_main.hpp"
#include "common/heap.hpp"
#include "common/version.hpp"
#include "config/config.hpp"
#include "daemon/daemon.hpp"
#include "daemon/logging.hpp"
#include "daemon/settings.hpp"
#include "daemon/test_hooks.hpp"
#include "store/sqlite_library.hpp"
#include "store/vacuum.hpp"

namespace {

constexpr const char* kDescription =
    "reflectd - background reflection daemon for AI-agent memory.\n\n"
    "Agents publish events (prompts, tool calls, results, errors, decisions, commits) as JSON\n"
    "over ZeroMQ; reflectd validates each one, stores it durably in SQLite and answers on the\n"
    "ingest socket once it is committed.\n";

constexpr const char* kFooter = R"(
SOCKETS (defaults bind loopback only; see the configuration file)
  ingest   ROUTER  acknowledged ingest (reply after commit)    tcp://127.0.0.1:7701
  push     PULL    fire-and-forget ingest (rejects -> dead_letters)  tcp://127.0.0.1:7702
  notify   PUB     announcements such as events.stored         tcp://127.0.0.1:7703
  control  ROUTER  JSON requests, e.g. {"cmd":"status"}        tcp://127.0.0.1:7704

SIGNALS
  SIGTERM, SIGINT  stop reading, commit and acknowledge everything received, exit 0
  SIGHUP           re-read and validate the configuration; apply what can change live
                   (log level, limits); on any error keep the running configuration

ENVIRONMENT
  NOTIFY_SOCKET, WATCHDOG_USEC  set by systemd: READY=1, STATUS=, WATCHDOG=1, STOPPING=1
  STATE_DIRECTORY               a relative store.path resolves against it
  JOURNAL_STREAM                log lines carry journald priorities and no timestamp

MAINTENANCE
  --vacuum rewrites the database (SQLite VACUUM) with 8 KiB pages and no free pages, then
  exits: how a file an earlier reflectd created with 4 KiB pages gets the page size that makes
  the jobs ~10% faster (reflectd logs a notice at start when a file has other pages). Stop the
  daemon first (systemctl stop reflectd; the command refuses a file in use) and allow the
  file's size in free disk twice: in its directory (rollback journal) and in SQLite's
  temporary directory ($SQLITE_TMPDIR, else $TMPDIR, else /var/tmp); it checks both first.
  About 8-16 s per million events.
    systemctl stop reflectd
    STATE_DIRECTORY=/var/lib/reflectd reflectd --config /etc/reflectd/reflectd.yaml --vacuum
    systemctl start reflectd

EXIT STATUS
  0 clean stop, valid configuration or finished --vacuum; 1 startup failure (config,
  database, sockets) or a failed --vacuum (the file is left as it was); 2 invalid command line

FILES
  /etc/reflectd/reflectd.yaml   configuration used by systemd/reflectd.service

See README.md for the wire format and reflectctl(1)-style usage.)";

int run(int argc, char** argv) {
  CLI::App app{kDescription, "reflectd"};
  app.footer(kFooter);
  std::string config_path;
  bool check_config = false;
  bool print_default = false;
  bool vacuum = false;
  app.add_option("-c,--config", config_path, "YAML configuration file (default: built-in defaults)")
      ->check(CLI::ExistingFile);
  app.add_flag("--check-config", check_config,
               "Validate the configuration, print the effective store path, and exit");
  app.add_flag("--print-default-config", print_default,
               "Print the documented default configuration (config/reflectd.yaml) and exit");
  app.add_flag("--vacuum", vacuum,
               "Rewrite the stopped daemon's database with 8 KiB pages, and exit (see "
               "MAINTENANCE)")
      ->excludes("--check-config")
      ->excludes("--print-default-config");
  app.set_version_flag("-V,--version", std::string("reflectd ") + reflectd::kVersion +
                                           "\nheap allocator: " + reflectd::heap_allocator());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }

  if (print_default) {
    std::cout << reflectd::config::render_example();
    return 0;
  }
  reflectd::daemon::setup_logging();
  reflectd::config::Config config;
  try {
    config = config_path.empty() ? reflectd::config::defaults()
                                 : reflectd::config::load_file(config_path);
  } catch (const reflectd::config::ConfigError& error) {
    std::cerr << "reflectd: " << error.what() << '\n';
    return 1;
  }
  const std::string store_path =
      reflectd::config::resolve_store_path(config.store.path, std::getenv("STATE_DIRECTORY"));
  if (check_config) {
    try {
      reflectd::daemon::build_jobs(config);  // validates what the key table cannot (scopes)
      reflectd::bus::load_security(config);  // the key files and the loopback rule
    } catch (const std::exception& error) {
      std::cerr << "reflectd: " << (config_path.empty() ? "built-in defaults" : config_path) << ": "
                << error.what() << '\n';
      return 1;
    }
    std::cout << (config_path.empty() ? std::string("built-in defaults") : config_path)
              << ": configuration OK\nstore path: " << store_path << '\n';
    return 0;
  }

  if (vacuum) {
    try {
      const reflectd::store::VacuumReport report = reflectd::store::vacuum_database(store_path);
      std::cout << fmt::format(
          "{}: rewritten with {}-byte pages (had {}), {:.1f} -> {:.1f} MiB in {:.1f} s\n",
          store_path, report.page_size_after, report.page_size_before,
          static_cast<double>(report.file_bytes_before) / (1 << 20),
          static_cast<double>(report.file_bytes_after) / (1 << 20), report.seconds);
      return 0;
    } catch (const std::exception& error) {
      std::cerr << "reflectd: --vacuum: " << error.what() << '\n';
      return 1;
    }
  }
  if (!reflectd::keep_freed_heap_mapped()) {
    spdlog::debug("malloc tuning unavailable: the heap keeps glibc's default trim policy");
  }
  if (!reflectd::store::disable_sqlite_memory_statistics()) {
    spdlog::debug("SQLite was initialised before main() could turn its memory statistics off");
  }
  reflectd::SystemClock system_clock;
  const bool test_hooks = reflectd::daemon::test_hooks_from_env();
  std::optional<reflectd::daemon::PinnedWallClock> pinned;
  if (const char* now = std::getenv("REFLECTD_TEST_NOW_US"); test_hooks && now != nullptr) {
    pinned.emplace(std::strtoll(now, nullptr, 10));
  }
  const reflectd::Clock& clock =
      pinned ? static_cast<const reflectd::Clock&>(*pinned) : system_clock;
  if (test_hooks) spdlog::warn("REFLECTD_TEST_HOOKS=1: test-only control commands are enabled");
  try {
    reflectd::daemon::Daemon daemon(std::move(config), {config_path, true, test_hooks}, clock);
    daemon.start();
    return daemon.run();
  } catch (const std::exception& error) {
    spdlog::critical("startup failed: {}", error.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) { return reflectd::guarded_main("reflectd", run, argc, argv); }
