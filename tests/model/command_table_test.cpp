// The command table (model/commands.hpp) against everything said to come from it: the
// daemon's dispatch and admin check, the read thread's routing, reflectctl's subcommands and
// --help, the MCP tools' input schemas and the README's command list.
//
// REFLECTD_UPDATE_DOCS=1 rewrites the README's list from the table instead of comparing.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "daemon/read_thread.hpp"
#include "mcp/tools.hpp"
#include "model/commands.hpp"
#include "support/daemon_fixture.hpp"
#include "support/process.hpp"

using namespace reflectd;
using nlohmann::json;

namespace {

constexpr const char* kListBegin = "<!-- command list: generated from model/commands.cpp -->\n";
constexpr const char* kListEnd = "<!-- end of command list -->\n";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("every daemon command of the table is dispatched; the lists name them all",
          "[commands]") {
  CHECK(daemon::Daemon::unhandled_commands().empty());
  CHECK(daemon::ReadThread::commands() == model::read_commands());
  for (const std::string& cmd : model::read_commands()) CHECK(daemon::ReadThread::answers(cmd));

  test::TempDir dir;
  config::Config config = test::loopback_config(dir);
  test::disable_background_jobs(config);
  test::RunningDaemon running(config);
  zmq::context_t context;
  auto control =
      test::make_client(context, zmq::socket_type::dealer, running.endpoints().control.at(0));
  std::string known;
  for (const model::CommandSpec& spec : model::command_table()) {
    if (!spec.daemon_command() || spec.test_hook) continue;
    known += (known.empty() ? "" : ", ") + std::string(spec.name);
    // A request without its parameters: answered (often with what it lacks), never "unknown".
    const json reply = test::control(control, {{"cmd", spec.name}});
    INFO(spec.name << ": " << reply.dump());
    REQUIRE(reply.is_object());
    CHECK_THAT(reply.value("error", ""), !Catch::StartsWith("unknown command"));
  }
  // A test hook is unknown to a daemon started without test hooks.
  CHECK_THAT(test::control(control, {{"cmd", "test_stall"}})["error"].get<std::string>(),
             Catch::StartsWith("unknown command 'test_stall'"));
  CHECK(test::control(control, {{"cmd", "fly"}})["error"] ==
        "unknown command 'fly'; known: " + known);
  CHECK(model::known_commands(false) == known);
  CHECK(model::admin_commands(false) == "run, reinforce");
  CHECK(model::admin_commands(true) == "run, reinforce, test_stall");
  CHECK(test::control(control, {{"cmd", "reinforce"}})["error"] ==
        R"(reinforce: "id" (string) is required)");
}

TEST_CASE("reflectctl has every subcommand of the table, and --help lists them all",
          "[commands][cli]") {
  using namespace std::chrono_literals;
  const test::RunResult help = test::run_process({REFLECTCTL_BIN, "--help"}, 30s);
  REQUIRE(help.status.code == 0);
  CHECK_THAT(help.out, Catch::Contains("COMMANDS\n" + model::help_command_list()));
  int subcommands = 0;
  for (const model::CommandSpec& spec : model::command_table()) {
    if (spec.cli_usage.empty()) continue;
    ++subcommands;
    INFO(spec.cli_usage);
    CHECK_THAT(help.out, Catch::Contains("  " + std::string(spec.cli_usage)));
    const test::RunResult sub =
        test::run_process({REFLECTCTL_BIN, std::string(spec.cli_name()), "--help"}, 30s);
    CHECK(sub.status.code == 0);
    CHECK_THAT(sub.out, Catch::StartsWith(spec.description));
  }
  CHECK(subcommands == 28);
}

TEST_CASE("the MCP tools are the table's, with the schemas generated from it", "[commands]") {
  const std::vector<mcp::Tool> tools = mcp::reflectd_tools({});
  std::size_t in_table = 0;
  for (const model::CommandSpec& spec : model::command_table()) {
    if (!spec.mcp) continue;
    ++in_table;
    const auto tool = std::find_if(tools.begin(), tools.end(),
                                   [&](const mcp::Tool& t) { return t.name == spec.mcp->name; });
    INFO(spec.mcp->name);
    REQUIRE(tool != tools.end());
    CHECK(tool->title == spec.mcp->title);
    CHECK(tool->input_schema == model::input_schema(spec.mcp->input));
  }
  CHECK(in_table == tools.size());
  // A schema as agents see it (the required list, a range, a nested object).
  const json context = model::input_schema(model::find_command("context")->mcp->input);
  CHECK(context["required"] == json::array({"query"}));
  CHECK(context["properties"]["max_tokens"] ==
        json::parse(R"({"type":"integer","minimum":50,"maximum":100000})"));
  const json forget = model::input_schema(model::find_command("forget")->mcp->input);
  CHECK_FALSE(forget.contains("required"));
  CHECK(forget["properties"]["filter"]["properties"]["text"] ==
        json::parse(R"({"type":"string"})"));
}

TEST_CASE("the README's command list is the table's", "[commands]") {
  const std::string path = std::string(REFLECTD_SOURCE_DIR) + "/README.md";
  std::string readme = read_text(path);
  const auto begin = readme.find(kListBegin);
  const auto end = readme.find(kListEnd);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::size_t from = begin + std::string(kListBegin).size();
  const std::string generated = model::markdown_command_list();
  if (std::getenv("REFLECTD_UPDATE_DOCS") != nullptr) {
    readme.replace(from, end - from, generated);
    std::ofstream(path) << readme;
  }
  CHECK(read_text(path).substr(from, generated.size() + std::string(kListEnd).size()) ==
        generated + kListEnd);
}
