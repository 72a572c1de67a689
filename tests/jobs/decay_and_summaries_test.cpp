// The decay sweeps in closed form, and the importance and entity-summary jobs under a waiting
// writer, changes mid-run and incremental runs.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/decay.hpp"
#include "jobs/entities.hpp"
#include "jobs/entity_summaries.hpp"
#include "jobs/importance.hpp"
#include "jobs/scheduler.hpp"
#include "jobs/sql_functions.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/gate_contender.hpp"
#include "support/jobs_fixture.hpp"
#include "support/temp_dir.hpp"

using namespace reflectd;
using namespace reflectd::test;
using nlohmann::json;

TEST_CASE("decay sweeps are closed-form: many sweeps equal one") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_corpus(a, {"swe-agent-trajectories.jsonl"}, clock) == 448);
  {
    auto db = open_writer(a);
    consolidate(db, clock, default_params());
  }
  std::filesystem::copy_file(a, b);
  const auto vitality = daemon::vitality_params(config::defaults().decay);
  auto sweep = [&](const std::string& path, std::int64_t now) {
    FakeClock at(now);
    auto db = open_writer(path);
    jobs::register_sql_functions(db, vitality);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(at, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db, at, cancel, "", "interval", 0, {}};
    return jobs::run_decay(ctx, vitality);
  };
  // a: one sweep 45 days later. b: a sweep every 6 hours for 45 days.
  const json once = sweep(a, kNow + 45 * kDay);
  for (std::int64_t t = kNow + kSecond * 6 * 3600; t <= kNow + 45 * kDay; t += kSecond * 6 * 3600)
    sweep(b, t);
  auto db_a = open_writer(a);
  auto db_b = open_writer(b);
  const std::string knowledge =
      "SELECT decision_id, vitality, confidence FROM knowledge ORDER BY decision_id";
  CHECK(dump(db_a, knowledge) == dump(db_b, knowledge));
  CHECK(dump(db_a, "SELECT seq, status FROM events ORDER BY seq") ==
        dump(db_b, "SELECT seq, status FROM events ORDER BY seq"));
  // The SWE-agent streams' last evidence is from 2024: dormant, with the documented loss.
  CHECK(db_a.execAndGet("SELECT count(*) FROM knowledge WHERE vitality != 'dormant'").getInt() ==
        0);
  const double base =
      db_a.execAndGet("SELECT confidence_base FROM knowledge ORDER BY decision_id LIMIT 1")
          .getDouble();
  const std::int64_t last =
      db_a.execAndGet("SELECT last_seen_us FROM knowledge ORDER BY decision_id LIMIT 1").getInt64();
  CHECK(db_a.execAndGet("SELECT confidence FROM knowledge ORDER BY decision_id LIMIT 1")
            .getDouble() == model::decayed_confidence(base, last, kNow + 45 * kDay, vitality));
  // Read long after the history ended, nothing superseded them: every decision keeps its
  // confidence at the floor, decay.min_confidence_share (0.8) of its confidence at the last
  // evidence, not the seed's 0.
  CHECK(vitality.min_confidence_share == 0.8);
  CHECK(db_a.execAndGet("SELECT count(*) FROM knowledge WHERE confidence_base > 0").getInt() > 0);
  CHECK(db_a.execAndGet("SELECT count(*) FROM knowledge WHERE confidence_base > 0 AND "
                        "abs(confidence - 0.8 * confidence_base) > 1e-12")
            .getInt() == 0);
  // Episodic events (max age 30 days, auto_prune) are archived once, each with an audit row.
  CHECK(once["events_archived"] == 448);
  CHECK(db_a.execAndGet("SELECT count(*) FROM audit_log WHERE action = 'archive'").getInt() == 448);
  CHECK(db_b.execAndGet("SELECT count(*) FROM audit_log WHERE action = 'archive'").getInt() == 448);
  CHECK(once["facts_marked_stale"].get<int>() >= 448);
}

namespace {

// What the importance job and the entity summaries derive, by keys, plus their incremental state.
std::string importance_tables(SQLite::Database& db) {
  return dump(db,
              "SELECT namespace, canonical_key, mention_count, importance_score, summary_text FROM "
              "entities "
              "ORDER BY namespace, canonical_key") +
         dump(db,
              "SELECT e.namespace, e.canonical_key, w.weight_sum, w.mentions, w.through_seq FROM "
              "entity_mention_weights w "
              "JOIN entities e USING (entity_id) ORDER BY 1, 2") +
         dump(db, "SELECT * FROM importance_state ORDER BY namespace") +
         dump(db, "SELECT * FROM entity_summary_watermarks ORDER BY namespace") +
         dump(db,
              "SELECT e.namespace, e.canonical_key, s.top1_seq, s.top2_seq, s.mentions, "
              "s.through_seq FROM "
              "entity_summary_state s JOIN entities e USING (entity_id) ORDER BY 1, 2") +
         dump(db,
              "SELECT count(*) FROM entity_summary_dirty d JOIN entities e USING (entity_id) WHERE "
              "e.is_active = 1");
}

// cluster, importance, then the entity summaries (the medallion job's first step), at `now`.
json entity_cycle(SQLite::Database& db, std::int64_t now, const std::string& ns = "",
                  store::WriteGate* gate = nullptr) {
  FakeClock clock(now);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  const auto cfg = config::defaults();
  jobs::JobContext ctx{db, clock, cancel, ns, "demand", 0, {}, gate};
  jobs::run_clustering(ctx, daemon::cluster_params(cfg));
  jobs::run_importance(ctx, daemon::importance_params(cfg));
  return jobs::refresh_entity_summaries(ctx, daemon::medallion_params(cfg).edge_half_life_s);
}

// Runs `job` (given the write gate) against `path` while another connection, at the write
// gate, applies `change` once, after the job's first write transaction that yielded. Returns
// the job's result; `changed` tells whether the change was made. Any error of either side
// fails the test.
json with_change_after_first_yield(const std::string& path, const std::string& change,
                                   const std::function<json(store::WriteGate*)>& job,
                                   bool& changed) {
  store::WriteGate gate(1, 2);  // every job transaction ends after its 2 ms slice
  changed = false;
  json result;
  std::atomic<bool> stop{false};
  std::string failure;
  std::thread writer([&] {
    try {
      SQLite::Database other(path, SQLite::OPEN_READWRITE);
      other.exec("PRAGMA busy_timeout = 60000");
      while (!stop) {
        if (gate.writer_enter(60'000)) {
          if (!changed && gate.stats().job_yields.load() > 0) {
            other.exec(change);
            changed = true;
          }
          gate.writer_exit();
        }
        std::this_thread::yield();
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  try {
    result = job(&gate);
  } catch (const std::exception& e) {
    failure += std::string("job: ") + e.what();
  }
  stop = true;
  writer.join();
  INFO(failure);
  CHECK(failure.empty());
  return result;
}

// Drops the incremental state: the next run recomputes every weight and summary from scratch.
void forget_incremental_state(SQLite::Database& db) {
  db.exec(
      "DELETE FROM entity_mention_weights; DELETE FROM importance_state; DELETE FROM "
      "entity_summary_state; "
      "DELETE FROM entity_summary_watermarks; "
      "INSERT OR REPLACE INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM "
      "entities");
}

}  // namespace

// The entity summaries refresh their marked entities in write transactions that end when
// ingest waits at the write gate, and importance writes in one short transaction after scoring
// in a snapshot: under a writer that always waits, the tables are those of an undisturbed run.
TEST_CASE("importance and entity summaries under a writer that always waits keep their tables",
          "[summaries]") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string alone = dir.file("alone.db");
  const std::string yielding = dir.file("yielding.db");
  // swe-agent's 448 events and libzmq's history (its first kSanitizedCorpusLines commits under
  // sanitizers).
  REQUIRE(test::load_history_corpus(alone, {"swe-agent-trajectories.jsonl", "libzmq-commits.jsonl"},
                                    clock) == test::kHistoryEvents);
  std::filesystem::copy_file(alone, yielding);
  auto db_alone = open_writer(alone);
  auto db_yielding = open_writer(yielding);
  const json undisturbed = entity_cycle(db_alone, kNow);
  REQUIRE(undisturbed["summaries_refreshed"].get<int>() > (test::kSanitized ? 300 : 1000));
  store::WriteGate gate(1, 2);  // every job transaction ends after its 2 ms slice
  json disturbed;
  std::uint64_t summary_yields = 0;
  {
    test::GateContender writer(gate);
    disturbed = entity_cycle(db_yielding, kNow, "", &gate);
    // Only the summaries again, all of them: their own transactions yield too (before, the
    // caller's one transaction held the gate for the whole refresh).
    db_yielding.exec("UPDATE entity_summary_dirty SET full = 1");
    db_yielding.exec(
        "INSERT OR IGNORE INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM "
        "entities");
    // The shortest slice: on a fast machine the whole refresh takes a few ms.
    gate.set_policy(1, 1);
    const std::uint64_t before = gate.stats().job_yields.load();
    FakeClock now(kNow);
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(now, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db_yielding, now, cancel, "", "demand", 0, {}, &gate};
    const json again = jobs::refresh_entity_summaries(
        ctx, daemon::medallion_params(config::defaults()).edge_half_life_s);
    CHECK(again["summaries_refreshed"] == 0);  // the same texts
    summary_yields = gate.stats().job_yields.load() - before;
  }
  INFO("job transactions " << gate.stats().job_turns.load() << ", yields "
                           << gate.stats().job_yields.load() << ", of the summaries alone "
                           << summary_yields);
  // One transaction for the whole refresh (as before) would yield once at most. How many more
  // depends on the machine's speed (5 at 2 ms slices, 47-50 at 1 ms on the development VM), so
  // no more is asserted.
  CHECK(summary_yields >= 2);
  CHECK(disturbed["summaries_refreshed"] == undisturbed["summaries_refreshed"]);
  CHECK(disturbed["summaries_skipped"] == undisturbed["summaries_skipped"]);
  CHECK(db_yielding.execAndGet("SELECT count(*) FROM entity_summary_dirty").getInt64() ==
        db_alone.execAndGet("SELECT count(*) FROM entity_summary_dirty").getInt64());
  CHECK(importance_tables(db_yielding) == importance_tables(db_alone));
}

// A first run searches every entity in one pass over all mentions in seq order, read in a
// snapshot before the write transactions that save the summaries. Here another connection
// makes the oldest mention of the entity refreshed last the most salient event between two of
// those transactions: the pass must be retired (migration 14's epoch), or that entity would
// keep a summary of data that no longer exists (its mark, set by the trigger, is cleared when
// it is refreshed). After a second run, the tables equal those of a database changed before
// its first run.
TEST_CASE("entity summaries: a change during the first run retires the pass in seq order",
          "[summaries]") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string alone = dir.file("alone.db");
  const std::string raced = dir.file("raced.db");
  REQUIRE(test::load_history_corpus(alone, {"swe-agent-trajectories.jsonl", "libzmq-commits.jsonl"},
                                    clock) == test::kHistoryEvents);
  std::filesystem::copy_file(alone, raced);
  auto db_alone = open_writer(alone);
  auto db_raced = open_writer(raced);
  const auto cfg = config::defaults();
  const std::int64_t half_life_s = daemon::medallion_params(cfg).edge_half_life_s;
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  auto summaries = [&](SQLite::Database& db, store::WriteGate* gate) {
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, gate};
    return jobs::refresh_entity_summaries(ctx, half_life_s);
  };
  for (auto* db : {&db_alone, &db_raced}) {
    jobs::JobContext ctx{*db, clock, cancel, "", "demand", 0, {}, nullptr};
    jobs::run_clustering(ctx, daemon::cluster_params(cfg));
    jobs::run_importance(ctx, daemon::importance_params(cfg));
  }
  const std::int64_t last = db_alone
                                .execAndGet(
                                    "SELECT max(e.entity_id) FROM entities e WHERE "
                                    "e.is_active = 1 AND EXISTS (SELECT 1 FROM "
                                    "event_entities ee WHERE ee.entity_id = e.entity_id)")
                                .getInt64();
  const std::int64_t oldest =
      db_alone
          .execAndGet("SELECT min(seq) FROM event_entities WHERE entity_id = " +
                      std::to_string(last))
          .getInt64();
  const std::string change =
      "UPDATE events SET salience_base = 9.5 WHERE seq = " + std::to_string(oldest);
  auto epoch = [](SQLite::Database& db) {
    return db.execAndGet("SELECT changes FROM entity_summary_epoch").getInt64();
  };

  db_alone.exec(change);
  const json first_alone = summaries(db_alone, nullptr);
  const std::int64_t entities =
      db_alone.execAndGet("SELECT count(*) FROM entities WHERE is_active = 1").getInt64();
  CHECK(first_alone["summaries_searched_in_pass"].get<std::int64_t>() == entities);

  // After the summaries' first write transaction that yielded: after the pass.
  bool changed = false;
  const json first_raced = with_change_after_first_yield(
      raced, change, [&](store::WriteGate* gate) { return summaries(db_raced, gate); }, changed);
  REQUIRE(changed);
  INFO("searched in the pass: " << first_raced["summaries_searched_in_pass"] << " of " << entities);
  CHECK(first_raced["summaries_searched_in_pass"].get<std::int64_t>() > 0);
  CHECK(first_raced["summaries_searched_in_pass"].get<std::int64_t>() < entities);
  // Whatever the change found already refreshed is marked again: a second run catches up.
  summaries(db_alone, nullptr);
  summaries(db_raced, nullptr);
  CHECK(importance_tables(db_raced) == importance_tables(db_alone));

  // What counts as a change of the summaries' inputs: a mentioned event's hits or status, a
  // mention; not an unmentioned event, nor a new one.
  const std::int64_t before = epoch(db_alone);
  db_alone.exec("UPDATE events SET hit_count = hit_count + 1 WHERE seq = " +
                std::to_string(oldest));
  CHECK(epoch(db_alone) == before + 1);
  db_alone.exec("UPDATE events SET status = 'archived' WHERE seq = " + std::to_string(oldest));
  CHECK(epoch(db_alone) == before + 2);
  db_alone.exec(
      "UPDATE events SET hit_count = hit_count + 1 WHERE seq NOT IN (SELECT seq FROM "
      "event_entities)");
  CHECK(epoch(db_alone) == before + 2);
  db_alone.exec("DELETE FROM event_entities WHERE seq = " + std::to_string(oldest));
  CHECK(epoch(db_alone) > before + 2);
}

// An incremental run reads each new event's summary inputs once and keeps them for the
// entities refreshed after it, in later write transactions. Here another connection archives
// such an event between two of those transactions: one entity that already read it, and one
// refreshed later that has it as a new mention but not among its kept two (so no trigger marks
// it for a full search). The kept inputs must be dropped (migration 14's epoch), or the later
// entity would quote an archived event with nothing left to correct it.
TEST_CASE("entity summaries: a change during an incremental run drops the event inputs read",
          "[summaries]") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string alone = dir.file("alone.db");
  const std::string raced = dir.file("raced.db");
  const auto libzmq = test::corpus_lines("libzmq-commits.jsonl");
  const std::vector<std::string> before(libzmq.begin(), libzmq.begin() + 6000);
  const std::vector<std::string> after(libzmq.begin() + 6000, libzmq.end());
  REQUIRE(test::load_lines(alone, before, clock) == 6000);
  {
    auto db = open_writer(alone);
    entity_cycle(db, kNow - kDay);
  }
  REQUIRE(test::load_lines(alone, after, clock) == 2604);
  const std::string unclustered = dir.file("unclustered.db");
  std::filesystem::copy_file(alone, unclustered);
  const auto cfg = config::defaults();
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  auto cluster = [&](SQLite::Database& db) {
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
    jobs::run_clustering(ctx, daemon::cluster_params(cfg));
  };
  auto db_alone = open_writer(alone);
  cluster(db_alone);

  // The first entity refreshed (lowest id) and the last one sharing a new event with it, both
  // summarised before: that event is a new mention of each.
  const std::int64_t through =
      db_alone.execAndGet("SELECT max(through_seq) FROM entity_summary_watermarks").getInt64();
  const std::string watermark = std::to_string(through);
  const std::string fresh =
      "SELECT DISTINCT ee.entity_id FROM event_entities ee JOIN entity_summary_state s USING "
      "(entity_id) JOIN entities e USING (entity_id) WHERE ee.seq > " +
      watermark + " AND e.is_active = 1";
  const std::int64_t first =
      db_alone.execAndGet("SELECT min(entity_id) FROM (" + fresh + ")").getInt64();
  SQLite::Statement shared(db_alone,
                           "SELECT b.seq, b.entity_id FROM event_entities a JOIN event_entities b "
                           "ON b.seq = a.seq WHERE a.entity_id = ?1 AND a.seq > ?2 AND "
                           "b.entity_id IN (" +
                               fresh + ") ORDER BY b.entity_id DESC, b.seq DESC LIMIT 1");
  shared.bind(1, first);
  shared.bind(2, through);
  REQUIRE(shared.executeStep());
  const std::int64_t seq = shared.getColumn(0).getInt64();
  const std::int64_t last = shared.getColumn(1).getInt64();
  shared.reset();
  REQUIRE(last > first);
  // Made the most salient event of both, so that the archiving shows in their summaries, before
  // the cluster job stores its mentions (clustering again gives the same ids): a change of a
  // mentioned event would mark its entities for a full search, which reads no kept inputs.
  db_alone.exec("UPDATE events SET salience_base = 9.5 WHERE seq = " + std::to_string(seq));
  std::filesystem::copy_file(unclustered, raced);
  auto db_raced = open_writer(raced);
  db_raced.exec("UPDATE events SET salience_base = 9.5 WHERE seq = " + std::to_string(seq));
  cluster(db_raced);
  const std::string marked =
      "SELECT count(*) FROM entity_summary_dirty WHERE full = 1 AND entity_id IN (" +
      std::to_string(first) + ", " + std::to_string(last) + ")";
  REQUIRE(db_raced.execAndGet(marked).getInt64() == 0);
  const std::string archive =
      "UPDATE events SET status = 'archived' WHERE seq = " + std::to_string(seq);
  auto summaries = [&](SQLite::Database& db, store::WriteGate* gate) {
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, gate};
    return jobs::refresh_entity_summaries(ctx, daemon::medallion_params(cfg).edge_half_life_s);
  };

  db_alone.exec(archive);
  summaries(db_alone, nullptr);
  // After the first write transaction, which refreshed `first`.
  bool changed = false;
  with_change_after_first_yield(
      raced, archive, [&](store::WriteGate* gate) { return summaries(db_raced, gate); }, changed);
  REQUIRE(changed);
  // `first` kept the archived event among its two: the trigger marked it, a second run
  // searches it again. `last` must already be right.
  summaries(db_alone, nullptr);
  summaries(db_raced, nullptr);
  const std::string quoted =
      "SELECT summary_text FROM entities WHERE entity_id = " + std::to_string(last);
  CHECK(db_raced.execAndGet(quoted).getString() == db_alone.execAndGet(quoted).getString());
  CHECK(importance_tables(db_raced) == importance_tables(db_alone));
}

// New mentions after a watermark are read by a seek per entity or in one pass over
// event_entities' primary key (jobs::read_new_mentions_in_one_pass), in importance and in the
// summaries alike: swe-agent's new mentions behind all of libzmq's events take the seeks, the
// same mentions arriving in small batches take the pass; both give the tables of one run.
TEST_CASE("importance and entity summaries: new mentions by seeks or in one pass, the same tables",
          "[summaries]") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const auto libzmq = test::corpus_lines("libzmq-commits.jsonl");
  const auto swe = test::corpus_lines("swe-agent-trajectories.jsonl");
  const auto cfg = config::defaults();
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  // cluster, then importance and the summaries; returns whether the pass is the rule for
  // swe-agent's new mentions in both. Either way no entity that was there before is summed or
  // searched again over all its mentions: its new mentions were all found.
  auto cycle = [&](SQLite::Database& db) {
    jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
    auto count = [&db](const char* sql) { return db.execAndGet(sql).getInt64(); };
    const char* const kSweEntities = "SELECT count(*) FROM entities WHERE namespace = 'swe-agent'";
    const char* const kAllEntities = "SELECT count(*) FROM entities";
    const std::int64_t swe_before = count(kSweEntities);
    const std::int64_t all_before = count(kAllEntities);
    jobs::run_clustering(ctx, daemon::cluster_params(cfg));
    const std::int64_t newest = db.execAndGet("SELECT max(seq) FROM event_entities").getInt64();
    const std::int64_t entities =
        db.execAndGet("SELECT count(*) FROM entities WHERE namespace = 'swe-agent'").getInt64();
    const std::int64_t weighed = db.execAndGet(
                                       "SELECT coalesce((SELECT through_seq FROM importance_state "
                                       "WHERE namespace = 'swe-agent'), 0)")
                                     .getInt64();
    const std::int64_t summarised =
        db.execAndGet(
              "SELECT coalesce((SELECT through_seq FROM entity_summary_watermarks WHERE namespace "
              "= 'swe-agent'), 0)")
            .getInt64();
    const bool pass = jobs::read_new_mentions_in_one_pass(newest - weighed, entities);
    CHECK(jobs::read_new_mentions_in_one_pass(newest - summarised, entities) == pass);
    const json importance = jobs::run_importance(ctx, daemon::importance_params(cfg));
    const json summaries =
        jobs::refresh_entity_summaries(ctx, daemon::medallion_params(cfg).edge_half_life_s);
    if (swe_before > 0) {
      CHECK(importance["namespaces"]["swe-agent"]["weights_resummed"] == entities - swe_before);
      // The new entities (of either namespace) only.
      CHECK(summaries["summaries_searched"] == count(kAllEntities) - all_before);
    }
    return pass;
  };
  using Lines = std::vector<std::string>;
  constexpr std::ptrdiff_t kFirst = 50;
  const Lines swe_first(swe.begin(), swe.begin() + kFirst);
  const Lines swe_rest(swe.begin() + kFirst, swe.end());
  // The tables of `batches` stored into a fresh database, with a cycle after each, and whether
  // the last cycle read swe-agent's new mentions in one pass.
  auto run = [&](const std::string& name, const std::vector<Lines>& batches, bool& last_pass) {
    const std::string path = dir.file(name);
    auto db = open_writer(path);
    for (const Lines& batch : batches) {
      REQUIRE(test::load_lines(path, batch, clock) == batch.size());
      last_pass = cycle(db);
    }
    return importance_tables(db);
  };
  bool pass = false;

  // swe-agent's 398 later events stored after libzmq's 8,604: far more seqs after its
  // watermark than eight per entity.
  Lines behind = libzmq;
  behind.insert(behind.end(), swe_rest.begin(), swe_rest.end());
  Lines all = swe_first;
  all.insert(all.end(), behind.begin(), behind.end());
  const std::string one_behind = run("one-behind.db", {all}, pass);
  CHECK(run("seeks.db", {swe_first, behind}, pass) == one_behind);
  CHECK_FALSE(pass);

  // The same events in another order: swe-agent's in batches of 50 (each within the pass's
  // rule), then libzmq's.
  std::vector<Lines> batches{swe_first};
  for (auto it = swe_rest.begin(); it != swe_rest.end();) {
    const auto end = it + std::min<std::ptrdiff_t>(50, swe_rest.end() - it);
    batches.emplace_back(it, end);
    it = end;
  }
  all = swe;
  all.insert(all.end(), libzmq.begin(), libzmq.end());
  const std::string one_ahead = run("one-ahead.db", {all}, pass);
  bool every_pass = true;
  {
    const std::string path = dir.file("pass.db");
    auto db = open_writer(path);
    for (const Lines& batch : batches) {
      REQUIRE(test::load_lines(path, batch, clock) == batch.size());
      const bool first = &batch == &batches.front();
      if (!cycle(db) && !first) every_pass = false;
    }
    REQUIRE(test::load_lines(path, libzmq, clock) == libzmq.size());
    cycle(db);
    CHECK(importance_tables(db) == one_ahead);
  }
  CHECK(every_pass);
}

TEST_CASE("importance and entity summaries: incremental runs equal one run and a run from scratch",
          "[summaries]") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string one = dir.file("one.db");
  const std::string many = dir.file("many.db");
  REQUIRE(test::load_corpus(one, {"swe-agent-trajectories.jsonl", "libzmq-commits.jsonl"}, clock) ==
          9052);
  // The other database gets the events in three batches, each scored and summarised before
  // the next arrives: new mentions of known entities, new entities, a new namespace.
  const auto libzmq = test::corpus_lines("libzmq-commits.jsonl");
  const std::vector<std::string> part1(libzmq.begin(), libzmq.begin() + 3000);
  const std::vector<std::string> part2(libzmq.begin() + 3000, libzmq.begin() + 6000);
  const std::vector<std::string> part3(libzmq.begin() + 6000, libzmq.end());
  REQUIRE(test::load_corpus(many, {"swe-agent-trajectories.jsonl"}, clock) == 448);
  REQUIRE(test::load_lines(many, part1, clock) == 3000);
  {
    auto db = open_writer(many);
    const json first = entity_cycle(db, kNow - 10 * kDay);
    CHECK(first["summaries_refreshed"].get<int>() > 100);
    const json again = entity_cycle(db, kNow - 10 * kDay);
    CHECK(again["summaries_refreshed"] == 0);
  }
  REQUIRE(test::load_lines(many, part2, clock) == 3000);
  {
    auto db = open_writer(many);
    entity_cycle(db, kNow - 5 * kDay, "libzmq");
  }
  REQUIRE(test::load_lines(many, part3, clock) == 2604);
  auto db_one = open_writer(one);
  auto db_many = open_writer(many);
  // Reinforcement (hits, salience) of mentioned events from both batches: the summaries of
  // their entities must be searched again over every mention.
  for (auto* db : {&db_one, &db_many}) {
    db->exec(
        "UPDATE events SET hit_count = hit_count + 3, salience_base = 1.5 WHERE seq IN (3, 40, "
        "500, 4000)");
  }
  const json many_libzmq = entity_cycle(db_many, kNow, "libzmq");
  CHECK(many_libzmq["summaries_refreshed"].get<int>() > 100);
  // Only mentions after the watermark were read: the weights' namespace state kept its reference.
  CHECK(db_many.execAndGet("SELECT count(*) FROM importance_state").getInt() == 2);
  entity_cycle(db_many, kNow);
  entity_cycle(db_one, kNow);
  const std::string incremental = importance_tables(db_many);
  CHECK(incremental == importance_tables(db_one));

  forget_incremental_state(db_many);
  entity_cycle(db_many, kNow);
  CHECK(importance_tables(db_many) == incremental);
  // And nothing left to do: a rerun at the same now writes nothing.
  const json rerun = entity_cycle(db_many, kNow);
  CHECK(rerun["summaries_refreshed"] == 0);
  CHECK(importance_tables(db_many) == incremental);

  // Archiving (the decay job) after everything was clustered and summarised: one event in
  // seven, plus the most salient event of every fifth entity. Only the entities that kept an
  // archived event among their two most salient are searched again; the tables must equal
  // those of the database summarised from scratch.
  std::string archived = "0";
  {
    SQLite::Statement tops(
        db_many,
        "SELECT DISTINCT top1_seq FROM entity_summary_state WHERE entity_id % 5 = 0 "
        "AND top1_seq IS NOT NULL ORDER BY 1");
    while (tops.executeStep()) archived += "," + std::to_string(tops.getColumn(0).getInt64());
  }
  const std::int64_t dirty_before =
      db_many.execAndGet("SELECT count(*) FROM entity_summary_dirty").getInt64();
  REQUIRE(dirty_before == 0);
  for (auto* db : {&db_one, &db_many}) {
    db->exec(
        "UPDATE events SET status = 'archived' WHERE status = 'active' AND "
        "(seq % 7 = 0 OR seq IN (" +
        archived + "))");
  }
  const std::int64_t mentioning = db_many
                                      .execAndGet(
                                          "SELECT count(DISTINCT entity_id) FROM event_entities "
                                          "WHERE seq IN (SELECT seq FROM events WHERE "
                                          "status = 'archived')")
                                      .getInt64();
  const std::int64_t dirty_after =
      db_many.execAndGet("SELECT count(*) FROM entity_summary_dirty").getInt64();
  CHECK(dirty_after > dirty_before);
  CHECK(dirty_after < mentioning);
  entity_cycle(db_many, kNow + kDay);
  entity_cycle(db_one, kNow + kDay);
  const std::string after_archiving = importance_tables(db_many);
  CHECK(after_archiving == importance_tables(db_one));
  CHECK(after_archiving != incremental);
  forget_incremental_state(db_one);
  entity_cycle(db_one, kNow + kDay);
  CHECK(importance_tables(db_one) == after_archiving);
}
