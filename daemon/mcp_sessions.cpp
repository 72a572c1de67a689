#include "daemon/mcp_sessions.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "mcp/tools.hpp"

namespace reflectd::daemon {
namespace {

http::Response rpc_error(int status, int code, std::string_view message) {
  return {status, nlohmann::json{{"jsonrpc", "2.0"},
                                 {"id", nullptr},
                                 {"error", {{"code", code}, {"message", message}}}}
                      .dump()};
}

bool is_initialize(const nlohmann::json& message) {
  return message.is_object() && message.value("method", "") == "initialize";
}

}  // namespace

McpSessions::McpSessions(Call control, Call ingest, const Clock& clock)
    : control_(std::move(control)),
      ingest_(std::move(ingest)),
      clock_(clock),
      random_(std::random_device{}()),
      worker_([this] { run(); }) {}

McpSessions::~McpSessions() { stop(); }

void McpSessions::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void McpSessions::handle(const http::Request& request, const bus::Principal& caller,
                         http::Respond respond) {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    queue_.emplace_back([this, request, caller, respond = std::move(respond)] {
      respond(answer(request, caller));
    });
  }
  wake_.notify_one();
}

void McpSessions::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

std::string McpSessions::new_session_id() {
  return fmt::format("{:016x}{:016x}", random_(), random_());
}

http::Response McpSessions::open_session(const std::string& body, const bus::Principal& caller) {
  if (sessions_.size() >= kMaxSessions) {
    const auto oldest = std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.used_us < b.second.used_us; });
    sessions_.erase(oldest);
  }
  mcp::Backend backend;
  backend.control = [this, caller](const nlohmann::json& request) {
    return control_(request, caller);
  };
  backend.ingest = [this, caller](const nlohmann::json& event) { return ingest_(event, caller); };
  Session session{
      caller.public_key,
      std::make_unique<mcp::Server>(mcp::reflectd_server_info(), mcp::reflectd_tools(backend),
                                    mcp::reflectd_resources(backend)),
      clock_.monotonic_us()};
  const auto reply = session.server->handle_line(body);
  const std::string id = new_session_id();
  sessions_.emplace(id, std::move(session));
  http::Response response{200, reply.value_or("")};
  response.headers.emplace_back("Mcp-Session-Id", id);
  return response;
}

http::Response McpSessions::answer(const http::Request& request, const bus::Principal& caller) {
  if (request.method == "GET") {
    return {405,
            http::error_body("method: this server opens no stream of its own; POST messages"),
            "application/json",
            {{"Allow", "POST, DELETE"}}};
  }
  const std::string id = request.header("Mcp-Session-Id");
  const auto session = sessions_.find(id);
  const bool owned = session != sessions_.end() && session->second.owner == caller.public_key;
  if (request.method == "DELETE") {
    if (!owned) return {404, http::error_body("Mcp-Session-Id: no such session")};
    sessions_.erase(session);
    return {204, "", "application/json"};
  }
  if (request.method != "POST") {
    return {405,
            http::error_body("method: " + request.method + " is not taken by /mcp"),
            "application/json",
            {{"Allow", "POST, DELETE"}}};
  }
  const nlohmann::json message = nlohmann::json::parse(request.body, nullptr, false);
  if (message.is_discarded()) return rpc_error(400, -32700, "Parse error: the body is not JSON");
  if (is_initialize(message)) return open_session(request.body, caller);
  if (id.empty()) {
    return rpc_error(400, -32600, "Mcp-Session-Id: required after initialize");
  }
  if (!owned) return rpc_error(404, -32600, "Mcp-Session-Id: no such session; initialize again");
  session->second.used_us = clock_.monotonic_us();
  const auto reply = session->second.server->handle_line(request.body);
  if (!reply) return {202, "", "application/json"};
  return {200, *reply};
}

}  // namespace reflectd::daemon
