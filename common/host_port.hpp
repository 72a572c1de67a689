#pragma once
// "host:port" addresses of the daemon's TCP listeners (daemon.metrics_listen, http.listen).
//
// Error policy: startup only; split_host_port() throws std::runtime_error.

#include <string>
#include <string_view>
#include <utility>

namespace reflectd {

/// Splits "host:port" or "[IPv6]:port" into its host (without brackets) and port (0-65535,
/// digits only). Throws std::runtime_error "<label> address '<address>': <rule>" otherwise.
std::pair<std::string, std::string> split_host_port(const std::string& address,
                                                    std::string_view label);

}  // namespace reflectd
