#pragma once
// The HTTP endpoint Prometheus scrapes: GET /metrics (and HEAD) on one TCP address, served by
// Boost.Beast on a thread of its own, so a slow or hostile client never touches the bus thread.
//
// Anything else is answered with a status and a one-line reason: 404 for other paths, 405 for
// other methods, 400 for what does not parse as HTTP/1.x. Connections stay open for further
// requests (Prometheus reuses them) and are closed after 30 s without a complete request.
// At most `max_connections` are open at once: past that, a new connection is answered
// "503 Service Unavailable" and closed at once, so clients that connect and never send (or
// never read) cannot exhaust the daemon's file descriptors or memory.
//
// Thread-safety: the constructor starts the thread; the destructor (or stop()) stops it and
// waits. `render` runs on that thread and must be safe to call concurrently with everything
// else the daemon does.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace reflectd::metrics {

class HttpServer {
 public:
  /// Listens on `address` ("host:port"; host an IPv4 or IPv6 literal, "[::1]:7705" for IPv6, or
  /// "localhost"; port 0 picks a free one). `render` returns the body of a GET /metrics.
  /// `max_connections` (>= 1) bounds the connections open at once (kDefaultMaxConnections).
  /// Throws std::runtime_error naming the address when it cannot be parsed, resolved or bound.
  HttpServer(const std::string& address, std::function<std::string()> render,
             std::size_t max_connections = kDefaultMaxConnections);

  /// Prometheus keeps one connection per scraping server; 64 leaves room for several servers,
  /// curl and a browser.
  static constexpr std::size_t kDefaultMaxConnections = 64;
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The address actually bound ("127.0.0.1:7705"), with the port chosen when 0 was asked for.
  const std::string& bound_address() const;
  /// Closes the listener and every connection, and joins the thread. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reflectd::metrics
