#pragma once
// ZeroMQ client sockets set up the way every reflectctl command needs them.
//
// Error policy: connect() failures (malformed endpoint, unknown transport) throw
// std::runtime_error naming the endpoint. Thread-safety: a socket belongs to one thread.

#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

namespace reflectd::cli {

/// CURVE client keys (Z85): ours and the daemon's public key (docs/SECURITY.md).
struct CurveClientKeys {
  std::string public_key;
  std::string secret_key;
  std::string server_key;
};

/// Reads --curve-key (our secret certificate) and --server-key (the daemon's public
/// certificate, or its secret one) in the zcert format. Both empty: nullopt (no CURVE); only
/// one given, or an unreadable file: std::runtime_error naming the file.
std::optional<CurveClientKeys> load_curve_client(const std::string& curve_key_file,
                                                 const std::string& server_key_file);

/// Options of a client socket.
struct SocketOptions {
  int high_water_mark = 1000;              ///< ZMQ_SNDHWM and ZMQ_RCVHWM, messages.
  std::chrono::milliseconds linger{1000};  ///< ZMQ_LINGER: bound on the wait at exit.
  std::optional<CurveClientKeys> curve;    ///< Connect as a CURVE client when set.
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
