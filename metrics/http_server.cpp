#include "metrics/http_server.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "common/tcp_listen.hpp"
#include "metrics/exposition.hpp"

namespace reflectd::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kIdleTimeout = std::chrono::seconds(30);
constexpr std::size_t kMaxRequestBytes = 8192;  // a scrape is one short GET

class Session : public std::enable_shared_from_this<Session> {
 public:
  /// `open` counts the sessions alive; it must outlive every session (HttpServer::Impl
  /// declares it before the io_context whose destruction destroys the last ones).
  Session(tcp::socket socket, const std::function<std::string()>& render, std::size_t& open)
      : stream_(std::move(socket)), render_(render), open_(open) {
    ++open_;
  }
  ~Session() { --open_; }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { read(); }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestBytes);
    parser_->body_limit(kMaxRequestBytes);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code error, std::size_t) {
                       self->on_read(error);
                     });
  }

  void on_read(beast::error_code error) {
    if (error == http::error::end_of_stream || error == beast::error::timeout ||
        error == asio::error::operation_aborted || error == asio::error::connection_reset) {
      return close();
    }
    if (error) {
      respond(http::status::bad_request, "bad request: " + error.message() + "\n", false, 11,
              false);
      return;
    }
    const auto& request = parser_->get();
    const std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    const bool head = request.method() == http::verb::head;
    if (request.method() != http::verb::get && !head) {
      respond(http::status::method_not_allowed, "only GET and HEAD are served\n",
              request.keep_alive(), request.version(), false);
    } else if (path != "/metrics") {
      respond(http::status::not_found, "not found: reflectd serves /metrics\n",
              request.keep_alive(), request.version(), head);
    } else {
      std::string body;
      try {
        body = render_();
      } catch (const std::exception& failure) {
        spdlog::error("metrics: rendering failed: {}", failure.what());
        respond(http::status::internal_server_error, "rendering failed\n", false, request.version(),
                head);
        return;
      }
      respond(http::status::ok, std::move(body), request.keep_alive(), request.version(), head,
              TextExposition::kContentType);
    }
  }

  void respond(http::status status, std::string body, bool keep_alive, unsigned version, bool head,
               std::string_view content_type = "text/plain; charset=utf-8") {
    response_ = http::response<http::string_body>(status, version);
    response_.set(http::field::server, "reflectd");
    response_.set(http::field::content_type,
                  beast::string_view(content_type.data(), content_type.size()));
    if (status == http::status::method_not_allowed) response_.set(http::field::allow, "GET, HEAD");
    response_.keep_alive(keep_alive);
    const std::size_t length = body.size();
    if (!head) response_.body() = std::move(body);
    response_.content_length(length);
    stream_.expires_after(kIdleTimeout);
    http::async_write(
        stream_, response_,
        [self = shared_from_this(), keep_alive](beast::error_code error, std::size_t) {
          if (error || !keep_alive) return self->close();
          self->read();
        });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> response_;
  const std::function<std::string()>& render_;
  std::size_t& open_;
};

// Answers a connection over the limit without a session: a fixed 503 written without waiting
// (a fresh socket's send buffer takes it; a client that does not read loses it), then closed.
void refuse(tcp::socket socket) {
  static constexpr std::string_view kBusy =
      "HTTP/1.1 503 Service Unavailable\r\nServer: reflectd\r\nContent-Type: text/plain; "
      "charset=utf-8\r\nContent-Length: 33\r\nConnection: close\r\n\r\n"
      "too many connections to /metrics\n";
  beast::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(asio::buffer(kBusy.data(), kBusy.size()), ignored);
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

}  // namespace

struct HttpServer::Impl {
  std::size_t open_sessions = 0;  // before `io`: sessions destroyed with it still count down
  std::size_t max_connections = 0;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::function<std::string()> render;
  std::string bound;
  std::thread thread;
  bool stopped = false;
  bool refused_logged = false;  // one warning per stretch at the limit, not one per connection

  void accept() {
    acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
      if (error == asio::error::operation_aborted) return;
      if (!error && open_sessions >= max_connections) {
        if (!refused_logged) {
          spdlog::warn("metrics: {} connections open, the limit: refusing more with 503",
                       max_connections);
          refused_logged = true;
        }
        refuse(std::move(socket));
      } else if (!error) {
        refused_logged = false;
        std::make_shared<Session>(std::move(socket), render, open_sessions)->start();
      } else {
        spdlog::warn("metrics: accept failed: {}", error.message());
      }
      accept();
    });
  }
};

HttpServer::HttpServer(const std::string& address, std::function<std::string()> render,
                       std::size_t max_connections)
    : impl_(std::make_unique<Impl>()) {
  if (max_connections == 0) throw std::invalid_argument("metrics: max_connections must be >= 1");
  impl_->render = std::move(render);
  impl_->max_connections = max_connections;
  impl_->bound = listen_tcp(impl_->acceptor, address, "metrics");
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

HttpServer::~HttpServer() { stop(); }

const std::string& HttpServer::bound_address() const { return impl_->bound; }

void HttpServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  // Stopping the io_context abandons the sessions' pending operations; their sockets close
  // when the handlers holding them are destroyed with the io_context.
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace reflectd::metrics
