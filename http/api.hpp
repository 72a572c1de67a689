#pragma once
// The HTTP JSON API's routes (docs/HTTP.md): what a request means, who sent it, and what it
// may do. Transport limits are the server's (http/server.hpp); the work is the daemon's,
// reached through an ApiBackend.
//
//   POST /v1/events          one event or an array of up to 1,000 (docs/WIRE.md), answered
//                            after the commit exactly as ZeroMQ ingest answers
//   GET  /v1/events/{id}     one event in full (the get command); 404 when absent
//   POST /v1/{command}       every daemon command of model/commands.hpp, the JSON request
//                            without "cmd" as the body, its reply as the body
//   GET  /v1/{command}?k=v   the commands that are not admin, their fields as query
//                            parameters (q= for text); GET /v1/events lists (events tail)
//   GET  /v1/openapi.json    OpenAPI 3.1, generated from the command table (http/openapi.hpp)
//   GET  / and /console/NAME the web console's files (http/static_files.hpp), no token: the
//                            page asks for one and sends it with its API calls
//   /mcp                     MCP over Streamable HTTP (daemon/mcp_sessions.hpp), with the
//                            same tokens, Origin check and rate limit
//
// Access (docs/SECURITY.md): `Authorization: Bearer TOKEN` names a principal of the tokens
// file (http/tokens.hpp), else 401; an admin command without admin rights, or a namespace
// outside the principal's, 403; reads apply its clearance as for CURVE clients (one level
// above: redacted; two: absent). Under security.insecure a loopback client without a token
// is the local operator. A request with an Origin header other than the server's own (a web
// page of another site) is refused with 403, so no page a browser shows can use the API
// with its user's access. Each principal is rate-limited (429 with Retry-After).
//
// Statuses: 200 ok; 400 a request the command refuses (the error names the field and the
// rule); 404 no such route or event; 405 a method the route does not take (Allow lists
// those it does); 503 the writer's queue is full (Retry-After: 1).
//
// Thread-safety: handle() runs on the HTTP server's thread only; set_tokens() may be called
// from any thread (SIGHUP).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "bus/security.hpp"
#include "common/clock.hpp"
#include "http/rate_limiter.hpp"
#include "http/server.hpp"
#include "http/static_files.hpp"
#include "http/tokens.hpp"

namespace reflectd::http {

/// What the daemon does for the API. Each callable answers exactly once, from any thread.
struct ApiBackend {
  /// Stores the events of a POST /v1/events body (authorized for `caller`) and answers with
  /// the HTTP status (200, or 503 when the writer's queue is full) and the ingest reply.
  std::function<void(std::string body, const bus::Principal& caller,
                     std::function<void(int status, std::string body)> reply)>
      ingest;
  /// Runs a control request ({"cmd": …, …}) for `caller` and answers with its reply.
  std::function<void(nlohmann::json request, const bus::Principal& caller,
                     std::function<void(nlohmann::json reply)> reply)>
      command;
  /// Answers a request to /mcp (MCP over Streamable HTTP) for `caller`; empty: 404.
  std::function<void(const Request& request, const bus::Principal& caller, Respond respond)> mcp;
};

struct ApiOptions {
  bool insecure = false;        ///< security.insecure: loopback clients need no token.
  bool test_hooks = false;      ///< the daemon answers its test hooks (daemon/test_hooks.hpp)
  double rate_per_s = 0;        ///< http.rate_per_s (0: no limit)
  std::int64_t rate_burst = 1;  ///< http.rate_burst
  std::string console_dir;      ///< http.console_dir: the web console's files ("" : none)
};

class Api {
 public:
  Api(ApiBackend backend, const Clock& clock, const ApiOptions& options);

  /// The server's Handler.
  void handle(const Request& request, Respond respond);
  /// Replaces the tokens (nullptr: none).
  void set_tokens(std::shared_ptr<const Tokens> tokens);

 private:
  std::shared_ptr<const Tokens> tokens() const;
  // The caller, or the answer that refuses it.
  bool authenticate(const Request& request, bus::Principal& caller, Response& refusal) const;
  void route(const Request& request, const bus::Principal& caller, Respond respond);
  void run_command(nlohmann::json command, const bus::Principal& caller, Respond respond,
                   bool not_found_when_empty = false);

  ApiBackend backend_;
  ApiOptions options_;
  RateLimiter limiter_;
  std::string openapi_;
  StaticFiles console_;
  mutable std::mutex tokens_mutex_;
  std::shared_ptr<const Tokens> tokens_;
};

/// The request of `command` from a query string ("text=fix&limit=5"): percent-decoding and
/// '+' as space, each field typed by the command table (integers, booleans true|false|1|0,
/// string lists repeated or comma-separated, objects as JSON text); q= stands for text=.
/// Returns the error naming the parameter and the rule, or "" with `out` filled.
std::string query_request(std::string_view command, std::string_view query, nlohmann::json& out);

}  // namespace reflectd::http
