#pragma once
// Non-blocking ZeroMQ calls that survive signals.
//
// The daemon handles SIGTERM, SIGINT and SIGHUP through Asio (boost::asio::signal_set), so a
// signal may be handled on the io_context's thread while it is inside libzmq. libzmq checks its
// command mailbox with poll(2) even for ZMQ_DONTWAIT calls and for zmq_getsockopt(ZMQ_EVENTS);
// Linux returns EINTR from a zero-timeout poll when a signal is pending, and cppzmq reports it
// as zmq::error_t. In every such case libzmq fails before it reads or sends a frame (the mailbox
// is checked first: socket_base_t::recv, send and getsockopt), so calling again is exact. These
// helpers call again on EINTR and let every other error through.
//
// Thread-safety: that of the socket (one thread at a time).

#include <zmq.hpp>

#include <cerrno>
#include <optional>
#include <vector>

namespace reflectd::bus {

/// Runs `call` until it returns without zmq::error_t(EINTR); rethrows any other zmq::error_t.
template <typename Call>
auto retry_on_eintr(Call&& call) -> decltype(call()) {
  for (;;) {
    try {
      return call();
    } catch (const zmq::error_t& error) {
      if (error.num() != EINTR) throw;
    }
  }
}

/// ZMQ_EVENTS of `socket` (ZMQ_POLLIN | ZMQ_POLLOUT bits). Throws zmq::error_t for errors other
/// than EINTR (ETERM once the context is shut down).
inline int socket_events(zmq::socket_t& socket) {
  return retry_on_eintr([&] { return socket.get(zmq::sockopt::events); });
}

/// Reads one whole multipart message without waiting. Returns the number of frames appended to
/// `frames`, or std::nullopt when no message is waiting (EAGAIN). Each frame is read with its own
/// EINTR retry, so a signal between two frames of a message cannot split it (cppzmq's
/// recv_multipart would throw and lose the frames already read). Throws zmq::error_t for other
/// errors.
inline std::optional<std::size_t> recv_message(zmq::socket_t& socket,
                                               std::vector<zmq::message_t>& frames) {
  std::size_t count = 0;
  for (bool more = true; more;) {
    zmq::message_t frame;
    const auto received =
        retry_on_eintr([&] { return socket.recv(frame, zmq::recv_flags::dontwait); });
    if (!received) {
      // The frames of a message arrive together, so only the first one can be missing.
      if (count == 0) return std::nullopt;
      continue;
    }
    more = frame.more();
    frames.push_back(std::move(frame));
    ++count;
  }
  return count;
}

/// Sends one frame without waiting. Returns false when the socket cannot take it now (EAGAIN:
/// the high-water mark). Throws zmq::error_t for errors other than EINTR (e.g. EHOSTUNREACH
/// with ZMQ_ROUTER_MANDATORY).
inline bool send_frame(zmq::socket_t& socket, zmq::message_t&& frame, zmq::send_flags flags) {
  return retry_on_eintr([&] { return socket.send(frame, flags | zmq::send_flags::dontwait); })
      .has_value();
}

}  // namespace reflectd::bus
