// The declarative key table: defaults, validation errors with file:line:column, the example.

#include <catch2/catch.hpp>

#include <array>
#include <fstream>
#include <sstream>

#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "store/database.hpp"
#include "support/temp_dir.hpp"

using reflectd::config::ConfigError;
using reflectd::config::load_string;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    load_string(yaml, "test.yaml");
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("defaults come from the key table") {
  const auto config = reflectd::config::defaults();
  CHECK(config.log.level == "info");
  CHECK(config.bus.ingest == std::vector<std::string>{"tcp://127.0.0.1:7701"});
  CHECK(config.bus.push == std::vector<std::string>{"tcp://127.0.0.1:7702"});
  CHECK(config.bus.notify == std::vector<std::string>{"tcp://127.0.0.1:7703"});
  CHECK(config.bus.control == std::vector<std::string>{"tcp://127.0.0.1:7704"});
  CHECK(config.bus.subscribe.empty());
  CHECK(config.bus.subscribe_topics == std::vector<std::string>{""});
  CHECK(config.bus.max_message_bytes == 1048576);
  CHECK(config.store.path == "reflectd.db");
  CHECK(config.store.synchronous == "full");
  CHECK(config.store.commit_max_events == 2000);
  CHECK(config.store.commit_max_delay_ms == 20);
  CHECK(config.daemon.stats_interval_ms == 1000);
  CHECK(load_string("", "empty.yaml").store.path == "reflectd.db");
}

TEST_CASE("values override defaults, others keep theirs") {
  const auto config = load_string(R"(
log: {level: debug}
bus:
  ingest: ["ipc:///tmp/x/ingest", "tcp://127.0.0.1:*"]
  max_message_bytes: 4096
store:
  path: /var/lib/reflectd/events.db
  synchronous: normal
)");
  CHECK(config.log.level == "debug");
  CHECK(config.bus.ingest.size() == 2);
  CHECK(config.bus.max_message_bytes == 4096);
  CHECK(config.bus.push == std::vector<std::string>{"tcp://127.0.0.1:7702"});
  CHECK(config.store.path == "/var/lib/reflectd/events.db");
  CHECK(config.store.synchronous == "normal");
}

TEST_CASE("errors name file:line:column and the key") {
  CHECK(error_of("store:\n  pathh: x\n") == "test.yaml:2:3: store.pathh: unknown key");
  CHECK(error_of("nosuch: 1\n") == "test.yaml:1:1: nosuch: unknown key");
  CHECK(error_of("store:\n  synchronous: fast\n") ==
        "test.yaml:2:16: store.synchronous: must be one of off|normal|full|extra");
  CHECK(error_of("bus:\n  max_message_bytes: 12\n") ==
        "test.yaml:2:22: bus.max_message_bytes: must be between 1024 and 67108864");
  CHECK(error_of("bus:\n  max_message_bytes: lots\n") ==
        "test.yaml:2:22: bus.max_message_bytes: must be an integer");
  CHECK(error_of("bus:\n  ingest: tcp://127.0.0.1:1\n") ==
        "test.yaml:2:11: bus.ingest: must be a list of strings");
  CHECK(error_of("bus:\n  ingest: [\"udp://x:1\"]\n") ==
        "test.yaml:2:12: bus.ingest: 'udp://x:1': must start with tcp://, ipc:// or inproc://");
  CHECK(error_of("bus:\n  push: [\"tcp://127.0.0.1:99999\"]\n") ==
        "test.yaml:2:10: bus.push: 'tcp://127.0.0.1:99999': tcp port must be 1-65535 or *");
  CHECK(error_of("bus:\n  control: [\"ipc:///" + std::string(120, 'p') + "\"]\n")
            .find("ipc path is longer than 107 bytes") != std::string::npos);
  CHECK(error_of("store: 5\n") == "test.yaml:1:8: store: must be a mapping");
  CHECK(error_of("store:\n  path: \"\"\n") ==
        "test.yaml:2:9: store.path: must be a non-empty string");
  CHECK(error_of("- a\n- b\n") == "test.yaml:1:1: (top level): must be a mapping of sections");
  CHECK(error_of("store: [unclosed\n").starts_with("test.yaml:2:1: invalid YAML: "));
}

TEST_CASE("a missing file is a clear error") {
  CHECK_THROWS_WITH(reflectd::config::load_file("/nonexistent/reflectd.yaml"),
                    "/nonexistent/reflectd.yaml: cannot open the configuration file");
}

TEST_CASE("config/reflectd.yaml is the rendered key table and loads to the defaults") {
  std::ifstream in(std::string(REFLECTD_SOURCE_DIR) + "/config/reflectd.yaml");
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with: build/daemon/reflectd --print-default-config > config/reflectd.yaml
  CHECK(text.str() == reflectd::config::render_example());
  const auto loaded = load_string(text.str(), "config/reflectd.yaml");
  CHECK(reflectd::config::changed_keys(loaded, reflectd::config::defaults()).empty());
}

TEST_CASE("every key is documented and its default is valid") {
  for (const auto& key : reflectd::config::key_table()) {
    INFO(key.path);
    CHECK_FALSE(key.description.empty());
    CHECK(key.path.find('.') != std::string_view::npos);
  }
}

TEST_CASE("changed_keys lists differences in table order") {
  const auto a = reflectd::config::defaults();
  const auto b = load_string("log: {level: warn}\nstore: {path: other.db}\n");
  const auto changed = reflectd::config::changed_keys(a, b);
  REQUIRE(changed.size() == 2);
  CHECK(changed[0] == "log.level");
  CHECK(changed[1] == "store.path");
}

TEST_CASE("store.path resolves against $STATE_DIRECTORY") {
  using reflectd::config::resolve_store_path;
  CHECK(resolve_store_path("reflectd.db", nullptr) == "reflectd.db");
  CHECK(resolve_store_path("reflectd.db", "/var/lib/reflectd") == "/var/lib/reflectd/reflectd.db");
  CHECK(resolve_store_path("reflectd.db", "/var/lib/a:/var/lib/b") == "/var/lib/a/reflectd.db");
  CHECK(resolve_store_path("/abs/x.db", "/var/lib/reflectd") == "/abs/x.db");
}

TEST_CASE("jobs.synchronous sets the jobs' connection, never above store.synchronous") {
  // PRAGMA synchronous reads back 0 off, 1 normal, 2 full, 3 extra.
  struct Case {
    const char* store;
    const char* jobs;
    const char* expected;
    int pragma;
  };
  const std::array<Case, 7> cases{{{"full", "normal", "normal", 1},
                                   {"full", "full", "full", 2},
                                   {"extra", "normal", "normal", 1},
                                   {"extra", "full", "full", 2},
                                   {"normal", "full", "normal", 1},
                                   {"off", "normal", "off", 0},
                                   {"off", "full", "off", 0}}};
  CHECK(reflectd::config::defaults().jobs.synchronous == "normal");
  reflectd::test::TempDir dir;
  for (const Case& c : cases) {
    INFO(c.store << " / " << c.jobs);
    const auto config = load_string(std::string("store: {synchronous: ") + c.store +
                                    "}\njobs: {synchronous: " + c.jobs + "}\n");
    const auto options = reflectd::daemon::jobs_database_options(config, dir.file("jobs.db"));
    CHECK(options.synchronous == c.expected);
    CHECK(options.path == dir.file("jobs.db"));
    CHECK(options.busy_timeout_ms == config.store.busy_timeout_ms);
    auto db = reflectd::store::open_database(options, reflectd::store::Access::kWriter);
    CHECK(db.execAndGet("PRAGMA synchronous").getInt() == c.pragma);
  }
  CHECK(error_of("jobs: {synchronous: off}\n").find("jobs.synchronous") != std::string::npos);
}

TEST_CASE("an optional string (a quoted default) may be set to \"\" to turn it off") {
  const auto config =
      load_string("daemon:\n  metrics_listen: \"\"\nrecall:\n  wordnet_dir: \"\"\n", "off.yaml");
  CHECK(config.daemon.metrics_listen.empty());
  CHECK(config.recall.wordnet_dir.empty());
  CHECK(reflectd::config::defaults().recall.wordnet_dir.empty());
  // A required string still may not be empty.
  CHECK_THROWS_WITH(load_string("store:\n  path: \"\"\n", "bad.yaml"),
                    Catch::Contains("store.path: must be a non-empty string"));
}

TEST_CASE("config: a writer built without a configuration has the store.* keys' defaults") {
  const reflectd::store::WriterOptions plain;
  const reflectd::store::WriterOptions configured =
      reflectd::daemon::writer_options(reflectd::config::defaults(), "x.db");
  CHECK(plain.commit_max_events == configured.commit_max_events);
  CHECK(plain.commit_max_delay_ms == configured.commit_max_delay_ms);
  CHECK(plain.queue_capacity_events == configured.queue_capacity_events);
  CHECK(plain.max_pages == configured.max_pages);
  CHECK(plain.fts_batch_events == configured.fts_batch_events);
  CHECK(plain.checkpoint_pages == configured.checkpoint_pages);
  CHECK(plain.cache_mib == configured.cache_mib);
  CHECK(plain.content_dedup == configured.content_dedup);
  CHECK(plain.commit_pipelining == configured.commit_pipelining);
}
