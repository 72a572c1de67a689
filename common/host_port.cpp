#include "common/host_port.hpp"

#include <stdexcept>

namespace reflectd {

std::pair<std::string, std::string> split_host_port(const std::string& address,
                                                    std::string_view label) {
  const std::string prefix = std::string(label) + " address '" + address + "': ";
  std::string host;
  std::string port;
  if (!address.empty() && address.front() == '[') {
    const auto close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      throw std::runtime_error(prefix + "expected [IPv6]:port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      throw std::runtime_error(prefix + "expected host:port");
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoi(port) > 65535) {
    throw std::runtime_error(prefix + "the port must be 0-65535");
  }
  return {host, port};
}

}  // namespace reflectd
