#include "mcp/server.hpp"

#include <algorithm>

namespace reflectd::mcp {
using json = nlohmann::json;

namespace {

// JSON-RPC 2.0 error codes, and MCP's for a resource that does not exist.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFound = -32002;

json error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json result_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

// A string member of a message the client sent; "" when absent or of another type (a wrong
// type must be an error reply, never an exception).
std::string string_member(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return true;
}

}  // namespace

Server::Server(ServerInfo info, std::vector<Tool> tools, Resources resources)
    : info_(std::move(info)), tools_(std::move(tools)), resources_(std::move(resources)) {}

std::string Server::check_arguments(const json& schema, const json& args) {
  if (!args.is_object()) return "arguments: must be an object";
  for (const auto& field : schema.value("required", json::array())) {
    if (!args.contains(field.get<std::string>())) return field.get<std::string>() + ": is required";
  }
  const json properties = schema.value("properties", json::object());
  for (const auto& [key, value] : args.items()) {
    const auto property = properties.find(key);
    if (property == properties.end()) {
      if (!schema.value("additionalProperties", true)) return key + ": unknown argument";
      continue;
    }
    const std::string type = property->value("type", "");
    if (!type.empty() && !has_type(value, type)) return key + ": must be " + type;
    if (const auto allowed = property->find("enum"); allowed != property->end()) {
      if (std::find(allowed->begin(), allowed->end(), value) == allowed->end()) {
        return key + ": must be one of " + allowed->dump();
      }
    }
  }
  return {};
}

std::optional<std::string> Server::handle_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return std::nullopt;
  const json message = json::parse(line, nullptr, false);
  if (message.is_discarded()) {
    return error_response(nullptr, kParseError, "Parse error: the line is not JSON").dump();
  }
  if (message.is_array()) {
    if (message.empty()) {
      return error_response(nullptr, kInvalidRequest, "Invalid Request: empty batch").dump();
    }
    json responses = json::array();
    for (const auto& m : message) {
      json response = handle(m);
      if (!response.is_null()) responses.push_back(std::move(response));
    }
    if (responses.empty()) return std::nullopt;
    return responses.dump();
  }
  json response = handle(message);
  if (response.is_null()) return std::nullopt;
  return response.dump();
}

json Server::handle(const json& message) {
  if (!message.is_object() || string_member(message, "jsonrpc") != "2.0" ||
      !message.contains("method") || !message["method"].is_string()) {
    // A response from the client (to a request this server never sends) is not answered.
    if (message.is_object() && (message.contains("result") || message.contains("error"))) {
      return nullptr;
    }
    const json id = message.is_object() ? message.value("id", json()) : json();
    return error_response(id, kInvalidRequest,
                          "Invalid Request: a JSON-RPC 2.0 object with a method is required");
  }
  const bool notification = !message.contains("id");
  const json id = message.value("id", json());
  const json params = message.value("params", json::object());
  json response;
  try {
    response = dispatch(message["method"].get<std::string>(), params, id);
  } catch (const std::exception& error) {
    response = error_response(id, kInternalError, std::string("Internal error: ") + error.what());
  }
  return notification ? json() : response;
}

json Server::dispatch(const std::string& method, const json& params, const json& id) {
  if (method == "initialize") {
    const std::string asked = string_member(params, "protocolVersion");
    protocol_version_ = std::find(kProtocolVersions.begin(), kProtocolVersions.end(), asked) !=
                                kProtocolVersions.end()
                            ? asked
                            : std::string(kProtocolVersions.front());
    json capabilities = {{"tools", {{"listChanged", false}}}};
    if (resources_.list) capabilities["resources"] = {{"subscribe", false}, {"listChanged", false}};
    json result = {
        {"protocolVersion", protocol_version_},
        {"capabilities", std::move(capabilities)},
        {"serverInfo", {{"name", info_.name}, {"title", info_.title}, {"version", info_.version}}}};
    if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
    return result_response(id, std::move(result));
  }
  if (method.rfind("notifications/", 0) == 0) return nullptr;
  if (method == "ping") return result_response(id, json::object());
  if (method == "tools/list") {
    json tools = json::array();
    for (const Tool& t : tools_) {
      tools.push_back({{"name", t.name},
                       {"title", t.title},
                       {"description", t.description},
                       {"inputSchema", t.input_schema}});
    }
    return result_response(id, {{"tools", std::move(tools)}});
  }
  if (method == "tools/call") return call_tool(params, id);
  if (method == "resources/list" && resources_.list) {
    json list = json::array();
    for (const Resource& r : resources_.list()) {
      list.push_back({{"uri", r.uri},
                      {"name", r.name},
                      {"title", r.title},
                      {"description", r.description},
                      {"mimeType", r.mime_type}});
    }
    return result_response(id, {{"resources", std::move(list)}});
  }
  if (method == "resources/templates/list" && resources_.list) {
    json list = json::array();
    for (const ResourceTemplate& t : resources_.templates) {
      list.push_back({{"uriTemplate", t.uri_template},
                      {"name", t.name},
                      {"title", t.title},
                      {"description", t.description},
                      {"mimeType", t.mime_type}});
    }
    return result_response(id, {{"resourceTemplates", std::move(list)}});
  }
  if (method == "resources/read" && resources_.read) return read_resource(params, id);
  return error_response(id, kMethodNotFound, "Method not found: " + method);
}

json Server::call_tool(const json& params, const json& id) {
  const std::string name = string_member(params, "name");
  const auto tool =
      std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.name == name; });
  if (tool == tools_.end()) return error_response(id, kInvalidParams, "Unknown tool: " + name);
  const json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  ToolResult result;
  if (std::string problem = check_arguments(tool->input_schema, arguments); !problem.empty()) {
    result = ToolResult::error(name + ": " + problem);
  } else {
    result = tool->call(arguments);
  }
  json out = {{"content", json::array({{{"type", "text"}, {"text", result.text}}})},
              {"isError", result.is_error}};
  if (result.structured.is_object()) out["structuredContent"] = std::move(result.structured);
  return result_response(id, std::move(out));
}

json Server::read_resource(const json& params, const json& id) {
  if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
    return error_response(id, kInvalidParams, "Invalid params: uri (string) is required");
  }
  const std::string uri = params["uri"];
  const auto text = resources_.read(uri);
  if (!text) {
    json error = error_response(id, kResourceNotFound, "Resource not found");
    error["error"]["data"] = {{"uri", uri}};
    return error;
  }
  return result_response(
      id,
      {{"contents", json::array({{{"uri", uri},
                                  {"mimeType", resources_.mime_type ? resources_.mime_type(uri)
                                                                    : std::string("text/plain")},
                                  {"text", *text}}})}});
}

}  // namespace reflectd::mcp
