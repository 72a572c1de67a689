#include "cli/socket.hpp"

#include <stdexcept>

#include "common/zcert.hpp"

namespace reflectd::cli {
namespace {

bool wait_for(zmq::socket_t& socket, short events, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, events, 0};
  return zmq::poll(&item, 1, timeout) > 0 && (item.revents & events) != 0;
}

}  // namespace

std::optional<CurveClientKeys> load_curve_client(const std::string& curve_key_file,
                                                 const std::string& server_key_file) {
  if (curve_key_file.empty() && server_key_file.empty()) return std::nullopt;
  if (curve_key_file.empty() || server_key_file.empty()) {
    throw std::runtime_error(
        "CURVE needs both --curve-key (your secret key file) and --server-key "
        "(the daemon's public key file)");
  }
  const CurveCert ours = read_cert(curve_key_file, true);
  const CurveCert server = read_cert(server_key_file, false);
  return CurveClientKeys{ours.public_key, ours.secret_key, server.public_key};
}

zmq::socket_t connect_socket(zmq::context_t& context, zmq::socket_type type,
                             const std::string& endpoint, const SocketOptions& options) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, static_cast<int>(options.linger.count()));
  socket.set(zmq::sockopt::sndhwm, options.high_water_mark);
  socket.set(zmq::sockopt::rcvhwm, options.high_water_mark);
  socket.set(zmq::sockopt::immediate, 1);
  if (options.curve) {
    socket.set(zmq::sockopt::curve_serverkey, options.curve->server_key);
    socket.set(zmq::sockopt::curve_publickey, options.curve->public_key);
    socket.set(zmq::sockopt::curve_secretkey, options.curve->secret_key);
  }
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
