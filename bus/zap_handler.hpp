#pragma once
// The ZAP handler (ZeroMQ RFC 27/ZAP): libzmq asks it, over inproc://zeromq.zap.01 in the
// daemon's context, whether each new connection may complete its handshake.
//
//   CURVE: admitted (200) when the client's public key is in the authorized-keys file; the
//          ZAP user id is the key in Z85, which libzmq attaches to every message of that
//          connection as the "User-Id" property. Unknown keys get 400 and the handshake fails
//          (the client sees ZMQ_EVENT_HANDSHAKE_FAILED_AUTH); nothing it sends is ever read.
//   NULL:  admitted with an empty user id: with CURVE on every tcp endpoint only ipc and
//          inproc peers (guarded by file modes) arrive without a mechanism.
//   other: refused (400).
//
// It runs on the daemon's io_context through its own SocketReactor, independent of the bus
// inlets, so it keeps answering while the bus pauses reading for a full writer.
//
// Thread-safety: everything on the io_context's thread. Errors: the constructor throws
// zmq::error_t when the ZAP endpoint is taken (another handler in the same context).

#include <boost/asio/io_context.hpp>
#include <zmq.hpp>

#include <atomic>
#include <cstdint>
#include <memory>

#include "bus/security.hpp"
#include "bus/socket_reactor.hpp"

namespace reflectd::bus {

/// Counters of the handler's decisions.
struct ZapStats {
  std::atomic<std::uint64_t> accepted{0};
  std::atomic<std::uint64_t> refused{0};
};

class ZapHandler {
 public:
  /// Binds inproc://zeromq.zap.01 in `context`. Bind it before any CURVE server socket binds.
  ZapHandler(boost::asio::io_context& io, zmq::context_t& context,
             std::shared_ptr<const AuthorizedKeys> keys);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  /// Starts answering requests.
  void start();
  /// Replaces the key list for handshakes from now on (SIGHUP).
  void set_keys(std::shared_ptr<const AuthorizedKeys> keys) { keys_ = std::move(keys); }
  /// Stops answering and closes the socket.
  void close();

  const ZapStats& stats() const { return stats_; }

 private:
  SocketReactor::Drain drain();

  zmq::socket_t socket_;
  boost::asio::io_context& io_;
  std::shared_ptr<const AuthorizedKeys> keys_;
  std::unique_ptr<SocketReactor> reactor_;
  ZapStats stats_;
  bool closed_ = false;
};

}  // namespace reflectd::bus
