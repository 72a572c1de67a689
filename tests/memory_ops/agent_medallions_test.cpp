// Agents' medallions on a real daemon: create and update with evidence, explicit status, the
// writer's namespaces; the jobs keep off them.

#include <catch2/catch.hpp>

#include "support/memory_ops_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::memory_ops_fixture;
using nlohmann::json;

namespace {

json resume_medallion(const std::string& id, const std::string& high_level) {
  return {{"meta", {{"medallion_id", id}}},
          {"scope", {{"graph_nodes", {"repo:pool"}}, {"tags", {"sprint-1"}}}},
          {"summary", {{"high_level", high_level}}},
          {"decisions",
           {{{"id", "D-001"},
             {"statement", "Use a ring buffer"},
             {"rationale", "bounded memory"},
             {"confidence", 0.8}}}},
          {"affordances",
           {{"recommended_entry_points", {"pool.cpp"}}, {"avoid_repeating", json::array()}}}};
}

json create_request(const json& medallion, const std::string& summary) {
  return {{"cmd", "medallion"},
          {"action", "create"},
          {"namespace", "proj"},
          {"medallion", medallion},
          {"evidence", {{"session_summary", summary}}}};
}

}  // namespace

TEST_CASE("agents' medallions: create, update with evidence, explicit status; jobs keep off") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto ask = [&](const json& request) { return test::control(clients.control, request); };
  auto observation = [](const std::string& id, const std::string& content) {
    return json{{"id", id}, {"kind", "observation"}, {"namespace", "proj"}, {"content", content}};
  };
  REQUIRE(test::ingest(clients.ingest,
                       json::array({observation("p-1", "the pool leaks under load"),
                                    observation("p-2", "the pool now uses a ring buffer")})
                           .dump())["ok"] == true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "medallion"}, {"wait", true}})["ok"] == true);

  json request =
      create_request(resume_medallion("proj-resume", "The pool is done."), "finished the pool");
  request["evidence"]["transcripts"] = {"we chose a ring buffer"};
  const json created = ask(request);
  INFO(created.dump());
  REQUIRE(created["ok"] == true);
  CHECK(created["written"]["id"] == "proj-resume");
  CHECK(created["written"]["status"] == "active");
  CHECK(created["written"]["version"] == 1);
  CHECK(created["written"]["superseded"].is_null());

  // Precise refusals.
  CHECK(ask(request)["error"] ==
        "medallion: medallion.meta.medallion_id: 'proj-resume' exists; update it");
  CHECK(ask(create_request(resume_medallion("med:mine", "x"), "s"))["error"] ==
        "medallion: medallion.meta.medallion_id: ids starting \"med:\" are the medallion job's; "
        "choose another id or leave it out");
  json bad = resume_medallion("bad", "x");
  bad["decisions"][0]["confidence"] = 1.5;
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion: not a valid seed 001 Medallion: decisions[].confidence: must be "
        "between 0.0 and 1.0");
  bad = resume_medallion("bad", "x");
  bad["owner"] = "me";
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion.owner: not a field of a seed 001 Medallion (meta, scope, summary, "
        "decisions, open_questions, affordances)");
  bad = resume_medallion("bad", "x");
  bad["meta"]["status"] = "stale";
  CHECK(ask(create_request(bad, "s"))["error"] ==
        "medallion: medallion.meta.status: a new medallion starts active (seed 001); change it "
        "afterwards with action set_status");
  json no_evidence = create_request(resume_medallion("bad", "x"), "s");
  no_evidence.erase("evidence");
  CHECK(ask(no_evidence)["error"] ==
        "medallion: evidence: is required (seed 001 Evidence: session_summary, transcripts?, "
        "artefacts?)");
  no_evidence["evidence"] = {{"session_summary", " "}};
  CHECK(ask(no_evidence)["error"] == "medallion: evidence: session_summary: must not be empty");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "med:proj"},
             {"status", "stale"},
             {"rationale", "r"}})["error"] ==
        "medallion: id: 'med:proj' is the medallion job's: it is rebuilt from the events, which "
        "also mark it stale; agents update and set the status of their own medallions only");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "nope"},
             {"status", "stale"},
             {"rationale", "r"}})["error"] ==
        "medallion: id: no medallion 'nope' in the namespaces you may write");
  CHECK(ask({{"cmd", "medallion"},
             {"action", "set_status"},
             {"id", "proj-resume"},
             {"status", "active"},
             {"superseded_by", "x"},
             {"rationale", "r"}})["error"] ==
        "medallion: superseded_by: only with status superseded");

  // New events mark the job's medallion stale, never the agent's.
  REQUIRE(test::ingest(clients.ingest,
                       json::array({observation("p-3", "the pool passed review")}).dump())["ok"] ==
          true);
  std::string content_before;
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
          "med:proj|stale|\nproj-resume|active|\n");
    content_before = test::dump(db, "SELECT content_json FROM medallions WHERE id = 'proj-resume'");
  }
  // The job rebuilds its own and leaves the agent's as it was.
  REQUIRE(ask({{"cmd", "run"}, {"job", "medallion"}, {"wait", true}})["ok"] == true);
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT content_json FROM medallions WHERE id = 'proj-resume'") ==
          content_before);
    CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
          "med:proj|active|\nproj-resume|active|\n");
  }

  // Update: a new version; the old one goes to history with its evidence.
  const json updated = ask({{"cmd", "medallion"},
                            {"action", "update"},
                            {"id", "proj-resume"},
                            {"medallion", {{"summary", {{"high_level", "The pool is reviewed."}}}}},
                            {"evidence", {{"session_summary", "review passed"}}}});
  INFO(updated.dump());
  REQUIRE(updated["ok"] == true);
  CHECK(updated["written"]["version"] == 2);
  CHECK(updated["written"]["created_at"] == created["written"]["created_at"]);
  CHECK(updated["written"]["updated_at"] > created["written"]["updated_at"]);
  const json got = ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}});
  CHECK(got["medallion"]["summary"]["high_level"] == "The pool is reviewed.");
  CHECK(got["medallion"]["decisions"][0]["statement"] == "Use a ring buffer");
  CHECK(got["medallion"]["meta"]["x_reflectd"]["written_by"] == "control");
  CHECK(got["medallion"]["meta"]["x_reflectd"]["version"] == 2);
  CHECK(got["evidence"] == json{{"session_summary", "review passed"}});
  const json history = ask({{"cmd", "medallion"}, {"action", "history"}, {"id", "proj-resume"}});
  REQUIRE(history["versions"].size() == 1);
  CHECK(history["versions"][0]["version"] == 1);
  CHECK(history["versions"][0]["medallion"]["summary"]["high_level"] == "The pool is done.");
  CHECK(history["versions"][0]["evidence"] == json{{"session_summary", "finished the pool"},
                                                   {"transcripts", {"we chose a ring buffer"}}});
  CHECK(ask({{"cmd", "medallion"},
             {"action", "update"},
             {"id", "proj-resume"},
             {"medallion", {{"meta", {{"status", "stale"}}}}},
             {"evidence", {{"session_summary", "s"}}}})["error"] ==
        "medallion: medallion.meta.status: is 'active': status persists through updates (seed "
        "001); change it with action set_status");

  // A newer medallion on the same scope supersedes it, and the old one says so.
  json second = create_request(resume_medallion("proj-resume-2", "Sprint 2 starts."), "sprint 2");
  second["supersedes"] = "proj-resume";
  const json superseding = ask(second);
  INFO(superseding.dump());
  CHECK(superseding["written"]["superseded"] == "proj-resume");
  const json old = ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}});
  CHECK(old["medallion"]["meta"]["status"] == "superseded");
  CHECK(old["medallion"]["meta"]["x_reflectd"]["superseded_by"] == "proj-resume-2");
  const json listed = ask({{"cmd", "medallion"}, {"action", "list"}});
  CHECK(listed["medallions"][1]["id"] == "proj-resume");
  CHECK(listed["medallions"][1]["superseded_by"] == "proj-resume-2");
  CHECK(listed["medallions"][2]["superseded_by"].is_null());

  // A create whose supersedes is refused stores nothing (one transaction).
  json refused = create_request(resume_medallion("proj-resume-3", "Other."), "s");
  refused["supersedes"] = "med:proj";
  CHECK(ask(refused)["error"] ==
        "medallion: supersedes: 'med:proj' is the medallion job's: it is rebuilt from the events, "
        "which "
        "also mark it stale; agents update and set the status of their own medallions only");
  CHECK(ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume-3"}})["error"] ==
        "no medallion 'proj-resume-3'");

  auto set_status = [&](const std::string& id, const std::string& status, const std::string& by) {
    json r = {{"cmd", "medallion"},
              {"action", "set_status"},
              {"id", id},
              {"status", status},
              {"rationale", "checked"}};
    if (!by.empty()) r["superseded_by"] = by;
    return ask(r);
  };
  CHECK(set_status("proj-resume", "active", "")["written"] ==
        json{{"id", "proj-resume"},
             {"namespace", "proj"},
             {"status", "active"},
             {"previous_status", "superseded"},
             {"superseded_by", nullptr},
             {"changed", true}});
  CHECK(set_status("proj-resume", "superseded", "med:proj")["error"] ==
        "medallion: superseded_by: 'med:proj' covers another scope than 'proj-resume' "
        "(graph_nodes and tags must be the same sets)");
  CHECK(set_status("proj-resume", "superseded", "proj-resume")["error"] ==
        "medallion: superseded_by: a medallion cannot supersede itself");
  CHECK(set_status("proj-resume-2", "superseded", "proj-resume")["error"] ==
        "medallion: superseded_by: 'proj-resume' was not updated after 'proj-resume-2' (a "
        "medallion is superseded by a newer one)");
  CHECK(set_status("proj-resume-2", "stale", "")["written"]["changed"] == true);
  CHECK(set_status("proj-resume-2", "stale", "")["written"]["changed"] == false);

  // A hard forget rebuilds the job's medallion and keeps the agents'.
  REQUIRE(ask({{"cmd", "forget"}, {"ids", {"p-3"}}, {"mode", "delete"}, {"wait", true}})["ok"] ==
          true);
  SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
  CHECK(test::dump(db, "SELECT id, status FROM medallions ORDER BY id") ==
        "med:proj|active|\nproj-resume|active|\nproj-resume-2|stale|\n");
  CHECK(test::dump(db,
                   "SELECT medallion_id, namespace, author, version, superseded_by FROM "
                   "agent_medallions ORDER BY 1") ==
        "proj-resume|proj|control|2|NULL|\nproj-resume-2|proj|control|1|NULL|\n");
  CHECK(test::dump(db, "SELECT medallion_id, version FROM medallion_evidence ORDER BY 1, 2") ==
        "proj-resume|1|\nproj-resume|2|\nproj-resume-2|1|\n");
  CHECK(test::dump(db,
                   "SELECT record_id, action, actor, rationale FROM audit_log WHERE record_type "
                   "= 'medallion' AND record_id != 'med:proj' ORDER BY audit_id") ==
        "proj-resume|create|control|evidence: finished the pool|\n"
        "proj-resume|revise|control|evidence: review passed|\n"
        "proj-resume-2|create|control|evidence: sprint 2|\n"
        "proj-resume|supersede|control|superseded by proj-resume-2 (create)|\n"
        "proj-resume|promote|control|checked|\n"
        "proj-resume-2|deprecate|control|checked|\n");
}

TEST_CASE("agents' medallions obey the writer's namespaces") {
  test::TempDir dir;
  auto db = test::open_writer(dir.file("reflectd.db"));
  memory_ops::WriteScope agent{"agent-a", false, {"proj"}, false, 4};
  memory_ops::WriteScope other{"agent-b", false, {"other"}, false, 4};
  std::string error;
  auto create = memory_ops::parse_medallion_write(
      create_request(resume_medallion("proj-resume", "Done."), "s"), error);
  REQUIRE(create);
  CHECK_THROWS_WITH(memory_ops::write_medallion(db, *create, other, kNow),
                    "medallion: namespace: 'proj' is not a namespace you may write");
  CHECK(memory_ops::write_medallion(db, *create, agent, kNow)["id"] == "proj-resume");
  auto stale = memory_ops::parse_medallion_write({{"cmd", "medallion"},
                                                  {"action", "set_status"},
                                                  {"id", "proj-resume"},
                                                  {"status", "stale"},
                                                  {"rationale", "r"}},
                                                 error);
  REQUIRE(stale);
  CHECK_THROWS_WITH(memory_ops::write_medallion(db, *stale, other, kNow + 1),
                    "medallion: id: no medallion 'proj-resume' in the namespaces you may write");
  CHECK(memory_ops::write_medallion(db, *stale, agent, kNow + 1)["status"] == "stale");
  CHECK(test::dump(db,
                   "SELECT author, created_at FROM agent_medallions JOIN medallions ON id = "
                   "medallion_id") == "agent-a|2026-01-01T00:00:00.000000Z|\n");

  // Its own sensitivity (seed 002): a reader one level below gets it redacted, a reader two
  // or more below does not see it at all.
  json secret_request = create_request(resume_medallion("proj-keys", "Keys rotated."), "s");
  secret_request["sensitivity"] = "high";
  auto secret = memory_ops::parse_medallion_write(secret_request, error);
  REQUIRE(secret);
  CHECK(memory_ops::write_medallion(db, *secret, agent, kNow + 2)["id"] == "proj-keys");
  const json get = {{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-keys"}};
  const json full = recall::read_medallion(db, get, recall::ReadScope{4, true, {}});
  CHECK(full["medallion"]["summary"]["high_level"] == "Keys rotated.");
  CHECK(full["medallion"]["meta"]["x_reflectd_sensitivity"] == "high");
  const json redacted = recall::read_medallion(db, get, recall::ReadScope{2, true, {}});
  CHECK(redacted["medallion"]["redacted"] == 1);
  CHECK(redacted["medallion"]["summary"]["high_level"] == recall::kRedacted);
  CHECK(recall::read_medallion(db, get, recall::ReadScope{1, true, {}})["error"] ==
        "no medallion 'proj-keys'");
  CHECK(recall::read_medallion(
            db, {{"cmd", "medallion"}, {"action", "get"}, {"id", "proj-resume"}},
            recall::ReadScope{0, true, {}})["medallion"]["meta"]["x_reflectd_sensitivity"] ==
        "public");
  secret_request["sensitivity"] = "secret";
  CHECK_FALSE(memory_ops::parse_medallion_write(secret_request, error));
  CHECK(
      error ==
      R"(medallion: sensitivity: must be "public", "low", "medium", "high" or "hyper" (seed 002))");
}
