// The HTTP JSON API's wiring (http/api.hpp): events go to the bus as acknowledged ingest,
// commands to handle_control() on the io thread, as NATS reads do.

#include <boost/asio/post.hpp>
#include <chrono>
#include <future>

#include "daemon/daemon.hpp"

namespace reflectd::daemon {

std::shared_ptr<const http::Tokens> Daemon::load_http_tokens(const config::Config& config) {
  if (config.security.http_tokens_file.empty()) return nullptr;
  return std::make_shared<const http::Tokens>(
      http::Tokens::load_file(config.security.http_tokens_file));
}

namespace {

// The answer of `future`, or why there is none: the daemon stopping, or kCallTimeout.
std::variant<nlohmann::json, std::string> await_reply(std::future<nlohmann::json>& future,
                                                      const std::atomic<bool>& stopping) {
  const auto deadline = std::chrono::steady_clock::now() + McpSessions::kCallTimeout;
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (stopping.load()) return std::string("reflectd is stopping");
    if (std::chrono::steady_clock::now() > deadline) {
      return "no reply from reflectd within " + std::to_string(McpSessions::kCallTimeout.count()) +
             " s";
    }
  }
  return future.get();
}

}  // namespace

std::variant<nlohmann::json, std::string> Daemon::control_and_wait(const nlohmann::json& request,
                                                                   const bus::Principal& caller) {
  auto promise = std::make_shared<std::promise<nlohmann::json>>();
  std::future<nlohmann::json> future = promise->get_future();
  boost::asio::post(io_, [this, request, caller, promise] {
    if (stopping_) return promise->set_value({{"ok", false}, {"error", "reflectd is stopping"}});
    handle_control(request, caller,
                   [promise](nlohmann::json reply) { promise->set_value(std::move(reply)); });
  });
  return await_reply(future, calls_stopping_);
}

std::variant<nlohmann::json, std::string> Daemon::ingest_and_wait(const nlohmann::json& event,
                                                                  const bus::Principal& caller) {
  auto promise = std::make_shared<std::promise<nlohmann::json>>();
  std::future<nlohmann::json> future = promise->get_future();
  bus_->ingest_message(event.dump(), caller, [promise](int, const std::string& body) {
    promise->set_value(nlohmann::json::parse(body, nullptr, false));
  });
  return await_reply(future, calls_stopping_);
}

void Daemon::start_http() {
  if (config_.http.listen.empty()) return;
  http::ApiBackend backend;
  backend.ingest = [this](std::string body, const bus::Principal& caller,
                          std::function<void(int, std::string)> reply) {
    bus_->ingest_message(std::move(body), caller, std::move(reply));
  };
  backend.command = [this](nlohmann::json request, const bus::Principal& caller,
                           std::function<void(nlohmann::json)> reply) {
    boost::asio::post(io_, [this, request = std::move(request), caller, reply = std::move(reply)] {
      if (stopping_) return reply({{"ok", false}, {"error", "reflectd is stopping"}});
      handle_control(request, caller, reply);
    });
  };
  mcp_sessions_ = std::make_unique<McpSessions>(
      [this](const nlohmann::json& request, const bus::Principal& caller) {
        return control_and_wait(request, caller);
      },
      [this](const nlohmann::json& event, const bus::Principal& caller) {
        return ingest_and_wait(event, caller);
      },
      clock_);
  backend.mcp = [sessions = mcp_sessions_.get()](const http::Request& request,
                                                 const bus::Principal& caller,
                                                 http::Respond respond) {
    sessions->handle(request, caller, std::move(respond));
  };
  http_api_ =
      std::make_unique<http::Api>(std::move(backend), clock_,
                                  http::ApiOptions{.insecure = config_.security.insecure,
                                                   .test_hooks = options_.test_hooks,
                                                   .rate_per_s = config_.http.rate_per_s,
                                                   .rate_burst = config_.http.rate_burst,
                                                   .console_dir = config_.http.console_dir});
  http_api_->set_tokens(load_http_tokens(config_));
  const http::ServerLimits limits{
      .max_connections = static_cast<std::size_t>(config_.http.max_connections),
      .max_body_bytes = static_cast<std::size_t>(config_.bus.max_message_bytes),
      .header_timeout = std::chrono::seconds(config_.http.header_timeout_s),
      .idle_timeout = std::chrono::seconds(config_.http.idle_timeout_s)};
  http_ = std::make_unique<http::Server>(
      config_.http.listen,
      [api = http_api_.get()](const http::Request& request, http::Respond respond) {
        api->handle(request, std::move(respond));
      },
      limits);
}

}  // namespace reflectd::daemon
