#include "cli/mcp/stdio.hpp"

#include <istream>
#include <ostream>
#include <variant>

namespace reflectd::cli::mcp {
namespace {

using json = nlohmann::json;

// The daemon's reply object, or the text of what went wrong.
std::variant<json, std::string> ask(const McpOptions& o, const std::string& endpoint,
                                    const json& request) {
  std::optional<json> reply;
  try {
    reply = control_request(endpoint, request, o.control.timeout, o.control.curve);
  } catch (const std::exception& error) {
    return std::string(error.what());
  }
  if (!reply) {
    return "no reply from reflectd at " + endpoint + " within " +
           std::to_string(o.control.timeout.count()) + " ms; is it running?";
  }
  if (!reply->is_object()) return "reflectd answered something that is not JSON: " + reply->dump();
  return *reply;
}

}  // namespace

reflectd::mcp::Backend zmq_backend(const McpOptions& options) {
  return {
      [options](const json& request) { return ask(options, options.control.endpoint, request); },
      [options](const json& event) { return ask(options, options.ingest_endpoint, event); },
      options.ns};
}

int run_mcp(const McpOptions& options, std::istream& in, std::ostream& out) {
  const reflectd::mcp::Backend backend = zmq_backend(options);
  reflectd::mcp::Server server(reflectd::mcp::reflectd_server_info(),
                               reflectd::mcp::reflectd_tools(backend),
                               reflectd::mcp::reflectd_resources(backend));
  std::string line;
  while (std::getline(in, line)) {
    if (auto answer = server.handle_line(line)) out << *answer << '\n' << std::flush;
  }
  return 0;
}

}  // namespace reflectd::cli::mcp
