#include "http/api.hpp"

#include <charconv>
#include <utility>

#include "http/openapi.hpp"
#include "model/commands.hpp"

namespace reflectd::http {
namespace {

constexpr std::string_view kPrefix = "/v1/";

Response json_response(int status, const nlohmann::json& body) {
  return {status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

Response error(int status, std::string_view text) { return {status, error_body(text)}; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding (RFC 3986 §2.1), '+' as a space in a query (HTML forms); false for a '%'
// without two hex digits.
bool percent_decode(std::string_view in, bool plus_is_space, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      const int high = i + 1 < in.size() ? hex_value(in[i + 1]) : -1;
      const int low = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
      if (high < 0 || low < 0) return false;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(plus_is_space && in[i] == '+' ? ' ' : in[i]);
    }
  }
  return true;
}

std::string typed_value(const model::Field& field, const std::string& value, nlohmann::json& out) {
  const std::string name(field.name);
  switch (field.type) {
    case model::JsonType::kString: out[name] = value; return "";
    case model::JsonType::kInteger: {
      std::int64_t number = 0;
      const auto [end, failure] =
          std::from_chars(value.data(), value.data() + value.size(), number);
      if (failure != std::errc() || end != value.data() + value.size()) {
        return name + ": must be an integer";
      }
      out[name] = number;
      return "";
    }
    case model::JsonType::kBoolean:
      if (value == "true" || value == "1") {
        out[name] = true;
      } else if (value == "false" || value == "0") {
        out[name] = false;
      } else {
        return name + ": must be true, false, 1 or 0";
      }
      return "";
    case model::JsonType::kStringArray: {
      nlohmann::json& list = out[name];
      if (!list.is_array()) list = nlohmann::json::array();
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = value.find(',', start);
        const std::string item = value.substr(start, comma - start);
        if (!item.empty()) list.push_back(item);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return "";
    }
    case model::JsonType::kObject: {
      nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
      if (!parsed.is_object()) return name + ": must be a JSON object";
      out[name] = std::move(parsed);
      return "";
    }
  }
  return name + ": unsupported type";
}

}  // namespace

std::string query_request(std::string_view command, std::string_view query, nlohmann::json& out) {
  const model::CommandSpec* spec = model::find_command(command);
  out = nlohmann::json::object();
  if (spec == nullptr) return "unknown command '" + std::string(command) + "'";
  std::size_t start = 0;
  while (start < query.size()) {
    std::size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    const std::string_view pair = query.substr(start, amp - start);
    start = amp + 1;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    std::string key;
    std::string value;
    if (!percent_decode(pair.substr(0, eq), true, key) ||
        !percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true, value)) {
      return "query: '" + std::string(pair) + "' holds a '%' without two hex digits";
    }
    if (key == "q") key = "text";
    const model::Field* field = nullptr;
    for (const model::Field& f : spec->request) {
      if (f.name == key) field = &f;
    }
    if (field == nullptr) {
      std::string known;
      for (const model::Field& f : spec->request) {
        known += (known.empty() ? "" : ", ") + std::string(f.name);
      }
      return key + ": not a parameter of " + std::string(command) +
             " (known: " + (known.empty() ? "none" : known) + ")";
    }
    if (std::string failure = typed_value(*field, value, out); !failure.empty()) return failure;
  }
  return "";
}

Api::Api(ApiBackend backend, const Clock& clock, const ApiOptions& options)
    : backend_(std::move(backend)),
      options_(options),
      limiter_(clock, options.rate_per_s, options.rate_burst),
      openapi_(openapi_document(options.test_hooks).dump(2)),
      console_(StaticFiles::load(options.console_dir)) {}

void Api::set_tokens(std::shared_ptr<const Tokens> tokens) {
  const std::lock_guard lock(tokens_mutex_);
  tokens_ = std::move(tokens);
}

std::shared_ptr<const Tokens> Api::tokens() const {
  const std::lock_guard lock(tokens_mutex_);
  return tokens_;
}

bool Api::authenticate(const Request& request, bus::Principal& caller, Response& refusal) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (request.authorization.empty()) {
    if (options_.insecure && request.peer_loopback) {
      caller = bus::Principal::local_operator();
      return true;
    }
    refusal = error(401,
                    "authorization: a bearer token is required (Authorization: Bearer TOKEN; "
                    "security.http_tokens_file)");
  } else if (!request.authorization.starts_with(kBearer)) {
    refusal = error(401, "authorization: only the Bearer scheme is accepted");
  } else {
    const auto tokens = this->tokens();
    const bus::Principal* found =
        tokens ? tokens->find(std::string_view(request.authorization).substr(kBearer.size()))
               : nullptr;
    if (found != nullptr) {
      caller = *found;
      return true;
    }
    refusal = error(401, "authorization: the bearer token is not in security.http_tokens_file");
  }
  refusal.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"reflectd\"");
  return false;
}

void Api::handle(const Request& request, Respond respond) {
  if (request.method == "GET" && request.path == "/v1/openapi.json") {
    return respond({200, openapi_});
  }
  if (request.method == "GET") {
    if (const Response* file = console_.find(request.path)) return respond(*file);
    if (request.path == "/") {
      return respond(error(404, "console: not installed in '" + options_.console_dir +
                                    "' (http.console_dir); the API is under /v1/"));
    }
  }
  // A browser names the page that sends a request; only the API's own origin may.
  if (!request.origin.empty() && request.origin != "http://" + request.host) {
    return respond(error(403, "origin: '" + request.origin +
                                  "' is not this server's; cross-site requests are refused"));
  }
  bus::Principal caller;
  Response refusal;
  if (!authenticate(request, caller, refusal)) return respond(std::move(refusal));
  const std::string client =
      caller.is_local_operator() ? "peer:" + request.peer : caller.public_key;
  if (const std::int64_t wait_s = limiter_.admit(client); wait_s > 0) {
    Response limited = error(429, "rate: more than http.rate_per_s requests a second");
    limited.headers.emplace_back("Retry-After", std::to_string(wait_s));
    return respond(std::move(limited));
  }
  route(request, caller, std::move(respond));
}

void Api::route(const Request& request, const bus::Principal& caller, Respond respond) {
  if (request.path == "/mcp" && backend_.mcp)
    return backend_.mcp(request, caller, std::move(respond));
  if (!request.path.starts_with(kPrefix)) {
    return respond(error(404, "path: '" + request.path +
                                  "' is not a route (the API is under /v1/; "
                                  "GET /v1/openapi.json lists it)"));
  }
  const std::string_view rest = std::string_view(request.path).substr(kPrefix.size());
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (rest == "events" && post) {
    return backend_.ingest(request.body, caller, [respond](int status, std::string body) {
      Response answer{status, std::move(body)};
      if (status == 503) answer.headers.emplace_back("Retry-After", "1");
      respond(std::move(answer));
    });
  }
  if (rest.starts_with("events/")) {
    if (!get)
      return respond({405, error_body("method: GET only"), "application/json", {{"Allow", "GET"}}});
    std::string id;
    if (!percent_decode(rest.substr(7), false, id) || id.empty()) {
      return respond(error(400, "id: must be a percent-encoded event id"));
    }
    return run_command({{"cmd", "get"}, {"ids", {id}}}, caller, std::move(respond), true);
  }
  const model::CommandSpec* spec = model::find_command(rest);
  if (spec == nullptr || !spec->daemon_command() || (spec->test_hook && !options_.test_hooks)) {
    return respond(error(404, "command: '" + std::string(rest) + "' is unknown; known: " +
                                  model::known_commands(options_.test_hooks)));
  }
  const bool gettable = !spec->admin;
  if (!post && !(get && gettable)) {
    const char* allow = gettable ? "GET, POST" : "POST";
    return respond({405,
                    error_body(std::string("method: ") + request.method + " is not taken by /v1/" +
                               std::string(rest) + " (" + allow + ")"),
                    "application/json",
                    {{"Allow", allow}}});
  }
  nlohmann::json command = nlohmann::json::object();
  if (get) {
    if (std::string failure = query_request(rest, request.query, command); !failure.empty()) {
      return respond(error(400, failure));
    }
  } else if (!request.body.empty()) {
    command = nlohmann::json::parse(request.body, nullptr, false);
    if (!command.is_object()) return respond(error(400, "body: must be a JSON object"));
  }
  command["cmd"] = std::string(rest);
  if (spec->admin && !caller.admin) {
    return respond(error(403, model::admin_refusal(rest, caller.agent_id, options_.test_hooks)));
  }
  if (const auto ns = command.find("namespace");
      ns != command.end() && ns->is_string() && !caller.may_use(ns->get<std::string>())) {
    return respond(error(403, "namespace: '" + ns->get<std::string>() + "' is outside " +
                                  caller.agent_id + "'s namespaces (" + caller.namespace_list() +
                                  ")"));
  }
  run_command(std::move(command), caller, std::move(respond));
}

void Api::run_command(nlohmann::json command, const bus::Principal& caller, Respond respond,
                      bool not_found_when_empty) {
  backend_.command(std::move(command), caller,
                   [respond = std::move(respond), not_found_when_empty](nlohmann::json reply) {
                     const bool ok = reply.is_object() && reply.value("ok", false);
                     int status = ok ? 200 : 400;
                     if (ok && not_found_when_empty) {
                       const auto events = reply.find("events");
                       if (events == reply.end() || !events->is_array() || events->empty()) {
                         status = 404;
                       }
                     }
                     respond(json_response(status, reply));
                   });
}

}  // namespace reflectd::http
