// The MCP protocol layer (mcp/server.hpp) on its own: lifecycle, version negotiation,
// JSON-RPC errors, argument checks and tool errors. The end-to-end test with the official
// TypeScript SDK against a real daemon is tests/mcp/ (CTest: mcp_client_test).

#include <catch2/catch.hpp>

#include "mcp/server.hpp"

namespace {

using nlohmann::json;
using reflectd::mcp::Resources;
using reflectd::mcp::Server;
using reflectd::mcp::Tool;
using reflectd::mcp::ToolResult;

Server echo_server() {
  Tool echo{"echo",
            "Echo",
            "Returns its text",
            {{"type", "object"},
             {"properties",
              {{"text", {{"type", "string"}}},
               {"mode", {{"type", "string"}, {"enum", {"plain", "loud"}}}}}},
             {"required", {"text"}}},
            [](const json& args) -> ToolResult {
              if (args["text"] == "fail") return ToolResult::error("echo: cannot echo fail");
              return {args["text"].get<std::string>(), {{"echoed", args["text"]}}};
            }};
  return Server({"reflectd", "t", "1.0", ""}, {echo}, Resources{});
}

json answer(Server& server, const std::string& line) {
  const auto out = server.handle_line(line);
  return out ? json::parse(*out) : json();
}

std::string call(const std::string& arguments) {
  return R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":)" +
         arguments + "}}";
}

}  // namespace

TEST_CASE("mcp: initialize negotiates the protocol version") {
  for (const auto& [asked, given] :
       std::vector<std::pair<std::string, std::string>>{{"2025-11-25", "2025-11-25"},
                                                        {"2025-06-18", "2025-06-18"},
                                                        {"2024-11-05", "2024-11-05"},
                                                        {"1999-01-01", "2025-11-25"}}) {
    Server server = echo_server();
    const json reply = answer(
        server, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")" +
                    asked + R"(","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})");
    CHECK(reply["result"]["protocolVersion"] == given);
    CHECK(reply["result"]["serverInfo"]["name"] == "reflectd");
    CHECK(reply["result"]["capabilities"].contains("tools"));
    CHECK_FALSE(reply["result"]["capabilities"].contains("resources"));
  }
}

TEST_CASE("mcp: JSON-RPC errors and notifications") {
  Server server = echo_server();
  CHECK(answer(server, "not json")["error"]["code"] == -32700);
  CHECK(answer(server, R"({"id":1,"method":"ping"})")["error"]["code"] == -32600);
  // Members of the wrong type are errors, not exceptions (found by fuzz/mcp_server_fuzz.cpp).
  CHECK(answer(server,
               R"([{"jsonrpc":2,"method":"resources/read","params":{"uri":"r://1"}}])")[0]["error"]
                                                                                       ["code"] ==
        -32600);
  CHECK(answer(server,
               R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}})")["error"]
                                                                                       ["code"] ==
        -32602);
  CHECK(
      answer(server,
             R"({"jsonrpc":"2.0","id":6,"method":"initialize","params":[1]})")["result"]
                                                                              ["protocolVersion"] ==
      "2025-11-25");
  CHECK(answer(server, R"({"jsonrpc":"2.0","id":2,"method":"sampling/createMessage"})") ==
        json::parse(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,
                        "message":"Method not found: sampling/createMessage"}})"));
  CHECK_FALSE(server.handle_line(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK_FALSE(server.handle_line("   "));
  CHECK(answer(server, R"({"jsonrpc":"2.0","id":"p","method":"ping"})") ==
        json::parse(R"({"jsonrpc":"2.0","id":"p","result":{}})"));
  // A 2025-03-26 batch: one answer per request, none for the notification.
  const json batch = answer(server, R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
                                        {"jsonrpc":"2.0","method":"notifications/initialized"},
                                        {"jsonrpc":"2.0","id":2,"method":"ping"}])");
  REQUIRE(batch.is_array());
  CHECK(batch.size() == 2);
  CHECK(answer(
            server,
            R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})")["error"]
                                                                                         ["code"] ==
        -32602);
  CHECK(answer(server, R"({"jsonrpc":"2.0","id":4,"method":"resources/list"})")["error"]["code"] ==
        -32601);
}

TEST_CASE("mcp: tools are listed, checked against their schema, and fail as tool errors") {
  Server server = echo_server();
  const json list = answer(server, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  REQUIRE(list["result"]["tools"].size() == 1);
  CHECK(list["result"]["tools"][0]["name"] == "echo");
  CHECK(list["result"]["tools"][0]["inputSchema"]["required"] == json::array({"text"}));

  CHECK(answer(server, call(R"({"text":"hi"})"))["result"] ==
        json::parse(R"({"content":[{"type":"text","text":"hi"}],"isError":false,
                        "structuredContent":{"echoed":"hi"}})"));
  const auto tool_error = [&](const std::string& args) {
    const json result = answer(server, call(args))["result"];
    CHECK(result["isError"] == true);
    return result["content"][0]["text"].get<std::string>();
  };
  CHECK(tool_error("{}") == "echo: text: is required");
  CHECK(tool_error(R"({"text":3})") == "echo: text: must be string");
  CHECK(tool_error(R"({"text":"a","mode":"soft"})") ==
        "echo: mode: must be one of [\"plain\",\"loud\"]");
  CHECK(tool_error(R"({"text":"fail"})") == "echo: cannot echo fail");
}
