// Reads and memory operations under CURVE identities: recall, context, get and episode apply
// clearance and namespace scope; forget, pin and audit obey them, the actor is the key's agent.

#include <catch2/catch.hpp>

#include "support/secure_daemon.hpp"

using reflectd::CurveCert;
using json = nlohmann::json;
namespace test = reflectd::test;
using namespace reflectd::test::secure_daemon;

TEST_CASE("recall, context, get and episode apply clearance and namespace scope") {
  SecureDaemon d;
  json batch = json::array();
  const std::vector<std::string> levels{"public", "low", "medium", "high", "hyper"};
  std::int64_t turn = 0;
  for (const auto& level : levels) {
    json e = event("alpha", level, "the harbour lighthouse note at level " + level);
    e["id"] = "r-" + level;
    e["episode_id"] = "ep-1";
    e["sequence_number"] = ++turn;
    batch.push_back(e);
  }
  json other = event("beta", "public", "the harbour lighthouse note in beta");
  other["id"] = "rb-public";
  other["episode_id"] = "ep-1";
  other["sequence_number"] = 1;
  batch.push_back(other);
  REQUIRE(d.ingest_as(d.ops, batch)["ok"] == true);

  // The planner reads alpha up to medium: high comes back redacted, hyper and beta never.
  const json recalled =
      d.control_as(&d.planner, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"limit", 100}});
  REQUIRE(recalled["ok"] == true);
  std::vector<std::string> found;
  for (const auto& row : recalled["results"]) {
    found.push_back(row["id"].get<std::string>() + "|" + (row["redacted"] ? "1" : "0") + "|" +
                    row["content"].get<std::string>());
  }
  std::sort(found.begin(), found.end());
  CHECK(found ==
        std::vector<std::string>{"r-high|1|[redacted: above your clearance]",
                                 "r-low|0|the harbour lighthouse note at level low",
                                 "r-medium|0|the harbour lighthouse note at level medium",
                                 "r-public|0|the harbour lighthouse note at level public"});
  const json beta = d.control_as(
      &d.planner, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"namespace", "beta"}});
  CHECK(beta["ok"] == false);
  CHECK(beta["error"] == "recall: namespace: unknown namespace 'beta'");

  const json context = d.control_as(
      &d.planner, {{"cmd", "context"}, {"text", "harbour lighthouse"}, {"max_tokens", 2000}});
  REQUIRE(context["ok"] == true);
  const std::string text = context["context_text"];
  CHECK(text.find("level hyper") == std::string::npos);
  CHECK(text.find("level high") == std::string::npos);
  CHECK(text.find("[r-high]") != std::string::npos);
  CHECK(text.find("in beta") == std::string::npos);
  std::vector<std::string> sources = context["sources"].get<std::vector<std::string>>();
  std::sort(sources.begin(), sources.end());
  CHECK(sources == std::vector<std::string>{"r-high", "r-low", "r-medium", "r-public"});

  const json got = d.control_as(
      &d.planner, {{"cmd", "get"}, {"ids", {"r-public", "r-high", "r-hyper", "rb-public"}}});
  REQUIRE(got["ok"] == true);
  REQUIRE(got["events"].size() == 2);
  CHECK(got["events"][0]["content"] == "the harbour lighthouse note at level public");
  CHECK(got["events"][1]["redacted"] == true);
  CHECK(got["events"][1]["content"] == "[redacted: above your clearance]");
  CHECK(got["events"][1]["context"].is_null());
  CHECK(got["missing"] == json({"r-hyper", "rb-public"}));

  const json episode = d.control_as(&d.planner, {{"cmd", "episode"}, {"episode_id", "ep-1"}});
  REQUIRE(episode["ok"] == true);
  std::vector<std::string> order;
  for (const auto& row : episode["events"]) order.push_back(row["id"]);
  CHECK(order == std::vector<std::string>{"r-public", "r-low", "r-medium", "r-high"});

  // The admin reads all of alpha and beta.
  const json all =
      d.control_as(&d.ops, {{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"limit", 100}});
  CHECK(all["results"].size() == 6);
}

TEST_CASE("forget, pin and audit obey namespaces and clearance; the actor is the key's agent") {
  SecureDaemon d;
  const auto event = [](const std::string& id, const std::string& ns,
                        const std::string& sensitivity) {
    return json{{"kind", "task"},
                {"content", "work " + id},
                {"namespace", ns},
                {"sensitivity", sensitivity},
                {"id", id}};
  };
  REQUIRE(d.ingest_as(d.ops, json::array({event("a1", "alpha", "low"), event("b1", "beta", "low"),
                                          event("a2", "alpha", "hyper")}))["ok"] == true);

  // Another namespace's event and one two levels above the clearance read as unknown.
  for (const char* id : {"b1", "a2"}) {
    CHECK(d.control_as(&d.planner, {{"cmd", "forget"}, {"ids", {id}}})["error"] ==
          std::string("forget: ids: no event '") + id +
              "' in the namespaces you may write ([\"alpha\"])");
  }
  CHECK(d.control_as(&d.planner, {{"cmd", "forget"}, {"filter", {{"kind", "task"}}}})["error"] ==
        "forget: filter.namespace: required (a filter across namespaces needs admin)");
  // A filter matches only what the key may see: a1, not a2.
  const json dry = d.control_as(
      &d.planner, {{"cmd", "forget"}, {"filter", {{"namespace", "alpha"}}}, {"dry_run", true}});
  REQUIRE(dry["ok"] == true);
  CHECK(dry["forgotten"]["events"].size() == 1);
  CHECK(dry["forgotten"]["events"][0]["id"] == "a1");

  // The audit row names the key's agent, whatever the request claims.
  CHECK(d.control_as(&d.planner, {{"cmd", "forget"},
                                  {"ids", {"a1"}},
                                  {"agent_id", "ops"}})["forgotten"]["events_archived"] == 1);
  CHECK(d.control_as(&d.ops, {{"cmd", "pin"}, {"ids", {"b1", "a2"}}})["result"]["changed"] ==
        json::array({"b1", "a2"}));

  const auto audited = [&](const CurveCert& as) {
    std::vector<std::string> rows;
    const json reply = d.control_as(&as, {{"cmd", "audit"}});
    INFO(reply.dump());
    for (const auto& row : reply["audit"]) {
      rows.push_back(row["record_id"].get<std::string>() + " " + row["action"].get<std::string>() +
                     " " + row["actor"].get<std::string>());
    }
    return rows;
  };
  CHECK(audited(d.planner) == std::vector<std::string>{"a1 archive planner"});
  CHECK(audited(d.ops) ==
        std::vector<std::string>{"a2 revise ops", "b1 revise ops", "a1 archive planner"});
}
