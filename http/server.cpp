#include "http/server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common/tcp_listen.hpp"

namespace reflectd::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

constexpr std::size_t kMaxHeaderBytes = std::size_t{16} * 1024;
constexpr std::size_t kFirstReadBytes = 4096;

bool loopback(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).is_loopback();
  }
  return address.is_loopback();
}

std::string header(const bhttp::request<bhttp::string_body>& request, bhttp::field field) {
  const auto it = request.find(field);
  return it == request.end() ? std::string() : std::string(it->value());
}

}  // namespace

std::string Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (beast::iequals(key, beast::string_view(name.data(), name.size()))) return value;
  }
  return "";
}

std::string error_body(std::string_view text) {
  return nlohmann::json{{"ok", false}, {"error", text}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Shared with the Respond callables, which may outlive the server: they post only while it
// runs.
struct PostTarget {
  std::mutex mutex;
  bool stopped = false;
  asio::io_context* io = nullptr;
};

class Session;

struct Server::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  Handler handler;
  ServerLimits limits;
  std::string bound;
  std::thread thread;
  std::shared_ptr<PostTarget> target = std::make_shared<PostTarget>();
  // The open sessions, owned here so that each is destroyed on this thread or in stop(),
  // while the io_context its socket belongs to is alive.
  std::set<std::shared_ptr<Session>> sessions;
  bool stopped = false;
  bool refused_logged = false;

  void accept();
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server::Impl& server) : stream_(std::move(socket)), server_(server) {
    beast::error_code error;
    const tcp::endpoint peer = stream_.socket().remote_endpoint(error);
    if (!error) {
      peer_ = peer.address().to_string();
      peer_loopback_ = loopback(peer.address());
    }
  }

  void start() { wait_for_request(); }

  void write(Response answer) {
    response_ =
        bhttp::response<bhttp::string_body>(static_cast<bhttp::status>(answer.status), version_);
    response_.set(bhttp::field::server, "reflectd");
    response_.set(bhttp::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) response_.set(name, value);
    response_.keep_alive(keep_alive_);
    response_.body() = std::move(answer.body);
    response_.prepare_payload();
    stream_.expires_after(server_.limits.idle_timeout);
    bhttp::async_write(stream_, response_,
                       [self = shared_from_this()](beast::error_code error, std::size_t) {
                         if (error || !self->keep_alive_) return self->close();
                         self->wait_for_request();
                       });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
    server_.sessions.erase(shared_from_this());
  }

 private:
  // Idle until the first byte of the next request, then the whole request within
  // header_timeout: a client that trickles a header is cut off, one that idles is not.
  void wait_for_request() {
    if (buffer_.size() > 0) return read_request();
    stream_.expires_after(server_.limits.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = shared_from_this()](beast::error_code error, std::size_t n) {
                              if (error) return self->close();
                              self->buffer_.commit(n);
                              self->read_request();
                            });
  }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(server_.limits.max_body_bytes);
    stream_.expires_after(server_.limits.header_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = shared_from_this()](beast::error_code error, std::size_t) {
                        self->on_read(error);
                      });
  }

  void on_read(beast::error_code error) {
    keep_alive_ = false;
    if (error == bhttp::error::body_limit) {
      return write({413, error_body("body: larger than the limit of " +
                                    std::to_string(server_.limits.max_body_bytes) +
                                    " bytes (bus.max_message_bytes)")});
    }
    if (error == bhttp::error::header_limit) {
      return write({431, error_body("header: larger than 16384 bytes")});
    }
    if (error == bhttp::error::end_of_stream || error == beast::error::timeout ||
        error == asio::error::operation_aborted || error == asio::error::connection_reset ||
        error == asio::error::eof) {
      return close();
    }
    if (error) return write({400, error_body("request: not HTTP/1.x: " + error.message())});
    const auto& raw = parser_->get();
    version_ = raw.version();
    keep_alive_ = raw.keep_alive();
    Request request;
    request.method = std::string(raw.method_string());
    const std::string_view target(raw.target().data(), raw.target().size());
    const auto mark = target.find('?');
    request.path = std::string(target.substr(0, mark));
    if (mark != std::string_view::npos) request.query = std::string(target.substr(mark + 1));
    request.authorization = header(raw, bhttp::field::authorization);
    request.origin = header(raw, bhttp::field::origin);
    request.host = header(raw, bhttp::field::host);
    request.content_type = header(raw, bhttp::field::content_type);
    for (const auto& field : raw) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = parser_->release().body();
    request.peer = peer_;
    request.peer_loopback = peer_loopback_;
    stream_.expires_never();  // the handler's work is not the client's delay
    std::shared_ptr<PostTarget> target_ref = server_.target;
    std::weak_ptr<Session> weak = weak_from_this();
    server_.handler(std::move(request), [target_ref, weak](Response answer) {
      const std::lock_guard lock(target_ref->mutex);
      if (target_ref->stopped) return;
      asio::post(*target_ref->io, [weak, answer = std::move(answer)]() mutable {
        if (auto self = weak.lock()) self->write(std::move(answer));
      });
    });
  }

  beast::tcp_stream stream_;
  Server::Impl& server_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  std::string peer_;
  bool peer_loopback_ = false;
  unsigned version_ = 11;
  bool keep_alive_ = false;
};

namespace {

// A connection over the limit gets a fixed 503 written without waiting (a fresh socket's send
// buffer takes it; a client that does not read loses it), then is closed.
void refuse(tcp::socket socket) {
  const std::string body = error_body("connections: more than http.max_connections are open");
  const std::string busy =
      "HTTP/1.1 503 Service Unavailable\r\nServer: reflectd\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(busy.data(), busy.size()), ignored);
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

}  // namespace

void Server::Impl::accept() {
  acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (error == asio::error::operation_aborted) return;
    if (!error && sessions.size() >= limits.max_connections) {
      if (!refused_logged) {
        spdlog::warn("http: {} connections open, the limit: refusing more with 503",
                     limits.max_connections);
        refused_logged = true;
      }
      refuse(std::move(socket));
    } else if (!error) {
      refused_logged = false;
      auto session = std::make_shared<Session>(std::move(socket), *this);
      sessions.insert(session);
      session->start();
    } else {
      spdlog::warn("http: accept failed: {}", error.message());
    }
    accept();
  });
}

Server::Server(const std::string& address, Handler handler, ServerLimits limits)
    : impl_(std::make_unique<Impl>()) {
  if (limits.max_connections == 0 || limits.max_body_bytes == 0) {
    throw std::invalid_argument("http: max_connections and max_body_bytes must be >= 1");
  }
  impl_->handler = std::move(handler);
  impl_->limits = limits;
  impl_->target->io = &impl_->io;
  impl_->bound = listen_tcp(impl_->acceptor, address, "http.listen");
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

Server::~Server() { stop(); }

const std::string& Server::bound_address() const { return impl_->bound; }

void Server::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  {
    const std::lock_guard lock(impl_->target->mutex);
    impl_->target->stopped = true;
  }
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->sessions.clear();
}

}  // namespace reflectd::http
