// Forgotten means forgotten, end to end (docs/MEMORY.md, "Where content can reach"): one unique
// marker planted in every field of the wire format that carries text, across several events of
// a real commit history, read through every read path, forgotten by ids, by filter and by the
// retention job, with every job run before and after; then the daemon, a real child process
// logging at its default level, is stopped, and the marker is in no byte of the database, its
// WAL, its shm and the log.

#include <catch2/catch.hpp>
#include <zmq.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "support/child_daemon.hpp"
#include "support/corpus.hpp"
#include "support/daemon_fixture.hpp"
#include "support/db_dump.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace test = reflectd::test;

constexpr const char* kMarkerWord = "quillfeather9431";

// The events that carry the marker, in namespace `ns`, one field each and several together:
// content, context, tags, entities, relations, metadata, episode id, a second agent's id, and
// a SHODH memory object (seed 005) with fields the wire format does not know.
std::vector<std::string> marked_events(const std::string& ns, const std::string& prefix,
                                       const std::string& ts) {
  const std::string m = kMarkerWord;
  return {json{{"id", prefix + "-content"},
               {"kind", "commit_change"},
               {"namespace", ns},
               {"agent_id", "dev-marker"},
               {"timestamp", ts},
               {"content", "Replace the " + m + " allocator with the arena\n\nBecause the " + m +
                               " allocator fragments the heap."},
               {"context", {{"files", {"src/" + m + ".cc", "include/fmt/format.h"}}, {"note", m}}},
               {"entities", {"tool:" + m, "file:src/" + m + ".cc"}},
               {"tags", {m, "allocator"}}}
              .dump(),
          json{{"id", prefix + "-fields"},
               {"kind", "decision"},
               {"namespace", ns},
               {"agent_id", "agent-" + m},
               {"timestamp", ts},
               {"episode_id", "episode-" + m},
               {"sequence_number", 1},
               {"content", "Use the arena for every buffer in " + prefix},
               {"context",
                {{"title", "Arena buffers"},
                 {"target", "src/" + prefix + "/" + m + "_arena.cc"},
                 {"rationale", "fewer " + m + " stalls"}}},
               {"relations", {{{"predicate", "relates_to"}, {"target_id", prefix + "-content"}}}},
               {"metadata", {{"reviewer", m}, {"ticket", "TKT-" + m}}}}
              .dump(),
          json{{"id", prefix + "-episode"},
               {"kind", "call"},
               {"namespace", ns},
               {"agent_id", "agent-" + m},
               {"timestamp", ts},
               {"episode_id", "episode-" + m},
               {"sequence_number", 2},
               {"content", "ran the benchmark"}}
              .dump(),
          // Seed 005's shape: no kind, and fields reflectd keeps as metadata.
          json{{"id", prefix + "-shodh"},
               {"type", "Decision"},
               {"namespace", ns},
               {"source_type", "ai_generated"},
               {"created_at", ts},
               {"content", "Keep the arena per thread in " + prefix},
               {"experience_" + m, {{"detail", m}}},
               {"emotional_context", m}}
              .dump()};
}

json ids_of(const std::vector<std::string>& lines) {
  json ids = json::array();
  for (const auto& line : lines) ids.push_back(json::parse(line)["id"]);
  return ids;
}

struct Daemon {
  Daemon(const test::TempDir& dir, const std::string& config)
      : process({REFLECTD_BIN, "--config", config}, {"", "", dir.file("stderr.log")}),
        control(test::ipc_endpoint(dir, "c")),
        ingest(test::ipc_endpoint(dir, "i")) {
    REQUIRE(test::wait_ready(context, control, 60s));
  }
  json ask(const json& request) {
    json reply = test::control_request(context, control, request, 600000);
    INFO(request.dump() << " -> " << reply.dump());
    REQUIRE(reply.is_object());
    return reply;
  }
  json publish(const std::vector<std::string>& lines) {
    zmq::socket_t socket = test::make_client(context, zmq::socket_type::dealer, ingest);
    std::string batch = "[";
    for (const auto& line : lines) batch += (batch.size() > 1 ? "," : "") + line;
    batch += "]";
    return test::ingest(socket, batch);
  }
  void run_every_job() {
    const json listed = ask({{"cmd", "jobs"}});  // the loop reads it: it must outlive the loop
    for (const auto& job : listed["jobs"]) {
      if (job == "retention") continue;  // run by the test when the third group is due
      const json reply = ask({{"cmd", "run"}, {"job", job}, {"wait", true}});
      INFO(job << ": " << reply.dump());
      CHECK(reply["ok"] == true);
    }
  }
  void stop() {
    process.send_signal(SIGTERM);
    const auto ended = process.wait_for(120s);
    REQUIRE(ended);
    CHECK(ended->code == 0);
  }
  zmq::context_t context;
  test::ChildProcess process;
  std::string control;
  std::string ingest;
};

}  // namespace

TEST_CASE("forget: a marker in every wire field is in no byte of the files or the log") {
  test::TempDir dir;
  const std::string db = dir.file("reflectd.db");
  const std::string config = dir.file("reflectd.yaml");
  test::ChildOptions options;
  options.log_level = "info";  // the default level
  // The retention rule deletes the third group: a namespace of its own, events a year old.
  options.extra = std::string(test::kJobsOnDemandYaml) +
                  "  retention: {interval_s: 604800, after_events: 0, idle_s: 0}\n"
                  "retention:\n  rules: [\"max_age_days=30;namespace=fmt-scratch\"]\n"
                  // Every entity in the importance job's result, so a name kept there shows.
                  "importance:\n  top_entities: 10000\n";
  test::write_text_file(config, test::child_config(dir, db, options));

  // A real history, with the marked events in its middle, so later commits and runs build on
  // what they gave; a second namespace holds the group retention deletes.
  std::vector<std::string> fmt = test::corpus_lines("fmt-commits.jsonl");
  fmt.resize(600);
  const auto by_ids = marked_events("fmt", "marked-a", "2014-03-01T12:00:00Z");
  const auto by_filter = marked_events("fmt", "marked-b", "2015-06-01T12:00:00Z");
  fmt.insert(fmt.begin() + 400, by_filter.begin(), by_filter.end());
  fmt.insert(fmt.begin() + 200, by_ids.begin(), by_ids.end());
  std::vector<std::string> scratch = test::corpus_lines("fmt-commits.jsonl");
  scratch.erase(scratch.begin(), scratch.begin() + 600);
  scratch.resize(100);
  for (auto& line : scratch) {
    json e = json::parse(line);
    e["namespace"] = "fmt-scratch";
    e["id"] = "scratch:" + e["id"].get<std::string>();
    line = e.dump();
  }
  const auto retained = marked_events("fmt-scratch", "marked-c", "2016-01-01T12:00:00Z");
  scratch.insert(scratch.begin() + 50, retained.begin(), retained.end());

  Daemon daemon(dir, config);
  for (const auto* lines : {&fmt, &scratch}) {
    for (std::size_t at = 0; at < lines->size(); at += 200) {
      const std::vector<std::string> part(
          lines->begin() + static_cast<std::ptrdiff_t>(at),
          lines->begin() + static_cast<std::ptrdiff_t>(std::min(at + 200, lines->size())));
      const json reply = daemon.publish(part);
      json refused = json::array();
      for (const auto& result : reply["results"]) {
        if (result["status"] != "stored") refused.push_back(result);
      }
      INFO(reply.value("error", "") << refused.dump());
      REQUIRE(refused.empty());
    }
  }
  // Retention is for the end: until then the third group stays, and is read like the others.
  daemon.run_every_job();
  daemon.ask({{"cmd", "run"}, {"job", "facts"}, {"wait", true}});

  // Every read path, so that access counts and read records are written.
  for (const char* ns : {"fmt", "fmt-scratch"}) {
    const json recalled = daemon.ask({{"cmd", "recall"}, {"text", kMarkerWord}, {"namespace", ns}});
    INFO(recalled.dump());
    CHECK(!recalled.value("results", json::array()).empty());
    CHECK(daemon.ask({{"cmd", "context"},
                      {"text", std::string("arena ") + kMarkerWord},
                      {"namespace", ns}})["ok"] == true);
    CHECK(daemon.ask({{"cmd", "search"}, {"text", kMarkerWord}, {"namespace", ns}})["ok"] == true);
    CHECK(daemon.ask({{"cmd", "medallion"}, {"action", "list"}, {"namespace", ns}})["ok"] == true);
    for (const char* list : {"knowledge", "observations", "entities", "clusters", "facts"}) {
      CHECK(daemon.ask({{"cmd", list}, {"namespace", ns}})["ok"] == true);
    }
  }
  const json got = daemon.ask({{"cmd", "get"}, {"ids", {"marked-a-fields", "marked-b-content"}}});
  CHECK(got["events"].size() == 2);
  const json episode = daemon.ask({{"cmd", "episode"},
                                   {"namespace", "fmt"},
                                   {"episode_id", std::string("episode-") + kMarkerWord}});
  CHECK(episode["events"].size() == 4);
  CHECK(test::file_occurrences(db, kMarkerWord) + test::file_occurrences(db + "-wal", kMarkerWord) >
        0);  // the check can find it

  // Bad input deletes nothing, and says which field broke which rule.
  const json none = daemon.ask({{"cmd", "forget"},
                                {"filter", {{"namespace", "fmt"}, {"text", "no such words"}}},
                                {"mode", "delete"}});
  CHECK(none["ok"] == false);
  CHECK(none["error"] == "forget: filter: matches no event");
  CHECK(daemon.ask({{"cmd", "forget"},
                    {"ids", {"marked-a-content", "nope"}},
                    {"mode", "delete"}})["error"] ==
        "forget: ids: no event 'nope' in the namespaces you may write (*)");
  CHECK(daemon.ask({{"cmd", "forget"},
                    {"filter", {{"namespace", "fmt"}, {"before", "soon"}}},
                    {"mode", "delete"}})["error"] ==
        "forget: filter.before: must be an RFC 3339 date-time with an offset (e.g. "
        "2024-05-01T00:00:00Z)");
  CHECK(daemon.ask({{"cmd", "pin"}, {"ids", {"marked-a-episode"}}})["ok"] == true);
  CHECK(
      daemon.ask({{"cmd", "forget"}, {"ids", {"marked-a-episode"}}, {"mode", "delete"}})["error"] ==
      "forget: event 'marked-a-episode': pinned: unpin it first");
  CHECK(daemon.ask({{"cmd", "unpin"}, {"ids", {"marked-a-episode"}}})["ok"] == true);
  CHECK(daemon.ask({{"cmd", "get"}, {"ids", ids_of(by_ids)}})["events"].size() == 4);

  // First: by ids. Then, after a full cycle, by filter; then retention.
  json reply =
      daemon.ask({{"cmd", "forget"}, {"ids", ids_of(by_ids)}, {"mode", "delete"}, {"wait", true}});
  CHECK(reply["forgotten"]["events_deleted"] == 4);
  daemon.run_every_job();
  reply = daemon.ask({{"cmd", "forget"},
                      {"filter",
                       {{"namespace", "fmt"},
                        {"after", "2015-05-31T00:00:00Z"},
                        {"before", "2015-06-02T00:00:00Z"}}},
                      {"mode", "delete"},
                      {"wait", true}});
  CHECK(reply["forgotten"]["events_deleted"] == 4);
  reply = daemon.ask({{"cmd", "run"}, {"job", "retention"}, {"wait", true}});
  CHECK(reply["run"]["result"]["events_deleted"] == 104);
  daemon.run_every_job();
  CHECK(daemon.ask({{"cmd", "recall"}, {"text", kMarkerWord}, {"namespace", "fmt"}})["results"] ==
        json::array());
  // The audit rows of the forget keep ids, namespace, kind and seq: never content.
  const json audit = daemon.ask({{"cmd", "audit"}, {"limit", 1000}});
  CHECK(std::count_if(audit["audit"].begin(), audit["audit"].end(),
                      [](const json& row) { return row["action"] == "delete"; }) == 112);
  daemon.stop();

  for (const std::string& file : {db, db + "-wal", db + "-shm", dir.file("stderr.log")}) {
    INFO(file);
    CHECK(test::file_occurrences(file, kMarkerWord) == 0);
  }
  SQLite::Database left(db, SQLite::OPEN_READONLY);
  INFO(test::dump(
      left, std::string("SELECT * FROM audit_log WHERE instr(actor, '") + kMarkerWord + "') > 0"));
  CHECK(test::places_of(left, kMarkerWord) == std::set<std::string>{});
  CHECK(test::read_text_file(dir.file("stderr.log")).find("forget") != std::string::npos);
}
