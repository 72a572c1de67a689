#include "bus/socket_reactor.hpp"

#include <boost/asio/post.hpp>

#include "bus/zmq_io.hpp"

namespace reflectd::bus {

SocketReactor::SocketReactor(boost::asio::io_context& io, zmq::socket_t& socket,
                             std::function<Drain()> drain)
    : io_(io),
      socket_(socket),
      drain_(std::move(drain)),
      descriptor_(io, socket.get(zmq::sockopt::fd)) {}

SocketReactor::~SocketReactor() { stop(); }

void SocketReactor::check() {
  if (stopped_ || paused_) return;
  while ((socket_events(socket_) & ZMQ_POLLIN) != 0) {
    switch (drain_()) {
      case Drain::kEmpty: continue;
      case Drain::kPaused: paused_ = true; return;
      case Drain::kBudget:
        // Let the other sockets and the replies run before reading more.
        if (!yield_posted_) {
          yield_posted_ = true;
          boost::asio::post(io_, [this] {
            yield_posted_ = false;
            check();
          });
        }
        return;
    }
  }
  arm();
}

void SocketReactor::resume() {
  if (stopped_ || !paused_) return;
  paused_ = false;
  check();
}

void SocketReactor::stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  descriptor_.cancel(ignored);
  // The descriptor belongs to libzmq: release it so Asio does not close it.
  descriptor_.release();
}

void SocketReactor::arm() {
  if (armed_ || stopped_) return;
  armed_ = true;
  descriptor_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         [this](const boost::system::error_code& error) {
                           armed_ = false;
                           if (!error) check();
                         });
  if ((socket_events(socket_) & ZMQ_POLLIN) != 0) {
    boost::asio::post(io_, [this] { check(); });
  }
}

}  // namespace reflectd::bus
