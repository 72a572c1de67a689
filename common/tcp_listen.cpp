#include "common/tcp_listen.hpp"

#include <stdexcept>

#include "common/host_port.hpp"

namespace reflectd {

std::string listen_tcp(boost::asio::ip::tcp::acceptor& acceptor, const std::string& address,
                       std::string_view label) {
  namespace asio = boost::asio;
  using asio::ip::tcp;
  const auto [host, port] = split_host_port(address, label);
  const std::string prefix = std::string(label) + " address '" + address + "': ";
  boost::system::error_code error;
  tcp::resolver resolver(acceptor.get_executor());
  const auto endpoints =
      resolver.resolve(host, port, tcp::resolver::numeric_service | tcp::resolver::passive, error);
  if (error || endpoints.empty()) {
    throw std::runtime_error(prefix +
                             "cannot resolve: " + (error ? error.message() : "no address"));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) throw std::runtime_error(prefix + "cannot listen: " + error.message());
  const tcp::endpoint local = acceptor.local_endpoint();
  return local.address().is_v6()
             ? "[" + local.address().to_string() + "]:" + std::to_string(local.port())
             : local.address().to_string() + ":" + std::to_string(local.port());
}

}  // namespace reflectd
