// Entities, clustering, communities and importance: the pure rules, then the jobs on
// the real streams (quality, reruns, split independence, closed-form edge decay).

#include <catch2/catch.hpp>

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
#include "jobs/entity_extraction.hpp"
#include "jobs/event_json.hpp"
#include "jobs/importance.hpp"
#include "jobs/sql_functions.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/db_dump.hpp"
#include "support/gate_contender.hpp"
#include "support/temp_dir.hpp"

// JobContext is an aggregate that gains optional members (callbacks) over time; the jobs here
// need none of them, so leave them value-initialised without a warning.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace reflectd;
using nlohmann::json;
using test::dump;
using test::open_writer;

namespace {

constexpr std::int64_t kSecond = 1'000'000;
constexpr std::int64_t kDay = 86'400 * kSecond;
// 2026-11-21T00:00:00Z: after the last event of both streams.
constexpr std::int64_t kNow = 1'795'219'200 * kSecond;

// Everything the cluster and importance jobs derive, by keys (entity and cluster ids depend on
// the order namespaces were processed in; clusters are named by their first event).
std::string derived_tables(SQLite::Database& db) {
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

jobs::ClusterParams default_params() { return daemon::cluster_params(config::defaults()); }

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
    // libzmq's history (its first 2,500 commits under sanitizers) and swe-agent's events.
    REQUIRE(test::load_history_corpus(first_path,
                                      {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                                      run.clock) == (test::kSanitized ? 2948 : 9052));
    std::filesystem::copy_file(first_path, second_path);
    return open_writer(first_path);
  }
};

// One decay sweep of the database at `path` at `now` (µs), with the default settings.
json sweep(const std::string& path, std::int64_t now) {
  const auto vitality = daemon::vitality_params(config::defaults().decay);
  FakeClock at(now);
  auto db = open_writer(path);
  jobs::register_sql_functions(db, vitality);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(at, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, at, cancel, "", "interval", 0};
  return jobs::run_decay(ctx, vitality);
}

jobs::Extraction extract(std::string_view kind, std::string_view content,
                         const json& context = json(), const json& entities = json(),
                         const json& relations = json(), std::string_view agent = "") {
  return jobs::extract_entities({kind, content, agent, &context, &entities, &relations, {}});
}

std::vector<std::string> keys(const jobs::Extraction& e) {
  std::vector<std::string> out;
  for (const auto& m : e.mentions) out.push_back(m.key);
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// The namespace's entities by importance, as "key score".
std::vector<std::string> top_entities(SQLite::Database& db, const std::string& ns, int n) {
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

void print_top(SQLite::Database& db, const std::string& ns, int n) {
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

void print_clusters(SQLite::Database& db, const std::string& ns, int n) {
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

}  // namespace

TEST_CASE("canonical keys: NFC, case folding, trimming, paths keep their case") {
  // "Mélanie" with a combining acute accent and with the precomposed letter are one key.
  CHECK(jobs::canonical_key("person:Me\xCC\x81lanie") ==
        std::optional<std::string>("person:m\xC3\xA9lanie"));
  CHECK(jobs::canonical_key("person:M\xC3\xA9LANIE.") ==
        std::optional<std::string>("person:m\xC3\xA9lanie"));
  CHECK(jobs::canonical_key("Person:  Ana   Lima ") ==
        std::optional<std::string>("person:ana lima"));
  CHECK(jobs::canonical_key("repo:Stra\xC3\x9F"
                            "e") == std::optional<std::string>("repo:strasse"));
  CHECK(jobs::canonical_key("file:./src//Ctx.cpp") ==
        std::optional<std::string>("file:src/Ctx.cpp"));
  CHECK(jobs::canonical_key("file:src/a/../b.c:42") == std::optional<std::string>("file:src/b.c"));
  CHECK_FALSE(jobs::canonical_key("no colon"));
  CHECK_FALSE(jobs::canonical_key("person:"));
  CHECK_FALSE(jobs::canonical_key("bad type!:x"));
  CHECK(jobs::normalize_path("(src/ctx.cpp),") == "src/ctx.cpp");
  CHECK(jobs::looks_like_file_path("src/socket_base.cpp"));
  CHECK(jobs::looks_like_file_path("Makefile.am"));
  CHECK(jobs::looks_like_file_path("doc/Makefile"));
  CHECK_FALSE(jobs::looks_like_file_path("e.g."));
  CHECK_FALSE(jobs::looks_like_file_path("v4.3.4"));
  CHECK_FALSE(jobs::looks_like_file_path("https://github.com/zeromq/libzmq/pull/3537"));
  CHECK(jobs::first_directory("src/ctx.cpp") == "src");
  CHECK(jobs::first_directory("ctx.cpp").empty());
}

TEST_CASE("extraction: every source, in order of trust") {
  const json context = {{"target", "socket_engine"},
                        {"files", {"src/ctx.cpp", "include/zmq.h", "NEWS"}},
                        {"tool", "open"}};
  const json entities = {"repo:libzmq", "person:Ana"};
  const auto e =
      extract("commit_change",
              "ctx: fix shutdown race in src/socket_base.cpp\n\nReported by @bluca, see repo:czmq "
              "and ZeroMQ Guide. Mail sustrik@250bpm.com.\n\nSigned-off-by: Martin Sustrik "
              "<sustrik@250bpm.com>",
              context, entities, json(), "dev-1234");
  const auto k = keys(e);
  const std::vector<std::string> expected{"repo:libzmq",
                                          "person:ana",
                                          "component:socket_engine",
                                          "agent:dev-1234",
                                          "tool:open",
                                          "file:src/ctx.cpp",
                                          "module:src",
                                          "file:include/zmq.h",
                                          "module:include",
                                          "file:NEWS",
                                          "file:src/socket_base.cpp",
                                          "repo:czmq",
                                          "person:bluca",
                                          "component:ctx",
                                          "person:martin sustrik",
                                          "name:zeromq guide"};
  CHECK(k == expected);
  CHECK(e.mentions[0].source == jobs::Source::kExplicit);
  CHECK(e.mentions[0].primary);
  CHECK(e.mentions[2].source == jobs::Source::kTarget);
  CHECK_FALSE(e.mentions[3].primary);  // the agent
  CHECK(e.mentions[5].source == jobs::Source::kFiles);
  CHECK(e.mentions[10].source == jobs::Source::kContentPath);
  CHECK_FALSE(has(k, "person:250bpm.com"));  // e-mail addresses are not @mentions
}

TEST_CASE("extraction: speakers, capitalised runs, SWE-agent paths and aliases") {
  const auto chat =
      extract("conversation", "Melanie: I moved the Berlin Office meeting.\nThe plan stays.");
  CHECK(keys(chat) == std::vector<std::string>{"person:melanie", "name:berlin office"});
  // A greeting is not part of the name it opens.
  CHECK(keys(extract("conversation", "Melanie: Hey Caroline, thanks! Wow Jon did it.")) ==
        std::vector<std::string>{"person:melanie", "name:caroline", "name:jon"});
  // "The" starts a sentence and is a stop word; "Problem:" is a label, not a speaker.
  CHECK(keys(extract("note", "Problem: it fails. The cause is unknown.")).empty());

  const auto observed = extract(
      "result",
      "[File: /marshmallow-code__marshmallow/src/marshmallow/fields.py (1985 lines total)]\n"
      "(Open file: /marshmallow-code__marshmallow/src/marshmallow/fields.py)\n"
      "(Current directory: /marshmallow-code__marshmallow)",
      json(), json{"file:/marshmallow-code__marshmallow/src/marshmallow/fields.py"});
  CHECK(keys(observed) == std::vector<std::string>{"file:src/marshmallow/fields.py", "module:src"});
  REQUIRE(observed.aliases.size() == 1);
  CHECK(observed.aliases[0].alias ==
        "file:/marshmallow-code__marshmallow/src/marshmallow/fields.py");
  CHECK(observed.aliases[0].canonical_key == "file:src/marshmallow/fields.py");
}

TEST_CASE("extraction: a speaker is one party; day and month names are no entities") {
  const auto turn = extract("conversation", "Melanie: Hey Caroline! We went camping in May.",
                            json(), json(), json(), "Melanie");
  CHECK(keys(turn) == std::vector<std::string>{"agent:melanie", "person:melanie", "name:caroline"});
  std::vector<std::string> aliases;
  for (const auto& a : turn.aliases) aliases.push_back(a.alias + ">" + a.canonical_key);
  CHECK(aliases ==
        std::vector<std::string>{"agent:melanie>person:melanie", "name:melanie>person:melanie"});
  // A speaker who is not the publishing agent is not aliased to it.
  const auto quoted =
      extract("conversation", "Melanie: see you Friday", json(), json(), json(), "Caroline");
  CHECK(keys(quoted) == std::vector<std::string>{"agent:caroline", "person:melanie"});
  REQUIRE(quoted.aliases.size() == 1);
  CHECK(quoted.aliases[0].alias == "name:melanie");
}

TEST_CASE("extraction: explicit relations, declared aliases and Problem:/Solution: edges") {
  const json relations =
      json::array({{{"predicate", "depends_on"}, {"target", "repo:libsodium"}, {"weight", 0.5}},
                   {{"predicate", "alias_of"}, {"target", "person:Melanie"}}});
  const auto e = extract("decision", "We keep it.", json(), json{"person:Mel"}, relations);
  REQUIRE(e.relations.size() == 1);
  CHECK(e.relations[0].source_key == "person:mel");
  CHECK(e.relations[0].target_key == "repo:libsodium");
  CHECK(e.relations[0].rel_type == "depends_on");
  CHECK(e.relations[0].weight == 0.5);
  // The person's bare name first (from the mention), then the declared alias.
  REQUIRE(e.aliases.size() == 2);
  CHECK(e.aliases[0].alias == "name:mel");
  CHECK(e.aliases[0].canonical_key == "person:mel");
  CHECK(e.aliases[1].alias == "person:mel");
  CHECK(e.aliases[1].canonical_key == "person:melanie");

  const auto ps =
      extract("commit_change",
              "Problem: src/tcp.cpp drops frames on Windows\n\nSolution: retry in src/signaler.cpp",
              json{{"files", {"src/tcp.cpp", "src/signaler.cpp"}}});
  std::vector<std::string> edges;
  for (const auto& r : ps.relations)
    edges.push_back(r.source_key + " " + r.rel_type + " " + r.target_key);
  CHECK(edges == std::vector<std::string>{"file:src/tcp.cpp solved_by file:src/signaler.cpp",
                                          "name:windows solved_by file:src/signaler.cpp"});
}

namespace {

// Everything an extraction holds, as text, to compare two of them exactly.
std::string extraction_text(const jobs::Extraction& e) {
  std::ostringstream out;
  for (const auto& m : e.mentions) {
    out << "m " << m.key << '|' << m.type << '|' << m.display << '|' << jobs::to_string(m.source)
        << '|' << m.primary << '\n';
  }
  for (const auto& r : e.relations) {
    out << "r " << r.source_key << '|' << r.target_key << '|' << r.rel_type << '|'
        << json(r.weight).dump() << '\n';
  }
  for (const auto& a : e.aliases) out << "a " << a.alias << '|' << a.canonical_key << '\n';
  return out.str();
}

// extract_entities() on the JSON columns as the cluster job reads them (EventJsonReader),
// and on the same texts parsed whole by nlohmann (as it read them before).
void check_same_extraction(jobs::EventJsonReader& reader, const std::string& kind,
                           const std::string& content, const std::optional<std::string>& context,
                           const std::optional<std::string>& entities,
                           const std::optional<std::string>& relations) {
  auto whole = [](const std::optional<std::string>& text) {
    return text ? json::parse(*text, nullptr, false) : json();
  };
  const json c1 = reader.extraction_context(context);
  const json e1 = reader.extraction_entities(entities);
  const json r1 = reader.extraction_relations(relations);
  const json c2 = whole(context);
  const json e2 = whole(entities);
  const json r2 = whole(relations);
  INFO(kind << " " << context.value_or("-") << " " << entities.value_or("-") << " "
            << relations.value_or("-"));
  REQUIRE(extraction_text(jobs::extract_entities({kind, content, "agent-1", &c1, &e1, &r1, ""})) ==
          extraction_text(jobs::extract_entities({kind, content, "agent-1", &c2, &e2, &r2, ""})));
}

}  // namespace

TEST_CASE("extraction: the JSON columns read with simdjson mean what nlohmann read") {
  jobs::EventJsonReader reader;
  SECTION("odd texts: repeated keys, other types, 90-bit integers, invalid JSON") {
    const std::vector<std::optional<std::string>> contexts = {
        std::nullopt,
        R"({"target":"src","target":"lib","tool":"bash","files":["a/x.c"],"files":["b/y.c",7]})",
        R"({"target":7,"tool":["bash"],"files":"a/x.c"})",
        R"({"target":"big","n":1234567890123456789012345678,"files":["c/z.c"]})",
        R"(["not","an","object"])",
        R"({"target":"cut")",
        R"("text")",
        R"({"target":"lone\ud800surrogate","tool":"bash"})",
        R"({"target":"fine","x":"\udc00","files":["d/w.c"]})",
        "{\"target\":\"bad \xff byte\",\"tool\":\"make\"}",
    };
    const std::vector<std::optional<std::string>> entities = {
        std::nullopt,
        R"(["file:src/a.c","person:Mel",3,null,{"k":"v"},"repo:zmq"])",
        R"({"file":"src/a.c"})",
        R"(["person:Ann", 99999999999999999999999999])",
        R"(not json)",
    };
    const std::vector<std::optional<std::string>> relations = {
        std::nullopt,
        R"([{"predicate":"depends_on","target":"repo:a","weight":0.25,"weight":2},"x",
            {"predicate":"USES","target":5,"target_id":"repo:b","weight":"high"},
            {"predicate":"alias_of","target":"person:Mel"},
            {"predicate":"calls","target_id":"tool:make","weight":18446744073709551615}])",
        R"([{"predicate":"p","target":"repo:c","weight":1e400}])",
        R"({"predicate":"depends_on"})",
    };
    for (const auto& c : contexts) {
      for (const auto& e : entities) {
        for (const auto& r : relations) {
          check_same_extraction(reader, "decision", "Problem: a.c fails\nSolution: fix b.c", c, e,
                                r);
        }
      }
    }
  }
  SECTION("every event of the real streams") {
    std::size_t events = 0;
    for (const char* name : {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"}) {
      for (const std::string& line : test::corpus_lines(name)) {
        const json event = json::parse(line);
        auto text_of = [&](const char* key) -> std::optional<std::string> {
          if (!event.contains(key) || event[key].is_null()) return std::nullopt;
          return event[key].dump();
        };
        check_same_extraction(reader, event.value("kind", ""), event.value("content", ""),
                              text_of("context"), text_of("entities"), text_of("relations"));
        ++events;
      }
    }
    CHECK(events == 9052);
  }
}

TEST_CASE("Hebbian edge strength and its closed-form decay") {
  const std::int64_t h = 3600;
  CHECK(jobs::hebbian_step(0.0, 0, 0, 0.1, 1.0, h) == Approx(0.1));
  CHECK(jobs::hebbian_step(0.1, 0, 0, 0.1, 1.0, h) == Approx(0.19));
  // One half-life later the base halves before the step.
  CHECK(jobs::hebbian_step(0.8, 0, h * kSecond, 0.1, 1.0, h) == Approx(0.4 + 0.1 * 0.6));
  CHECK(jobs::edge_strength_at(0.8, 0, 2 * h * kSecond, h) == Approx(0.2));
  CHECK(jobs::edge_strength_at(0.8, 10, 5, h) == 0.8);  // a future reference: no decay
}

TEST_CASE("personalised PageRank: known values and determinism") {
  // A 3-cycle is symmetric: every vertex gets 1/3 whatever the damping.
  jobs::Csr cycle{{0, 1, 2, 3}, {1, 2, 0}, {1.0, 1.0, 1.0}};
  const std::vector<double> uniform{1, 1, 1};
  for (double x : jobs::personalized_pagerank(cycle, uniform, 0.85, 100, 1e-12))
    CHECK(x == Approx(1.0 / 3));
  // Two vertices pointing at a sink (dangling: its mass returns through v).
  jobs::Csr star{{0, 1, 2, 2}, {2, 2}, {1.0, 1.0}};
  std::int64_t iterations = 0;
  const auto r = jobs::personalized_pagerank(star, uniform, 0.85, 100, 1e-12, &iterations);
  // Fixed point: x0 = x1 = a, x2 = b with a = 0.15/3 + 0.85 b/3 and b = 0.15/3 + 0.85 (2a + b/3).
  CHECK(r[0] == Approx(r[1]));
  CHECK(r[0] + r[1] + r[2] == Approx(1.0));
  CHECK(r[0] == Approx(0.05 + 0.85 * r[2] / 3));
  CHECK(iterations < 100);
  CHECK(jobs::personalized_pagerank(star, uniform, 0.85, 100, 1e-12) == r);  // bit for bit
  // Personalisation pulls rank towards the preferred vertex.
  const auto biased =
      jobs::personalized_pagerank(cycle, std::vector<double>{1, 0, 0}, 0.85, 100, 1e-12);
  CHECK(biased[0] > biased[1]);
  CHECK(biased[1] > biased[2]);
  jobs::ImportanceParams p;
  CHECK(jobs::blend_importance(1, 1, 1, p) == Approx(1.0));
  CHECK(jobs::blend_importance(1, 0, 0, p) == Approx(0.4));
}

TEST_CASE("tokenizer: Unicode, stop words, stems, no hashes") {
  jobs::Tokenizer tokenizer;
  std::vector<std::string> stems;
  for (const auto& [stem, surface] :
       tokenizer.terms("The Sockets were CLOSED by zmq_close(); GRÖSSE 4ed70a93 42"))
    stems.push_back(stem);
  CHECK(stems == std::vector<std::string>{"socket", "close", "zmq", "close", "grösse"});
  CHECK(jobs::cosine({{"a", 1.0}, {"b", 1.0}}, {{"a", 1.0}, {"b", 1.0}}) == Approx(1.0));
  CHECK(jobs::cosine({{"a", 1.0}}, {{"b", 1.0}}) == 0.0);
}

TEST_CASE("cluster and importance jobs on the real streams") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("e.db");
  REQUIRE(test::load_corpus(path, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                            run.clock) == 9052);
  auto db = open_writer(path);
  const json result = run.cluster(db, default_params());
  std::cout << "cluster: " << result.dump() << "\n";
  CHECK(result["events_processed"] == 9052);
  CHECK(result["clusters_created"].get<int>() > 100);
  CHECK(result["facts_assigned"].get<int>() + result["events_without_terms"].get<int>() == 9052);
  CHECK(result["communities"]["communities_created"].get<int>() > 0);
  const json importance = run.importance(db);
  std::cout << "importance: " << importance["top_entities"].dump() << "\n";
  CHECK(importance["entities_scored"].get<int>() ==
        db.execAndGet("SELECT count(*) FROM entities").getInt());
  print_top(db, "libzmq", 40);
  print_top(db, "swe-agent", 15);

  print_clusters(db, "libzmq", 15);
  if (const char* keep = std::getenv("REFLECTD_KEEP_DB")) db.backup(keep, SQLite::Database::Save);

  // libzmq (4.8k entities): the source tree first, the socket and context sources high.
  CHECK(top_entities(db, "libzmq", 1) == std::vector<std::string>{"module:src"});
  const auto zmq = top_entities(db, "libzmq", 15);
  CHECK(has(zmq, "file:src/socket_base.cpp"));
  CHECK(has(zmq, "file:include/zmq.h"));
  CHECK(has(top_entities(db, "libzmq", 40), "file:src/ctx.cpp"));
  // swe-agent: the files its runs edit.
  const auto swe = top_entities(db, "swe-agent", 15);
  CHECK(has(swe, "file:src/marshmallow/fields.py"));
  CHECK(has(swe, "file:reproduce.py"));
  // Every score is in [0, 1]; the alias from the absolute path resolves to the relative key.
  CHECK(db.execAndGet(
              "SELECT min(importance_score) >= 0 AND max(importance_score) <= 1 FROM entities")
            .getInt() == 1);
  CHECK(db.execAndGet("SELECT canonical_key FROM entity_aliases WHERE alias = "
                      "'file:/marshmallow-code__marshmallow/src/marshmallow/fields.py'")
            .getString() == "file:src/marshmallow/fields.py");

  // Hand-checked: commits about one subsystem share a cluster (GSSAPI security, TIPC and VMCI
  // transports), and the subsystems are told apart.
  auto cluster_of = [&](const std::string& hash) {
    return db
        .execAndGet(
            "SELECT ec.cluster_id FROM event_clusters ec JOIN events e ON e.seq = ec.seq WHERE "
            "e.uid = "
            "'git:libzmq:" +
            hash + "'")
        .getInt64();
  };
  const auto gssapi = cluster_of(
      "1445516c41de0a3942d2c3ed09017564b9a7723e");  // Establishing GSSAPI sec context ...
  CHECK(cluster_of("3c414c4aac45a821645ff8c23bc838b5ac017b30") ==
        gssapi);  // GSSAPI mechanism now fully working ...
  CHECK(cluster_of("27591d2da6a3df7ef5f9a7d0dcec40f25233b4bd") ==
        gssapi);  // ZMQ_GSSAPI_PLAINTEXT option ...
  const auto tipc = cluster_of(
      "eab85b52953bd23076c5b9333ef1c455cdc3666d");  // zmq: add support for TIPC transport
  CHECK(cluster_of("58ac87def1b5349ddfd9d89cde0ca18e5f7cd7cd") ==
        tipc);  // narrow condition to include TIPC ...
  CHECK(cluster_of("bbbccebbe711a991d807bf70132bb4a982bb4e71") == tipc);  // zmq: add TIPC manpage
  const auto vmci =
      cluster_of("68b13fbddb909e6b75a72475f19dad98cc737764");  // Add the VMCI transport.
  CHECK(cluster_of("a556b500daa31de04468a5df1ae66c5c31c9eef5") ==
        vmci);  // Problem: ... vmci include ...
  CHECK(cluster_of("64ce6ca7727fe2c81ebc4682b298fca696385aeb") ==
        vmci);  // Problem: ... vmci enabled by default
  CHECK(gssapi != tipc);
  CHECK(tipc != vmci);
  CHECK(gssapi != vmci);

  // Communities link entities and clusters that exist.
  CHECK(db.execAndGet("SELECT count(*) FROM community_members m LEFT JOIN entities e ON "
                      "e.entity_id = m.member_id "
                      "WHERE m.member_type = 'entity' AND e.entity_id IS NULL")
            .getInt() == 0);
  CHECK(db.execAndGet("SELECT count(*) FROM community_members WHERE member_type = 'cluster'")
            .getInt() > 0);

  // A rerun with no new events changes nothing, and so does a second importance run.
  const std::string before = derived_tables(db);
  const json again = run.cluster(db, default_params());
  CHECK(again["skipped"] == true);
  CHECK(again["events_processed"] == 0);
  const json scored_again = run.importance(db);
  CHECK(scored_again["namespaces"]["libzmq"]["updated"] == 0);
  CHECK(scored_again["top_entities"] == importance["top_entities"]);
  CHECK(derived_tables(db) == before);
}

TEST_CASE("the cluster job does not depend on how events were split into runs and chunks") {
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_one = twins.first;
  SQLite::Database& db_many = twins.second;
  run.cluster(db_one, default_params());
  auto small = default_params();
  small.chunk_events = 777;
  run.cluster(db_many, small, "swe-agent");
  run.cluster(db_many, small, "libzmq");
  CHECK(derived_tables(db_many) == derived_tables(db_one));
  run.importance(db_one);
  run.importance(db_many);
  CHECK(derived_tables(db_many) == derived_tables(db_one));
}

TEST_CASE("communities are the same whether Louvain ran beside the last chunk or after it") {
  // A namespace's last chunk that stores fewer events than chunk_events starts Louvain on
  // another thread before its writes (ClusterJob::start_partition); a last chunk that is
  // exactly full leaves the detection to run() after it, on the job's thread, once the next
  // chunk finds nothing. 448 = 2 x 224 events of swe-agent and 8604 = 4 x 2151 of libzmq:
  // every namespace ends on a full chunk, so only the second path runs; the default chunk
  // (20,000) takes the first path in both.
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_beside = twins.first;
  SQLite::Database& db_after = twins.second;
  const json one = run.cluster(db_beside, default_params());
  auto exact = default_params();
  exact.chunk_events = 224;
  const json swe = run.cluster(db_after, exact, "swe-agent");
  // Under sanitizers the history is libzmq's first 2,500 commits: 2 x 1250.
  exact.chunk_events = test::kSanitized ? 1250 : 2151;
  const json zmq = run.cluster(db_after, exact, "libzmq");
  CHECK(swe["events_processed"] == 448);
  CHECK(zmq["events_processed"] == (test::kSanitized ? 2500 : 8604));
  CHECK(one["communities"]["communities_created"].get<int>() > 0);
  CHECK(one["communities"]["communities_created"].get<int>() ==
        swe["communities"]["communities_created"].get<int>() +
            zmq["communities"]["communities_created"].get<int>());
  CHECK(derived_tables(db_after) == derived_tables(db_beside));
  const std::string audit =
      "SELECT record_type, record_id, action, actor, at_us, rationale, previous FROM audit_log "
      "WHERE record_id LIKE 'community:%' ORDER BY record_id, action";
  CHECK(dump(db_after, audit) == dump(db_beside, audit));
}

TEST_CASE("a run cut between its last chunk and community detection leaves the detection owed") {
  // A SIGKILL there leaves every chunk committed (nothing left to cluster) and no communities:
  // the detection commits alone, in its own transaction. The next run must still detect them.
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_whole = twins.first;
  SQLite::Database& db_cut = twins.second;
  run.cluster(db_whole, default_params());
  run.cluster(db_cut, default_params());
  {
    // What the detection's transaction wrote, undone: the state such a kill leaves.
    SQLite::Transaction undo(db_cut);
    db_cut.exec("DELETE FROM community_members");
    // audit_log is append-only by trigger; the test steps around it to rebuild that state.
    db_cut.exec("DROP TRIGGER audit_log_no_delete");
    db_cut.exec("DELETE FROM audit_log WHERE record_id LIKE 'community:%'");
    db_cut.exec(
        "CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN "
        "SELECT RAISE(ABORT, 'audit_log is append-only'); END");
    db_cut.exec("DELETE FROM observations WHERE observation_type = 'community'");
    db_cut.exec("DELETE FROM job_state WHERE job = 'cluster' AND key = 'communities_watermark'");
    undo.commit();
  }
  REQUIRE(
      db_cut.execAndGet("SELECT count(*) FROM observations WHERE observation_type = 'community'")
          .getInt() == 0);
  const json rerun = run.cluster(db_cut, default_params());
  CHECK(rerun["events_processed"] == 0);
  CHECK(rerun["communities"]["communities_created"].get<int>() > 0);
  CHECK(derived_tables(db_cut) == derived_tables(db_whole));
  const std::string audit =
      "SELECT record_type, record_id, action, actor, at_us, rationale, previous FROM audit_log "
      "WHERE record_id LIKE "
      "'community:%' ORDER BY record_id, action";
  CHECK(dump(db_cut, audit) == dump(db_whole, audit));
  // Detected once per graph: a further run owes nothing.
  const json again = run.cluster(db_cut, default_params());
  CHECK(again["communities"]["skipped"] == true);
}

namespace {

// Runs the cluster job on `db` under a writer that always wants the lock, so that every job
// transaction ends after its `slice_ms` slice; checks that it stored `events` events and
// yielded more than 10 times.
void cluster_yielding(Runner& run, SQLite::Database& db, std::int64_t slice_ms,
                      std::int64_t events) {
  store::WriteGate gate(1, slice_ms);
  {
    test::GateContender writer(gate);
    const json result = run.cluster(db, default_params(), "", &gate);
    CHECK(result["events_processed"] == events);
  }
  INFO("job transactions " << gate.stats().job_turns.load() << ", yields "
                           << gate.stats().job_yields.load());
  CHECK(gate.stats().job_yields.load() > 10);
}

}  // namespace

TEST_CASE("the cluster job yielding to the writer at arbitrary events gives the same tables",
          "[yield]") {
  Runner run;
  TwinCorpus twins(run);
  SQLite::Database& db_alone = twins.first;
  SQLite::Database& db_yielding = twins.second;
  run.cluster(db_alone, default_params());
  cluster_yielding(run, db_yielding, 2, test::kSanitized ? 2948 : 9052);
  CHECK(derived_tables(db_yielding) == derived_tables(db_alone));
  // Relationship ids follow the events that created the edges, not where chunks ended.
  const std::string ids =
      "SELECT relationship_id, namespace, source_id, target_id, rel_type FROM "
      "entity_relationships ORDER BY relationship_id";
  CHECK(dump(db_yielding, ids) == dump(db_alone, ids));
}

TEST_CASE("a yield that drops events read ahead keeps each episode's working directory",
          "[yield]") {
  // The chunk loop reads the next batch of events while it stores the current one, and a
  // yield drops those read but not stored. Here every other event shows a new working
  // directory and the others name a file in it by its absolute path, which the extraction
  // makes relative to the working directory; given the directory of an event read after
  // it, an event keeps the absolute path, another entity.
  std::vector<std::string> lines;
  for (int i = 0; i < 6000; ++i) {
    const bool shows = i % 2 == 0;
    // Room for any int in each field: GCC's -Og under ASan proves no bound on i and warns.
    std::array<char, 64> timestamp{};
    std::snprintf(timestamp.data(), timestamp.size(), "2025-01-01T%02d:%02d:%02d+00:00", i / 3600,
                  i / 60 % 60, i % 60);
    lines.push_back(json{
        {"schema_version", 1},
        {"id", "cwd:" + std::to_string(i)},
        {"source", "agent"},
        {"kind", shows ? "result" : "call"},
        {"namespace", "cwd-test"},
        {"agent_id", "agent-1"},
        {"episode_id", "episode-" + std::to_string(i / 500)},
        {"timestamp", timestamp.data()},
        {"content", shows ? "ls\n(Current directory: /repo/dir" + std::to_string(i / 2 % 5) + ")"
                          : "edit /repo/dir" + std::to_string(i / 2 % 5) + "/module" +
                                std::to_string(i % 7) + ".py"}}
                        .dump());
  }
  test::TempDir dir;
  Runner run;
  const std::string alone = dir.file("alone.db");
  const std::string yielding = dir.file("yielding.db");
  REQUIRE(test::load_lines(alone, lines, run.clock) == 6000);
  std::filesystem::copy_file(alone, yielding);
  auto db_alone = open_writer(alone);
  auto db_yielding = open_writer(yielding);
  run.cluster(db_alone, default_params());
  // The premise: each file is named relative to the directory shown before it.
  REQUIRE(db_alone.execAndGet("SELECT count(*) FROM entities WHERE canonical_key LIKE 'file:%'")
              .getInt() == 7);
  REQUIRE(db_alone
              .execAndGet("SELECT count(*) FROM entities WHERE canonical_key GLOB "
                          "'file:module[0-6].py'")
              .getInt() == 7);
  cluster_yielding(run, db_yielding, 1, 6000);
  CHECK(derived_tables(db_yielding) == derived_tables(db_alone));
}

TEST_CASE("events arriving in two batches give the tables of one batch") {
  test::TempDir dir;
  Runner run;
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_history_corpus(a, {"swe-agent-trajectories.jsonl", "libzmq-commits.jsonl"},
                                    run.clock) == (test::kSanitized ? 2948 : 9052));
  REQUIRE(test::load_corpus(b, {"swe-agent-trajectories.jsonl"}, run.clock) == 448);
  auto db_a = open_writer(a);
  run.cluster(db_a, default_params());
  {
    auto db_b = open_writer(b);
    run.cluster(db_b, default_params());  // the first batch is clustered before the rest arrives
  }
  REQUIRE(test::load_history_corpus(b, {"libzmq-commits.jsonl"}, run.clock) ==
          (test::kSanitized ? 2500 : 8604));
  auto db_b = open_writer(b);
  run.cluster(db_b, default_params());
  CHECK(derived_tables(db_b) == derived_tables(db_a));
}

// A run with many events after a stored graph reads the namespace's edges at once
// (EntityStore::preload_edges): the tables are those of one run over every event, and an
// edge of another namespace with the same endpoints stays apart.
TEST_CASE("edges read at once before a large run give the tables of one run") {
  test::TempDir dir;
  Runner run;
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::size_t first = lines.size() / 10;
  const std::string whole = dir.file("whole.db");
  const std::string split = dir.file("split.db");
  REQUIRE(test::load_lines(whole, lines, run.clock) == lines.size());
  auto db_whole = open_writer(whole);
  const json one = run.cluster(db_whole, default_params());
  CHECK(one["edges_preloaded"] == 0);  // no edges yet: nothing to read
  REQUIRE(test::load_lines(split, {lines.begin(), lines.begin() + first}, run.clock) == first);
  {
    auto db = open_writer(split);
    run.cluster(db, default_params());
  }
  REQUIRE(test::load_lines(split, {lines.begin() + first, lines.end()}, run.clock) ==
          lines.size() - first);
  auto db_split = open_writer(split);
  const std::int64_t stored_edges =
      db_split.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  REQUIRE(stored_edges > 0);
  const json second = run.cluster(db_split, default_params());
  CHECK(second["edges_preloaded"] == stored_edges);
  CHECK(derived_tables(db_split) == derived_tables(db_whole));
}

// The edge cache is keyed by namespace too: an entity moved to another namespace keeps its
// edges in the old one, and when a run reads the old namespace's edges at once and then
// clusters events of the new one naming the same two entities, their edge there is new, as
// a lookup by (namespace, source, target, type) finds it.
TEST_CASE("edges read at once stay apart from another namespace's edge between the same entities") {
  test::TempDir dir;
  Runner run;
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::size_t first = lines.size() / 10;
  const std::string path = dir.file("moved.db");
  REQUIRE(test::load_lines(path, {lines.begin(), lines.begin() + first}, run.clock) == first);
  auto db = open_writer(path);
  run.cluster(db, default_params());
  SQLite::Statement linked(db,
                           "SELECT r.source_id, r.target_id, s.canonical_key, t.canonical_key, "
                           "r.mention_count FROM entity_relationships r JOIN entities s ON "
                           "s.entity_id = r.source_id JOIN entities t ON t.entity_id = "
                           "r.target_id WHERE r.rel_type = 'co_occurs' AND s.canonical_key LIKE "
                           "'file:%' AND t.canonical_key LIKE 'file:%' ORDER BY "
                           "r.relationship_id LIMIT 1");
  REQUIRE(linked.executeStep());
  const std::int64_t source = linked.getColumn(0).getInt64();
  const std::int64_t target = linked.getColumn(1).getInt64();
  const json names =
      json::array({linked.getColumn(2).getString(), linked.getColumn(3).getString()});
  const std::int64_t mentions = linked.getColumn(4).getInt64();
  linked.reset();
  const std::string pair = std::to_string(source) + ", " + std::to_string(target);
  db.exec("UPDATE entities SET namespace = 'zz-moved' WHERE entity_id IN (" + pair + ")");

  std::vector<std::string> more(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end());
  for (int i = 0; i < 3; ++i) {
    more.push_back(json{
        {"schema_version", 1},
        {"id", "moved:" + std::to_string(i)},
        {"source", "agent"},
        {"kind", "observation"},
        {"namespace", "zz-moved"},
        {"timestamp", "2026-01-01T10:00:0" + std::to_string(i) + "+00:00"},
        {"content", "Both files again."},
        {"entities",
         names}}.dump());
  }
  REQUIRE(test::load_lines(path, more, run.clock) == more.size());
  const json result = run.cluster(db, default_params());
  CHECK(result["edges_preloaded"].get<std::int64_t>() > 0);  // swe-agent's, read at once
  INFO(names.dump());
  CHECK(dump(db, "SELECT namespace, mention_count FROM entity_relationships WHERE source_id IN (" +
                     pair + ") AND target_id IN (" + pair +
                     ") AND rel_type = 'co_occurs' ORDER BY namespace") ==
        "swe-agent|" + std::to_string(mentions) + "|\nzz-moved|3|\n");
}

// Importance and the communities read a namespace's edges whole (for_each_stored_edge): by
// one pass over the table for a namespace with most of the edges, through the index for the
// others; either way exactly the namespace's rows.
TEST_CASE("a namespace's edges read whole are its rows, by the table or by the index") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("edges.db");
  std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const std::vector<std::string> commits = test::corpus_lines("libzmq-commits.jsonl");
  lines.insert(lines.end(), commits.begin(), commits.begin() + std::ptrdiff_t{300});
  REQUIRE(test::load_lines(path, lines, run.clock) == lines.size());
  auto db = open_writer(path);
  run.cluster(db, default_params());
  const std::int64_t all = db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  using Row = std::tuple<std::int64_t, std::int64_t, std::string, double, std::int64_t>;
  std::set<bool> ways;
  for (const std::string ns : {"swe-agent", "libzmq"}) {
    SQLite::Statement stored(db,
                             "SELECT source_id, target_id, rel_type, strength_base, "
                             "strength_ref_us FROM entity_relationships WHERE namespace = ?1 "
                             "ORDER BY source_id, target_id, rel_type");
    stored.bind(1, ns);
    std::vector<Row> expected;
    while (stored.executeStep()) {
      expected.emplace_back(stored.getColumn(0).getInt64(), stored.getColumn(1).getInt64(),
                            stored.getColumn(2).getString(), stored.getColumn(3).getDouble(),
                            stored.getColumn(4).getInt64());
    }
    REQUIRE(!expected.empty());
    std::vector<Row> read;
    jobs::for_each_stored_edge(db, ns, [&](const jobs::EntityStore::StoredStrength& e) {
      read.emplace_back(e.source_id, e.target_id, std::string(e.rel_type), e.strength_base,
                        e.strength_ref_us);
    });
    std::sort(read.begin(), read.end());
    INFO(ns);
    CHECK(read == expected);
    ways.insert(jobs::read_edges_by_table(static_cast<std::int64_t>(expected.size()), all));
  }
  CHECK(ways == std::set<bool>{false, true});  // one namespace each way
}

TEST_CASE("edge decay is a read-time closed form; sweeps report reinforced edges") {
  test::TempDir dir;
  Runner run;
  const std::string a = dir.file("a.db");
  const std::string b = dir.file("b.db");
  REQUIRE(test::load_corpus(a, {"swe-agent-trajectories.jsonl"}, run.clock) == 448);
  {
    auto db = open_writer(a);
    run.cluster(db, default_params());
  }
  std::filesystem::copy_file(a, b);
  const std::int64_t half_life = default_params().entities.edge_half_life_s;
  std::int64_t edges = 0;
  {
    auto db = open_writer(a);
    edges = db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64();
  }
  const json first = sweep(a, kNow + 10 * kDay);
  CHECK(first["edges_reinforced"] == edges);
  for (std::int64_t t = kNow + kDay; t <= kNow + 10 * kDay; t += kDay) sweep(b, t);
  CHECK(sweep(a, kNow + 10 * kDay)["edges_reinforced"] == 0);
  auto db_a = open_writer(a);
  auto db_b = open_writer(b);
  const std::string q =
      "SELECT relationship_id, strength, strength_base, strength_ref_us FROM entity_relationships "
      "ORDER BY relationship_id";
  CHECK(dump(db_a, q) == dump(db_b, q));
  // Sweeps do not rewrite edges: the stored strength stays the strength at the reference time
  // (the base), and readers evaluate the decay in closed form.
  CHECK(db_a.execAndGet("SELECT count(*) FROM entity_relationships WHERE strength != strength_base")
            .getInt64() == 0);
  SQLite::Statement row(db_a,
                        "SELECT strength_base, strength_ref_us FROM entity_relationships "
                        "ORDER BY relationship_id LIMIT 1");
  REQUIRE(row.executeStep());
  const double base = row.getColumn(0).getDouble();
  const std::int64_t ref = row.getColumn(1).getInt64();
  CHECK(jobs::edge_strength_at(base, ref, ref + 2 * half_life * kSecond, half_life) ==
        Approx(base / 4));
}

TEST_CASE("a sweep counts exactly the edges the cluster job wrote since the previous sweep") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("a.db");
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const auto half = lines.begin() + static_cast<std::ptrdiff_t>(lines.size() / 2);
  REQUIRE(test::load_lines(path, {lines.begin(), half}, run.clock) == lines.size() / 2);
  {
    auto db = open_writer(path);
    run.cluster(db, default_params());
  }
  const std::string edges_sql =
      "SELECT relationship_id, mention_count, last_evidence_seq FROM entity_relationships "
      "ORDER BY relationship_id";
  std::string before;
  {
    auto db = open_writer(path);
    before = dump(db, edges_sql);
    REQUIRE(db.execAndGet("SELECT count(*) FROM entity_relationships").getInt64() > 100);
  }
  CHECK(sweep(path, kNow)["edges_reinforced"] == std::count(before.begin(), before.end(), '\n'));
  CHECK(sweep(path, kNow + kDay)["edges_reinforced"] == 0);

  // The second half of the same trajectories reinforces some of the edges and adds others:
  // the count is the rows the cluster job inserted or changed, whatever their seq.
  REQUIRE(test::load_lines(path, {half, lines.end()}, run.clock) ==
          lines.size() - lines.size() / 2);
  std::int64_t written = 0;
  std::int64_t unchanged = 0;
  {
    auto db = open_writer(path);
    run.cluster(db, default_params());
    std::istringstream old_rows(before);
    std::set<std::string> kept;
    for (std::string row; std::getline(old_rows, row);) kept.insert(row);
    std::istringstream new_rows(dump(db, edges_sql));
    for (std::string row; std::getline(new_rows, row);) ++(kept.count(row) ? unchanged : written);
  }
  REQUIRE(written > 0);
  REQUIRE(unchanged > 0);
  CHECK(sweep(path, kNow + 2 * kDay)["edges_reinforced"] == written);
  CHECK(sweep(path, kNow + 3 * kDay)["edges_reinforced"] == 0);
}

TEST_CASE("migration 17: the sweep's count resumes from the flags a version 16 database kept") {
  test::TempDir dir;
  const std::string path = dir.file("old.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(store::migrate(db, 16) == 16);
    // Foreign keys are off on this connection: the edges need no events or entities here.
    // Namespace a was swept through seq 40 and reinforced since at 41 and 57; b never swept.
    db.exec(
        "INSERT INTO entity_relationships (namespace, source_id, target_id, rel_type, strength, "
        "strength_base, strength_ref_us, mention_count, evidence_seq, last_evidence_seq, "
        "valid_from_us, unswept) VALUES "
        "('a', 1, 2, 'co_mentioned', 0.1, 0.1, 0, 1, 10, 10, 0, 0), "
        "('a', 1, 3, 'co_mentioned', 0.1, 0.1, 0, 1, 12, 40, 0, 0), "
        "('a', 2, 3, 'co_mentioned', 0.1, 0.1, 0, 1, 12, 41, 0, 1), "
        "('a', 3, 4, 'co_mentioned', 0.1, 0.1, 0, 1, 57, 57, 0, 1), "
        "('b', 5, 6, 'co_mentioned', 0.1, 0.1, 0, 1, 3, 3, 0, 1)");
  }
  CHECK(sweep(path, kNow)["edges_reinforced"] == 3);
  {
    auto db = open_writer(path);
    CHECK(dump(db, "SELECT * FROM decay_edge_watermarks ORDER BY namespace") == "a|57|\nb|3|\n");
    CHECK(db.execAndGet("SELECT count(*) FROM pragma_table_info('entity_relationships') WHERE "
                        "name = 'unswept'")
              .getInt() == 0);
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_master WHERE name = "
                        "'entity_relationships_unswept'")
              .getInt() == 0);
    CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
    // A database set back to 16 migrates again without a change.
    db.exec("PRAGMA user_version = 16");
    REQUIRE(store::migrate(db) == store::latest_schema_version());
    CHECK(dump(db, "SELECT * FROM decay_edge_watermarks ORDER BY namespace") == "a|57|\nb|3|\n");
  }
  CHECK(sweep(path, kNow + kDay)["edges_reinforced"] == 0);
}

// A conversation's party is one entity: the publishing agent, the speaker prefix, the bare
// name others call them by and a nickname that begins their name.
TEST_CASE("a conversation's speakers are one entity each, nicknames included") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("parties.db");
  const std::vector<std::string> lines = {
      R"({"kind":"conversation","namespace":"chat","agent_id":"Melanie","content":"Melanie: I saw Caro at the lake.","timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"conversation","namespace":"chat","agent_id":"Caroline","content":"Caroline: Hey Mel, I went to a support group on Friday.","timestamp":"2026-11-01T10:01:00Z"})",
      R"({"kind":"conversation","namespace":"chat","agent_id":"Melanie","content":"Melanie: Well done Caroline. Tell me more, Caro.","timestamp":"2026-11-01T10:02:00Z"})",
      // "Ca" is too short to be a nickname, "Carla" does not begin "Caroline".
      R"({"kind":"conversation","namespace":"chat","agent_id":"Caroline","content":"Caroline: I told Ca and Carla.","timestamp":"2026-11-01T10:03:00Z"})",
  };
  REQUIRE(test::load_lines(path, lines, run.clock) == 4);
  {
    auto db = open_writer(path);
    // "Caro" was named before Caroline spoke: its entity merges at the end of the same run.
    CHECK(run.cluster(db, default_params())["merges_executed"] == 1);
    CHECK(dump(db, "SELECT alias, canonical_key, origin FROM entity_aliases ORDER BY 1") ==
          "agent:caroline|person:caroline|declared|\nagent:melanie|person:melanie|declared|\n"
          "name:caro|person:caroline|nickname|\nname:caroline|person:caroline|declared|\n"
          "name:mel|person:melanie|nickname|\nname:melanie|person:melanie|declared|\n");
    CHECK(dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "name:ca|1|\nname:carla|1|\nperson:caroline|4|\nperson:melanie|3|\n");
  }
  CHECK(sweep(path, kNow)["merges_executed"] == 0);
}

// An alias declared after the alias had mentions of its own merges them into the canonical
// entity at the end of the cluster run that learnt it, before communities are detected (seed
// 003 MemifyResult.merges_executed; jobs/entity_merge.hpp).
TEST_CASE("a declared alias merges the alias's earlier mentions and edges in the cluster run") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("merge.db");
  const std::vector<std::string> lines = {
      R"({"kind":"observation","namespace":"team","content":"Mel fixed the build",
          "entities":["person:Mel","repo:zmq"],"timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"observation","namespace":"team","content":"Melanie reviewed the fix",
          "entities":["person:Melanie","repo:zmq"],"timestamp":"2026-11-01T11:00:00Z"})",
      R"({"kind":"observation","namespace":"team","content":"mel is short for melanie",
          "entities":["person:Mel"],"relations":[{"predicate":"alias_of","target":"person:Melanie"}],
          "timestamp":"2026-11-01T12:00:00Z"})",
  };
  std::vector<std::string> one_line;
  for (std::string line : lines) {
    std::erase(line, '\n');
    one_line.push_back(line);
  }
  REQUIRE(test::load_lines(path, one_line, run.clock) == 3);
  {
    auto db = open_writer(path);
    // The third event's mention resolved through the alias as it was learnt; the first
    // event's person:mel merged after the last chunk.
    CHECK(run.cluster(db, default_params())["merges_executed"] == 1);
    CHECK(dump(db, "SELECT alias, canonical_key, origin FROM entity_aliases ORDER BY 1") ==
          "name:mel|person:melanie|declared|\nname:melanie|person:melanie|declared|\n"
          "person:mel|person:melanie|declared|\n");
  }
  CHECK(sweep(path, kNow)["merges_executed"] == 0);
  auto db = open_writer(path);
  CHECK(dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
        "person:melanie|3|\nrepo:zmq|2|\n");
  CHECK(dump(db,
             "SELECT ee.seq, e.canonical_key, ee.is_primary FROM event_entities ee JOIN entities "
             "e USING (entity_id) ORDER BY 1, 2") ==
        "1|person:melanie|1|\n1|repo:zmq|1|\n2|person:melanie|1|\n2|repo:zmq|1|\n"
        "3|person:melanie|1|\n");
  // The two co_occurs edges became one, from the smaller key to the larger, with both
  // mentions and the first evidence.
  CHECK(dump(db,
             "SELECT s.canonical_key, t.canonical_key, r.rel_type, r.mention_count, "
             "r.evidence_seq, r.last_evidence_seq FROM entity_relationships r JOIN entities s ON "
             "s.entity_id = r.source_id JOIN entities t ON t.entity_id = r.target_id") ==
        "person:melanie|repo:zmq|co_occurs|2|1|2|\n");
  CHECK(dump(db,
             "SELECT record_type, record_id, action, actor, json_extract(previous, "
             "'$.into'), json_extract(previous, '$.moved.mentions_moved'), "
             "json_extract(previous, '$.moved.edges_joined') FROM audit_log WHERE action = "
             "'merge'") == "entity|person:mel|merge|job:cluster|person:melanie|1|1|\n");
  SQLite::Statement dangling(db, "PRAGMA foreign_key_check");
  CHECK(!dangling.executeStep());
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
  CHECK(sweep(path, kNow + kDay)["merges_executed"] == 0);
}

// Entity, relationship and cluster ids are assigned in event order since migration 42; an older
// database's ids were assigned in run order, so the migration marks each namespace with derived
// state for a clear that the daemon runs, and the jobs rebuild, at its first start.
TEST_CASE("migration 42 marks every namespace with derived state for a clear") {
  test::TempDir dir;
  Runner run;
  const std::string path = dir.file("upgrade.db");
  const std::vector<std::string> lines = {
      R"({"kind":"observation","namespace":"team","content":"Mel fixed the build","entities":["person:Mel","repo:zmq"],"timestamp":"2026-11-01T10:00:00Z"})",
      R"({"kind":"observation","namespace":"ops","content":"Disk full on the runner","entities":["host:runner"],"timestamp":"2026-11-01T11:00:00Z"})",
      R"({"kind":"observation","namespace":"idle","content":"Nothing derived here yet","timestamp":"2026-11-01T12:00:00Z"})",
  };
  REQUIRE(test::load_lines(path, lines, run.clock) == 3);
  auto db = open_writer(path);
  run.cluster(db, default_params(), "team");
  run.cluster(db, default_params(), "ops");
  CHECK(db.execAndGet("SELECT count(*) FROM derived_clears").getInt() == 0);
  db.exec("PRAGMA user_version = 41");
  REQUIRE(store::migrate(db) == store::latest_schema_version());
  CHECK(dump(db, "SELECT namespace, requested_us FROM derived_clears ORDER BY 1") ==
        "ops|0|\nteam|0|\n");
}
