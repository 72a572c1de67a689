#pragma once
// Drives one ZeroMQ socket from an Asio io_context through its ZMQ_FD.
//
// ZMQ_FD is edge-triggered and does not mean "a message is ready" (ANCHORS §6, azmq's
// socket_service): after it signals we drain while ZMQ_EVENTS says POLLIN, re-arm, and re-check
// ZMQ_EVENTS right after arming because an edge that fired before the wait was queued is lost.
// Every send on the socket can consume an edge too, so senders call check() afterwards.
//
// Thread-safety: none; everything runs on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <zmq.hpp>

#include <functional>

namespace reflectd::bus {

class SocketReactor {
 public:
  /// What a drain call did.
  enum class Drain {
    kEmpty,   ///< Read until EAGAIN.
    kBudget,  ///< Read its share; more may be waiting (yield to other sockets).
    kPaused,  ///< Stopped reading because downstream is full; call resume() later.
  };

  /// `drain` reads messages with zmq::recv_flags::dontwait.
  SocketReactor(boost::asio::io_context& io, zmq::socket_t& socket, std::function<Drain()> drain);
  ~SocketReactor();
  SocketReactor(const SocketReactor&) = delete;
  SocketReactor& operator=(const SocketReactor&) = delete;

  /// Reads what is waiting and arms the wait. Call after every send on the socket.
  void check();
  /// Clears a pause and reads again.
  void resume();
  /// Stops reading for good (the socket stays open for sends) and releases the descriptor.
  void stop();

 private:
  void arm();

  boost::asio::io_context& io_;
  zmq::socket_t& socket_;
  std::function<Drain()> drain_;
  boost::asio::posix::stream_descriptor descriptor_;
  bool armed_ = false;
  bool paused_ = false;
  bool stopped_ = false;
  bool yield_posted_ = false;
};

}  // namespace reflectd::bus
