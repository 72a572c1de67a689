#pragma once
// Acknowledged ingest forwarded to NATS JetStream (bus.forward: jetstream, docs/CLUSTER.md):
// existing ZeroMQ publishers keep their DEALER/REQ sockets, and the node answers them once
// JetStream has stored their events on a quorum of the stream's replicas, instead of once its
// own SQLite has. The nodes that consume the stream (bus/jetstream_inlet.hpp) store them.
//
// Each valid event of a message is published on reflectd.events.<namespace> as its wire form
// (bus/event_encoder.hpp, so every consumer decodes the same record) with Nats-Msg-Id = its
// id, which makes JetStream's duplicate window answer a resend "duplicate". A message's
// request completes (WriteRequest::on_done) when every event has its PubAck, its error, or
// waited bus.jetstream.forward_timeout_ms; results are stored | duplicate (JetStream's own
// flag) with `seq` = the stream sequence, or rejected with the reason ("jetstream: ..."),
// which a publisher resends later with the same ids, as after a storage error. Requests
// complete in the order they were submitted, so replies on a connection keep their order.
// Entries the decoder rejected, and a whole-message error, pass through unchanged.
//
// Back-pressure: submit() refuses a request (and leaves it untouched) while
// bus.jetstream.forward_max_pending events wait for PubAcks; `has_space` is called once half
// of them have come back, like the writer's queue signal.
//
// Thread-safety: submit() and status() from any thread, but close() not concurrently with
// submit() (the daemon calls both on its io thread); nats.c's threads complete requests, so
// on_done runs on one of them, under the forwarder's lock (it must not call the forwarder).
// Errors: the constructor throws std::runtime_error for a configuration it cannot serve and
// start() throws NatsError for unreadable credentials; a NATS server that is down is not an
// error (the connection keeps trying; events wait in nats.c's reconnect buffer or time out).

#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "bus/nats_client.hpp"
#include "config/config.hpp"
#include "store/writer.hpp"

namespace reflectd::bus {

/// Counters since start; relaxed loads from any thread.
struct ForwarderStats {
  std::atomic<std::uint64_t> published{0};  ///< Events handed to nats.c.
  std::atomic<std::uint64_t> stored{0};     ///< PubAcks of new messages.
  std::atomic<std::uint64_t> duplicate{0};  ///< PubAcks JetStream flagged duplicate.
  std::atomic<std::uint64_t> failed{0};     ///< Errors and timeouts (answered as not stored).
};

class JetStreamForwarder {
 public:
  /// Throws std::runtime_error naming the key when `bus` cannot forward: no
  /// bus.jetstream.servers, or push/subscribe endpoints configured (their events would not go
  /// through the stream). `has_space` may be called from any thread.
  JetStreamForwarder(const config::BusConfig& bus, std::function<void()> has_space);
  ~JetStreamForwarder();
  JetStreamForwarder(const JetStreamForwarder&) = delete;
  JetStreamForwarder& operator=(const JetStreamForwarder&) = delete;

  /// Connects (in the background if no server answers yet). Throws NatsError for
  /// credentials or TLS files nats.c cannot load.
  void start();

  /// Takes `request` (entries, message_error, on_done; dead letters are not expected on
  /// acknowledged ingest) and returns true, or returns false leaving it untouched when the
  /// pending events are at bus.jetstream.forward_max_pending. A message larger than that
  /// limit is taken when nothing else is pending, so that it cannot wait forever.
  bool submit(store::WriteRequest&& request);

  /// Waits up to bus.jetstream.forward_timeout_ms + 1 s for the pending PubAcks, completes
  /// whatever is left as not stored, and closes the connection. Idempotent.
  void close();

  /// {"connected","pending_events","published","stored","duplicate","failed","last_error"}.
  nlohmann::json status() const;
  const ForwarderStats& stats() const { return stats_; }

 private:
  struct Pending;
  struct InFlight {
    std::shared_ptr<Pending> message;
    std::size_t result = 0;  // index into its message's results
  };

  static void on_pub_ack(jsCtx* js, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error, void* closure);
  void settle(natsMsg* msg, const jsPubAck* ack, const std::string& error);
  // Pops every finished request at the front of the queue and completes it (lock held).
  void complete_ready();
  // Marks one event of `message` settled (lock held).
  void settle_event(Pending& message, std::size_t result, const jsPubAck* ack,
                    const std::string& error);

  config::JetStreamConfig config_;
  std::function<void()> has_space_;
  NatsConnectionPtr connection_;
  JsCtxPtr js_;
  ForwarderStats stats_;

  mutable std::mutex mutex_;
  std::condition_variable drained_;
  std::deque<std::shared_ptr<Pending>> queue_;        // submission order
  std::unordered_map<natsMsg*, InFlight> in_flight_;  // by nats.c's message
  std::int64_t pending_events_ = 0;
  bool refused_ = false;  // a submit() was refused: signal has_space_ when room comes back
  bool closed_ = false;
  std::string last_error_;
};

}  // namespace reflectd::bus
