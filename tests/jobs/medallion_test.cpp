// Medallions (seed 001): validation, scope queries (ANCHORS §4 cases), the refresh job on the
// real streams, and the read surface agents use (search, reinforce, events) over real sockets.

#include <catch2/catch.hpp>

#include <set>
#include <tuple>

#include "common/sha256.hpp"
#include "common/timestamp.hpp"
#include "daemon/settings.hpp"
#include "jobs/commit_decisions.hpp"
#include "jobs/consolidation.hpp"
#include "jobs/medallion.hpp"
#include "store/database.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"

using namespace reflectd;
using nlohmann::json;

namespace {

constexpr std::int64_t kSecond = 1'000'000;
constexpr std::int64_t kNow = 1'795'219'200 * kSecond;  // 2026-11-21T00:00:00Z

json valid_medallion() {
  return json::parse(R"({
    "meta": {"medallion_id": "med-001", "schema_version": "medallion.v1", "model": "gpt-4",
             "created_at": "2025-01-01T12:00:00Z", "updated_at": "2025-01-01T12:00:00Z", "status": "active"},
    "scope": {"graph_nodes": ["repo:muse"], "tags": ["project_state"]},
    "summary": {"high_level": "Project Muse is a semantic checkpointing system...",
                "subsystems": [{"name": "Store", "status": "stable", "notes": "SQLite backend implemented"}]},
    "decisions": [{"id": "D-001", "statement": "Use Python 3.11+", "rationale": "Modern type hints", "confidence": 0.9}],
    "open_questions": [{"id": "Q-001", "question": "Should we add vector search?", "blocked_on": ["benchmark"], "priority": "medium"}],
    "affordances": {"recommended_entry_points": ["Start from types.py"], "avoid_repeating": [], "invariants": null}})");
}

json run_job(SQLite::Database& db, const Clock& clock, const jobs::MedallionParams& params,
             std::vector<json>* published = nullptr) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{
      db, clock, cancel, "", "demand", 0, [&](const std::string& topic, const json& payload) {
        if (published != nullptr && topic == "medallion.updated") published->push_back(payload);
      }};
  return jobs::run_medallion_refresh(ctx, params);
}

json consolidate(SQLite::Database& db, const Clock& clock) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
  return jobs::run_consolidation(ctx, daemon::consolidation_params(config::defaults()));
}

json stored(SQLite::Database& db, const std::string& id) {
  SQLite::Statement query(db, "SELECT content_json FROM medallions WHERE id = ?1");
  query.bind(1, id);
  REQUIRE(query.executeStep());
  return json::parse(query.getColumn(0).getString());
}

}  // namespace

TEST_CASE("seed 001 validation rules") {
  CHECK(jobs::validate_medallion(valid_medallion()).empty());
  struct Case {
    const char* pointer;
    json value;
    const char* error;
  };
  const std::vector<Case> cases{
      {"/decisions/0/confidence", 1.5, "decisions[].confidence: must be between 0.0 and 1.0"},
      {"/decisions/0/confidence", -0.1, "decisions[].confidence: must be between 0.0 and 1.0"},
      {"/open_questions/0/priority", "urgent",
       "open_questions[].priority: must be low, medium or high"},
      {"/meta/updated_at", "2024-12-31T12:00:00Z", "meta.updated_at: must be >= created_at"},
      {"/meta/status", "archived", "meta.status: must be active, stale or superseded"},
      {"/summary/high_level", std::string(301, 'x'), "summary.high_level: at most 300 characters"},
      {"/summary/subsystems/0/status", "done",
       "summary.subsystems[].status: must be unknown, stable, in_progress or deprecated"},
      {"/scope/tags", "project_state", "scope.tags: must be an array of strings"},
      {"/decisions/0/statement", nullptr, "decisions[].statement: required string"},
  };
  for (const auto& c : cases) {
    INFO(c.pointer);
    json m = valid_medallion();
    m[json::json_pointer(c.pointer)] = c.value;
    const auto errors = jobs::validate_medallion(m);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == c.error);
  }
  CHECK(jobs::validate_medallion(json::parse(R"({"meta": {}})")).size() > 3);
}

TEST_CASE("configured scopes parse or fail precisely") {
  const auto scope = jobs::parse_medallion_scope(
      "name=core;namespace=libzmq;nodes=module:src, file:src/ctx.cpp;tags=core");
  CHECK(scope.name == "core");
  CHECK(scope.ns == "libzmq");
  CHECK(scope.graph_nodes == std::vector<std::string>{"module:src", "file:src/ctx.cpp"});
  CHECK(scope.tags == std::vector<std::string>{"core"});
  CHECK_THROWS_WITH(jobs::parse_medallion_scope("namespace=x;tags=a"), "a scope needs name=<id>");
  CHECK_THROWS_WITH(jobs::parse_medallion_scope("name=x"), "scope x needs nodes= or tags=");
  CHECK_THROWS_WITH(jobs::parse_medallion_scope("name=x;colour=red"),
                    "unknown scope field 'colour' (name, namespace, nodes, tags)");
}

TEST_CASE("scope queries: the anchors' cases, in C++ and through the control socket's SQL") {
  const std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>>
      stored_scopes{{"med-1", {"muse", "cli"}, {"project_state"}},
                    {"med-2", {"muse", "cli", "store"}, {"project_state", "refactor"}},
                    {"med-3", {"other", "api"}, {"project_state"}},
                    {"med-4", {"muse"}, {"project_state"}},
                    {"med-5", {"muse", "cli", "store", "api"}, {"refactor"}}};
  const std::vector<
      std::tuple<std::vector<std::string>, std::vector<std::string>, std::set<std::string>>>
      queries{{{"muse"}, {"project_state"}, {"med-1", "med-2", "med-4"}},
              {{"muse", "cli"}, {"project_state"}, {"med-1", "med-2"}},
              {{}, {"refactor"}, {"med-2", "med-5"}},
              {{"muse", "cli", "store"}, {"project_state"}, {"med-2"}},
              {{"unknown"}, {"project_state"}, {}}};
  for (const auto& [nodes, tags, expected] : queries) {
    std::set<std::string> found;
    for (const auto& [id, m_nodes, m_tags] : stored_scopes) {
      if (jobs::scope_matches(nodes, tags, m_nodes, m_tags)) found.insert(id);
    }
    CHECK(found == expected);
  }

  test::TempDir dir;
  auto config = test::loopback_config(dir);
  {
    auto db = store::open_database({config.store.path, "full", 5000}, store::Access::kWriter);
    for (const auto& [id, nodes, tags] : stored_scopes) {
      json m = valid_medallion();
      m["meta"]["medallion_id"] = id;
      m["scope"] = {{"graph_nodes", nodes}, {"tags", tags}};
      SQLite::Statement insert(
          db,
          "INSERT INTO medallions (id, content_json, created_at, updated_at, status, "
          "scope_graph_nodes, scope_tags) VALUES (?1, ?2, 'x', 'x', 'active', ?3, ?4)");
      insert.bind(1, id);
      insert.bind(2, m.dump());
      insert.bind(3, json(nodes).dump());
      insert.bind(4, json(tags).dump());
      insert.exec();
      for (const auto& node : nodes) {
        db.exec("INSERT INTO medallion_nodes VALUES ('" + id + "', '" + node + "')");
      }
      for (const auto& tag : tags)
        db.exec("INSERT INTO medallion_tags VALUES ('" + id + "', '" + tag + "')");
    }
  }
  config.jobs.medallion.enabled = false;
  test::RunningDaemon running(config);
  zmq::context_t context;
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  for (const auto& [nodes, tags, expected] : queries) {
    const auto reply = test::control(
        control, {{"cmd", "medallion"}, {"action", "query"}, {"nodes", nodes}, {"tags", tags}});
    REQUIRE(reply["ok"] == true);
    std::set<std::string> found;
    for (const auto& m : reply["medallions"]) found.insert(m["id"].get<std::string>());
    CHECK(found == expected);
  }
  // Old matches are never missed (the seed's store fetched only the latest limit x 5 rows).
  const auto reply = test::control(control, {{"cmd", "medallion"},
                                             {"action", "query"},
                                             {"nodes", {"muse"}},
                                             {"tags", json::array()},
                                             {"limit", 1000}});
  CHECK(reply["medallions"].size() == 4);
}

TEST_CASE("medallion refresh on the real streams") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string path = dir.file("m.db");
  REQUIRE(test::load_corpus(path, {"libzmq-commits.jsonl", "swe-agent-trajectories.jsonl"},
                            clock) == 9052);
  auto db = store::open_database({path, "normal", 5000}, store::Access::kWriter);
  consolidate(db, clock);
  jobs::MedallionParams params;
  params.scopes.push_back(jobs::parse_medallion_scope(
      "name=libzmq-core;namespace=libzmq;nodes=module:src,module:tests;tags=core"));
  std::vector<json> published;
  const json result = run_job(db, clock, params, &published);
  CHECK(result["medallions_refreshed"] == 3);
  REQUIRE(published.size() == 3);
  CHECK(published[0]["id"] == "med:libzmq");

  const json m = stored(db, "med:libzmq");
  INFO(m.dump(2).substr(0, 3000));
  CHECK(jobs::validate_medallion(m).empty());
  CHECK(m["meta"]["model"] == "reflectd-extractive/1");
  CHECK(m["meta"]["knowledge_min_ts"] == "2009-07-29T10:07:54.000000Z");
  CHECK(m["scope"]["tags"] == json::array({"libzmq"}));
  const std::string high = m["summary"]["high_level"];
  CHECK(high.size() <= 300);
  CHECK(high.starts_with("Namespace libzmq: 8604 events from 2009-07-29 to 2026-07-20."));
  CHECK_THAT(high, Catch::Contains(" Last decided (2026-07-20): Change policy and direct "));
  // Decisions in the words of their commits (jobs/commit_decisions.hpp, the Problem/Solution
  // rule), ranked by importance: never merge boilerplate or routine work.
  REQUIRE(m["decisions"].size() == 10);
  // An item's id is its kind and 8 hex digits of its source record's SHA-256.
  for (const auto& d : m["decisions"]) {
    CHECK(d["id"] ==
          "D-" + sha256_hex(d["x_reflectd"]["source_id"].get<std::string>()).substr(0, 8));
  }
  CHECK(m["decisions"][0]["statement"] == "Move the pipe termination code to socket_base_t");
  CHECK_THAT(m["decisions"][0]["rationale"].get<std::string>(),
             Catch::StartsWith("So far, the pipe termination code was spread among socket type "
                               "classes"));
  for (const auto& d : m["decisions"]) {
    const std::string id = d["x_reflectd"]["source_id"];
    CHECK_THAT(id, Catch::StartsWith("decision:git:libzmq:"));
    CHECK(d["confidence"].get<double>() >= 0.3);
    CHECK(d["confidence"].get<double>() <= 1.0);
    const std::string statement = d["statement"];
    CHECK(statement.find("Merge pull request") == std::string::npos);
    CHECK(!jobs::is_routine_change(statement));
    // Its opening words are the commit's own (the first letter may be capitalised; a short
    // solution is stated after its problem, "Problem text: solution").
    const std::string message =
        db.execAndGet("SELECT lower(content) FROM events WHERE uid = '" + id.substr(9) + "'")
            .getString();
    std::string opening =
        statement.substr(0, std::min({std::size_t{30}, statement.size(), statement.find(": ")}));
    for (char& c : opening) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    INFO(statement);
    CHECK(message.find(opening) != std::string::npos);
  }
  // Every problem of the history was solved by its own commit; what is open are the newest
  // reverted changes that no later commit took up again (the third, "Removed unreachable code
  // paths" of 2019, was).
  REQUIRE(m["open_questions"].size() == 2);
  CHECK(m["open_questions"][0]["question"] ==
        "Reverted on 2022-05-10 and not redone since: \"Fix the recently updated scripts\". "
        "Another way, or dropped?");
  CHECK(m["open_questions"][1]["question"] ==
        "Reverted on 2023-10-25 and not redone since: \"Add forgotten test_pubsub. Currently "
        "only tests NORM if built\". Another way, or dropped?");
  CHECK(m["open_questions"][1]["priority"] == "low");
  CHECK_THAT(high, Catch::EndsWith(" Open: Reverted on 2022-05-10 and not redone since: \"Fix "
                                   "the recently..."));
  // Ids of decisions and questions resolve to real events.
  for (const auto& item : {m["decisions"], m["open_questions"]}) {
    for (const auto& entry : item) {
      for (const auto& seq : entry["x_reflectd"]["evidence_event_ids"]) {
        CHECK(db.execAndGet("SELECT count(*) FROM events WHERE seq = " +
                            std::to_string(seq.get<std::int64_t>()))
                  .getInt() == 1);
      }
    }
  }
  // Failed approaches first (changes that were reverted, newest first), then recurring
  // problems.
  const json& avoid = m["affordances"]["avoid_repeating"];
  REQUIRE(avoid.size() == 5);
  CHECK(avoid[0] ==
        "Avoid repeating: Add forgotten test_pubsub. Currently only tests NORM if built "
        "(reverted, 2023-10-25)");
  CHECK(avoid[3] == "Avoid repeating: tests without test framework (seen 17 times)");
  // Entry points are files and modules, never the pseudonymous ids of authors; no title or text
  // of the medallion is a label of the machinery.
  for (const auto& entry : m["affordances"]["recommended_entry_points"]) {
    CHECK(entry.get<std::string>().find("agent:") == std::string::npos);
  }
  const std::string whole = m.dump();
  CHECK(whole.find("Hypothesis for") == std::string::npos);
  CHECK(whole.find("Community of") == std::string::npos);
  CHECK(db.execAndGet("SELECT count(*) FROM observations WHERE title LIKE '%dev-%' OR text LIKE "
                      "'%agent:dev-%' OR title LIKE 'Community of%'")
            .getInt() == 0);
  CHECK(
      db.execAndGet("SELECT count(*) FROM knowledge WHERE title LIKE 'Hypothesis for%'").getInt() ==
      0);
  for (const auto& text : avoid) CHECK(text.get<std::string>().find("<n>") == std::string::npos);
  // The trajectories: a decision per solved task, the unsolved problem as an open question.
  const json swe = stored(db, "med:swe-agent");
  REQUIRE(swe["decisions"].size() == 10);
  const auto timedelta =
      std::find_if(swe["decisions"].begin(), swe["decisions"].end(), [](const json& d) {
        return d["statement"] ==
               "To fix this issue, we should ensure that the division results in a float, and "
               "then round the result to the nearest integer before converting it to an int.";
      });
  REQUIRE(timedelta != swe["decisions"].end());
  CHECK((*timedelta)["rationale"] == "TimeDelta serialization precision");
  REQUIRE(swe["open_questions"].size() == 1);
  CHECK(swe["open_questions"][0]["question"] ==
        "How to solve \"SyntaxError: invalid syntax\"? Raised 2024-12-10, no success since.");
  // The configured scope holds only its nodes' knowledge.
  const json core = stored(db, "med:libzmq-core");
  REQUIRE(core["decisions"].size() == 10);
  for (const auto& d : core["decisions"]) {
    const std::string target = db.execAndGet("SELECT target FROM knowledge WHERE decision_id = '" +
                                             d["x_reflectd"]["source_id"].get<std::string>() + "'")
                                   .getString();
    CHECK((target == "src" || target == "tests"));
  }

  SECTION("entity summaries are extractive and refreshed only when their entity changed") {
    std::atomic<bool> stopping{false};
    jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
    for (auto& job : daemon::build_jobs(config::defaults())) {
      if (job.name != "cluster" && job.name != "importance") continue;
      jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}};
      job.run(ctx);
    }
    db.exec("UPDATE medallions SET status = 'stale'");
    const json first = run_job(db, clock, params);
    CHECK(first["summaries_refreshed"].get<int>() > 100);
    const std::string src =
        db.execAndGet(
              "SELECT summary_text FROM entities WHERE namespace = 'libzmq' AND "
              "canonical_key = 'module:src'")
            .getString();
    CHECK_THAT(src, Catch::StartsWith("src (module): ") && Catch::Contains("Most salient: \"") &&
                        Catch::Contains("Strongest links: "));
    // What was decided on the module, newest first, and what was reverted.
    CHECK_THAT(src, Catch::Contains(". Decided: On Windows platform, implement custom WSA error "
                                    "to errno translation in the poll() function.") &&
                        Catch::Contains(" Reverted: Removed unreachable code paths"));
    const json second = run_job(db, clock, params);
    CHECK(second["summaries_refreshed"] == 0);
    CHECK(second["summaries_skipped"] ==
          first["summaries_refreshed"].get<int>() + first["summaries_skipped"].get<int>());
  }
  SECTION("a refresh with no new events changes nothing") {
    const std::string before = stored(db, "med:libzmq").dump();
    clock.advance_us(3600 * kSecond);
    CHECK(run_job(db, clock, params)["medallions_refreshed"] == 0);
    CHECK(stored(db, "med:libzmq").dump() == before);
  }
  SECTION("a listed record that changes with no new event refreshes the medallion once") {
    const json before = stored(db, "med:libzmq");
    const std::string source = before["decisions"][0]["x_reflectd"]["source_id"];
    SQLite::Statement retitle(db,
                              "UPDATE knowledge SET title = 'Keep pipe termination in "
                              "socket_base_t' WHERE decision_id = ?1");
    retitle.bind(1, source);
    REQUIRE(retitle.exec() == 1);
    clock.advance_us(60 * kSecond);
    // med:libzmq and the configured med:libzmq-core, whose nodes name the decision's target.
    const json refreshed = run_job(db, clock, params);
    CHECK(refreshed["medallions_refreshed"] == 2);
    CHECK(stored(db, "med:libzmq-core")["meta"]["x_reflectd"]["refresh_reason"] ==
          "records in scope changed");
    const json after = stored(db, "med:libzmq");
    CHECK(after["meta"]["x_reflectd"]["refresh_reason"] == "records in scope changed");
    CHECK(after["decisions"][0]["statement"] == "Keep pipe termination in socket_base_t");
    CHECK(after["decisions"][0]["id"] == before["decisions"][0]["id"]);
    clock.advance_us(60 * kSecond);
    CHECK(run_job(db, clock, params)["medallions_refreshed"] == 0);
    CHECK(stored(db, "med:libzmq") == after);
  }
  SECTION("new events: same id, same created_at, later updated_at, stable item ids, history kept") {
    const json before = stored(db, "med:libzmq");
    clock.advance_us(60 * kSecond);
    db.exec(
        "UPDATE medallions SET status = 'stale' WHERE id = 'med:libzmq'");  // what the writer does
    CHECK(run_job(db, clock, params)["medallions_refreshed"] == 1);
    const json after = stored(db, "med:libzmq");
    CHECK(after["meta"]["medallion_id"] == before["meta"]["medallion_id"]);
    CHECK(after["meta"]["created_at"] == before["meta"]["created_at"]);
    CHECK(*parse_rfc3339_us(after["meta"]["updated_at"].get<std::string>()) >
          *parse_rfc3339_us(before["meta"]["updated_at"].get<std::string>()));
    CHECK(after["decisions"][0]["id"] == before["decisions"][0]["id"]);
    CHECK(after["decisions"] == before["decisions"]);
    CHECK(db.execAndGet("SELECT count(*) FROM medallion_history WHERE medallion_id = 'med:libzmq'")
              .getInt() == 1);
    // Re-checkpointing three times keeps one id and strictly increasing updated_at, even when
    // the clock does not move.
    std::string last = after["meta"]["updated_at"];
    for (int i = 0; i < 3; ++i) {
      db.exec("UPDATE medallions SET status = 'stale' WHERE id = 'med:libzmq'");
      run_job(db, clock, params);
      const std::string next = stored(db, "med:libzmq")["meta"]["updated_at"];
      CHECK(*parse_rfc3339_us(next) > *parse_rfc3339_us(last));
      last = next;
    }
    CHECK(db.execAndGet("SELECT count(*) FROM medallions WHERE id = 'med:libzmq'").getInt() == 1);
  }
}

TEST_CASE("a medallion's span is kept, extended by new events, read whole after a change") {
  test::TempDir dir;
  FakeClock clock(kNow);
  const std::string path = dir.file("m.db");
  const std::vector<std::string> lines = test::corpus_lines("swe-agent-trajectories.jsonl");
  const auto part = [&](std::size_t k) {  // the k-th of four parts of the stream
    return std::vector<std::string>(
        lines.begin() + static_cast<std::ptrdiff_t>(k * lines.size() / 4),
        lines.begin() + static_cast<std::ptrdiff_t>((k + 1) * lines.size() / 4));
  };
  REQUIRE(test::load_lines(path, part(0), clock) == part(0).size());
  auto db = store::open_database({path, "normal", 5000}, store::Access::kWriter);
  const jobs::MedallionParams params;
  // The medallion against a full read of its scope's active events, and the kept span.
  const auto check_span = [&](const std::string& step) {
    INFO(step);
    REQUIRE(run_job(db, clock, params)["medallions_refreshed"] == 1);
    SQLite::Statement full(db,
                           "SELECT count(*), min(ts_us), max(ts_us), (SELECT max(seq) FROM events) "
                           "FROM events WHERE namespace = 'swe-agent' AND status = 'active'");
    REQUIRE(full.executeStep());
    const json m = stored(db, "med:swe-agent");
    CHECK(m["meta"]["x_reflectd"]["events"] == full.getColumn(0).getInt64());
    CHECK(m["meta"]["knowledge_min_ts"] == format_rfc3339_us(full.getColumn(1).getInt64()));
    CHECK(m["meta"]["knowledge_max_ts"] == format_rfc3339_us(full.getColumn(2).getInt64()));
    SQLite::Statement kept(db,
                           "SELECT through_seq, events, min_ts_us, max_ts_us FROM medallion_spans "
                           "WHERE namespace = 'swe-agent'");
    REQUIRE(kept.executeStep());
    CHECK(kept.getColumn(0).getInt64() == full.getColumn(3).getInt64());
    CHECK(kept.getColumn(1).getInt64() == full.getColumn(0).getInt64());
    CHECK(kept.getColumn(2).getInt64() == full.getColumn(1).getInt64());
    CHECK(kept.getColumn(3).getInt64() == full.getColumn(2).getInt64());
  };
  check_span("first refresh: read whole");
  REQUIRE(test::load_lines(path, part(1), clock) == part(1).size());
  check_span("new events: the kept span extended");

  // Changes of stored events a kept span cannot follow: the oldest and the newest active
  // events archived, an event moved before all others, an event deleted.
  db.exec(
      "UPDATE events SET status = 'archived' WHERE seq IN (SELECT seq FROM events WHERE status = "
      "'active' ORDER BY ts_us LIMIT 3)");
  db.exec(
      "UPDATE events SET status = 'archived' WHERE seq = (SELECT seq FROM events WHERE status = "
      "'active' ORDER BY ts_us DESC LIMIT 1)");
  REQUIRE(test::load_lines(path, part(2), clock) == part(2).size());
  check_span("archived events");
  db.exec(
      "UPDATE events SET ts_us = ts_us - 400 * 86400000000 WHERE seq = (SELECT max(seq) FROM "
      "events WHERE status = 'active')");
  db.exec("UPDATE medallions SET status = 'stale'");
  check_span("an event's time changed");
  db.exec(
      "DELETE FROM events WHERE seq = (SELECT seq FROM events WHERE status = 'active' ORDER BY "
      "ts_us DESC LIMIT 1)");
  db.exec("UPDATE medallions SET status = 'stale'");
  check_span("an event deleted");

  // What a refresh extends is the kept span: an altered one shows through.
  db.exec("UPDATE medallion_spans SET events = events + 1000");
  const std::int64_t before = stored(db, "med:swe-agent")["meta"]["x_reflectd"]["events"];
  REQUIRE(test::load_lines(path, part(3), clock) == part(3).size());
  REQUIRE(run_job(db, clock, params)["medallions_refreshed"] == 1);
  CHECK(stored(db, "med:swe-agent")["meta"]["x_reflectd"]["events"] ==
        before + 1000 + static_cast<std::int64_t>(part(3).size()));
}

TEST_CASE("the read surface over the control socket: search, reinforce, events, stale marking") {
  test::TempDir dir;
  auto config = test::loopback_config(dir);
  config.jobs.consolidate.enabled = false;
  config.jobs.medallion.interval_s = 604800;  // runs only when asked below
  config.jobs.medallion.idle_s = 0;
  config.jobs.decay.enabled = false;
  test::RunningDaemon running(config);
  zmq::context_t context;
  auto dealer =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().ingest.at(0));
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  REQUIRE(
      test::ingest(
          dealer,
          R"([{"id":"a","kind":"error","namespace":"n","content":"socket reconnect fails after timeout"},
                                   {"id":"b","kind":"result","namespace":"n","content":"reconnect works with a longer interval"},
                                   {"id":"d","kind":"decision","namespace":"n","content":"retry reconnects",
                                    "context":{"title":"Retry","target":"socket","rationale":"transient failures are common"}}])")
          ["ok"] == true);

  auto search =
      test::control(control, {{"cmd", "search"}, {"text", "reconnect"}, {"namespace", "n"}});
  REQUIRE(search["ok"] == true);
  // An idle writer indexes before it acknowledges: nothing trails.
  CHECK(search["indexed_through_seq"] == 3);
  CHECK(search["lag_events"] == 0);
  // The index stems (porter, migration 24): "reconnects" matches "reconnect" too.
  REQUIRE(search["results"].size() == 3);
  for (const auto& r : search["results"]) {
    CHECK(r.contains("id"));
    CHECK(r.contains("score"));
    CHECK(r.contains("status"));
    CHECK(r.contains("preview"));
    CHECK(r.contains("kind"));
  }
  // User text is never parsed as FTS5 syntax.
  CHECK(test::control(control, {{"cmd", "search"}, {"text", "\"*) ("}})["error"] ==
        "search: \"text\" must contain a word");
  CHECK(test::control(control, {{"cmd", "search"}, {"text", "\"*) OR NEAR("}})["ok"] == true);
  CHECK(test::control(control, {{"cmd", "search"}, {"text", "socket AND NOT"}})["ok"] == true);

  // A hit reinforces; a misleading report penalises; unknown ids are errors.
  auto hit = test::control(control, {{"cmd", "reinforce"}, {"id", "d"}, {"useful", true}});
  REQUIRE(hit["ok"] == true);
  CHECK(hit["reinforced"]["record_type"] == "knowledge");
  CHECK(hit["reinforced"]["hit_count"] == 1);
  auto event_hit = test::control(control, {{"cmd", "reinforce"}, {"id", "a"}, {"useful", false}});
  CHECK(event_hit["reinforced"]["record_type"] == "event");
  CHECK(event_hit["reinforced"]["hit_count"] == 0);
  CHECK(test::control(control, {{"cmd", "reinforce"}, {"id", "zzz"}})["error"] ==
        "no knowledge row or event has the id 'zzz'");

  auto events = test::control(control, {{"cmd", "events"}, {"limit", 2}});
  REQUIRE(events["events"].size() == 2);
  CHECK(events["events"][1]["id"] == "d");
  events = test::control(control, {{"cmd", "events"}, {"after_seq", 1}});
  CHECK(events["events"].size() == 2);

  // Filters by agent and episode, and pages back from before_seq, oldest first.
  REQUIRE(test::ingest(dealer, R"([
    {"id":"p1","kind":"task","namespace":"m","agent_id":"planner","episode_id":"ep1","content":"plan"},
    {"id":"w1","kind":"task","namespace":"m","agent_id":"worker","episode_id":"ep1","content":"build"},
    {"id":"p2","kind":"task","namespace":"m","agent_id":"planner","episode_id":"ep2","content":"undo"}])")
              ["ok"] == true);
  const auto ids = [&control](const json& request) {
    std::vector<std::string> out;
    const json reply = test::control(control, request);
    INFO(reply.dump());
    CHECK(reply["ok"] == true);
    for (const json& e : reply["events"]) out.push_back(e["id"]);
    return out;
  };
  using Ids = std::vector<std::string>;
  CHECK(ids({{"cmd", "events"}, {"namespace", "m"}, {"agent_id", "planner"}}) == Ids{"p1", "p2"});
  CHECK(ids({{"cmd", "events"}, {"namespace", "m"}, {"episode_id", "ep1"}}) == Ids{"p1", "w1"});
  CHECK(ids({{"cmd", "events"}, {"agent_id", "worker"}, {"episode_id", "ep2"}}).empty());
  CHECK(ids({{"cmd", "events"}, {"before_seq", 6}, {"limit", 1}}) == Ids{"w1"});
  CHECK(ids({{"cmd", "events"}, {"before_seq", 3}, {"limit", 5}}) == Ids{"a", "b"});
  CHECK(ids({{"cmd", "events"}, {"namespace", "m"}, {"after_seq", 4}, {"limit", 1}}) == Ids{"w1"});
  CHECK(test::control(control,
                      {{"cmd", "events"}, {"namespace", "m"}})["events"][0]["episode_id"] == "ep1");

  // The refresh job writes the medallion; a new event marks it stale at once.
  REQUIRE(test::control(control, {{"cmd", "run"}, {"job", "medallion"}, {"wait", true}})["ok"] ==
          true);
  auto m = test::control(control, {{"cmd", "medallion"}, {"action", "get"}, {"id", "med:n"}});
  REQUIRE(m["ok"] == true);
  CHECK(m["medallion"]["meta"]["status"] == "active");
  test::ingest(dealer, R"({"id":"c","kind":"task","namespace":"n","content":"new work"})");
  m = test::control(control, {{"cmd", "medallion"}, {"action", "get"}, {"id", "med:n"}});
  CHECK(m["medallion"]["meta"]["status"] == "stale");
  running.stop();
  auto db = store::open_database({config.store.path, "full", 5000}, store::Access::kReader);
  CHECK(db.execAndGet("SELECT count(*) FROM audit_log WHERE action IN ('reinforce', 'decay')")
            .getInt() == 2);
}
