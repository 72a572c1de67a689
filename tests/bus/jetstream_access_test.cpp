// reflectd's access rules over NATS JetStream: the rights of a message's agent subject and the
// clearance of reads over NATS request-reply, against a real three-server cluster
// (nats-server child processes on loopback) and reflectd replicas as child processes. Part of
// jetstream_test. Needs REFLECTD_BIN and REFLECTCTL_BIN.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "common/zcert.hpp"
#include "support/db_dump.hpp"
#include "support/jetstream_replica.hpp"
#include "support/nats_cluster.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace reflectd::test {

using namespace std::chrono_literals;

TEST_CASE(
    "jetstream: a message on reflectd.agents.<agent_id>.<ns> gets that agent's authorized-keys "
    "rights",
    "[cluster]") {
  const TempDir dir;
  NatsCluster cluster(dir, 1);
  zmq::context_t context(1);
  init_shard(cluster, 1);

  // The node's authorized keys: agent "planner" may write team-a up to "low".
  const std::string server_key = dir.file("server.key");
  write_cert_pair(server_key, generate_cert(), false);
  const std::string keys = dir.file("keys.yaml");
  write_text_file(keys, "keys:\n  - public_key: \"" + generate_cert().public_key +
                            "\"\n    agent_id: planner\n    namespaces: [team-a]\n"
                            "    max_sensitivity: low\n");
  Replica replica("replica", cluster.urls(), false,
                  "security:\n  curve_secret_key_file: \"" + server_key +
                      "\"\n  authorized_keys_file: \"" + keys + "\"\n");
  replica.start(context);

  const auto line = [](const std::string& id, const std::string& ns, const std::string& level) {
    return nlohmann::json{{"id", id},
                          {"kind", "conversation"},
                          {"namespace", ns},
                          {"agent_id", "someone-else"},
                          {"sensitivity", level},
                          {"content", "use the monitor socket to detect reconnects"},
                          {"timestamp", "2026-11-20T10:00:00Z"}}
        .dump();
  };
  write_text_file(dir.file("planner.jsonl"), line("p-ok", "team-a", "low") + "\n" +
                                                 line("p-high", "team-a", "high") + "\n" +
                                                 line("p-other", "team-b", "public") + "\n");
  write_text_file(dir.file("stranger.jsonl"), line("s-1", "team-a", "public") + "\n");
  for (const auto& [agent, file] :
       {std::pair{"planner", "planner.jsonl"}, std::pair{"stranger", "stranger.jsonl"}}) {
    std::vector<std::string> argv = {REFLECTCTL_BIN};
    for (const auto& arg : nats_args(cluster)) argv.push_back(arg);
    argv.insert(argv.end(), {"jetstream", "publish", "--agent", agent, dir.file(file)});
    const RunResult published = run_process(argv, 30s);
    INFO(published.out << published.err);
    REQUIRE(published.status.code == 0);
  }
  REQUIRE(wait_until([&] { return replica.count("SELECT count(*) FROM dead_letters") == 3; }, 30s));
  CHECK(replica.count("SELECT count(*) FROM events") == 1);
  // Stamped with the agent of the subject, whatever the event claimed.
  CHECK(replica.count("SELECT count(*) FROM events WHERE uid = 'p-ok' AND agent_id = 'planner' "
                      "AND json_extract(metadata, '$._claimed_agent_id') = 'someone-else'") == 1);
  CHECK(replica.count("SELECT count(*) FROM dead_letters WHERE endpoint = "
                      "'jetstream:reflectd.agents.planner.team-a' AND reason LIKE "
                      "'%above the max_sensitivity ''low'' of agent ''planner''%'") == 1);
  CHECK(replica.count("SELECT count(*) FROM dead_letters WHERE endpoint = "
                      "'jetstream:reflectd.agents.planner.team-b' AND reason LIKE "
                      "'%team-b%'") == 1);
  CHECK(replica.count("SELECT count(*) FROM dead_letters WHERE reason LIKE "
                      "'authorization: agent \"stranger\"%not listed once%'") == 1);
  CHECK(replica.stopped_cleanly());
}

TEST_CASE(
    "jetstream: reads over NATS carry the reading agent's clearance; without an agent, the "
    "public level",
    "[cluster]") {
  const TempDir dir;
  // Two NATS users, each allowed to read only as itself (its own agent-control token), as
  // docs/CLUSTER.md's permission table says; alice may also ask without an agent.
  const std::string authorization =
      "authorization {\n  users: [\n"
      "    {user: node, password: node-pw}\n"
      "    {user: alice, password: alice-pw, permissions: {publish: "
      "[\"reflectd.agent-control.alice.>\", \"reflectd.control.>\"], subscribe: [\"_INBOX.>\"]}}\n"
      "    {user: bob, password: bob-pw, permissions: {publish: "
      "[\"reflectd.agent-control.bob.>\"], subscribe: [\"_INBOX.>\"]}}\n"
      "  ]\n}\n";
  NatsCluster cluster(dir, 3, authorization, "node:node-pw");
  zmq::context_t context(1);
  std::vector<std::string> init = {REFLECTCTL_BIN, "jetstream", "init", "--stream", "SHARD"};
  for (const auto& arg : nats_args(cluster)) init.push_back(arg);
  const RunResult created = run_process(init, 30s);
  INFO(created.out << created.err);
  REQUIRE(created.status.code == 0);

  const std::string server_key = dir.file("server.key");
  write_cert_pair(server_key, generate_cert(), false);
  const std::string keys = dir.file("keys.yaml");
  write_text_file(keys, "keys:\n  - public_key: \"" + generate_cert().public_key +
                            "\"\n    agent_id: alice\n    namespaces: [team-a]\n"
                            "    max_sensitivity: low\n"
                            "  - public_key: \"" +
                            generate_cert().public_key +
                            "\"\n    agent_id: bob\n    namespaces: [team-a]\n"
                            "    max_sensitivity: high\n");
  Replica replica("replica", cluster.urls(), false,
                  "security:\n  curve_secret_key_file: \"" + server_key +
                      "\"\n  authorized_keys_file: \"" + keys + "\"\n");
  replica.start(context);

  std::string lines;
  std::int64_t turn = 0;
  for (const std::string level : {"public", "low", "medium", "high", "hyper"}) {
    lines += nlohmann::json{{"id", "r-" + level},
                            {"kind", "conversation"},
                            {"namespace", "team-a"},
                            {"sensitivity", level},
                            {"episode_id", "ep-1"},
                            {"sequence_number", ++turn},
                            {"content", "the harbour lighthouse note at level " + level},
                            {"timestamp", "2026-11-20T10:00:00Z"}}
                 .dump() +
             "\n";
  }
  write_text_file(dir.file("levels.jsonl"), lines);
  std::vector<std::string> publish = {REFLECTCTL_BIN};
  for (const auto& arg : nats_args(cluster)) publish.push_back(arg);
  publish.insert(publish.end(), {"jetstream", "publish", dir.file("levels.jsonl")});
  const RunResult published = run_process(publish, 30s);
  INFO(published.out << published.err);
  REQUIRE(published.status.code == 0);
  REQUIRE(wait_until([&] { return replica.events() == 5; }, 30s));

  // What one caller sees through every read path, as "id|redacted" rows sorted by id: each
  // path must agree.
  const auto seen = [&](const std::string& credentials, const std::string& subject) {
    const std::vector<std::string> urls = cluster.urls_as(credentials);
    std::map<std::string, std::vector<std::string>> by_path;
    const auto rows = [](const nlohmann::json& list) {
      std::vector<std::string> out;
      for (const auto& row : list) {
        const bool redacted = row["redacted"] == true || row["redacted"] == 1;
        const std::string content = row.value("content", row.value("preview", ""));
        // A redacted row shows no word of what it holds.
        if (redacted) CHECK(content.find("level") == std::string::npos);
        out.push_back(row["id"].get<std::string>() + (redacted ? "|redacted" : "|shown"));
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    const nlohmann::json base = {{"namespace", "team-a"}};
    auto ask = [&](nlohmann::json request) {
      request.update(base);
      nlohmann::json reply = nats_request_via(urls, subject, request);
      INFO(subject << " " << request.dump() << " -> " << reply.dump());
      REQUIRE(reply.value("ok", false));
      return reply;
    };
    by_path["recall"] =
        rows(ask({{"cmd", "recall"}, {"text", "harbour lighthouse"}, {"limit", 100}})["results"]);
    by_path["get"] =
        rows(ask({{"cmd", "get"},
                  {"ids", {"r-public", "r-low", "r-medium", "r-high", "r-hyper"}}})["events"]);
    by_path["episode"] = rows(ask({{"cmd", "episode"}, {"episode_id", "ep-1"}})["events"]);
    by_path["events"] = rows(ask({{"cmd", "events"}, {"limit", 100}})["events"]);
    by_path["search"] =
        rows(ask({{"cmd", "search"}, {"text", "harbour lighthouse"}, {"limit", 100}})["results"]);
    std::vector<std::string> sources =
        ask({{"cmd", "context"}, {"text", "harbour lighthouse"}, {"max_tokens", 2000}})["sources"]
            .get<std::vector<std::string>>();
    std::sort(sources.begin(), sources.end());
    for (const auto& [path, list] : by_path) {
      INFO(path);
      CHECK(list == by_path.at("get"));
    }
    std::vector<std::string> ids;
    for (const auto& row : by_path.at("get")) ids.push_back(row.substr(0, row.find('|')));
    CHECK(sources == ids);
    return by_path.at("get");
  };
  // alice (low): medium redacted, high and hyper absent; bob (high): hyper redacted; a read
  // that names no agent: the public level, so low is redacted and the rest absent.
  CHECK(seen("alice:alice-pw", "reflectd.agent-control.alice.team-a") ==
        std::vector<std::string>{"r-low|shown", "r-medium|redacted", "r-public|shown"});
  CHECK(seen("bob:bob-pw", "reflectd.agent-control.bob.team-a") ==
        std::vector<std::string>{"r-high|shown", "r-hyper|redacted", "r-low|shown",
                                 "r-medium|shown", "r-public|shown"});
  CHECK(seen("alice:alice-pw", "reflectd.control.team-a") ==
        std::vector<std::string>{"r-low|redacted", "r-public|shown"});

  // alice cannot read as bob: the server refuses her the subject, nobody answers.
  CHECK(nats_request_via(cluster.urls_as("alice:alice-pw"), "reflectd.agent-control.bob.team-a",
                         {{"cmd", "get"}, {"ids", {"r-high"}}, {"namespace", "team-a"}})
            .is_null());
  // An agent the authorized keys do not list, or outside its namespaces, is told why.
  const nlohmann::json stranger =
      nats_request(cluster, "reflectd.agent-control.carol.team-a",
                   {{"cmd", "get"}, {"ids", {"r-public"}}, {"namespace", "team-a"}});
  CHECK(stranger["error"] ==
        "authorization: agent \"carol\" of subject reflectd.agent-control.carol.team-a is not "
        "listed once in the authorized keys (security.authorized_keys_file)");
  const nlohmann::json elsewhere = nats_request(cluster, "reflectd.agent-control.alice.team-b",
                                                {{"cmd", "status"}, {"namespace", "team-b"}});
  CHECK(elsewhere["error"] ==
        "authorization: agent \"alice\" may not read namespace \"team-b\" (its namespaces: "
        "team-a)");

  // reflectctl reads as an agent with --nats-agent.
  std::vector<std::string> get = {REFLECTCTL_BIN};
  for (const auto& url : cluster.urls_as("bob:bob-pw")) get.insert(get.end(), {"--nats", url});
  get.insert(get.end(), {"--nats-agent", "bob", "recall", "--json", "--namespace", "team-a",
                         "harbour lighthouse"});
  const RunResult read = run_process(get, 30s);
  INFO(read.out << read.err);
  CHECK(read.status.code == 0);
  CHECK(read.out.find("level high") != std::string::npos);
  CHECK(read.out.find("level hyper") == std::string::npos);
  CHECK(replica.stopped_cleanly());
}

}  // namespace reflectd::test
