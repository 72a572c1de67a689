#pragma once
// Acknowledged publishing over the daemon's ingest ROUTER: keeps up to `window` messages in
// flight on a DEALER, matches replies by request id, resends a message unchanged when its
// reply is late, and records every event's outcome.
//
// Wire: each message is [request id, payload]; the id is the message's decimal sequence
// number, reused by its resends. A late reply for a message already settled is ignored (its
// resend, carrying the same event ids, was answered "duplicate" or will be).
//
// Error policy: zmq::error_t from the socket and std::runtime_error from the input
// propagate. Thread-safety: one sender per thread; it uses the socket exclusively.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "cli/message_builder.hpp"
#include "cli/progress.hpp"
#include "cli/summary.hpp"

namespace reflectd::cli {

struct AckSettings {
  std::size_t window = 64;                  ///< Messages in flight at most.
  std::chrono::milliseconds timeout{5000};  ///< Wait for a reply before resending.
  int retries = 5;                          ///< Resends before events count as unacknowledged.
};

class AckSender {
 public:
  /// `socket` is a connected DEALER; `names` are the LineReader's input names.
  AckSender(zmq::socket_t& socket, MessageBuilder& builder, const std::vector<std::string>& names,
            AckSettings settings, Summary& summary, Progress& progress);

  /// Sends every message and returns once each is answered or given up.
  void run();

 private:
  using Clock = std::chrono::steady_clock;
  struct InFlight {
    OutgoingMessage message;
    int attempts = 0;
    Clock::time_point deadline;
  };

  void fill_window();
  void transmit(std::uint64_t id, InFlight& entry);
  void receive_replies();
  void settle(std::uint64_t id, std::string_view body);
  void expire();
  void forget(std::map<std::uint64_t, InFlight>::iterator entry);
  std::chrono::milliseconds poll_timeout() const;

  zmq::socket_t& socket_;
  MessageBuilder& builder_;
  const std::vector<std::string>& names_;
  AckSettings settings_;
  Summary& summary_;
  Progress& progress_;
  std::map<std::uint64_t, InFlight> in_flight_;
  std::uint64_t next_id_ = 1;
  bool input_done_ = false;
  std::uint64_t bytes_settled_ = 0;
};

}  // namespace reflectd::cli
