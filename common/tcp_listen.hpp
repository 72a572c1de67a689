#pragma once
// The listening socket of the daemon's TCP servers (http.listen, daemon.metrics_listen): one
// resolve-open-bind-listen sequence and one way to name the bound address.
//
// Error policy: startup only; listen_tcp() throws std::runtime_error.

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>

namespace reflectd {

/// Opens `acceptor` on `address` ("host:port" or "[IPv6]:port", split_host_port's rule; port
/// 0 takes a free one) with SO_REUSEADDR and the system's backlog. Returns the address it is
/// bound to, "host:port" or "[IPv6]:port" (the real port when 0 was asked). Throws
/// std::runtime_error "<label> address '<address>': cannot resolve: …" or "…: cannot
/// listen: …" (and split_host_port's errors). Not thread-safe for one acceptor.
std::string listen_tcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address,
                       std::string_view label);

}  // namespace reflectd
