// Storage faults against the real daemon: a full database (store.max_pages, i.e. PRAGMA
// max_page_count) and a database locked by another process. The daemon stays up, answers each
// ingest message "storage unavailable: ...", commits no partial batch, keeps fire-and-forget
// events queued, and resumes by itself once the fault is gone.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <csignal>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "support/child_daemon.hpp"
#include "support/daemon_fixture.hpp"
#include "support/earlier_database.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string batch(const std::string& prefix, int events, std::size_t content_bytes,
                  const std::string& ns = "default") {
  std::string out = "[";
  for (int k = 0; k < events; ++k) {
    if (k) out += ",";
    out += R"({"id":")" + prefix + std::to_string(k) + R"(","kind":"result","namespace":")" + ns +
           R"(","content":")" + prefix + std::to_string(k) + " " + std::string(content_bytes, 'x') +
           R"("})";
  }
  return out + "]";
}

json send(zmq::socket_t& dealer, const std::string& payload) {
  dealer.send(zmq::buffer(payload));
  zmq::message_t reply;
  if (!dealer.recv(reply)) return {};
  return json::parse(reply.to_string());
}

std::int64_t count(const std::string& db, const std::string& sql) {
  SQLite::Database conn(db, SQLite::OPEN_READONLY);
  conn.setBusyTimeout(5000);
  return conn.execAndGet(sql).getInt64();
}

bool all_rejected_with(const json& reply, const std::string& error) {
  if (!reply.is_object() || reply["results"].empty()) return false;
  for (const auto& r : reply["results"]) {
    if (r["status"] != "rejected" || r.value("error", std::string()) != error) return false;
  }
  return reply["ok"] == false;
}

bool all_stored(const json& reply) {
  if (!reply.is_object() || reply["results"].empty()) return false;
  for (const auto& r : reply["results"]) {
    if (r["status"] != "stored" && r["status"] != "duplicate") return false;
  }
  return true;
}

}  // namespace

TEST_CASE("disk full (store.max_pages): clear rejection, no partial batch, resumes by itself",
          "[faults][e2e]") {
  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  const std::string config = dir.file("reflectd.yaml");
  const auto write_config = [&](int max_pages) {
    test::write_text_file(
        config,
        test::child_config(dir, db,
                           {.extra = test::kNoJobsYaml,
                            .store_extra = "  max_pages: " + std::to_string(max_pages) + "\n"}));
  };
  write_config(200);  // 200 pages of 8 KiB (kPageSizeBytes): full after some hundred events
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
  zmq::context_t context;
  const std::string control = test::ipc_endpoint(dir, "c");
  REQUIRE(test::wait_ready(context, control, 20s));
  auto dealer = test::make_client(context, zmq::socket_type::dealer, test::ipc_endpoint(dir, "i"));
  const std::string full = "storage unavailable: disk full";

  // Fill it up: every reply is either all stored or all refused (never half a batch).
  int filled = 0;
  json reply;
  for (; filled < 1000; ++filled) {
    reply = send(dealer, batch("fill-" + std::to_string(filled) + "-", 20, 1000, "filler"));
    if (!all_stored(reply)) break;
  }
  REQUIRE(filled < 1000);
  CHECK(all_rejected_with(reply, full));
  const std::int64_t stored_before = count(db, "SELECT count(*) FROM events");
  CHECK(stored_before == std::int64_t{filled} * 20);

  // A batch that cannot fit: refused as a whole, nothing of it committed.
  reply = send(dealer, batch("big-", 200, 2000));
  CHECK(all_rejected_with(reply, full));
  CHECK(count(db, "SELECT count(*) FROM events WHERE uid LIKE 'big-%'") == 0);
  CHECK(count(db, "SELECT count(*) FROM events") == stored_before);
  // Fire-and-forget events wait in the writer (nobody would resend them).
  auto push = test::make_client(context, zmq::socket_type::push, test::ipc_endpoint(dir, "p"));
  push.send(zmq::str_buffer(
      R"({"id":"push-while-full","kind":"result","content":"kept until space returns"})"));
  // The daemon is up and says why.
  const json status = test::control_request(context, control, {{"cmd", "status"}});
  CHECK(status.value("ok", false));
  CHECK(status.value("storage_errors", 0) > 0);

  SECTION("space returns: raise the limit with SIGHUP") {
    write_config(0);
    daemon.send_signal(SIGHUP);
    REQUIRE(test::wait_until([&] { return all_stored(send(dealer, batch("big-", 200, 2000))); },
                             20s, 100ms));
    CHECK(count(db, "SELECT count(*) FROM events WHERE uid LIKE 'big-%'") == 200);
    CHECK(test::wait_until(
        [&] { return count(db, "SELECT count(*) FROM events WHERE uid = 'push-while-full'") == 1; },
        10s));
  }
  SECTION("space returns: data deleted by an operator") {
    {
      SQLite::Database writer(db, SQLite::OPEN_READWRITE);
      writer.setBusyTimeout(5000);
      writer.exec("DELETE FROM events WHERE namespace = 'filler'");
    }
    REQUIRE(test::wait_until([&] { return all_stored(send(dealer, batch("small-", 20, 1000))); },
                             20s, 100ms));
    CHECK(test::wait_until(
        [&] { return count(db, "SELECT count(*) FROM events WHERE uid = 'push-while-full'") == 1; },
        10s));
  }
  daemon.send_signal(SIGTERM);
  const auto exit_status = daemon.wait_for(30s);
  REQUIRE(exit_status);
  CHECK(exit_status->code == 0);
  SQLite::Database check(db, SQLite::OPEN_READWRITE);
  CHECK(check.execAndGet("PRAGMA integrity_check").getString() == "ok");
  std::cout << "disk full: " << stored_before << " events fit in 200 pages; the rest was refused "
            << "with \"" << full << "\" and stored once space returned" << std::endl;
}

TEST_CASE(
    "a database with 4 KiB pages from an earlier reflectd: served as it is, said so, and "
    "converted by reflectd --vacuum once the daemon is stopped",
    "[faults][e2e]") {
  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  test::create_4k_page_database(db);
  const std::string config = dir.file("reflectd.yaml");
  // The notice is at info.
  test::write_text_file(
      config, test::child_config(dir, db, {.extra = test::kNoJobsYaml, .log_level = "info"}));
  const std::string log = dir.file("stderr.log");
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", log});
  zmq::context_t context;
  const std::string control = test::ipc_endpoint(dir, "c");
  REQUIRE(test::wait_ready(context, control, 20s));
  auto dealer = test::make_client(context, zmq::socket_type::dealer, test::ipc_endpoint(dir, "i"));
  CHECK(all_stored(send(dealer, batch("small-page-", 20, 1000))));
  const json status = test::control_request(context, control, {{"cmd", "status"}});
  CHECK(status.value("page_size_bytes", 0) == 4096);
  const std::vector<std::string> vacuum{REFLECTD_BIN, "--config", config, "--vacuum"};
  const test::RunResult refused = test::run_process(vacuum, 60s);
  CHECK(refused.status.code == 1);
  CHECK_THAT(refused.err, Catch::Contains(db + " is in use by another process"));
  CHECK(test::control_request(context, control, {{"cmd", "status"}}).value("ok", false));
  daemon.send_signal(SIGTERM);
  const auto exit_status = daemon.wait_for(30s);
  REQUIRE(exit_status);
  CHECK(exit_status->code == 0);
  CHECK_THAT(test::read_text_file(log),
             Catch::Contains("has 4096-byte pages (new databases get 8192)"));
  {
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    CHECK(check.execAndGet("PRAGMA page_size").getInt() == 4096);
  }
  CHECK(count(db, "SELECT count(*) FROM events") == 20);

  const test::RunResult converted = test::run_process(vacuum, 60s);
  CHECK(converted.status.code == 0);
  CHECK_THAT(converted.out, Catch::StartsWith(db + ": rewritten with 8192-byte pages (had 4096)"));
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  CHECK(check.execAndGet("PRAGMA page_size").getInt() == 8192);
  CHECK(check.execAndGet("PRAGMA journal_mode").getString() == "wal");
  CHECK(check.execAndGet("PRAGMA integrity_check").getString() == "ok");
  CHECK(count(db, "SELECT count(*) FROM events") == 20);
  CHECK(count(db, "SELECT count(*) FROM events WHERE uid LIKE 'small-page-%'") == 20);
}

TEST_CASE("a database locked by another process: clear rejection, then recovery", "[faults][e2e]") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  config.store.busy_timeout_ms = 100;
  test::disable_background_jobs(config);
  test::RunningDaemon running(std::move(config));
  const std::string db = dir.file("reflectd.db");
  zmq::context_t context;
  auto dealer =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  CHECK(all_stored(send(dealer, batch("before-", 5, 10))));

  // Another process (the sqlite3 shell) takes the write lock and keeps it until told.
  const std::string fifo = dir.file("shell.in");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int feed =
      ::open(fifo.c_str(), O_RDWR);  // a writer exists, so the child's open never blocks
  REQUIRE(feed >= 0);
  test::ChildProcess shell({"/usr/bin/sqlite3", db},
                           {fifo, dir.file("shell.out"), dir.file("shell.err")});
  const std::string begin =
      "BEGIN IMMEDIATE;\nINSERT INTO dead_letters (received_us, endpoint, reason, payload) "
      "VALUES (0, 'test', 'lock holder', x'00');\n";
  REQUIRE(::write(feed, begin.data(), begin.size()) == static_cast<ssize_t>(begin.size()));
  // Locked once our own attempt to take the write lock fails.
  REQUIRE(test::wait_until(
      [&] {
        SQLite::Database probe(db, SQLite::OPEN_READWRITE);
        try {
          probe.exec("BEGIN IMMEDIATE");
          probe.exec("ROLLBACK");
          return false;
        } catch (const SQLite::Exception&) {
          return true;
        }
      },
      10s));

  const json reply = send(dealer, batch("locked-", 10, 10));
  CHECK(all_rejected_with(reply, "storage unavailable: database is locked by another process"));
  auto push = test::make_client(context, zmq::socket_type::push, running.endpoints().push.at(0));
  push.send(zmq::str_buffer(
      R"({"id":"push-while-locked","kind":"result","content":"kept until the lock is gone"})"));
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  CHECK(test::control(control, {{"cmd", "status"}}).value("ok", false));

  const std::string commit = "COMMIT;\n.quit\n";
  REQUIRE(::write(feed, commit.data(), commit.size()) == static_cast<ssize_t>(commit.size()));
  ::close(feed);
  REQUIRE(shell.wait_for(10s));
  // The publisher resends with the same ids: stored now.
  CHECK(all_stored(send(dealer, batch("locked-", 10, 10))));
  CHECK(count(db, "SELECT count(*) FROM events WHERE uid LIKE 'locked-%'") == 10);
  CHECK(test::wait_until(
      [&] { return count(db, "SELECT count(*) FROM events WHERE uid = 'push-while-locked'") == 1; },
      10s));
  CHECK(count(db, "SELECT count(*) FROM dead_letters WHERE reason = 'lock holder'") == 1);
}

TEST_CASE("a deleted or moved database directory: clear rejection, resumes when it is back",
          "[faults][e2e]") {
  test::TempDir dir;
  const std::string state = dir.file("state");
  const std::string moved = dir.file("state.moved");
  std::filesystem::create_directory(state);
  const std::string db = state + "/reflectd.db";
  const std::string config = dir.file("reflectd.yaml");
  test::write_text_file(config, test::child_config(dir, db, {.extra = test::kNoJobsYaml}));
  test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
  zmq::context_t context;
  const std::string control = test::ipc_endpoint(dir, "c");
  REQUIRE(test::wait_ready(context, control, 20s));
  auto dealer = test::make_client(context, zmq::socket_type::dealer, test::ipc_endpoint(dir, "i"));
  auto push = test::make_client(context, zmq::socket_type::push, test::ipc_endpoint(dir, "p"));
  REQUIRE(all_stored(send(dealer, batch("before-", 5, 10))));
  const std::string gone =
      "storage unavailable: the database file was deleted or moved (" + db + ")";

  // Moved away (an operator's mv, a backup tool): nothing is written into the file that is no
  // longer at its path, and the publisher is told so.
  std::filesystem::rename(state, moved);
  CHECK(all_rejected_with(send(dealer, batch("moved-", 5, 10)), gone));
  push.send(zmq::str_buffer(
      R"({"id":"push-while-moved","kind":"result","content":"kept until the file is back"})"));
  CHECK(test::control_request(context, control, {{"cmd", "status"}}).value("ok", false));
  // Back at its path: the resend is stored, and the queued push event with it.
  std::filesystem::rename(moved, state);
  REQUIRE(test::wait_until([&] { return all_stored(send(dealer, batch("moved-", 5, 10))); }, 20s,
                           100ms));
  CHECK(test::wait_until(
      [&] { return count(db, "SELECT count(*) FROM events WHERE uid = 'push-while-moved'") == 1; },
      10s));
  CHECK(count(db, "SELECT count(*) FROM events") == 11);

  // Deleted: refused the same way; the daemon stays up and stops cleanly.
  std::filesystem::remove_all(state);
  CHECK(all_rejected_with(send(dealer, batch("deleted-", 5, 10)), gone));
  CHECK(test::control_request(context, control, {{"cmd", "status"}}).value("ok", false));
  daemon.send_signal(SIGTERM);
  const auto exit_status = daemon.wait_for(30s);
  REQUIRE(exit_status);
  CHECK(exit_status->code == 0);
  std::cout << "deleted/moved database: rejected with \"" << gone
            << "\"; resumed after the move back" << std::endl;
}

namespace {

// A tmpfs mounted on a directory for one test, unmounted (lazily) at the end. The tests run as
// root, which ignores file modes, so a read-only filesystem is the honest way to deny writes.
class TmpfsMount {
 public:
  explicit TmpfsMount(std::string path) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    mounted_ = ::mount("reflectd-test", path_.c_str(), "tmpfs", 0, "size=64m,mode=0700") == 0;
    error_ = mounted_ ? 0 : errno;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }
  int error() const { return error_; }
  /// Remounts read-only (true) or read-write (false); false when the kernel refused.
  bool set_read_only(bool read_only) {
    const unsigned long flags =
        read_only ? (MS_REMOUNT | MS_RDONLY) : static_cast<unsigned long>(MS_REMOUNT);
    return ::mount(nullptr, path_.c_str(), nullptr, flags, "size=64m,mode=0700") == 0;
  }

 private:
  std::string path_;
  bool mounted_ = false;
  int error_ = 0;
};

// False, with a warning naming the skipped case, where the test may not mount (no
// CAP_SYS_ADMIN); CI and the dev machines can.
bool mounted_or_warn(const TmpfsMount& mount, const char* skipped_case) {
  if (mount.mounted()) return true;
  WARN("cannot mount a tmpfs here (" << std::strerror(mount.error()) << "): " << skipped_case
                                     << " not run");
  return false;
}

// A database an earlier reflectd could have made (4 KiB pages, WAL) of 2,000 random 4,000-byte
// rows; returns its size in bytes.
std::int64_t make_4k_database(const std::string& path) {
  {
    SQLite::Database earlier = test::create_4k_page_database(path);
    earlier.exec("CREATE TABLE filler (blob BLOB)");
    earlier.exec(
        "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 2000) "
        "INSERT INTO filler SELECT randomblob(4000) FROM n");
  }
  return static_cast<std::int64_t>(std::filesystem::file_size(path));
}

// The database make_4k_database() made, rewritten by --vacuum: 8 KiB pages, every row.
void check_converted(const std::string& path) {
  SQLite::Database check(path, SQLite::OPEN_READONLY);
  CHECK(check.execAndGet("PRAGMA page_size").getInt() == 8192);
  CHECK(check.execAndGet("SELECT count(*) FROM filler").getInt() == 2000);
}

// `reflectd --vacuum` on `db`, through a configuration written for it in `dir`.
test::RunResult run_vacuum(const test::TempDir& dir, const std::string& db) {
  const std::string config = dir.file("vacuum.yaml");
  test::write_text_file(config, test::child_config(dir, db));
  return test::run_process({REFLECTD_BIN, "--config", config, "--vacuum"}, 60s);
}

// Fills `directory`'s filesystem with the file `hog` until `free_bytes` are left.
void leave_free(const std::string& directory, const std::string& hog, std::int64_t free_bytes) {
  const auto available = static_cast<std::int64_t>(std::filesystem::space(directory).available);
  REQUIRE(available > free_bytes);
  std::ofstream out(hog, std::ios::binary);
  const std::string block(1 << 16, 'h');
  for (std::int64_t written = 0; written < available - free_bytes;
       written += static_cast<std::int64_t>(block.size())) {
    out.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
}

}  // namespace

TEST_CASE("a read-only database directory: refused at startup with the reason, fine once writable",
          "[faults][e2e]") {
  test::TempDir dir;
  TmpfsMount state(dir.file("state"));
  if (!mounted_or_warn(state, "read-only case")) return;
  const std::string db = dir.file("state") + "/reflectd.db";
  const std::string config = dir.file("reflectd.yaml");
  test::write_text_file(config, test::child_config(dir, db, {.extra = test::kNoJobsYaml}));
  zmq::context_t context;
  const std::string control = test::ipc_endpoint(dir, "c");
  {
    test::ChildProcess daemon({REFLECTD_BIN, "--config", config},
                              {"", "", dir.file("stderr-1.log")});
    REQUIRE(test::wait_ready(context, control, 20s));
    auto dealer =
        test::make_client(context, zmq::socket_type::dealer, test::ipc_endpoint(dir, "i"));
    REQUIRE(all_stored(send(dealer, batch("before-", 7, 10))));
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
  }
  // A remount needs no file open for writing, so the filesystem turns read-only between runs
  // (as after an I/O error makes the kernel remount it, or a mistaken ReadOnlyPaths=).
  REQUIRE(state.set_read_only(true));
  {
    test::ChildProcess daemon({REFLECTD_BIN, "--config", config},
                              {"", "", dir.file("stderr-2.log")});
    const auto exit_status = daemon.wait_for(30s);
    REQUIRE(exit_status);
    CHECK(exit_status->code != 0);  // systemd's Restart=on-failure retries it
    const std::string said = test::read_text_file(dir.file("stderr-2.log"));
    INFO(said);
    CHECK(said.find(db) != std::string::npos);
    CHECK(said.find("is on a read-only filesystem") != std::string::npos);
  }
  REQUIRE(state.set_read_only(false));
  {
    test::ChildProcess daemon({REFLECTD_BIN, "--config", config},
                              {"", "", dir.file("stderr-3.log")});
    REQUIRE(test::wait_ready(context, control, 20s));
    auto dealer =
        test::make_client(context, zmq::socket_type::dealer, test::ipc_endpoint(dir, "i"));
    CHECK(all_stored(send(dealer, batch("after-", 3, 10))));
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
  }
  CHECK(count(db, "SELECT count(*) FROM events") == 10);
  std::cout << "read-only database directory: startup refused with \""
            << test::read_text_file(dir.file("stderr-2.log")).substr(0, 300) << "\"" << std::endl;
}

TEST_CASE(
    "reflectd --vacuum refuses a directory with less free space than the file, then "
    "converts it once there is room",
    "[faults][e2e]") {
  test::TempDir dir;
  TmpfsMount state(dir.file("state"));
  if (!mounted_or_warn(state, "free-space case")) return;
  const std::string db = dir.file("state") + "/reflectd.db";
  const std::int64_t db_bytes = make_4k_database(db);
  REQUIRE(db_bytes > (4 << 20));
  // Leave half the file's size free on the 64 MiB tmpfs.
  const std::string hog = dir.file("state") + "/hog";
  leave_free(dir.file("state"), hog, db_bytes / 2);
  const test::RunResult refused = run_vacuum(dir, db);
  INFO("stderr: " << refused.err);
  CHECK(refused.status.code == 1);
  CHECK_THAT(refused.err, Catch::Contains("not enough free disk to rewrite " + db));
  {
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    CHECK(check.execAndGet("PRAGMA page_size").getInt() == 4096);
    CHECK(check.execAndGet("PRAGMA journal_mode").getString() == "wal");
  }
  std::filesystem::remove(hog);
  const test::RunResult converted = run_vacuum(dir, db);
  INFO("stderr: " << converted.err);
  CHECK(converted.status.code == 0);
  check_converted(db);
}

TEST_CASE(
    "reflectd --vacuum checks SQLite's temporary directory (SQLITE_TMPDIR) for the new copy, "
    "and both copies where they share a filesystem",
    "[faults][e2e]") {
  test::TempDir dir;
  TmpfsMount scratch(dir.file("scratch"));
  if (!mounted_or_warn(scratch, "temporary-directory case")) return;
  const std::string temporary = dir.file("scratch") + "/tmp";
  std::filesystem::create_directories(temporary);
  const std::string hog = dir.file("scratch") + "/hog";
  // The child inherits the variable; SQLite reads it once, at its start.
  ::setenv("SQLITE_TMPDIR", temporary.c_str(), 1);
  struct Unset {
    Unset() = default;
    Unset(const Unset&) = delete;
    Unset& operator=(const Unset&) = delete;
    ~Unset() { ::unsetenv("SQLITE_TMPDIR"); }
  } unset;

  // Apart: the database on the ordinary disk, half its size free in the temporary directory.
  const std::string db = dir.file("reflectd.db");
  const std::int64_t db_bytes = make_4k_database(db);
  REQUIRE(db_bytes > (4 << 20));
  leave_free(temporary, hog, db_bytes / 2);
  const test::RunResult refused = run_vacuum(dir, db);
  INFO("stderr: " << refused.err);
  CHECK(refused.status.code == 1);
  CHECK_THAT(refused.err, Catch::Contains("not enough free disk for SQLite's temporary copy of " +
                                          db + ": it needs about "));
  CHECK_THAT(refused.err, Catch::Contains(" free in " + temporary +
                                          " (SQLite's temporary directory; set SQLITE_TMPDIR"));
  {
    SQLite::Database check(db, SQLite::OPEN_READONLY);
    CHECK(check.execAndGet("PRAGMA page_size").getInt() == 4096);
  }

  // Together: a second database on the tmpfs beside the temporary directory, with room for
  // one copy (1.5 times the file) but not for the journal and the temporary copy at once.
  std::filesystem::remove(hog);
  const std::string shared_db = dir.file("scratch") + "/shared.db";
  const std::int64_t shared_bytes = make_4k_database(shared_db);
  leave_free(temporary, hog, shared_bytes + shared_bytes / 2);
  const test::RunResult refused_shared = run_vacuum(dir, shared_db);
  INFO("stderr: " << refused_shared.err);
  CHECK(refused_shared.status.code == 1);
  CHECK_THAT(refused_shared.err,
             Catch::Contains("not enough free disk to rewrite " + shared_db) &&
                 Catch::Contains("(the journal and SQLite's temporary copy in " + temporary + ")"));

  // Room again: the first database converts, its temporary copy on the tmpfs.
  std::filesystem::remove(hog);
  std::filesystem::remove(shared_db);
  const test::RunResult converted = run_vacuum(dir, db);
  INFO("stderr: " << converted.err);
  CHECK(converted.status.code == 0);
  check_converted(db);
}
