// Crash campaign: the real reflectd binary is killed with SIGKILL at random (seeded, printed)
// moments while a windowed DEALER publisher sends as fast as it can over ingest, then
// restarted. After every round: every acknowledged id is in the database, PRAGMA
// integrity_check and the FTS5 integrity check pass, and no id is stored twice. Messages not
// acknowledged are resent with the same ids and end as stored or duplicate.
//
// Second part: SIGKILL during a consolidation job; after restart and a rerun, the derived
// tables equal those of an undisturbed run on the same events.
//
// REFLECTD_CRASH_ROUNDS (default 20) and REFLECTD_CRASH_SEED (default: random, printed) make
// longer or reproducible campaigns (scripts/crash-campaign.sh).

#include <catch2/catch.hpp>

#include <csignal>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <SQLiteCpp/SQLiteCpp.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "common/clock.hpp"
#include "memory_ops/derived_state.hpp"
#include "store/fts_index.hpp"
#include "support/child_daemon.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kEventsPerMessage = 20;
constexpr std::size_t kWindow = 64;  // messages in flight per publisher
// 2026-11-21T00:00:00Z: after the last event of both streams (as in jobs_test).
constexpr std::int64_t kNowUs = 1'795'219'200LL * 1'000'000;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

std::string daemon_config(const test::TempDir& dir, const std::string& db,
                          const std::string& extra = "") {
  return test::child_config(dir, db, {.extra = extra});
}

using test::control_request;
using test::wait_ready;

struct DbCheck {
  bool integrity_ok = false;
  bool fts_ok = false;
  bool watermark_ok = false;
  std::int64_t rows = 0;
  std::int64_t distinct_uids = 0;
  std::set<std::string> uids;
};

DbCheck check_database(const std::string& path) {
  DbCheck out;
  SQLite::Database db(path, SQLite::OPEN_READWRITE);  // recovers the WAL left by SIGKILL
  out.integrity_ok = db.execAndGet("PRAGMA integrity_check").getString() == "ok";
  try {
    // The watermark never passes the events, and the index below it is exact: finishing the
    // indexing as the next start would must leave an index identical to the events table
    // (integrity-check compares the two; a lost or doubled entry fails it).
    out.watermark_ok = db.execAndGet(
                             "SELECT indexed_seq <= (SELECT coalesce(max(seq), 0) FROM events) "
                             "FROM fts_state")
                           .getInt() == 1;
    store::index_all_pending(db);
    db.exec("INSERT INTO events_fts(events_fts) VALUES('integrity-check')");
    out.fts_ok = true;
  } catch (const SQLite::Exception& error) {
    std::cerr << "FTS integrity check failed: " << error.what() << '\n';
  }
  out.rows = db.execAndGet("SELECT count(*) FROM events").getInt64();
  out.distinct_uids = db.execAndGet("SELECT count(DISTINCT uid) FROM events").getInt64();
  SQLite::Statement uids(db, "SELECT uid FROM events");
  while (uids.executeStep()) out.uids.insert(uids.getColumn(0).getString());
  return out;
}

// A publisher that never forgets a message until it is acknowledged.
class Publisher {
 public:
  struct Message {
    std::string payload;
    std::vector<std::string> ids;
  };

  // Sends while `keep_going()` and reads replies; returns when it says stop and no reply came
  // for `drain_quiet`. Unacknowledged messages go back to the retry queue.
  void run_round(zmq::context_t& context, const std::string& endpoint,
                 const std::function<bool()>& keep_going, bool stop_when_all_acked) {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    dealer.set(zmq::sockopt::sndhwm, 100000);
    dealer.connect(endpoint);
    std::map<std::uint64_t, std::size_t> in_flight;  // request id -> message index
    auto quiet_since = std::chrono::steady_clock::now();
    for (;;) {
      const bool going = keep_going();
      while (going && in_flight.size() < kWindow) {
        const bool all_sent = retry_.empty() && stop_when_all_acked;
        if (all_sent) break;
        std::size_t index;
        if (!retry_.empty()) {
          index = retry_.front();
          retry_.pop_front();
          ++resent_;
        } else {
          index = make_message();
        }
        const std::uint64_t rid = next_rid_++;
        const std::string rid_text = std::to_string(rid);
        dealer.send(zmq::buffer(rid_text), zmq::send_flags::sndmore);
        dealer.send(zmq::buffer(messages_[index].payload));
        in_flight[rid] = index;
      }
      if (stop_when_all_acked && in_flight.empty() && retry_.empty()) break;
      zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 10ms);
      bool got = false;
      for (;;) {
        std::vector<zmq::message_t> frames;
        if (!zmq::recv_multipart(dealer, std::back_inserter(frames), zmq::recv_flags::dontwait))
          break;
        got = true;
        const auto it = in_flight.find(std::stoull(frames.at(0).to_string()));
        if (it == in_flight.end()) continue;
        const std::size_t index = it->second;
        in_flight.erase(it);
        const json reply = json::parse(frames.back().to_string());
        bool all_ok = reply["results"].size() == messages_[index].ids.size();
        for (const auto& r : reply["results"]) {
          const std::string status = r["status"];
          if (status == "stored" || status == "duplicate") {
            acked_.insert(r["id"].get<std::string>());
            (status == "stored" ? stored_replies_ : duplicate_replies_)++;
          } else {
            all_ok = false;
            // Only "storage unavailable" is acceptable here; anything else is a bug.
            if (r.value("error", std::string()).find("storage unavailable") == std::string::npos) {
              unexpected_errors_.push_back(r.dump());
            }
          }
        }
        if (!all_ok) retry_.push_back(index);
      }
      const auto now = std::chrono::steady_clock::now();
      if (got) quiet_since = now;
      if (!going && now - quiet_since > 300ms) break;
    }
    for (const auto& [rid, index] : in_flight) retry_.push_back(index);
  }

  std::size_t events_generated() const { return messages_.size() * kEventsPerMessage; }
  const std::set<std::string>& acked() const { return acked_; }
  std::size_t resent() const { return resent_; }
  std::size_t duplicate_replies() const { return duplicate_replies_; }
  const std::vector<std::string>& unexpected_errors() const { return unexpected_errors_; }
  std::vector<std::string> all_ids() const {
    std::vector<std::string> out;
    for (const auto& m : messages_) out.insert(out.end(), m.ids.begin(), m.ids.end());
    return out;
  }

 private:
  std::size_t make_message() {
    Message m;
    m.payload = "[";
    for (std::size_t k = 0; k < kEventsPerMessage; ++k) {
      const std::string id = "crash-" + std::to_string(messages_.size()) + "-" + std::to_string(k);
      if (k) m.payload += ",";
      m.payload += R"({"id":")" + id +
                   R"(","kind":"call","namespace":"crash","content":"tool call )" + id +
                   R"( while the daemon may die at any moment","tags":["crash"]})";
      m.ids.push_back(id);
    }
    m.payload += "]";
    messages_.push_back(std::move(m));
    return messages_.size() - 1;
  }

  std::vector<Message> messages_;
  std::deque<std::size_t> retry_;
  std::set<std::string> acked_;
  std::uint64_t next_rid_ = 1;
  std::size_t resent_ = 0, stored_replies_ = 0, duplicate_replies_ = 0;
  std::vector<std::string> unexpected_errors_;
};

// Every table a job writes, whole: all tables but the events and their full-text index (and
// its watermark), the dead letters and the job run log (its durations and interrupted rows
// differ by design).
std::string derived_tables(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  std::vector<std::string> tables;
  // entity_summary_epoch counts changes of mentions (jobs/entity_summaries.hpp): a forget's
  // clear that a kill cut short is finished, then done again by the rerun, and counts twice;
  // only whether it changed during a pass matters, never its value.
  SQLite::Statement list(db,
                         "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN "
                         "('events', 'fts_state', 'dead_letters', 'job_runs', 'sqlite_sequence', "
                         "'entity_summary_epoch') AND name NOT LIKE "
                         "'events_fts%' ORDER BY name");
  while (list.executeStep()) tables.push_back(list.getColumn(0).getString());
  std::string out;
  for (const auto& table : tables) {
    // audit_log.audit_id numbers rows in the order they were appended: after a kill the jobs
    // finish namespaces in another order, so the same rows get other numbers. The rows must match.
    SQLite::Statement names(db,
                            "SELECT group_concat(name, ',') FROM pragma_table_info(?1) "
                            "WHERE NOT (?1 = 'audit_log' AND name = 'audit_id')");
    names.bind(1, table);
    names.executeStep();
    const std::string columns = names.getColumn(0).getString();
    out += "== " + table + "\n" +
           test::dump(db, "SELECT " + columns + " FROM " + table + " ORDER BY " + columns);
  }
  return out;
}

// The first line where two dumps differ, for the failure message.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb, table;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la)),
               gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (ga && la.rfind("== ", 0) == 0) table = la;
    if (!ga || !gb || la != lb)
      return table + "\n  undisturbed: " + (ga ? la : "<end>") +
             "\n  crashed:     " + (gb ? lb : "<end>");
  }
}

}  // namespace

TEST_CASE("crash campaign: SIGKILL during an ingest flood loses no acknowledged event",
          "[crash][e2e]") {
  const std::uint64_t rounds = env_number("REFLECTD_CRASH_ROUNDS", 20);
  const std::uint64_t seed = env_number("REFLECTD_CRASH_SEED", std::random_device{}());
  std::cout << "crash campaign: seed " << seed << " (REFLECTD_CRASH_SEED), " << rounds
            << " rounds (REFLECTD_CRASH_ROUNDS)" << std::endl;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> kill_after_ms(20, 400);

  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  const std::string config = dir.file("reflectd.yaml");
  test::write_text_file(config, daemon_config(dir, db));
  const std::string ipc = "ipc://" + dir.path().string() + "/";
  zmq::context_t context;
  Publisher publisher;
  std::size_t lost_total = 0;

  for (std::uint64_t round = 1; round <= rounds; ++round) {
    test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
    REQUIRE(wait_ready(context, ipc + "c", 20s));
    const int delay_ms = kill_after_ms(rng);
    const auto kill_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms);
    bool killed = false;
    publisher.run_round(
        context, ipc + "i",
        [&] {
          if (!killed && std::chrono::steady_clock::now() >= kill_at) {
            daemon.send_signal(SIGKILL);
            killed = true;
          }
          return !killed;
        },
        false);
    const auto status = daemon.wait_for(10s);
    REQUIRE(status);
    CHECK(status->signal == SIGKILL);

    const DbCheck check = check_database(db);
    std::size_t lost = 0;
    for (const auto& id : publisher.acked()) lost += check.uids.count(id) == 0;
    lost_total += lost;
    INFO("round " << round);
    CHECK(check.integrity_ok);
    CHECK(check.fts_ok);
    CHECK(check.watermark_ok);
    CHECK(check.rows == check.distinct_uids);
    CHECK(lost == 0);
    std::cout << "  round " << round << ": SIGKILL after " << delay_ms << " ms, events in db "
              << check.rows << ", acknowledged " << publisher.acked().size() << ", lost " << lost
              << std::endl;
  }

  const std::size_t acked_under_fire = publisher.acked().size();
  // Last round: no kill; every message not yet acknowledged is resent until it is.
  {
    test::ChildProcess daemon({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")});
    REQUIRE(wait_ready(context, ipc + "c", 20s));
    publisher.run_round(
        context, ipc + "i", [] { return true; }, true);
    daemon.send_signal(SIGTERM);
    const auto status = daemon.wait_for(30s);
    REQUIRE(status);
    CHECK(status->code == 0);
  }
  const DbCheck final_check = check_database(db);
  CHECK(final_check.integrity_ok);
  CHECK(final_check.fts_ok);
  CHECK(final_check.watermark_ok);
  const auto ids = publisher.all_ids();
  std::size_t missing = 0;
  for (const auto& id : ids) missing += final_check.uids.count(id) == 0;
  CHECK(missing == 0);
  CHECK(final_check.rows == static_cast<std::int64_t>(ids.size()));  // never twice
  CHECK(final_check.rows == final_check.distinct_uids);
  CHECK(publisher.unexpected_errors().empty());
  for (const auto& e : publisher.unexpected_errors()) std::cout << "unexpected: " << e << '\n';
  std::cout << "crash campaign result: seed " << seed << ", rounds " << rounds << ", events "
            << ids.size() << ", acknowledged during the kill rounds " << acked_under_fire
            << " (all " << publisher.acked().size()
            << " after the kill-free round), resent messages " << publisher.resent()
            << ", duplicate replies " << publisher.duplicate_replies() << ", lost "
            << lost_total + missing << std::endl;
  CHECK(lost_total == 0);
}

TEST_CASE("crash campaign: SIGKILL during each job, then a rerun, equals an undisturbed run",
          "[crash][e2e]") {
  const std::uint64_t seed = env_number("REFLECTD_CRASH_SEED", std::random_device{}());
  const std::uint64_t kills = env_number("REFLECTD_CRASH_JOB_KILLS", 3);
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  FakeClock clock(kNowUs);
  const std::string seed_db = dir.file("seed.db");
  // libzmq's history (its first kSanitizedCorpusLines commits under sanitizers) and swe-agent's 448
  // events.
  const std::size_t events = test::load_history_corpus(
      seed_db, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}, clock);
  REQUIRE(events == test::kHistoryEvents);
  const std::string base_db = dir.file("base.db"), crash_db = dir.file("crash.db");
  std::filesystem::copy_file(seed_db, base_db);
  std::filesystem::copy_file(seed_db, crash_db);
  // The daemon's job order; each runs only on demand, and the wall clock is pinned so both
  // runs see the same now.
  const std::vector<std::string> jobs{"consolidate", "cluster",   "importance",
                                      "decay",       "medallion", "facts"};
  const std::string jobs_yaml = test::kJobsOnDemandYaml;
  ::setenv("REFLECTD_TEST_HOOKS", "1", 1);
  ::setenv("REFLECTD_TEST_NOW_US", std::to_string(kNowUs).c_str(), 1);
  zmq::context_t context;
  const std::string control = "ipc://" + dir.path().string() + "/c";
  const auto start_daemon = [&](const std::string& db, const std::string& name) {
    const std::string config = dir.file(name + ".yaml");
    test::write_text_file(config, daemon_config(dir, db, jobs_yaml));
    return test::ChildProcess({REFLECTD_BIN, "--config", config},
                              {"", "", dir.file(name + ".log")});
  };
  const auto run_to_end = [&](const std::string& job) {
    const json reply =
        control_request(context, control, {{"cmd", "run"}, {"job", job}, {"wait", true}});
    INFO(job << ": " << reply.dump());
    REQUIRE(reply.value("ok", false));
  };

  std::map<std::string, std::chrono::milliseconds> undisturbed;
  {
    auto daemon = start_daemon(base_db, "base");
    REQUIRE(wait_ready(context, control, 20s));
    for (const auto& job : jobs) {
      const auto start = std::chrono::steady_clock::now();
      run_to_end(job);
      undisturbed[job] = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
    }
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
  }
  std::map<std::string, std::int64_t> interrupted;
  for (const auto& job : jobs) {
    // Kill moments inside the span an undisturbed run of this job takes (measured above).
    std::uniform_int_distribution<std::int64_t> kill_after(
        0, std::max<std::int64_t>(1, undisturbed[job].count() * 4 / 5));
    for (std::uint64_t k = 0; k < kills; ++k) {
      auto daemon = start_daemon(crash_db, "crash");
      REQUIRE(wait_ready(context, control, 20s));
      const json queued = control_request(context, control, {{"cmd", "run"}, {"job", job}});
      REQUIRE(queued.value("ok", false));
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after(rng)));
      daemon.send_signal(SIGKILL);
      REQUIRE(daemon.wait_for(10s));
      const DbCheck check = check_database(crash_db);
      CHECK(check.integrity_ok);
      CHECK(check.fts_ok);
      CHECK(check.watermark_ok);
      CHECK(check.rows == static_cast<std::int64_t>(events));
    }
    auto daemon = start_daemon(crash_db, "crash");
    REQUIRE(wait_ready(context, control, 20s));
    run_to_end(job);
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
    SQLite::Database db(crash_db, SQLite::OPEN_READONLY);
    SQLite::Statement query(
        db, "SELECT count(*) FROM job_runs WHERE job = ? AND status = 'interrupted'");
    query.bind(1, job);
    REQUIRE(query.executeStep());
    interrupted[job] = query.getColumn(0).getInt64();
  }
  ::unsetenv("REFLECTD_TEST_NOW_US");
  ::unsetenv("REFLECTD_TEST_HOOKS");
  std::int64_t kills_inside = 0;
  for (const auto& [job, count] : interrupted) kills_inside += count;
  CHECK(kills_inside >= 1);  // kills landed inside running jobs
  const std::string expected = derived_tables(base_db);
  const std::string crashed = derived_tables(crash_db);
  CHECK(expected.size() > 100000);
  INFO(first_difference(expected, crashed));
  CHECK(crashed == expected);
  std::cout << "job crash campaign: seed " << seed << " (REFLECTD_CRASH_SEED), " << events
            << " events, " << kills
            << " kills per job (REFLECTD_CRASH_JOB_KILLS) within 80% of an undisturbed run;";
  for (const auto& job : jobs) {
    std::cout << " " << job << " " << undisturbed[job].count() << " ms/" << interrupted[job]
              << " interrupted;";
  }
  std::cout << " derived tables (" << expected.size()
            << " bytes of dump) equal: " << (crashed == expected ? "yes" : "NO") << std::endl;
}

TEST_CASE("crash campaign: SIGKILL during a forget, then a rerun, equals an undisturbed forget",
          "[crash][e2e]") {
  const std::uint64_t seed = env_number("REFLECTD_CRASH_SEED", std::random_device{}());
  std::mt19937_64 rng(seed);
  test::TempDir dir;
  FakeClock clock(kNowUs);
  const std::string seed_db = dir.file("seed.db");
  const std::size_t events = test::load_history_corpus(
      seed_db, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}, clock);
  const std::string base_db = dir.file("base.db"), crash_db = dir.file("crash.db");
  std::filesystem::copy_file(seed_db, base_db);
  std::filesystem::copy_file(seed_db, crash_db);
  ::setenv("REFLECTD_TEST_HOOKS", "1", 1);
  ::setenv("REFLECTD_TEST_NOW_US", std::to_string(kNowUs).c_str(), 1);
  zmq::context_t context;
  const std::string control = "ipc://" + dir.path().string() + "/c";
  const auto start_daemon = [&](const std::string& db, const std::string& name) {
    const std::string config = dir.file(name + ".yaml");
    test::write_text_file(config, daemon_config(dir, db, test::kJobsOnDemandYaml));
    return test::ChildProcess({REFLECTD_BIN, "--config", config},
                              {"", "", dir.file(name + ".log")});
  };
  const auto run_to_end = [&](const std::string& job, const std::string& ns) {
    const json reply = control_request(
        context, control, {{"cmd", "run"}, {"job", job}, {"namespace", ns}, {"wait", true}});
    INFO(job << ": " << reply.dump());
    REQUIRE(reply.value("ok", false));
  };
  // Two years of libzmq's history: thousands of events, their facts, decisions, entities.
  const json forget = {{"cmd", "forget"},
                       {"mode", "delete"},
                       {"wait", true},
                       {"filter",
                        {{"namespace", "libzmq"},
                         {"after", "2011-01-01T00:00:00Z"},
                         {"before", "2013-01-01T00:00:00Z"}}}};
  const auto prepare = [&] {
    for (const char* job : {"consolidate", "cluster", "importance", "decay", "medallion", "facts"})
      run_to_end(job, "");
  };

  std::int64_t forgotten = 0;
  std::chrono::milliseconds undisturbed{};
  {
    auto daemon = start_daemon(base_db, "base");
    REQUIRE(wait_ready(context, control, 20s));
    prepare();
    const auto start = std::chrono::steady_clock::now();
    const json reply = control_request(context, control, forget);
    undisturbed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    INFO(reply.dump());
    REQUIRE(reply.value("ok", false));
    forgotten = reply["forgotten"]["events_deleted"].get<std::int64_t>();
    // Enough rows that the crash, at a random moment of the forget, can land inside it:
    // libzmq's 2011-2012 commits (198 of the sanitized trees' first 1,200).
    CHECK(forgotten > (test::kSanitized ? 150 : 1000));
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
  }
  std::uniform_int_distribution<std::int64_t> kill_after(
      0, std::max<std::int64_t>(1, undisturbed.count() * 4 / 5));
  const std::int64_t kill_ms = kill_after(rng);
  {
    auto daemon = start_daemon(crash_db, "crash");
    REQUIRE(wait_ready(context, control, 20s));
    prepare();
    json queued = forget;
    queued["wait"] = false;
    // The reply is not awaited: the kill lands in the delete's transaction or the rebuild.
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(control);
    socket.send(zmq::buffer(queued.dump()));
    std::this_thread::sleep_for(std::chrono::milliseconds(kill_ms));
    daemon.send_signal(SIGKILL);
    REQUIRE(daemon.wait_for(10s));
  }
  const DbCheck check = check_database(crash_db);
  CHECK(check.integrity_ok);
  CHECK(check.fts_ok);
  // All of the forget or none of it.
  const auto rows = check.rows;
  CHECK((rows == static_cast<std::int64_t>(events) ||
         rows == static_cast<std::int64_t>(events) - forgotten));
  {
    auto daemon = start_daemon(crash_db, "crash");
    REQUIRE(wait_ready(context, control, 20s));
    const json reply = control_request(context, control, forget);
    INFO(reply.dump());
    if (!reply.value("ok", false)) {
      // The delete had committed: the rerun finds nothing, and the rebuild the kill
      // interrupted is the jobs' next runs (asked for here as their schedule would).
      REQUIRE(reply.value("error", "") == "forget: filter: matches no event");
      for (const auto job : memory_ops::kRebuildJobs) run_to_end(std::string(job), "libzmq");
    }
    daemon.send_signal(SIGTERM);
    REQUIRE(daemon.wait_for(30s));
  }
  ::unsetenv("REFLECTD_TEST_NOW_US");
  ::unsetenv("REFLECTD_TEST_HOOKS");
  const std::string expected = derived_tables(base_db);
  const std::string crashed = derived_tables(crash_db);
  INFO(first_difference(expected, crashed));
  CHECK(crashed == expected);
  std::cout << "forget crash campaign: seed " << seed << ", " << forgotten
            << " events forgotten in " << undisturbed.count() << " ms undisturbed, killed after "
            << kill_ms << " ms (the delete had "
            << (rows == static_cast<std::int64_t>(events) ? "not committed" : "committed")
            << "); derived tables equal: " << (crashed == expected ? "yes" : "NO") << std::endl;
}
