#pragma once
// MCP over Streamable HTTP at /mcp (MCP specification 2025-11-25, "Transports"): the tools of
// `reflectctl mcp` (mcp/tools.hpp) served by the daemon itself, for agents on other hosts.
//
// - POST /mcp carries one JSON-RPC message (or a 2025-03-26 batch). An `initialize` opens a
//   session: the answer carries `Mcp-Session-Id` (128 random bits, hex), which every later
//   request must send; an unknown or ended session is 404 (the client initializes again), a
//   missing one 400. Answers are `application/json`; a notification or a response from the
//   client is 202 with no body.
// - DELETE /mcp ends the session (204). GET /mcp is 405: this server starts no stream of its
//   own (the specification lets a server decline it).
// - A session belongs to the principal that opened it (http/api.hpp checked its bearer
//   token, Origin and rate); another token naming its id gets 404. Its tools act as that
//   principal: its agent_id on remembered events, its namespaces and clearance on reads.
// - At most kMaxSessions are kept; opening one more ends the least recently used.
//
// The tools are synchronous, so they run on a worker thread of this class, one call at a
// time, never on the HTTP server's thread or the daemon's io thread; each waits for the
// daemon's answer through the Calls, at most kCallTimeout.
//
// Thread-safety: handle() may be called from any thread; the destructor (or stop()) joins the
// worker, answering nothing further.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <variant>

#include "bus/security.hpp"
#include "common/clock.hpp"
#include "http/server.hpp"
#include "mcp/server.hpp"

namespace reflectd::daemon {

class McpSessions {
 public:
  /// A request to the daemon for `caller` and its answer, or what went wrong; blocks.
  using Call = std::function<std::variant<nlohmann::json, std::string>(
      const nlohmann::json& request, const bus::Principal& caller)>;

  static constexpr std::size_t kMaxSessions = 1000;
  static constexpr std::chrono::seconds kCallTimeout{60};

  /// `control` runs a control request, `ingest` stores one event (acknowledged ingest).
  McpSessions(Call control, Call ingest, const Clock& clock);
  ~McpSessions();
  McpSessions(const McpSessions&) = delete;
  McpSessions& operator=(const McpSessions&) = delete;

  /// Answers one request to /mcp from `caller` through `respond` (from the worker thread).
  void handle(const http::Request& request, const bus::Principal& caller, http::Respond respond);
  void stop();

 private:
  struct Session {
    std::string owner;  // the principal's public_key ("" for the local operator)
    std::unique_ptr<mcp::Server> server;
    std::int64_t used_us = 0;
  };

  http::Response answer(const http::Request& request, const bus::Principal& caller);
  http::Response open_session(const std::string& body, const bus::Principal& caller);
  std::string new_session_id();
  void run();

  Call control_;
  Call ingest_;
  const Clock& clock_;
  std::map<std::string, Session> sessions_;  // worker thread only
  std::mt19937_64 random_;                   // worker thread only; seeded by std::random_device
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace reflectd::daemon
