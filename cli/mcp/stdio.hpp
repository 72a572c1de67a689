#pragma once
// `reflectctl mcp`: reflectd's MCP server (mcp/tools.hpp) on stdin and stdout, its tools
// reaching the daemon over the same endpoints, configuration and CURVE keys as every other
// reflectctl command.
//
// Error policy: no reply in time or a broken socket is a tool error (mcp/tools.hpp); nothing
// throws out of a session. Thread-safety: one session's thread.

#include <iosfwd>
#include <string>

#include "cli/control.hpp"
#include "mcp/tools.hpp"

namespace reflectd::cli::mcp {

struct McpOptions {
  ControlOptions control;       ///< The control endpoint, timeout and CURVE keys.
  std::string ingest_endpoint;  ///< Where remember publishes (acknowledged ingest).
  std::string ns;               ///< --namespace: the namespace when a call names none.
};

/// The tools' Backend over ZeroMQ: control requests on options.control, events on
/// options.ingest_endpoint.
reflectd::mcp::Backend zmq_backend(const McpOptions& options);

/// Serves one MCP session: reads lines from `in` until end of input, writes each answer as
/// one line to `out` (flushed). Returns 0.
int run_mcp(const McpOptions& options, std::istream& in, std::ostream& out);

}  // namespace reflectd::cli::mcp
