#include "cli/endpoints.hpp"

#include <stdexcept>
#include <vector>

namespace reflectd::cli {
namespace {

std::string flag_for(Role role) {
  // --push is publish's mode switch, so the push endpoint flag has a longer name.
  return role == Role::kPush ? "--push-endpoint" : "--" + std::string(role_name(role));
}

[[noreturn]] void unusable(std::string_view endpoint, Role role, std::string_view why) {
  throw std::runtime_error(std::string(role_name(role)) + " endpoint " + std::string(endpoint) +
                           ": " + std::string(why) + "; pass the endpoint the daemon bound with " +
                           flag_for(role) + " (reflectd logs it when ready)");
}

}  // namespace

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kIngest: return "ingest";
    case Role::kPush: return "push";
    case Role::kControl: return "control";
  }
  return "?";
}

config::Config load_client_config(const EndpointOptions& options) {
  return options.config_path.empty() ? config::defaults() : config::load_file(options.config_path);
}

std::string connectable_endpoint(std::string_view endpoint, Role role) {
  if (endpoint == "ipc://*") unusable(endpoint, role, "a wildcard ipc path cannot be connected to");
  const auto scheme_end = endpoint.find("://");
  if (scheme_end == std::string_view::npos) return std::string(endpoint);
  const std::string_view scheme = endpoint.substr(0, scheme_end);
  if (scheme != "tcp" && scheme != "ws" && scheme != "wss") return std::string(endpoint);
  const std::string_view address = endpoint.substr(scheme_end + 3);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return std::string(endpoint);
  const std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  if (port.starts_with('*') || port.starts_with('!')) {
    unusable(endpoint, role, "a wildcard (ephemeral) port cannot be connected to");
  }
  if (host == "*" || host == "0.0.0.0") {
    return std::string(scheme) + "://127.0.0.1:" + std::string(port);
  }
  return std::string(endpoint);
}

std::string resolve_endpoint(const EndpointOptions& options, const config::Config& config,
                             Role role) {
  const std::string* flag = nullptr;
  const std::vector<std::string>* configured = nullptr;
  switch (role) {
    case Role::kIngest:
      flag = &options.ingest;
      configured = &config.bus.ingest;
      break;
    case Role::kPush:
      flag = &options.push;
      configured = &config.bus.push;
      break;
    case Role::kControl:
      flag = &options.control;
      configured = &config.bus.control;
      break;
  }
  // An explicit flag already names a connect endpoint, not a bind one: keep it verbatim.
  if (!flag->empty()) return *flag;
  if (configured->empty()) {
    throw std::runtime_error("the configuration binds no " + std::string(role_name(role)) +
                             " endpoint; pass one with " + flag_for(role));
  }
  return connectable_endpoint(configured->front(), role);
}

}  // namespace reflectd::cli
