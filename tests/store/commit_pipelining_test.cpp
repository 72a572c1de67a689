// Commit pipelining (store/writer.hpp): the writer commits with synchronous=NORMAL and the sync
// stage fsyncs the WAL before anything is acknowledged. A syncer that wraps the real fdatasync
// and can be held (or made to fail) shows the order: commit, fsync, then the answer.

#include <catch2/catch.hpp>

#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "bus/event_decoder.hpp"
#include "store/database.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;

namespace {

store::EventEntry entry(const std::string& uid, std::size_t index = 0) {
  FakeClock clock;
  bus::EventDecoder decoder(clock);
  auto message = decoder.decode(
      R"({"kind":"task","id":")" + uid + R"(","content":"content of )" + uid + "\"}", 1 << 20);
  store::EventEntry e = std::move(message.events.at(0));
  e.index = index;
  return e;
}

// Shared between the test and the syncer the writer owns.
struct SyncControl {
  std::mutex mutex;
  std::condition_variable changed;
  int entered = 0;          // sync() calls begun
  int allowed = 0;          // sync() calls allowed to return
  int fail_from = 1 << 30;  // the first call (1-based) that reports EIO
  int commits = 0;          // COMMITs returned (WriterOptions::after_commit)
  // COMMIT n waits in after_commit until passable >= n: the test queues the next request
  // first, so the group goes to the sync stage (an idle writer with nothing queued behind
  // a group syncs it itself).
  int passable = 1 << 30;

  void wait_entered(int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return entered >= n; });
  }
  void wait_commits(int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return commits >= n; });
  }
  void allow(int n) {
    {
      std::lock_guard lock(mutex);
      allowed = n;
    }
    changed.notify_all();
  }
  void pass_commits(int n) {
    {
      std::lock_guard lock(mutex);
      passable = n;
    }
    changed.notify_all();
  }
};

class HeldSyncer final : public store::WalSyncer {
 public:
  HeldSyncer(SyncControl& control, std::unique_ptr<store::WalSyncer> real)
      : control_(control), real_(std::move(real)) {}
  int sync() override {
    int call = 0;
    {
      std::unique_lock lock(control_.mutex);
      call = ++control_.entered;
      control_.changed.notify_all();
      control_.changed.wait(lock, [&] { return control_.allowed >= call; });
    }
    const int rc = real_->sync();
    std::lock_guard lock(control_.mutex);
    return call >= control_.fail_from ? EIO : rc;
  }

 private:
  SyncControl& control_;
  std::unique_ptr<store::WalSyncer> real_;
};

store::WriterOptions held_options(const test::TempDir& dir, SyncControl& control) {
  store::WriterOptions options;
  options.database = {dir.file("p.db"), "full", 1000};
  options.commit_pipelining = true;
  options.checkpoint_pages = 0;
  options.make_syncer = [&control](const std::string& wal) {
    return std::make_unique<HeldSyncer>(control, store::make_fdatasync_syncer(wal));
  };
  options.after_commit = [&control] {
    std::unique_lock lock(control.mutex);
    const int commit = ++control.commits;
    control.changed.notify_all();
    control.changed.wait(lock, [&] { return control.passable >= commit; });
  };
  return options;
}

// Submits one request; its answer arrives through the returned future.
std::future<store::WriteResult> submit(store::Writer& writer,
                                       std::vector<store::EventEntry> entries, bool push = false) {
  auto done = std::make_shared<std::promise<store::WriteResult>>();
  store::WriteRequest request;
  request.entries = std::move(entries);
  request.retry_on_storage_error = push;
  request.on_done = [done](store::WriteResult&& result) { done->set_value(std::move(result)); };
  auto future = done->get_future();
  const bool accepted = writer.submit(std::move(request));
  REQUIRE(accepted);
  return future;
}

bool ready(const std::future<store::WriteResult>& future) {
  return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

int count_events(const std::string& path) {
  auto db = store::open_database({path, "full", 1000}, store::Access::kReader);
  return db.execAndGet("SELECT count(*) FROM events").getInt();
}

}  // namespace

TEST_CASE(
    "pipelined commits: no answer before the WAL fsync returns; the next group commits "
    "meanwhile") {
  test::TempDir dir;
  FakeClock clock;
  SyncControl control;
  store::Writer writer(held_options(dir, control), clock);
  REQUIRE(writer.pipelined());
  std::atomic<int> listened{0};
  writer.set_commit_listener([&](const std::map<std::string, std::uint64_t>& stored) {
    listened += static_cast<int>(stored.at("default"));
  });

  control.pass_commits(0);
  auto a = submit(writer, {entry("a")});
  control.wait_commits(1);                     // A committed, held before its hand-over
  CHECK(count_events(dir.file("p.db")) == 1);  // visible to readers, not yet acknowledged
  auto b = submit(writer, {entry("b"), entry("a", 1)});
  control.pass_commits(1);  // A goes to the sync stage (B is queued behind it); B waits
  control.wait_entered(1);  // A's fsync is held
  CHECK_FALSE(ready(a));
  CHECK(listened == 0);

  control.wait_commits(2);  // B committed while A's fsync is still held
  CHECK_FALSE(ready(a));
  CHECK_FALSE(ready(b));
  CHECK(count_events(dir.file("p.db")) == 2);
  control.pass_commits(1 << 30);  // B handed to the sync stage, behind A

  control.allow(1);
  const store::WriteResult ra = a.get();
  CHECK(ra.storage_error.empty());
  CHECK(ra.results.at(0).status == store::EventStatus::kStored);
  CHECK(ra.results[0].seq == 1);
  // B committed before that fsync began? Not necessarily: its own fsync is the second one.
  control.wait_entered(2);
  CHECK_FALSE(ready(b));
  control.allow(2);
  const store::WriteResult rb = b.get();
  CHECK(rb.results.at(0).status == store::EventStatus::kStored);
  CHECK(rb.results[0].seq == 2);
  CHECK(rb.results.at(1).status == store::EventStatus::kDuplicate);
  CHECK(rb.results[1].seq == 1);
  writer.stop();
  CHECK(listened == 2);
  CHECK(writer.stats().stored == 2);
  CHECK(writer.stats().duplicate == 1);
  CHECK(writer.stats().commits == 2);
}

TEST_CASE(
    "a failed WAL fsync answers every unacknowledged group with an error, stops writing, "
    "and keeps what was acknowledged") {
  test::TempDir dir;
  FakeClock clock;
  SyncControl control;
  control.fail_from = 2;
  std::string acknowledged_uid;
  {
    store::Writer writer(held_options(dir, control), clock);
    control.allow(1);
    auto a = submit(writer, {entry("a")});
    CHECK(a.get().results.at(0).status == store::EventStatus::kStored);

    control.pass_commits(1);
    auto b = submit(writer, {entry("b")});
    control.wait_commits(2);
    auto c = submit(writer, {entry("c")}, /*push=*/true);
    control.pass_commits(1 << 30);
    control.wait_entered(2);  // B's fsync is held (and will fail)
    control.wait_commits(3);  // C committed behind it
    control.allow(3);

    const store::WriteResult rb = b.get();
    CHECK(rb.storage_error.rfind("storage unavailable: I/O error: syncing the WAL failed", 0) == 0);
    CHECK(rb.results.at(0).status == store::EventStatus::kRejected);
    CHECK(rb.results[0].error == rb.storage_error);

    // The writer refuses from now on, without another commit.
    const store::WriteResult rd = submit(writer, {entry("d")}).get();
    CHECK(rd.storage_error == rb.storage_error);
    CHECK(rd.results.at(0).status == store::EventStatus::kRejected);
    CHECK_FALSE(ready(c));  // a push request waits for a retry that cannot come...
    writer.stop();
    const store::WriteResult rc = c.get();  // ...until stop answers it
    CHECK(rc.storage_error == rb.storage_error);
    CHECK(writer.stats().commits == 3);
    CHECK(writer.stats().stored == 1);
    CHECK(writer.stats().rejected == 3);
    CHECK(writer.stats().storage_errors >= 1);
  }
  // What was acknowledged is in the database after the restart (the injected error left the
  // file intact, so B and C are there too, as they would be after a transient error).
  auto db = store::open_database({dir.file("p.db"), "full", 1000}, store::Access::kReader);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE uid = 'a'").getInt() == 1);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE uid = 'd'").getInt() == 0);
}

TEST_CASE("stop() lets the sync stage sync and answer everything queued") {
  test::TempDir dir;
  FakeClock clock;
  SyncControl control;
  store::Writer writer(held_options(dir, control), clock);
  std::vector<std::future<store::WriteResult>> answers;
  answers.push_back(submit(writer, {entry("first")}));
  control.wait_entered(1);
  for (int i = 0; i < 4; ++i) answers.push_back(submit(writer, {entry("e" + std::to_string(i))}));
  std::thread stopper([&] { writer.stop(); });
  control.allow(1000);
  stopper.join();
  for (auto& answer : answers) {
    REQUIRE(ready(answer));
    CHECK(answer.get().results.at(0).status == store::EventStatus::kStored);
  }
  CHECK(writer.stats().stored == 5);
  CHECK(count_events(dir.file("p.db")) == 5);
}

TEST_CASE("a slow fsync bounds what waits for it: the writer waits, its queue refuses") {
  test::TempDir dir;
  FakeClock clock;
  SyncControl control;
  auto options = held_options(dir, control);
  options.queue_capacity_events = 1000;
  store::Writer writer(options, clock);
  auto make = [](int n, int base) {
    std::vector<store::EventEntry> entries;
    entries.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      entries.push_back(entry("e" + std::to_string(base + i), static_cast<std::size_t>(i)));
    }
    return entries;
  };
  control.pass_commits(0);
  auto first = submit(writer, make(1, 0));
  control.wait_commits(1);
  auto big = submit(writer, make(1000, 100));
  control.pass_commits(1 << 30);
  control.wait_entered(1);
  control.wait_commits(2);  // 1,001 events now wait for the sync stage: the writer waits
  auto queued = submit(writer, make(600, 2000));  // an empty queue takes anything
  store::WriteRequest refused;
  refused.entries = make(600, 3000);
  const bool accepted = writer.submit(std::move(refused));  // evaluated once
  CHECK_FALSE(accepted);
  {
    std::lock_guard lock(control.mutex);
    CHECK(control.commits == 2);
  }
  control.allow(1000);
  CHECK(first.get().results.size() == 1);
  CHECK(big.get().results.size() == 1000);
  CHECK(queued.get().results.size() == 600);
  writer.stop();
  CHECK(writer.stats().stored == 1601);
}

TEST_CASE("with nothing queued behind it, the writer syncs and answers a group itself") {
  test::TempDir dir;
  FakeClock clock;
  SyncControl control;
  control.allow(1000);
  auto options = held_options(dir, control);
  std::thread::id committed_on;
  options.after_commit = [&, count = options.after_commit] {
    committed_on = std::this_thread::get_id();
    count();
  };
  store::Writer writer(options, clock);
  std::thread::id answered_on;
  int syncs_before_answer = 0;
  std::promise<void> done;
  store::WriteRequest request;
  request.entries.push_back(entry("alone"));
  request.on_done = [&](store::WriteResult&&) {
    answered_on = std::this_thread::get_id();
    std::lock_guard lock(control.mutex);
    syncs_before_answer = control.entered;
    done.set_value();
  };
  const bool accepted = writer.submit(std::move(request));  // evaluated once
  REQUIRE(accepted);
  done.get_future().wait();
  CHECK(syncs_before_answer == 1);
  CHECK(answered_on == committed_on);  // the writer thread: no hand-off
  writer.stop();
  CHECK(writer.stats().stored == 1);
}

TEST_CASE("commit pipelining applies to synchronous full only") {
  test::TempDir dir;
  FakeClock clock;
  for (const char* mode : {"off", "normal", "extra"}) {
    store::WriterOptions options;
    options.database = {dir.file(std::string(mode) + ".db"), mode, 1000};
    options.commit_pipelining = true;
    store::Writer writer(options, clock);
    CHECK_FALSE(writer.pipelined());
  }
  store::WriterOptions options;
  options.database = {dir.file("full.db"), "FULL", 1000};
  {
    store::Writer writer(options, clock);
    CHECK(writer.pipelined());  // on by default
    auto db = store::open_database(options.database, store::Access::kReader);
  }
  options.commit_pipelining = false;
  store::Writer writer(options, clock);
  CHECK_FALSE(writer.pipelined());
  CHECK(submit(writer, {entry("x")}).get().results.at(0).status == store::EventStatus::kStored);
}
