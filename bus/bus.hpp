#pragma once
// The bus: every ZeroMQ socket of the daemon, owned by one io_context thread.
//
//   ingest    ROUTER  acknowledged ingest; one reply per message after its commit
//   push      PULL    fire-and-forget ingest; rejects go to dead_letters
//   subscribe SUB     connects to agents' PUB endpoints; rejects go to dead_letters. With
//                     CURVE each tcp publisher gets a SUB of its own, a CURVE client that
//                     authenticates the publisher's key, so its messages are its Principal's
//   notify    PUB     announcements: [topic, JSON with a "seq" sequence number]
//   control   ROUTER  JSON request -> JSON reply, answered by a ControlHandler
//
// Messages become store::WriteRequests; when the writer's queue is full the bus stops
// reading (libzmq's high-water marks then push back on publishers) and resumes once the
// writer signals space. Replies on ingest go out in the order messages were read.
//
// Thread-safety: construct, start() and every other call on the io_context's thread, except
// writer_has_space(), which any thread may call. Errors: start() throws zmq::error_t or
// std::runtime_error when an endpoint cannot be bound or connected; after that nothing throws.

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bus/event_decoder.hpp"
#include "bus/jetstream_forwarder.hpp"
#include "bus/message_outcome.hpp"
#include "bus/security.hpp"
#include "bus/socket_reactor.hpp"
#include "common/clock.hpp"
#include "common/histogram.hpp"
#include "config/config.hpp"
#include "store/writer.hpp"

namespace reflectd::bus {

/// Delivers the reply to one control request; callable once, from any thread.
using ControlReply = std::function<void(nlohmann::json reply)>;
/// Answers one control request (an already parsed JSON object) from `caller`, now or later (a
/// request that waits for a job keeps `reply` until the job ends). Runs on the io_context's
/// thread; `caller` is valid only during the call.
using ControlHandler =
    std::function<void(const nlohmann::json& request, const Principal& caller, ControlReply reply)>;

/// Endpoints actually bound (wildcard ports resolved), per socket role.
struct BoundEndpoints {
  std::vector<std::string> ingest;
  std::vector<std::string> push;
  std::vector<std::string> notify;
  std::vector<std::string> control;
};

/// One CURVE subscribe endpoint and how its handshakes went, from a socket monitor on its SUB
/// (the daemon is the CURVE client there, so the ZAP counters do not see it).
struct SubscribeLink {
  std::string endpoint;
  std::string public_key;  ///< The publisher's key (Z85), as configured.
  std::uint64_t handshakes_succeeded = 0;
  std::uint64_t handshakes_failed = 0;  ///< Each reconnect attempt that failed counts.
  bool connected = false;               ///< A handshake succeeded and no disconnect since.
  std::string last_failure;             ///< Why the last handshake failed; empty if none did.
};

/// Counters kept by the bus thread; read from any thread (relaxed loads, Histogram snapshots).
struct BusStats {
  std::atomic<std::uint64_t> messages{0};         ///< Messages read on ingest, push, subscribe.
  std::atomic<std::uint64_t> replies_dropped{0};  ///< Replies a vanished/slow peer never took.
  std::atomic<std::uint64_t> paused{0};           ///< Times reading paused on a full writer.
  SocketEventCounts ingest;
  SocketEventCounts push;
  SocketEventCounts subscribe;
  SocketEventCounts http;  ///< POST /v1/events (http/api.hpp)
  /// Ingest acknowledgement latency: from reading the message off the socket to handing its
  /// reply to libzmq (after the commit and the WAL's fdatasync), per message.
  Histogram ack_latency{Histogram::latency_bounds_s()};
};

class Bus {
 public:
  /// With `security.curve`, every bound tcp endpoint is a CURVE server (ZAP domain
  /// "reflectd"; a ZapHandler must be bound in `context` first) and each message is checked
  /// against the Principal of its "User-Id" (bus/security.hpp); each subscribe endpoint with
  /// a key in `security.subscribe_server_keys` is connected as a CURVE client (server key =
  /// that key, client keypair = `security.server`) and its messages are checked against the
  /// Principal of that key.
  Bus(boost::asio::io_context& io, zmq::context_t& context, const config::BusConfig& config,
      store::Writer& writer, const Clock& clock, ControlHandler control,
      SecuritySettings security = {});
  ~Bus();
  Bus(const Bus&) = delete;
  Bus& operator=(const Bus&) = delete;

  /// Binds and connects every configured endpoint and starts reading.
  void start();
  /// Stops reading ingest, push and subscribe (control keeps answering until close()).
  void stop_reading();
  /// Closes every socket; queued replies get bus.linger_ms to leave.
  void close();

  /// Publishes [topic, payload] on notify, adding "seq" to the payload.
  void publish(const std::string& topic, nlohmann::json payload);

  /// Sends acknowledged ingest to `forwarder` instead of the writer (bus.forward: jetstream):
  /// replies then come after JetStream's PubAck, each result carrying "stream_seq" (the
  /// stream sequence) instead of "seq". Call before start(); `forwarder` outlives the Bus's
  /// reading (stop_reading() first, then JetStreamForwarder::close(), then close()).
  void forward_ingest_to(JetStreamForwarder& forwarder) { forwarder_ = &forwarder; }

  /// Acknowledged ingest of one message that did not come from a socket (POST /v1/events):
  /// `payload` is decoded and authorized for `sender` on the io_context's thread like an
  /// ingest message and stored (or forwarded), and `reply` gets the ingest reply once it is
  /// committed, with 200 when every event was stored or a duplicate, 400 when the message or
  /// an event was rejected (the others are stored), or 503 with an error when the writer's queue is
  /// full (the caller retries; nothing is kept). Callable from any thread; `reply` is called once,
  /// from any thread, and not at all once the Bus is destroyed.
  void ingest_message(std::string payload, Principal sender,
                      std::function<void(int status, std::string body)> reply);

  /// Called by the writer, or the forwarder (any thread), when its queue has room again.
  void writer_has_space();

  /// Live setting (SIGHUP): the authorized keys used for messages read from now on; a
  /// connection whose key was removed, or a subscribe publisher whose key was removed, gets
  /// every message refused (dead letters on push and subscribe).
  void set_authorized_keys(std::shared_ptr<const AuthorizedKeys> keys) {
    security_.keys = std::move(keys);
  }

  /// Live setting (SIGHUP): the payload limit applied to messages read from now on.
  void set_max_message_bytes(std::int64_t bytes) { max_message_bytes_ = bytes; }

  const BoundEndpoints& endpoints() const { return bound_; }
  /// The CURVE subscribe endpoints in bus.subscribe order (io_context thread only).
  std::vector<SubscribeLink> subscribe_links() const;
  const BusStats& stats() const { return stats_; }

 private:
  enum class Role { kIngest, kPush, kSubscribe, kControl };
  struct Inlet {
    Role role;
    std::string label;  // "ingest", "push" or "subscribe": dead_letters.endpoint.
    zmq::socket_t socket;
    std::unique_ptr<SocketReactor> reactor;
    std::optional<store::WriteRequest> pending;  // refused by a full writer
    // Subscribe over CURVE: the publisher's Z85 key, authenticated by the handshake; a SUB
    // cannot tell its connections apart, so such an inlet has exactly one endpoint.
    std::string publisher_key;
  };

  // The sender of a message: nullptr for the local operator (no CURVE on its endpoint);
  // `revoked` holds the key of an authenticated connection whose key is no longer listed.
  struct Sender {
    const Principal* principal = nullptr;
    std::string revoked;
  };

  zmq::socket_t make_socket(zmq::socket_type type, bool tcp_options);
  // Binds every endpoint (tcp ones as CURVE servers when configured); returns the bound
  // endpoints in the order given. Throws std::runtime_error naming the endpoint.
  std::vector<std::string> bind_endpoints(zmq::socket_t& socket, const std::string& label,
                                          const std::vector<std::string>& endpoints);
  // A PAIR reading the socket monitor of one CURVE subscribe SUB.
  struct LinkMonitor {
    SubscribeLink link;
    zmq::socket_t* watched = nullptr;
    zmq::socket_t socket;
    std::unique_ptr<SocketReactor> reactor;
  };

  Sender sender_of(const Inlet& inlet, const zmq::message_t& frame) const;
  void monitor_link(zmq::socket_t& sub, const std::string& endpoint, const std::string& key);
  SocketReactor::Drain drain_monitor(LinkMonitor& monitor);
  Inlet& add_inlet(Role role, zmq::socket_type type, const std::string& label);
  SocketReactor::Drain drain(Inlet& inlet);
  bool handle_ingest(Inlet& inlet, std::vector<zmq::message_t>& frames);
  bool handle_fire_and_forget(Inlet& inlet, std::vector<zmq::message_t>& frames);
  void handle_control(Inlet& inlet, std::vector<zmq::message_t>& frames);
  bool submit(Inlet& inlet, store::WriteRequest&& request);
  // Hands `request` to the writer, or to the forwarder for ingest; false when that is full.
  bool offer(const Inlet& inlet, store::WriteRequest& request);
  void retry_pending();
  void send_reply(Inlet& inlet, std::vector<zmq::message_t>&& envelope, const std::string& body);

  boost::asio::io_context& io_;
  zmq::context_t& context_;
  config::BusConfig config_;
  store::Writer& writer_;
  JetStreamForwarder* forwarder_ = nullptr;  // acknowledged ingest goes here when set
  const Clock& clock_;
  ControlHandler control_;
  SecuritySettings security_;
  EventDecoder decoder_;
  std::int64_t max_message_bytes_;
  std::vector<std::unique_ptr<Inlet>> inlets_;
  std::vector<std::unique_ptr<LinkMonitor>> monitors_;
  std::unique_ptr<zmq::socket_t> notify_;
  std::uint64_t notify_seq_ = 0;
  BoundEndpoints bound_;
  BusStats stats_;
  bool reading_ = false;
  bool paused_ = false;
  bool closed_ = false;
  std::shared_ptr<std::atomic<bool>> alive_;
};

}  // namespace reflectd::bus
