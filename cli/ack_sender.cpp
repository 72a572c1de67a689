#include "cli/ack_sender.hpp"

#include <zmq_addon.hpp>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>

#include "cli/socket.hpp"

namespace reflectd::cli {
namespace {

// Bounds how stale the progress display gets while replies are slow.
constexpr std::chrono::milliseconds kMaxPollWait{100};

std::optional<std::uint64_t> parse_request_id(const zmq::message_t& frame) {
  const char* begin = static_cast<const char*>(frame.data());
  std::uint64_t id = 0;
  const auto [end, error] = std::from_chars(begin, begin + frame.size(), id);
  if (error != std::errc() || end != begin + frame.size()) return std::nullopt;
  return id;
}

}  // namespace

AckSender::AckSender(zmq::socket_t& socket, MessageBuilder& builder,
                     const std::vector<std::string>& names, AckSettings settings, Summary& summary,
                     Progress& progress)
    : socket_(socket),
      builder_(builder),
      names_(names),
      settings_(settings),
      summary_(summary),
      progress_(progress) {}

void AckSender::run() {
  for (;;) {
    fill_window();
    if (in_flight_.empty()) return;
    if (wait_readable(socket_, poll_timeout())) receive_replies();
    expire();
    progress_.update(summary_.settled(), bytes_settled_);
  }
}

void AckSender::fill_window() {
  while (!input_done_ && in_flight_.size() < settings_.window) {
    std::optional<OutgoingMessage> message = builder_.next();
    if (!message) {
      input_done_ = true;
      return;
    }
    summary_.events += message->events.size();
    ++summary_.messages;
    const std::uint64_t id = next_id_++;
    transmit(id, in_flight_.emplace(id, InFlight{std::move(*message), 0, {}}).first->second);
  }
}

void AckSender::transmit(std::uint64_t id, InFlight& entry) {
  const std::string request_id = std::to_string(id);
  // A refused send (no connection: ZMQ_IMMEDIATE) is handled like a lost one: the deadline
  // brings it back for another attempt.
  if (socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
    socket_.send(zmq::buffer(entry.message.payload), zmq::send_flags::dontwait);
  }
  if (entry.attempts > 0) ++summary_.resends;
  ++entry.attempts;
  entry.deadline = Clock::now() + settings_.timeout;
}

void AckSender::receive_replies() {
  for (;;) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
      return;
    }
    if (frames.size() != 2) continue;  // Not [request id, JSON]: not an answer of ours.
    if (const auto id = parse_request_id(frames[0])) settle(*id, frames[1].to_string_view());
  }
}

void AckSender::settle(std::uint64_t id, std::string_view body) {
  const auto entry = in_flight_.find(id);
  if (entry == in_flight_.end()) return;  // Answered before, or given up on.
  const OutgoingMessage& message = entry->second.message;
  const std::vector<EventOutcome> outcomes = outcomes_of_reply(body, message.events.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    summary_.record(message.events[i], outcomes[i], names_);
  }
  forget(entry);
}

void AckSender::expire() {
  const auto now = Clock::now();
  for (auto entry = in_flight_.begin(); entry != in_flight_.end();) {
    auto current = entry++;
    if (current->second.deadline > now) continue;
    if (current->second.attempts > settings_.retries) {
      summary_.record_unacknowledged(current->second.message.events.size());
      forget(current);
    } else {
      transmit(current->first, current->second);
    }
  }
}

void AckSender::forget(std::map<std::uint64_t, InFlight>::iterator entry) {
  bytes_settled_ += entry->second.message.input_bytes;
  in_flight_.erase(entry);
}

std::chrono::milliseconds AckSender::poll_timeout() const {
  auto earliest = Clock::time_point::max();
  for (const auto& [id, entry] : in_flight_) earliest = std::min(earliest, entry.deadline);
  const auto until = std::chrono::ceil<std::chrono::milliseconds>(earliest - Clock::now());
  return std::clamp(until, std::chrono::milliseconds(0), kMaxPollWait);
}

}  // namespace reflectd::cli
