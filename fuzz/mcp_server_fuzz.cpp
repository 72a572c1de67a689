// Fuzz target: the MCP protocol layer (mcp/server.hpp) over arbitrary stdin lines, as a
// client (or anything writing to the server's stdin) may send them, with one tool and one
// resource provider behind it.
// Checks: nothing throws; every answer is one line of JSON (an object, or an array of objects
// for a batch) with "jsonrpc": "2.0" and either a result or an error whose code is one of the
// documented ones; a notification (no id) is never answered.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_check.hpp"
#include "mcp/server.hpp"

namespace {

using nlohmann::json;
using namespace reflectd::mcp;

Server make_server() {
  Tool echo{"echo",
            "Echo",
            "Returns its text",
            {{"type", "object"},
             {"properties",
              {{"text", {{"type", "string"}}},
               {"n", {{"type", "integer"}}},
               {"mode", {{"type", "string"}, {"enum", {"a", "b"}}}}}},
             {"required", {"text"}}},
            [](const json& args) -> ToolResult {
              return {args["text"].get<std::string>(), {{"echoed", args["text"]}}};
            }};
  Resources resources;
  resources.list = [] { return std::vector<Resource>{{"r://1", "one", "One", "", "text/plain"}}; };
  resources.read = [](const std::string& uri) -> std::optional<std::string> {
    if (uri == "r://1") return std::string("text");
    return std::nullopt;
  };
  return Server({"reflectd", "fuzz", "0", ""}, {echo}, resources);
}

void check_response(const json& r) {
  FUZZ_CHECK(r.is_object(), "an answer that is not an object: %s", r.dump().c_str());
  FUZZ_CHECK(r.value("jsonrpc", "") == "2.0", "no jsonrpc 2.0: %s", r.dump().c_str());
  FUZZ_CHECK(r.contains("id"), "an answer without id: %s", r.dump().c_str());
  FUZZ_CHECK(r.contains("result") != r.contains("error"), "result and error: %s", r.dump().c_str());
  if (r.contains("error")) {
    const int code = r["error"].value("code", 0);
    FUZZ_CHECK(code == -32700 || code == -32600 || code == -32601 || code == -32602 ||
                   code == -32603 || code == -32002,
               "undocumented error code %d", code);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Server server = make_server();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= input.size()) {
    const std::size_t end = std::min(input.find('\n', start), input.size());
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    const auto answer = server.handle_line(line);
    if (!answer) continue;
    FUZZ_CHECK(answer->find('\n') == std::string::npos, "an answer spans lines");
    const json parsed = json::parse(*answer, nullptr, false);
    FUZZ_CHECK(!parsed.is_discarded(), "an answer that is not JSON: %s", answer->c_str());
    if (parsed.is_array()) {
      for (const json& r : parsed) check_response(r);
    } else {
      check_response(parsed);
    }
  }
  return 0;
}
