// Memory operations on a real daemon over ZeroMQ: forget, restore, pin, unpin, audit, revise,
// proposal verdicts and retention, with their audit rows and their errors.

#include <catch2/catch.hpp>

#include "support/memory_ops_fixture.hpp"

using namespace reflectd;
using namespace reflectd::test::memory_ops_fixture;
using nlohmann::json;

TEST_CASE("forget, restore, pin, unpin and audit on a running daemon") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto event = [](const std::string& id, const json& lifecycle) {
    json e = {{"id", id},
              {"kind", "observation"},
              {"namespace", "ops"},
              {"agent_id", "a"},
              {"timestamp", "2024-01-01T10:00:00Z"},
              {"content", "content of " + id}};
    if (!lifecycle.is_null()) e["lifecycle"] = lifecycle;
    return e;
  };
  REQUIRE(test::ingest(ingest, json::array({event("a", nullptr), event("b", nullptr),
                                            event("c", {{"deletion_policy", "never"}})})
                                   .dump())["ok"] == true);
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto status_of = [&](const std::string& id) {
    return ask({{"cmd", "get"}, {"ids", {id}}})["events"][0]["status"];
  };

  json reply = ask({{"cmd", "forget"}, {"ids", {"a"}}});
  INFO(reply.dump());
  CHECK(reply["forgotten"] == json::parse(R"({"mode":"archive","events_archived":1,"kept":[]})"));
  CHECK(status_of("a") == "archived");
  // Recall and context leave an archived event out unless asked for it.
  auto recalled = [&](const json& extra) {
    json request = {{"cmd", "recall"}, {"text", "content of a"}, {"namespace", "ops"}};
    request.update(extra);
    const json answer = ask(request);
    INFO(answer.dump());
    std::vector<std::string> ids;
    for (const auto& hit : answer["results"]) {
      ids.push_back(hit["id"].get<std::string>() + " " + hit["status"].get<std::string>());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(recalled(json::object()) == std::vector<std::string>{"b active", "c active"});
  CHECK(recalled({{"include_archived", true}}) ==
        std::vector<std::string>{"a archived", "b active", "c active"});
  CHECK(ask({{"cmd", "recall"}, {"text", "a"}, {"include_archived", "yes"}})["error"] ==
        "recall: include_archived: must be true or false");
  const json context = ask({{"cmd", "context"}, {"text", "content of a"}, {"namespace", "ops"}});
  CHECK(context["sources"].get<std::set<std::string>>() == std::set<std::string>{"b", "c"});
  CHECK(ask({{"cmd", "restore"}, {"ids", {"a", "b"}}})["result"] ==
        json::parse(R"({"changed":["a"],"unchanged":["b"]})"));
  CHECK(status_of("a") == "active");
  CHECK(recalled(json::object()) == std::vector<std::string>{"a active", "b active", "c active"});

  CHECK(ask({{"cmd", "pin"}, {"ids", {"b"}}})["result"]["changed"] == json::array({"b"}));
  CHECK(ask({{"cmd", "forget"}, {"ids", {"b"}}})["error"] ==
        "forget: event 'b': pinned: unpin it first");
  CHECK(ask({{"cmd", "unpin"}, {"ids", {"b"}}})["result"]["changed"] == json::array({"b"}));
  CHECK(ask({{"cmd", "forget"}, {"ids", {"c"}}})["error"] ==
        "forget: event 'c': deletion_policy never: it cannot be forgotten");
  CHECK(ask({{"cmd", "forget"}, {"ids", {"nope"}}})["error"] ==
        "forget: ids: no event 'nope' in the namespaces you may write (*)");
  CHECK(ask({{"cmd", "forget"}, {"ids", {"a"}}, {"mode", "purge"}})["error"] ==
        "forget: mode: must be \"archive\" or \"delete\"");
  reply = ask({{"cmd", "forget"},
               {"filter", {{"namespace", "ops"}, {"text", "OF B"}}},
               {"mode", "delete"},
               {"dry_run", true}});
  CHECK(reply["forgotten"]["events"].size() == 1);
  CHECK(reply["forgotten"]["events"][0]["id"] == "b");
  CHECK(status_of("b") == "active");

  reply = ask({{"cmd", "forget"}, {"ids", {"b"}}, {"mode", "delete"}, {"wait", true}});
  INFO(reply.dump());
  REQUIRE(reply["ok"] == true);
  CHECK(reply["forgotten"]["events_deleted"] == 1);
  CHECK(reply["forgotten"]["rebuild_runs"] == 5);
  CHECK(reply["forgotten"]["namespaces"] == json::array({"ops"}));
  CHECK(ask({{"cmd", "get"}, {"ids", {"b"}}})["missing"] == json::array({"b"}));
  // The rebuild ran: the namespace's medallion is back.
  CHECK(ask({{"cmd", "medallion"}, {"action", "get"}, {"id", "med:ops"}})["ok"] == true);

  const json audit = ask({{"cmd", "audit"}, {"namespace", "ops"}, {"limit", 100}});
  std::vector<std::string> actions;
  for (const auto& row : audit["audit"]) {
    if (row["record_type"] == "event") {
      actions.push_back(row["record_id"].get<std::string>() + " " +
                        row["action"].get<std::string>() + " " +
                        row["rationale"].get<std::string>());
    }
  }
  CHECK(actions == std::vector<std::string>{"b delete forgotten (delete) by control",
                                            "b revise unpinned: salience decays again from now",
                                            "b revise pinned: salience no longer decays",
                                            "a revise restored from the archive",
                                            "a archive forgotten (archive) by control"});
  CHECK(ask({{"cmd", "audit"}, {"since", "yesterday"}})["error"] ==
        "audit: since: must be an RFC 3339 date-time with an offset");
}

TEST_CASE("revise on a running daemon; SHODH objects and content dedup through ingest") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  config.store.dedup = "namespace";
  jobs_on_demand(config);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  const json stored =
      test::ingest(ingest, json::array({
                                           {{"id", "home"},
                                            {"kind", "conversation"},
                                            {"namespace", "ops"},
                                            {"agent_id", "caroline"},
                                            {"tags", {"home"}},
                                            {"timestamp", "2023-05-08T13:56:00Z"},
                                            {"content", "Caroline lives in Denver"}},
                                           {{"id", "copy"},
                                            {"kind", "conversation"},
                                            {"namespace", "ops"},
                                            {"content", "Caroline lives in Denver"}},
                                           // seed 004's shape, no kind
                                           {{"id", "550e8400-e29b-41d4-a716-446655440000"},
                                            {"type", "Decision"},
                                            {"namespace", "ops"},
                                            {"source_type", "ai_generated"},
                                            {"created_at", "2024-12-30T10:00:00Z"},
                                            {"content", "Use JWT tokens with 24h expiry"}},
                                       })
                               .dump());
  INFO(stored.dump());
  CHECK(stored["results"][1]["status"] == "duplicate");
  CHECK(stored["results"][1]["duplicate_of"] == "home");
  CHECK(stored["results"][2]["status"] == "stored");
  CHECK(stored["results"][2]["decision"]["metadata"]["decision_id"] ==
        "550e8400-e29b-41d4-a716-446655440000");

  const json revised = ask({{"cmd", "revise"},
                            {"id", "home"},
                            {"content", "Caroline lives in Boston since June 2023"},
                            {"rationale", "she moved"},
                            {"new_id", "home-2"}});
  INFO(revised.dump());
  REQUIRE(revised["ok"] == true);
  CHECK(revised["revised"]["id"] == "home");
  CHECK(revised["revised"]["revision"]["id"] == "home-2");
  const json both = ask({{"cmd", "get"}, {"ids", {"home", "home-2"}}});
  const json& old = both["events"][0];
  const json& fresh = both["events"][1];
  CHECK(old["status"] == "superseded");
  CHECK(old["superseded_by"] == "home-2");
  CHECK(old["content"] == "Caroline lives in Denver");
  CHECK(fresh["status"] == "active");
  CHECK(fresh["superseded_by"].is_null());
  CHECK(fresh["kind"] == "conversation");
  CHECK(fresh["agent_id"] == "caroline");
  CHECK(fresh["tags"] == json::array({"home"}));
  CHECK(fresh["relations"] == json::parse(R"([{"predicate":"supersedes","target_id":"home"}])"));
  CHECK(fresh["ts"] != old["ts"]);  // the time of the revision
  // recall finds the revision, never the text it replaced.
  auto recalled = [&](const std::string& text) {
    std::vector<std::string> ids;
    const json reply = ask({{"cmd", "recall"}, {"text", text}, {"namespace", "ops"}});
    for (const auto& hit : reply["results"]) ids.push_back(hit["id"].get<std::string>());
    return ids;
  };
  CHECK(recalled("Where does Caroline live?") == std::vector<std::string>{"home-2"});
  CHECK(recalled("Denver") == std::vector<std::string>{});

  CHECK(ask({{"cmd", "revise"}, {"id", "home"}, {"content", "x"}, {"rationale", "r"}})["error"] ==
        "revise: id: home is superseded by home-2; revise that revision");
  CHECK(ask({{"cmd", "revise"}, {"id", "home-2"}, {"content", "x"}})["error"] ==
        "revise: rationale: is required");
  CHECK(ask({{"cmd", "revise"}, {"id", "nope"}, {"content", "x"}, {"rationale", "r"}})["error"] ==
        "revise: ids: no event 'nope' in the namespaces you may write (*)");
  CHECK(ask({{"cmd", "revise"},
             {"id", "550e8400-e29b-41d4-a716-446655440000"},
             {"content", "x"},
             {"rationale", "r"}})["error"] ==
        "revise: id: 550e8400-e29b-41d4-a716-446655440000 is a decision; a decision, "
        "constraint, assumption, intervention or proposal is revised by a new one with "
        "resolution supersede (seed 000 ResolutionIntent)");
  const json audit = ask({{"cmd", "audit"}, {"record_id", "home"}});
  REQUIRE(audit["audit"].size() == 1);
  CHECK(audit["audit"][0]["action"] == "revise");
  CHECK(audit["audit"][0]["rationale"] == "she moved");

  // Deleting the revision makes the old event current again.
  REQUIRE(ask({{"cmd", "forget"}, {"ids", {"home-2"}}, {"mode", "delete"}, {"wait", true}})["ok"] ==
          true);
  const json back = ask({{"cmd", "get"}, {"ids", {"home"}}})["events"][0];
  CHECK(back["status"] == "active");
  CHECK(back["superseded_by"].is_null());
  CHECK(recalled("Denver") == std::vector<std::string>{"home"});
  // A correction of what was said then keeps the event's time.
  const json corrected = ask({{"cmd", "revise"},
                              {"id", "home"},
                              {"content", "Caroline lives in Denver, Colorado"},
                              {"rationale", "transcript completed"},
                              {"keep_timestamp", true}});
  REQUIRE(corrected["ok"] == true);
  const std::string revision_id = corrected["revised"]["revision"]["id"];
  CHECK(revision_id.size() == 64);  // derived: SHA-256 hex
  CHECK(ask({{"cmd", "get"}, {"ids", {revision_id}}})["events"][0]["ts"] ==
        "2023-05-08T13:56:00.000000Z");
  CHECK(ask({{"cmd", "revise"},
             {"id", revision_id},
             {"content", "x"},
             {"rationale", "r"},
             {"keep_timestamp", "yes"}})["error"] ==
        "revise: keep_timestamp: must be true or false");
}

TEST_CASE("proposal verdicts on a running daemon: accept, reject, falsify, with audit rows") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto proposal = [](const std::string& id, const std::string& target) {
    return json{{"id", id},
                {"kind", "proposal"},
                {"namespace", "ops"},
                {"content", "Proposal: " + target},
                {"context",
                 {{"title", "Try " + target},
                  {"target", target},
                  {"rationale", "it may cut the latency tail"}}}};
  };
  REQUIRE(test::ingest(ingest, json::array({proposal("p1", "pool"), proposal("p2", "cache"),
                                            proposal("p3", "batch")})
                                   .dump())["ok"] == true);
  auto verdict = [&](const std::string& action, const std::string& id) {
    return ask(
        {{"cmd", "proposal"}, {"action", action}, {"proposal_id", id}, {"rationale", "measured"}});
  };
  CHECK(verdict("accept", "p1")["proposal"] ==
        json::parse(R"({"proposal_id":"p1","namespace":"ops","status":"accepted",
                        "previous_status":"draft"})"));
  CHECK(verdict("reject", "p2")["proposal"]["status"] == "rejected");
  CHECK(verdict("falsify", "p1")["proposal"]["previous_status"] == "accepted");
  CHECK(verdict("falsify", "p3")["proposal"]["status"] == "falsified");
  CHECK(verdict("accept", "p2")["error"] ==
        "proposal: accept: 'p2' is rejected; accept needs draft");
  CHECK(verdict("falsify", "p2")["error"] ==
        "proposal: falsify: 'p2' is rejected; falsify needs draft or accepted");
  CHECK(verdict("accept", "nope")["error"] ==
        "proposal: proposal_id: no proposal 'nope' in the namespaces you may write");
  CHECK(verdict("adopt", "p1")["error"] ==
        R"(proposal: action: must be "accept", "reject" or "falsify")");
  CHECK(ask({{"cmd", "proposal"}, {"action", "accept"}, {"proposal_id", "p1"}})["error"] ==
        "proposal: rationale: is required");
  const json rows = ask({{"cmd", "knowledge"}, {"namespace", "ops"}});
  std::map<std::string, std::string> status;
  for (const auto& row : rows["knowledge"]) status[row["decision_id"]] = row["status"];
  CHECK(status == std::map<std::string, std::string>{
                      {"p1", "falsified"}, {"p2", "rejected"}, {"p3", "falsified"}});
  const json audit = ask({{"cmd", "audit"}, {"record_id", "p1"}});
  std::vector<std::string> actions;
  for (const auto& row : audit["audit"]) {
    actions.push_back(row["action"].get<std::string>() + " " + row["rationale"].get<std::string>() +
                      " " + row["previous"].dump());
  }
  CHECK(actions == std::vector<std::string>{R"(deprecate falsify: measured {"status":"accepted"})",
                                            R"(accept accept: measured {"status":"draft"})",
                                            "create published as a proposal event (seq 1) null"});
  // A rejected or falsified proposal takes no evidence from events stored after the verdict
  // (the consolidation job's window, knowledge.ended_seq): seqs 1-3 are stored, so 4.
  SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
  CHECK(test::dump(db, "SELECT decision_id, ended_seq FROM knowledge ORDER BY decision_id") ==
        "p1|4|\np2|4|\np3|4|\n");
}

TEST_CASE("retention: events past their rule's age are deleted on schedule, policies hold") {
  CHECK(memory_ops::parse_retention_rule("max_age_days=30;namespace=talk;kind=prompt").ns ==
        "talk");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("namespace=talk"),
                    "max_age_days: is required");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("max_age_days=-1"),
                    "max_age_days: must be a number of days above 0");
  CHECK_THROWS_WITH(memory_ops::parse_retention_rule("max_age_days=3;size=9"),
                    "'size': unknown key; known: max_age_days, namespace, kind");

  test::TempDir dir;
  const std::string path = dir.file("reflectd.db");
  FakeClock clock(kNow);
  auto event = [](const std::string& id, const std::string& ns, const std::string& ts,
                  const json& lifecycle) {
    json e = {{"id", id},          {"kind", "prompt"}, {"namespace", ns},
              {"agent_id", "Ana"}, {"timestamp", ts},  {"content", "Ana: note " + id}};
    if (!lifecycle.is_null()) e["lifecycle"] = lifecycle;
    return e.dump();
  };
  REQUIRE(test::load_lines(
              path,
              {event("old", "talk", "2020-01-01T10:00:00Z", nullptr),
               event("kept", "talk", "2020-01-01T11:00:00Z", {{"deletion_policy", "never"}}),
               event("pinned", "talk", "2020-01-01T12:00:00Z", {{"pinned", true}}),
               event("recent", "talk", "2025-12-01T10:00:00Z", nullptr),
               event("elsewhere", "other", "2020-01-01T10:00:00Z", nullptr)},
              clock) == 5);
  auto db = test::open_writer(path);
  run_every_job(db, kNow);
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "interval", 0, {}};
  const json result = memory_ops::run_retention(
      ctx, {memory_ops::parse_retention_rule("namespace=talk;max_age_days=365")});
  INFO(result.dump());
  CHECK(result["events_deleted"] == 1);
  CHECK(result["namespaces"] == json::array({"talk"}));
  CHECK(test::dump(db, "SELECT uid FROM events ORDER BY seq") ==
        "kept|\npinned|\nrecent|\nelsewhere|\n");
  CHECK(test::dump(db, "SELECT record_id, action, actor FROM audit_log WHERE action = 'delete'") ==
        "old|delete|job:retention|\n");
  CHECK(test::places_of(db, "note old").empty());
  // Nothing more is due: the next run deletes nothing.
  CHECK(memory_ops::run_retention(ctx, {memory_ops::parse_retention_rule(
                                           "namespace=talk;max_age_days=365")})["events_deleted"] ==
        0);
}

TEST_CASE(
    "merge_entities on a running daemon: mentions, edges and audit move, errors are precise") {
  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::RunningDaemon running(config);
  Clients clients(running);
  auto& ingest = clients.ingest;
  auto& control = clients.control;
  auto ask = [&](const json& request) { return test::control(control, request); };
  auto observation = [](const std::string& content, const json& entities) {
    return json{{"kind", "observation"},
                {"namespace", "ops"},
                {"content", content},
                {"entities", entities}};
  };
  REQUIRE(
      test::ingest(
          ingest, json::array({observation("ann reviewed the pool", {"person:Ann", "repo:pool"}),
                               observation("annie merged the pool", {"person:Annie", "repo:pool"}),
                               observation("annie and ann paired", {"person:Annie", "person:Ann"})})
                      .dump())["ok"] == true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "cluster"}, {"wait", true}})["ok"] == true);
  auto merge = [&](const std::string& from, const std::string& into) {
    return ask({{"cmd", "merge_entities"},
                {"namespace", "ops"},
                {"from", from},
                {"into", into},
                {"rationale", "same person"}});
  };
  CHECK(merge("person:ann", "Ann")["error"] ==
        "merge_entities: into: 'Ann' is 'person:ann' itself: nothing to merge");
  CHECK(merge("person:bob", "person:ann")["error"] ==
        "merge_entities: from: no entity 'person:bob' in namespace 'ops' (a canonical key such "
        "as person:mel, or a display name exactly one entity has)");
  CHECK(ask({{"cmd", "merge_entities"}, {"namespace", "ops"}, {"from", "person:ann"}})["error"] ==
        "merge_entities: into: is required");
  // By display name; the edge between the two goes, the two edges to the pool become one.
  const json merged = merge("Ann", "person:annie");
  INFO(merged.dump());
  CHECK(merged["merged"] == json::parse(R"({"namespace":"ops","from":"person:ann",
      "into":"person:annie","moved":{"mentions_moved":1,"mentions_joined":1,"edges_moved":0,
      "edges_joined":1,"edges_dropped":1,"facts_moved":0}})"));
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "person:annie|3|\nrepo:pool|2|\n");
    CHECK(test::dump(db, "SELECT alias_key, canonical_key FROM entity_merges") ==
          "person:ann|person:annie|\n");
    CHECK(test::dump(db, "SELECT mention_count FROM entity_relationships") == "2|\n");
  }
  // Later events naming the merged key resolve to the entity it was merged into.
  REQUIRE(
      test::ingest(ingest, json::array({observation("ann again", {"person:Ann"})}).dump())["ok"] ==
      true);
  REQUIRE(ask({{"cmd", "run"}, {"job", "cluster"}, {"wait", true}})["ok"] == true);
  const json decay = ask({{"cmd", "run"}, {"job", "decay"}, {"wait", true}});
  CHECK(decay["run"]["result"]["merges_executed"] == 0);
  {
    SQLite::Database db(config.store.path, SQLite::OPEN_READONLY);
    CHECK(test::dump(db, "SELECT canonical_key, mention_count FROM entities ORDER BY 1") ==
          "person:annie|4|\nrepo:pool|2|\n");
  }
  const json audit = ask({{"cmd", "audit"}, {"namespace", "ops"}, {"record_id", "person:ann"}});
  REQUIRE(audit["audit"].size() == 1);
  CHECK(audit["audit"][0]["action"] == "merge");
  CHECK(audit["audit"][0]["rationale"] == "same person");
  CHECK(audit["audit"][0]["previous"]["into"] == "person:annie");
}
