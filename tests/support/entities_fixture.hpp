#pragma once
// What the entity and clustering tests share (tests/jobs/entity_*_test.cpp,
// cluster_job_test.cpp, edge_decay_test.cpp): fixed times, the cluster job's derived tables,
// a job runner, twin corpora, extraction helpers and the top entities of a namespace.
// JobContext is an aggregate that gains optional members (callbacks) over time; the jobs here
// need none of them, so they are left value-initialised without a warning (the pragma below).

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

#include "daemon/settings.hpp"
#include "jobs/clustering.hpp"
#include "jobs/decay.hpp"
#include "jobs/entities.hpp"
#include "jobs/event_json.hpp"
#include "jobs/importance.hpp"
#include "jobs/sql_functions.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/gate_contender.hpp"
#include "support/temp_dir.hpp"
#include "text/entity_extraction.hpp"

// JobContext is an aggregate that gains optional members (callbacks) over time; the jobs here
// need none of them, so leave them value-initialised without a warning.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace reflectd::test::entities_fixture {

using nlohmann::json;

inline constexpr std::int64_t kSecond = 1'000'000;
inline constexpr std::int64_t kDay = 86'400 * kSecond;
// 2026-11-21T00:00:00Z: after the last event of both streams.
inline constexpr std::int64_t kNow = 1'795'219'200 * kSecond;

// Everything the cluster and importance jobs derive, by keys (entity and cluster ids depend on
// the order namespaces were processed in; clusters are named by their first event).
inline std::string derived_tables(SQLite::Database& db) {
  return dump(db,
              "SELECT namespace, canonical_key, display_name, entity_type, mention_count, "
              "first_seen_us, "
              "last_seen_us, importance_score, summary_text, is_active FROM entities ORDER BY "
              "namespace, "
              "canonical_key") +
         dump(db, "SELECT * FROM entity_aliases ORDER BY namespace, alias") +
         dump(
             db,
             "SELECT ee.seq, e.canonical_key, ee.is_primary, ee.source FROM event_entities ee JOIN "
             "entities e USING (entity_id) ORDER BY ee.seq, e.canonical_key") +
         dump(db,
              "SELECT r.namespace, s.canonical_key, t.canonical_key, r.rel_type, r.strength, "
              "r.strength_base, "
              "r.strength_ref_us, r.mention_count, r.evidence_seq, r.last_evidence_seq, "
              "r.valid_from_us FROM entity_relationships r JOIN entities s ON s.entity_id = "
              "r.source_id "
              "JOIN "
              "entities t ON t.entity_id = r.target_id ORDER BY 1, 2, 3, 4") +
         dump(db,
              "SELECT namespace, first_seq, label, summary_text, medoid_seq, hex(medoid_vector), "
              "hex(centroid), "
              "member_count, duplicate_count, last_seq, first_seen_us, last_seen_us FROM clusters "
              "ORDER BY namespace, first_seq") +
         dump(db,
              "SELECT ec.seq, c.first_seq, ec.role, ec.similarity FROM event_clusters ec JOIN "
              "clusters c "
              "USING (cluster_id) ORDER BY ec.seq") +
         dump(db, "SELECT * FROM cluster_terms ORDER BY namespace, term") +
         dump(db,
              "SELECT p.namespace, p.term, c.first_seq, p.touched_seq FROM cluster_postings p JOIN "
              "clusters c "
              "USING (cluster_id) ORDER BY 1, 2, 3") +
         dump(db,
              "SELECT c.first_seq, e.canonical_key, ce.mentions FROM cluster_entities ce JOIN "
              "clusters c "
              "USING (cluster_id) JOIN entities e USING (entity_id) ORDER BY 1, 2") +
         dump(
             db,
             "SELECT observation_id, namespace, signature, title, text, supporting_event_ids, "
             "support_count, "
             "trajectory_count, confidence, importance, first_detected_us, last_reinforced_us FROM "
             "observations WHERE observation_type = 'community' AND is_active = 1 ORDER BY "
             "observation_id") +
         dump(db,
              "SELECT m.observation_id, m.member_type, coalesce(e.canonical_key, c.first_seq) FROM "
              "community_members m LEFT JOIN entities e ON m.member_type = 'entity' AND "
              "e.entity_id = "
              "m.member_id LEFT JOIN clusters c ON m.member_type = 'cluster' AND c.cluster_id = "
              "m.member_id "
              "JOIN observations o USING (observation_id) WHERE o.is_active = 1 ORDER BY 1, 2, 3") +
         dump(db, "SELECT * FROM job_state WHERE job = 'cluster' ORDER BY namespace, key");
}

struct Runner {
  FakeClock clock{kNow};
  std::atomic<bool> stopping{false};
  json cluster(SQLite::Database& db, const jobs::ClusterParams& params, const std::string& ns = "",
               store::WriteGate* gate = nullptr) {
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db, clock, cancel, ns, "demand", 0, {}, gate};
    return jobs::run_clustering(ctx, params);
  }
  json importance(SQLite::Database& db, const std::string& ns = "") {
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    jobs::JobContext ctx{db, clock, cancel, ns, "demand", 0};
    return jobs::run_importance(ctx, daemon::importance_params(config::defaults()));
  }
};

inline jobs::ClusterParams default_params() { return daemon::cluster_params(config::defaults()); }

// Two databases holding the same 9,052 real events, for the tests that run a job on each in
// a different way and then compare the tables.
struct TwinCorpus {
  explicit TwinCorpus(Runner& run) : first(load(run)), second(open_writer(second_path)) {}
  test::TempDir dir;
  const std::string first_path = dir.file("first.db");
  const std::string second_path = dir.file("second.db");
  SQLite::Database first;
  SQLite::Database second;

 private:
  SQLite::Database load(Runner& run) {
    // libzmq's history (its first kSanitizedCorpusLines commits under sanitizers) and swe-agent's
    // events.
    REQUIRE(test::load_history_corpus(first_path,
                                      {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                                      run.clock) == test::kHistoryEvents);
    std::filesystem::copy_file(first_path, second_path);
    return open_writer(first_path);
  }
};

// One decay sweep of the database at `path` at `now` (µs), with the default settings.
inline json sweep(const std::string& path, std::int64_t now) {
  const auto vitality = daemon::vitality_params(config::defaults().decay);
  FakeClock at(now);
  auto db = open_writer(path);
  jobs::register_sql_functions(db, vitality);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(at, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, at, cancel, "", "interval", 0};
  return jobs::run_decay(ctx, vitality);
}

inline text::Extraction extract(std::string_view kind, std::string_view content,
                                const json& context = json(), const json& entities = json(),
                                const json& relations = json(), std::string_view agent = "") {
  return text::extract_entities({kind, content, agent, &context, &entities, &relations, {}});
}

inline std::vector<std::string> keys(const text::Extraction& e) {
  std::vector<std::string> out;
  for (const auto& m : e.mentions) out.push_back(m.key);
  return out;
}

inline bool has(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// The namespace's entities by importance, as "key score".
inline std::vector<std::string> top_entities(SQLite::Database& db, const std::string& ns, int n) {
  SQLite::Statement q(
      db,
      "SELECT canonical_key FROM entities WHERE namespace = ?1 ORDER BY importance_score DESC, "
      "canonical_key LIMIT ?2");
  q.bind(1, ns);
  q.bind(2, n);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

inline void print_top(SQLite::Database& db, const std::string& ns, int n) {
  SQLite::Statement q(
      db,
      "SELECT canonical_key, entity_type, printf('%.4f', importance_score), mention_count FROM "
      "entities WHERE namespace = ?1 ORDER BY importance_score DESC, canonical_key LIMIT ?2");
  q.bind(1, ns);
  q.bind(2, n);
  std::cout << "top entities of " << ns << ":\n";
  int rank = 0;
  while (q.executeStep()) {
    std::cout << "  " << ++rank << ". " << q.getColumn(0).getString() << "  "
              << q.getColumn(2).getString() << "  (" << q.getColumn(1).getString() << ", "
              << q.getColumn(3).getInt64() << " mentions)\n";
  }
}

inline void print_clusters(SQLite::Database& db, const std::string& ns, int n) {
  SQLite::Statement q(
      db,
      "SELECT member_count, duplicate_count, label, substr(summary_text, 1, 90) FROM clusters "
      "WHERE namespace = ?1 ORDER BY member_count + duplicate_count DESC, cluster_id LIMIT ?2");
  q.bind(1, ns);
  q.bind(2, n);
  std::cout << "largest clusters of " << ns << ":\n";
  while (q.executeStep()) {
    std::cout << "  " << q.getColumn(0).getInt64() << "+" << q.getColumn(1).getInt64() << "  ["
              << q.getColumn(2).getString() << "]  " << q.getColumn(3).getString() << "\n";
  }
}

}  // namespace reflectd::test::entities_fixture
