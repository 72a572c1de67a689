#include "cli/socket.hpp"

#include <stdexcept>

namespace reflectd::cli {
namespace {

bool wait_for(zmq::socket_t& socket, short events, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, events, 0};
  return zmq::poll(&item, 1, timeout) > 0 && (item.revents & events) != 0;
}

}  // namespace

zmq::socket_t connect_socket(zmq::context_t& context, zmq::socket_type type,
                             const std::string& endpoint, const SocketOptions& options) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
  socket.set(zmq::sockopt::sndhwm, options.high_water_mark);
  socket.set(zmq::sockopt::rcvhwm, options.high_water_mark);
  socket.set(zmq::sockopt::immediate, 1);
  try {
    socket.connect(endpoint);
  } catch (const zmq::error_t& error) {
    throw std::runtime_error("cannot connect to " + endpoint + ": " + error.what());
  }
  return socket;
}

bool wait_writable(zmq::socket_t& socket, std::chrono::milliseconds timeout) {
  return wait_for(socket, ZMQ_POLLOUT, timeout);
}

bool wait_readable(zmq::socket_t& socket, std::chrono::milliseconds timeout) {
  return wait_for(socket, ZMQ_POLLIN, timeout);
}

}  // namespace reflectd::cli
