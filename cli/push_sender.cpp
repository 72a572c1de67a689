#include "cli/push_sender.hpp"

#include <cstdint>
#include <optional>

namespace reflectd::cli {
namespace {

bool send_with_retries(zmq::socket_t& socket, const std::string& payload, int retries) {
  for (int attempt = 0; attempt <= retries; ++attempt) {
    if (socket.send(zmq::buffer(payload), zmq::send_flags::none)) return true;
  }
  return false;
}

void count_sent(const OutgoingMessage& message, const std::vector<std::string>& names,
                Summary& summary) {
  summary.events += message.events.size();
  ++summary.messages;
  if (message.raw_line) {
    summary.record(message.events.front(),
                   {Outcome::kRejected, "not a JSON object (sent; the daemon dead-letters it)"},
                   names);
  }
}

}  // namespace

void push_all(zmq::socket_t& socket, MessageBuilder& builder, const std::vector<std::string>& names,
              PushSettings settings, Summary& summary, Progress& progress) {
  // ZMQ_SNDTIMEO turns a blocking send into one that gives up after `timeout`.
  socket.set(zmq::sockopt::sndtimeo, static_cast<int>(settings.timeout.count()));
  std::uint64_t bytes_done = 0;
  bool gone = false;
  while (std::optional<OutgoingMessage> message = builder.next()) {
    bytes_done += message->input_bytes;
    if (!gone && send_with_retries(socket, message->payload, settings.retries)) {
      count_sent(*message, names, summary);
    } else {
      gone = true;
      summary.record_unacknowledged(message->events.size());
    }
    progress.update(summary.events + summary.unacknowledged, bytes_done);
  }
}

}  // namespace reflectd::cli
