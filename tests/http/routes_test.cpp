#include <catch2/catch.hpp>

#include "http/api.hpp"
#include "http/openapi.hpp"
#include "model/commands.hpp"

using nlohmann::json;
using reflectd::http::query_request;

TEST_CASE("query strings become typed requests by the command table") {
  json out;
  CHECK(query_request("recall",
                      "q=when+did%20Caroline%2C+go&namespace=locomo&limit=5&include_archived=1&"
                      "kinds=conversation,decision&kinds=error",
                      out) == "");
  CHECK(out == json{{"text", "when did Caroline, go"},
                    {"namespace", "locomo"},
                    {"limit", 5},
                    {"include_archived", true},
                    {"kinds", {"conversation", "decision", "error"}}});
  CHECK(query_request("status", "", out) == "");
  CHECK(out == json::object());
}

TEST_CASE("query strings: each bad parameter is named with its rule") {
  json out;
  CHECK(query_request("recall", "limit=five", out) == "limit: must be an integer");
  CHECK(query_request("recall", "limit=5x", out) == "limit: must be an integer");
  CHECK(query_request("recall", "include_archived=yes", out) ==
        "include_archived: must be true, false, 1 or 0");
  CHECK(query_request("recall", "text=%zz", out) ==
        "query: 'text=%zz' holds a '%' without two hex digits");
  CHECK(query_request("recall", "text=%4", out) ==
        "query: 'text=%4' holds a '%' without two hex digits");
  CHECK(query_request("clusters", "colour=red", out) ==
        "colour: not a parameter of clusters (known: namespace, limit)");
  CHECK(query_request("status", "x=1", out) == "x: not a parameter of status (known: none)");
}

TEST_CASE("OpenAPI 3.1 document: every daemon command has its route, admin ones POST only") {
  const json doc = reflectd::http::openapi_document(false);
  CHECK(doc["openapi"] == "3.1.0");
  const json& paths = doc["paths"];
  std::size_t commands = 0;
  for (const auto& spec : reflectd::model::command_table()) {
    if (!spec.daemon_command() || spec.test_hook) {
      CHECK_FALSE(paths.contains("/v1/" + std::string(spec.name)));
      continue;
    }
    ++commands;
    const json& path = paths["/v1/" + std::string(spec.name)];
    INFO(spec.name);
    CHECK(path.contains("post"));
    CHECK(path.contains("get") == !spec.admin);
  }
  CHECK(commands > 20);
  CHECK(paths["/v1/events"]["post"]["operationId"] == "ingest");
  CHECK(paths["/v1/events"]["get"]["operationId"] == "events_get");
  CHECK(paths["/v1/events/{id}"]["get"]["parameters"][0]["in"] == "path");
  const json recall = paths["/v1/recall"]["post"]["requestBody"]["content"]["application/json"]
                           ["schema"]["properties"];
  CHECK(recall["limit"]["type"] == "integer");
  CHECK(recall["kinds"]["type"] == "array");
  CHECK(doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer");
}
