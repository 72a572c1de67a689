// The HTTP JSON API's wiring (http/api.hpp): events go to the bus as acknowledged ingest,
// commands to handle_control() on the io thread, as NATS reads do.

#include <boost/asio/post.hpp>

#include "daemon/daemon.hpp"

namespace reflectd::daemon {

std::shared_ptr<const http::Tokens> Daemon::load_http_tokens(const config::Config& config) {
  if (config.security.http_tokens_file.empty()) return nullptr;
  return std::make_shared<const http::Tokens>(
      http::Tokens::load_file(config.security.http_tokens_file));
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
  http_api_ = std::make_unique<http::Api>(std::move(backend), clock_,
                                          http::ApiOptions{.insecure = config_.security.insecure,
                                                           .test_hooks = options_.test_hooks,
                                                           .rate_per_s = config_.http.rate_per_s,
                                                           .rate_burst = config_.http.rate_burst});
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
