#pragma once
// A Model Context Protocol server (https://modelcontextprotocol.io, specification 2025-11-25):
// JSON-RPC 2.0 messages in, answers out, whatever carries them: one per line on stdio
// (`reflectctl mcp`, cli/mcp/stdio.hpp) or one per POST on Streamable HTTP (the daemon's /mcp,
// daemon/mcp_sessions.hpp). This layer knows the protocol only (lifecycle, version
// negotiation, tools, resources, errors); what the tools do is given to it as data
// (mcp/tools.hpp). There is no C++ SDK in Debian, hence this small layer over nlohmann-json.
//
// Protocol versions: the client's, when it is one of kProtocolVersions; else the newest
// (specification "Lifecycle": the server answers with a version it supports).
// Errors (JSON-RPC 2.0): -32700 a line that is not JSON; -32600 not a request; -32601 an
// unknown method; -32602 bad params (an unknown tool, a missing uri); -32002 an unknown
// resource (MCP). A tool that fails answers a result with isError: true and the reason as
// text, which the model sees (specification "Tools": tool execution errors).
//
// Thread-safety: none; one Server per session, used by one thread at a time.

#include <nlohmann/json.hpp>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflectd::mcp {

/// Newest first.
inline constexpr std::array<std::string_view, 4> kProtocolVersions{"2025-11-25", "2025-06-18",
                                                                   "2025-03-26", "2024-11-05"};

/// What a tool call returns: `text` for the model, `structured` (an object, may be null) for
/// programs (structuredContent).
struct ToolResult {
  std::string text;
  nlohmann::json structured;
  bool is_error = false;
  static ToolResult error(std::string message) { return {std::move(message), nullptr, true}; }
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  nlohmann::json input_schema;  ///< A JSON Schema object ({"type":"object",...}).
  /// Called with the arguments (an object) once their required fields and top-level types
  /// were checked against input_schema.
  std::function<ToolResult(const nlohmann::json& arguments)> call;
};

struct Resource {
  std::string uri, name, title, description, mime_type;
};

struct ResourceTemplate {
  std::string uri_template, name, title, description, mime_type;
};

/// What the server offers besides tools; every member may be empty.
struct Resources {
  std::function<std::vector<Resource>()> list;
  /// The text of `uri`, or nullopt when there is no such resource.
  std::function<std::optional<std::string>(const std::string& uri)> read;
  std::function<std::string(const std::string& uri)> mime_type;
  std::vector<ResourceTemplate> templates;
};

struct ServerInfo {
  std::string name, title, version, instructions;
};

class Server {
 public:
  Server(ServerInfo info, std::vector<Tool> tools, Resources resources);

  /// Handles one message (a line of stdio, or a POST body; a batch for 2025-03-26 clients)
  /// and returns the answer to write, or nullopt when nothing is answered (notifications,
  /// blank lines).
  std::optional<std::string> handle_line(std::string_view line);

  /// The version negotiated by initialize (empty before).
  const std::string& protocol_version() const { return protocol_version_; }

  /// The checks of call(): "<field>: is required" or "<field>: must be <type>", or empty.
  static std::string check_arguments(const nlohmann::json& schema, const nlohmann::json& args);

 private:
  nlohmann::json handle(const nlohmann::json& message);
  nlohmann::json dispatch(const std::string& method, const nlohmann::json& params,
                          const nlohmann::json& id);
  nlohmann::json call_tool(const nlohmann::json& params, const nlohmann::json& id);
  nlohmann::json read_resource(const nlohmann::json& params, const nlohmann::json& id);

  ServerInfo info_;
  std::vector<Tool> tools_;
  Resources resources_;
  std::string protocol_version_;
};

}  // namespace reflectd::mcp
