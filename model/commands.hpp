#pragma once
// The command table: every command reflectd answers, every reflectctl subcommand and every MCP
// tool, declared once (the way Redis declares its commands). The daemon's dispatch, its
// admin check and "unknown command" list, the read thread's routing, `reflectctl --help`'s
// command list, the MCP tools' input schemas and the README's command list are all read from
// here, so adding a read command is one entry here, one handler and its test.
//
// It lives in model/ (below daemon/, cli/ and recall/) because both sides of the control
// socket read it; it names no handler: each layer registers its handlers by command name and
// tests/model/command_table_test.cpp checks that every entry has one.
//
// Inputs and outputs: plain data and pure functions; nothing here throws except
// std::bad_alloc. Thread-safety: the table is built once (a function-local static) and never
// changed, so every function may be called from any thread.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::model {

/// Who answers a command.
enum class Answerer {
  kControl,  ///< the daemon's io thread (writes, admin commands, status)
  kRead,     ///< the daemon's read thread (daemon/read_thread.hpp)
  kClient,   ///< nobody in the daemon: reflectctl (or its MCP server) does the work itself
};

/// The JSON type of a request field.
enum class JsonType { kString, kInteger, kBoolean, kObject, kStringArray };

/// One field of a request (or of an MCP tool's arguments).
struct Field {
  std::string_view name;
  JsonType type = JsonType::kString;
  bool required = false;
  std::string_view description = {};  ///< empty: none in the schema
  std::optional<std::int64_t> minimum = std::nullopt;
  std::optional<std::int64_t> maximum = std::nullopt;
  std::vector<std::string_view> one_of = {};  ///< a string's allowed values ("enum")
  /// A JSON Schema (JSON text) for a nested object; when set it replaces what `type`,
  /// `description`, `minimum`, `maximum` and `one_of` would generate.
  std::string_view schema = {};
};

/// An MCP tool of `reflectctl mcp` (mcp/tools.cpp holds its handler).
struct McpTool {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  std::vector<Field> input;  ///< the tool's arguments: its inputSchema is generated from them
};

/// One command.
struct CommandSpec {
  /// The wire name (`{"cmd": name}`), or for a client-only entry the subcommand's or tool's.
  std::string_view name;
  Answerer answerer = Answerer::kRead;
  /// Changes what the daemon holds or does: refused to callers without admin: true.
  bool admin = false;
  /// Answered only by a daemon started with test hooks (daemon/test_hooks.hpp).
  bool test_hook = false;
  /// reflectctl's synopsis, e.g. "search TEXT"; empty: no reflectctl subcommand.
  std::string_view cli_usage = {};
  /// One line for `reflectctl --help` and the README.
  std::string_view summary = {};
  /// The subcommand's --help description and footer (model/command_help.hpp); may be null.
  const char* description = nullptr;
  const char* footer = nullptr;
  /// The request's fields besides "cmd" (docs/COMMANDS.md).
  std::vector<Field> request = {};
  /// The MCP tool that carries this command, if any.
  std::optional<McpTool> mcp = std::nullopt;

  /// The reflectctl subcommand's name: the first word of cli_usage ("" when none).
  std::string_view cli_name() const;
  /// True when the daemon dispatches it (control or read thread).
  bool daemon_command() const { return answerer != Answerer::kClient; }
};

/// Every command, in the order the daemon names them.
const std::vector<CommandSpec>& command_table();

/// The entry named `name` (wire name or, for client-only entries, their name); null if none.
const CommandSpec* find_command(std::string_view name);

/// The daemon's commands a caller may send, comma-separated in table order, the test hooks
/// included only when `test_hooks` ("status, run, jobs, …"): the "known:" list of errors.
std::string known_commands(bool test_hooks);

/// The admin commands, comma-separated, the test hooks included only when `test_hooks`.
std::string admin_commands(bool test_hooks);

/// The refusal of an admin command `cmd` to `agent_id` (an error text of the wire format).
std::string admin_refusal(std::string_view cmd, std::string_view agent_id, bool test_hooks);

/// The wire names of the read thread's commands, sorted.
std::vector<std::string> read_commands();

/// The COMMANDS lines of `reflectctl --help`: one per subcommand, "  USAGE  summary".
std::string help_command_list();

/// The README's command list (Markdown): one bullet per subcommand.
std::string markdown_command_list();

/// A JSON Schema object ({"type":"object","properties":…,"required":…}) of `fields`.
nlohmann::json input_schema(const std::vector<Field>& fields);

/// The first field of `spec`'s request that is required and absent (or not of its type), as
/// the daemon's error text `<cmd>: "<field>" (<type>) is required`; nullopt when none.
std::optional<std::string> missing_field(const CommandSpec& spec, const nlohmann::json& request);

}  // namespace reflectd::model
