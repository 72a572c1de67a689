#include "http/openapi.hpp"

#include <array>
#include <string>

#include "common/version.hpp"
#include "model/commands.hpp"

namespace reflectd::http {
namespace {

using json = nlohmann::json;

json ref(std::string_view name) { return {{"$ref", "#/components/" + std::string(name)}}; }

json json_content(json schema) { return {{"application/json", {{"schema", std::move(schema)}}}}; }

// The responses every operation may give besides its 200.
json responses(std::string_view ok_description) {
  json out = {
      {"200", {{"description", ok_description}, {"content", json_content(ref("schemas/Reply"))}}}};
  const std::array<std::pair<const char*, const char*>, 6> errors{
      {{"400", "the request breaks a rule: the error names the field and the rule"},
       {"401", "no bearer token, or one not in security.http_tokens_file"},
       {"403",
        "an admin command without admin rights, a namespace outside the token's, or a "
        "cross-site Origin"},
       {"404", "no such route, command or event"},
       {"413", "a body over bus.max_message_bytes"},
       {"429", "over http.rate_per_s; Retry-After says when to try again"}}};
  for (const auto& [code, text] : errors) {
    out[code] = {{"description", text}, {"content", json_content(ref("schemas/Error"))}};
  }
  return out;
}

json query_parameters(const std::vector<model::Field>& fields) {
  json out = json::array();
  const json schema = model::input_schema(fields);
  for (const model::Field& field : fields) {
    const std::string name(field.name);
    json parameter = {{"name", name},
                      {"in", "query"},
                      {"required", field.required},
                      {"schema", schema["properties"][name]}};
    if (field.type == model::JsonType::kStringArray) {
      parameter["style"] = "form";
      parameter["explode"] = true;
    }
    if (field.type == model::JsonType::kObject) {
      parameter["content"] = json_content(schema["properties"][name]);
      parameter.erase("schema");
    }
    out.push_back(std::move(parameter));
  }
  return out;
}

json command_operations(const model::CommandSpec& spec) {
  const std::string summary(spec.summary.empty() ? spec.name : spec.summary);
  const std::string name(spec.name);
  json path = json::object();
  path["post"] = {
      {"operationId", name},
      {"summary", summary},
      {"tags", {spec.admin ? "admin" : "commands"}},
      {"requestBody",
       {{"required", false}, {"content", json_content(model::input_schema(spec.request))}}},
      {"responses", responses("the command's reply (docs/COMMANDS.md)")}};
  if (!spec.admin) {
    path["get"] = {{"operationId", name + "_get"},
                   {"summary", summary},
                   {"tags", {"commands"}},
                   {"parameters", query_parameters(spec.request)},
                   {"responses", responses("the command's reply (docs/COMMANDS.md)")}};
  }
  return path;
}

json components() {
  json schemas;
  schemas["Reply"] = {{"type", "object"},
                      {"required", {"ok"}},
                      {"properties", {{"ok", {{"type", "boolean"}}}}},
                      {"additionalProperties", true}};
  schemas["Error"] = {
      {"type", "object"},
      {"required", {"ok", "error"}},
      {"properties", {{"ok", {{"const", false}}}, {"error", {{"type", "string"}}}}}};
  schemas["Event"] = {{"type", "object"},
                      {"description", "An event of wire format v1 (docs/WIRE.md)"},
                      {"required", {"namespace", "kind", "content"}},
                      {"properties",
                       {{"id", {{"type", "string"}}},
                        {"namespace", {{"type", "string"}}},
                        {"kind", {{"type", "string"}}},
                        {"content", {{"type", "string"}}},
                        {"timestamp", {{"type", "string"}}}}},
                      {"additionalProperties", true}};
  return {{"schemas", std::move(schemas)},
          {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}};
}

}  // namespace

json openapi_document(bool test_hooks) {
  json paths = json::object();
  for (const model::CommandSpec& spec : model::command_table()) {
    if (!spec.daemon_command() || (spec.test_hook && !test_hooks)) continue;
    paths["/v1/" + std::string(spec.name)] = command_operations(spec);
  }
  // POST /v1/events is ingest; the events command keeps GET (its listing) only.
  json& events = paths["/v1/events"];
  events.erase("post");
  events["post"] = {
      {"operationId", "ingest"},
      {"summary", "store one event or up to 1,000; answered after the commit, as ZeroMQ ingest"},
      {"tags", {"events"}},
      {"requestBody",
       {{"required", true},
        {"content", json_content({{"oneOf",
                                   {ref("schemas/Event"),
                                    {{"type", "array"},
                                     {"items", ref("schemas/Event")},
                                     {"minItems", 1},
                                     {"maxItems", 1000}}}}})}}},
      {"responses", responses("each event's status, seq or error (docs/WIRE.md)")}};
  events["post"]["responses"]["503"] = {{"description", "the writer's queue is full; retry"},
                                        {"content", json_content(ref("schemas/Error"))}};
  paths["/v1/events/{id}"] = {
      {"get",
       {{"operationId", "event"},
        {"summary", "one event in full, by id"},
        {"tags", {"events"}},
        {"parameters",
         {{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}}},
        {"responses", responses("the event ({\"events\": [...]})")}}}};
  paths["/v1/openapi.json"] = {{"get",
                                {{"operationId", "openapi"},
                                 {"summary", "this document"},
                                 {"tags", {"meta"}},
                                 {"security", json::array()},
                                 {"responses", {{"200", {{"description", "OpenAPI 3.1"}}}}}}}};
  return {{"openapi", "3.1.0"},
          {"info",
           {{"title", "reflectd"},
            {"version", kVersion},
            {"description", "reflectd's HTTP JSON API (docs/HTTP.md)"}}},
          {"servers", {{{"url", "/"}}}},
          {"security", {{{"bearer", json::array()}}}},
          {"paths", std::move(paths)},
          {"components", components()}};
}

}  // namespace reflectd::http
