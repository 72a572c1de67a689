#pragma once
// The HTTP/1.1 server of the JSON API (docs/HTTP.md): Boost.Beast on a thread of its own, so
// a slow or hostile client never touches the bus, the writer or the read thread. It parses,
// enforces the transport limits and hands each whole request to a Handler, which answers
// through a Respond callable once, from any thread (the answer is posted back to the
// server's thread).
//
// Limits, answered with a JSON error {"ok": false, "error": "<field>: <rule>"}:
// - a body over max_body_bytes: 413, and the connection is closed;
// - a header over 16 KiB: 431, closed;
// - a request not whole within header_timeout of its first byte (slow clients): closed;
// - no next request within idle_timeout on a kept-alive connection: closed;
// - more than max_connections open: 503 at once, closed;
// - what does not parse as HTTP/1.x: 400, closed.
// One request at a time per connection (no pipelining beyond what the parser buffers).
//
// Thread-safety: the constructor starts the thread; stop() (or the destructor) closes the
// listener and every connection, abandons answers still owed and joins the thread.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reflectd::http {

/// One whole request.
struct Request {
  std::string method;         ///< "GET", "POST", ... as sent
  std::string path;           ///< the target up to '?', percent-encoding kept
  std::string query;          ///< the target after '?', raw ("" when none)
  std::string authorization;  ///< the Authorization header ("" when none)
  std::string origin;         ///< the Origin header ("" when none)
  std::string host;           ///< the Host header ("" when none)
  std::string content_type;   ///< the Content-Type header ("" when none)
  std::string body;
  std::string peer;            ///< the client's IP address
  bool peer_loopback = false;  ///< 127.0.0.0/8 or ::1
  /// Every header as sent (names as the client wrote them).
  std::vector<std::pair<std::string, std::string>> headers;

  /// The value of header `name` (case-insensitive, RFC 9110 §5.1), "" when absent.
  std::string header(std::string_view name) const;
};

/// One answer; `headers` are added to Server, Content-Type and Content-Length.
struct Response {
  using Headers = std::vector<std::pair<std::string, std::string>>;
  Response() = default;
  Response(int status_code, std::string text, std::string type = "application/json",
           Headers extra = {})
      : status(status_code),
        body(std::move(text)),
        content_type(std::move(type)),
        headers(std::move(extra)) {}

  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  Headers headers;
};

/// Answers a request; call it exactly once, from any thread.
using Respond = std::function<void(Response)>;
/// Runs on the server's thread for each request and must not block: long work goes
/// elsewhere and answers through `respond`.
using Handler = std::function<void(Request request, Respond respond)>;

struct ServerLimits {
  std::size_t max_connections = 64;
  std::size_t max_body_bytes = std::size_t{1} << 20;
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds idle_timeout{30};
};

/// The JSON error body of the API: {"ok": false, "error": text}.
std::string error_body(std::string_view text);

class Server {
 public:
  /// Listens on `address` ("host:port", "[::1]:7706", port 0 picks one). Throws
  /// std::runtime_error naming the address when it cannot be parsed, resolved or bound, and
  /// std::invalid_argument for a limit of 0.
  Server(const std::string& address, Handler handler, ServerLimits limits);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// The address bound ("127.0.0.1:7706"), with the port chosen when 0 was asked for.
  const std::string& bound_address() const;
  /// Idempotent.
  void stop();

 private:
  friend class Session;  // a connection (server.cpp) reaches the limits and the handler
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reflectd::http
