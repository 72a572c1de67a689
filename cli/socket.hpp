#pragma once
// ZeroMQ client sockets set up the way every reflectctl command needs them.
//
// Error policy: connect() failures (malformed endpoint, unknown transport) throw
// std::runtime_error naming the endpoint. Thread-safety: a socket belongs to one thread.

#include <chrono>
#include <string>

#include <zmq.hpp>

namespace reflectd::cli {

/// Options of a client socket.
struct SocketOptions {
  int high_water_mark = 1000;              ///< ZMQ_SNDHWM and ZMQ_RCVHWM, messages.
  std::chrono::milliseconds linger{1000};  ///< ZMQ_LINGER: bound on the wait at exit.
};

/// Creates a socket of `type`, connected to `endpoint`. ZMQ_IMMEDIATE is set so messages
/// are only queued on a completed connection: until the daemon answers the handshake the
/// socket is not writable, which is how wait_writable() detects an unreachable daemon.
zmq::socket_t connect_socket(zmq::context_t& context, zmq::socket_type type,
                             const std::string& endpoint, const SocketOptions& options);

/// Waits up to `timeout` for `socket` to accept a message; false when it did not.
bool wait_writable(zmq::socket_t& socket, std::chrono::milliseconds timeout);

/// Waits up to `timeout` for `socket` to have a message to read; false on timeout.
bool wait_readable(zmq::socket_t& socket, std::chrono::milliseconds timeout);

}  // namespace reflectd::cli
