#include "bus/zap_handler.hpp"

#include "bus/zmq_io.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <string>
#include <vector>

namespace reflectd::bus {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr int kDrainBudget = 256;

}  // namespace

ZapHandler::ZapHandler(boost::asio::io_context& io, zmq::context_t& context,
                       std::shared_ptr<const AuthorizedKeys> keys)
    : socket_(context, zmq::socket_type::rep), io_(io), keys_(std::move(keys)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
}

ZapHandler::~ZapHandler() { close(); }

void ZapHandler::start() {
  reactor_ = std::make_unique<SocketReactor>(io_, socket_, [this] { return drain(); });
  reactor_->check();
}

void ZapHandler::close() {
  if (closed_) return;
  closed_ = true;
  if (reactor_) reactor_->stop();
  socket_.close();
}

SocketReactor::Drain ZapHandler::drain() {
  for (int i = 0; i < kDrainBudget; ++i) {
    std::vector<zmq::message_t> frames;
    std::optional<std::size_t> received;
    try {
      received = recv_message(socket_, frames);
    } catch (const zmq::error_t& error) {
      spdlog::warn("zap: receive failed: {}", error.what());
      return SocketReactor::Drain::kEmpty;
    }
    if (!received) return SocketReactor::Drain::kEmpty;
    // RFC 27: version, request id, domain, address, routing id, mechanism, credentials...
    std::string status = "400", text = "malformed ZAP request", user_id;
    const std::string request_id = frames.size() > 1 ? frames[1].to_string() : std::string{};
    if (frames.size() >= 6 && frames[0].to_string_view() == "1.0") {
      const std::string address = frames[3].to_string();
      const auto mechanism = frames[5].to_string_view();
      if (mechanism == "CURVE" && frames.size() == 7 && frames[6].size() == 32) {
        std::array<char, 41> z85{};
        zmq_z85_encode(z85.data(), static_cast<const std::uint8_t*>(frames[6].data()), 32);
        if (keys_ && keys_->find(z85.data()) != nullptr) {
          status = "200", text = "OK", user_id = z85.data();
        } else {
          text = "unknown CURVE key";
          spdlog::warn("zap: refused CURVE key {} from {}: not in the authorized keys", z85.data(),
                       address);
        }
      } else if (mechanism == "NULL") {
        status = "200", text = "OK";
      } else {
        text = "mechanism not allowed";
        spdlog::warn("zap: refused mechanism {} from {}", mechanism, address);
      }
    }
    (status == "200" ? stats_.accepted : stats_.refused).fetch_add(1, std::memory_order_relaxed);
    const std::array<std::string, 6> reply{"1.0", request_id, status, text, user_id, ""};
    try {
      for (std::size_t part = 0; part < reply.size(); ++part) {
        const auto more =
            part + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        if (!send_frame(socket_, zmq::message_t(reply[part].data(), reply[part].size()), more)) {
          spdlog::warn("zap: reply dropped: the ZAP socket is full");
          break;
        }
      }
    } catch (const zmq::error_t& error) {
      spdlog::warn("zap: reply failed: {}", error.what());
    }
  }
  return SocketReactor::Drain::kBudget;
}

}  // namespace reflectd::bus
