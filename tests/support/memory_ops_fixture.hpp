#pragma once
// What the memory-operation tests share (tests/memory_ops/): a marker word and the events that
// carry it, every job a namespace's derived state comes from, a hard delete, a dump of the
// derived tables, and the clients of a running daemon.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <regex>
#include <set>
#include <thread>

#include "common/clock.hpp"
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
#include "memory_ops/derived_state.hpp"
#include "memory_ops/event_selection.hpp"
#include "memory_ops/forget.hpp"
#include "memory_ops/medallions.hpp"
#include "recall/record_reads.hpp"
#include "store/database.hpp"
#include "store/write_gate.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"
#include "support/db_dump.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test::memory_ops_fixture {

using nlohmann::json;

inline constexpr const char* kMarker = "zorblatt7781";
inline const std::int64_t kNow = *parse_rfc3339_us("2026-01-01T00:00:00Z");

// Every job a namespace's derived state comes from, in the order the daemon's rebuild runs
// them, plus the facts job.
inline void run_every_job(SQLite::Database& db, std::int64_t now) {
  FakeClock clock(now);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  const config::Config cfg = config::defaults();
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  const model::VitalityParams vitality = daemon::vitality_params(cfg.decay);
  jobs::register_sql_functions(db, vitality);
  jobs::run_clustering(ctx, daemon::cluster_params(cfg));
  jobs::run_consolidation(ctx, daemon::consolidation_params(cfg));
  jobs::run_decay(ctx, vitality);
  jobs::run_importance(ctx, daemon::importance_params(cfg));
  jobs::run_facts(ctx);
  jobs::run_medallion_refresh(ctx, daemon::medallion_params(cfg));
}

// A Problem/Solution commit and an agent's decision that both carry the marker.
inline std::vector<std::string> marked_events(const std::string& ts) {
  return {json{{"id", "marked-commit"},
               {"kind", "commit_change"},
               {"namespace", "libzmq"},
               {"agent_id", "dev-zorblatt"},
               {"timestamp", ts},
               {"content",
                "Zorblatt7781 socket fix\n\nProblem: Zorblatt7781 frames were dropped on "
                "reconnect.\n\nSolution: Keep the Zorblatt7781 frames queued until the pipe "
                "is attached again."},
               {"context", {{"files", {"src/zorblatt7781.cpp", "src/socket_base.cpp"}}}}}
              .dump(),
          json{{"id", "marked-decision"},
               {"kind", "decision"},
               {"namespace", "libzmq"},
               {"agent_id", "planner"},
               {"timestamp", ts},
               {"content", "Queue Zorblatt7781 frames across reconnects"},
               {"context",
                {{"title", "Queue Zorblatt7781 frames"},
                 {"target", "src/zorblatt7781.cpp"},
                 {"rationale", "Zorblatt7781 frames must survive a reconnect"}}}}
              .dump()};
}

inline std::vector<memory_ops::SelectedEvent> select_marked(SQLite::Database& db) {
  memory_ops::EventSelection selection;
  selection.filter = memory_ops::EventFilter{};
  selection.filter->ns = "libzmq";
  selection.filter->text = kMarker;
  std::string error;
  auto events = memory_ops::resolve_event_selection(db, selection, {}, "forget", error);
  INFO(error);
  REQUIRE(events);
  return *events;
}

inline memory_ops::DeleteOutcome hard_delete(SQLite::Database& db,
                                             const std::vector<memory_ops::SelectedEvent>& events) {
  FakeClock clock(kNow);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  auto outcome = memory_ops::forget_events(ctx, events, "test", "test forget");
  CHECK(outcome.wal_truncated);
  CHECK(db.execAndGet("PRAGMA foreign_keys").getInt() == 1);
  return outcome;
}

// What the jobs derive, without row ids a rebuild renumbers (entity_id, cluster_id).
inline std::string derived_dump(SQLite::Database& db) {
  return test::consolidation_tables(db) +
         test::dump(db,
                    "SELECT namespace, canonical_key, display_name, entity_type, mention_count, "
                    "importance_score, summary_text, is_active, sensitivity FROM entities "
                    "ORDER BY namespace, canonical_key") +
         test::dump(db,
                    "SELECT s.canonical_key, t.canonical_key, r.rel_type, r.strength_base, "
                    "r.mention_count, r.evidence_seq, r.last_evidence_seq FROM "
                    "entity_relationships r JOIN entities s ON s.entity_id = r.source_id JOIN "
                    "entities t ON t.entity_id = r.target_id ORDER BY 1, 2, 3") +
         test::dump(db,
                    "SELECT namespace, label, summary_text, medoid_seq, member_count, "
                    "duplicate_count, first_seq, last_seq FROM clusters ORDER BY medoid_seq, "
                    "label") +
         test::dump(db, "SELECT * FROM cluster_terms ORDER BY namespace, term") +
         test::dump(db,
                    "SELECT fact_id, namespace, entity_key, attribute_key, fact_text, "
                    "valid_from_us, valid_to_us, source_seq, supersedes_fact_id, is_stale FROM "
                    "facts ORDER BY fact_id") +
         test::dump(db, "SELECT id, content_json, status FROM medallions ORDER BY id");
}

// The jobs of `config` run only when asked (`run`), so a case sees exactly what it ran.
inline void jobs_on_demand(config::Config& config) {
  for (config::JobConfig* job :
       {&config.jobs.consolidate, &config.jobs.decay, &config.jobs.cluster, &config.jobs.importance,
        &config.jobs.medallion, &config.jobs.facts}) {
    job->interval_s = 604800;
    job->after_events = 0;
    job->idle_s = 0;
  }
}

// An ingest and a control client of a running daemon.
struct Clients {
  explicit Clients(test::RunningDaemon& running)
      : ingest(make(running.endpoints().ingest[0])),
        control(make(running.endpoints().control[0])) {}
  zmq::context_t context;
  zmq::socket_t ingest;
  zmq::socket_t control;

 private:
  zmq::socket_t make(const std::string& endpoint) {
    return test::make_client(context, zmq::socket_type::dealer, endpoint);
  }
};

}  // namespace reflectd::test::memory_ops_fixture
