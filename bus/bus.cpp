#include "bus/bus.hpp"

#include "bus/control_request.hpp"
#include "bus/message_outcome.hpp"
#include "bus/zmq_io.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <algorithm>
#include <boost/asio/post.hpp>

#include <cstring>
#include <stdexcept>

namespace reflectd::bus {
namespace {

// Messages one socket may read before yielding to the others.
constexpr int kDrainBudget = 512;
// libzmq drops peers whose message exceeds this multiple of bus.max_message_bytes; below it
// the daemon answers with a precise "too large" error instead.
constexpr std::int64_t kTransportLimitFactor = 4;
constexpr std::size_t kMaxRequestIdBytes = 255;

std::string_view view(const zmq::message_t& frame) {
  return {static_cast<const char*>(frame.data()), frame.size()};
}

// ipc sockets hold agents' traffic: owner and group only.
void restrict_ipc_mode(const std::string& endpoint) {
  if (!endpoint.starts_with("ipc://")) return;
  const std::string path = endpoint.substr(6);
  if (::chmod(path.c_str(), 0660) != 0) {
    spdlog::warn("cannot chmod 0660 {}: {}", path, std::strerror(errno));
  }
}

// seed 000 MemoryDecision: what the router did with one event.
nlohmann::json memory_decision(const store::EventResult& r) {
  nlohmann::json metadata = nlohmann::json::object();
  if (r.seq != 0) metadata["event_seq"] = r.seq;
  if (!r.decision_id.empty()) metadata["decision_id"] = r.decision_id;
  if (!r.resolved_ids.empty())
    metadata[r.resolution_type == "supersede" ? "superseded" : "deprecated"] = r.resolved_ids;
  if (!r.conflicting_ids.empty()) metadata["conflicting_ids"] = r.conflicting_ids;
  std::string reason;
  switch (r.status) {
    case store::EventStatus::kStored:
      reason = r.semantic ? "Decision recorded" : "Event recorded";
      break;
    case store::EventStatus::kDuplicate: reason = "Duplicate: already recorded"; break;
    case store::EventStatus::kRejected: reason = r.error; break;
  }
  const bool persisted = r.status != store::EventStatus::kRejected;
  return {{"should_persist", persisted},
          {"store_type", persisted ? (r.semantic ? "semantic" : "episodic") : "none"},
          {"reason", reason},
          {"priority", r.priority},
          {"metadata", std::move(metadata)}};
}

// `forwarded`: the results' sequence numbers are JetStream stream sequences ("stream_seq").
std::string reply_body(const store::WriteResult& result, bool batch, bool forwarded) {
  nlohmann::json results = nlohmann::json::array();
  bool ok = result.message_error.empty();
  for (const store::EventResult& r : result.results) {
    nlohmann::json item = nlohmann::json::object();
    if (batch) item["index"] = r.index;
    if (!r.id.empty()) item["id"] = r.id;
    item["status"] = store::to_string(r.status);
    if (r.status == store::EventStatus::kRejected) {
      item["error"] = r.error;
      ok = false;
    } else {
      item[forwarded ? "stream_seq" : "seq"] = r.seq;
    }
    if (!r.duplicate_of.empty()) item["duplicate_of"] = r.duplicate_of;
    if (r.semantic || r.status == store::EventStatus::kRejected) {
      item["decision"] = memory_decision(r);
    }
    results.push_back(std::move(item));
  }
  nlohmann::json body = {{"ok", ok}, {"results", std::move(results)}};
  if (!result.message_error.empty()) body["error"] = result.message_error;
  // Replace invalid UTF-8 (ids are validated, but errors may quote input) instead of throwing.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

Bus::Bus(boost::asio::io_context& io, zmq::context_t& context, const config::BusConfig& config,
         store::Writer& writer, const Clock& clock, ControlHandler control,
         SecuritySettings security)
    : io_(io),
      context_(context),
      config_(config),
      writer_(writer),
      clock_(clock),
      control_(std::move(control)),
      security_(std::move(security)),
      decoder_(clock),
      max_message_bytes_(config.max_message_bytes),
      alive_(std::make_shared<std::atomic<bool>>(true)) {}

Bus::~Bus() {
  alive_->store(false);
  close();
}

zmq::socket_t Bus::make_socket(zmq::socket_type type, bool tcp_options) {
  zmq::socket_t socket(context_, type);
  socket.set(zmq::sockopt::linger, static_cast<int>(config_.linger_ms));
  socket.set(zmq::sockopt::rcvhwm, static_cast<int>(config_.receive_hwm));
  socket.set(zmq::sockopt::sndhwm, static_cast<int>(config_.send_hwm));
  socket.set(zmq::sockopt::maxmsgsize, config_.max_message_bytes * kTransportLimitFactor);
  if (tcp_options && config_.heartbeat_interval_ms > 0) {
    socket.set(zmq::sockopt::heartbeat_ivl, static_cast<int>(config_.heartbeat_interval_ms));
    socket.set(zmq::sockopt::heartbeat_timeout, static_cast<int>(config_.heartbeat_timeout_ms));
  }
  if (type == zmq::socket_type::router) socket.set(zmq::sockopt::router_mandatory, 1);
  return socket;
}

std::vector<std::string> Bus::bind_endpoints(zmq::socket_t& socket, const std::string& label,
                                             const std::vector<std::string>& endpoints) {
  // libzmq copies the socket's options into each listener at bind time, and a CURVE server
  // cannot be turned back into NULL (EINVAL). So ipc/inproc endpoints are bound first, as
  // NULL (guarded by file modes), then CURVE is switched on for the tcp ones.
  std::vector<std::string> bound(endpoints.size());
  for (const bool tcp_pass : {false, true}) {
    if (tcp_pass && security_.curve) {
      socket.set(zmq::sockopt::curve_server, true);
      socket.set(zmq::sockopt::curve_secretkey, security_.server.secret_key);
      socket.set(zmq::sockopt::zap_domain, "reflectd");
    }
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
      if (is_tcp(endpoints[i]) != tcp_pass) continue;
      try {
        socket.bind(endpoints[i]);
      } catch (const zmq::error_t& error) {
        throw std::runtime_error("cannot bind " + label + " endpoint " + endpoints[i] + ": " +
                                 error.what());
      }
      bound[i] = socket.get(zmq::sockopt::last_endpoint);
      restrict_ipc_mode(bound[i]);
    }
  }
  return bound;
}

Bus::Sender Bus::sender_of(const Inlet& inlet, const zmq::message_t& frame) const {
  if (!security_.curve) return {};
  if (!inlet.publisher_key.empty()) {
    // Looked up per message, so a reload that removes the key stops the publisher at once.
    const Principal* principal =
        security_.keys ? security_.keys->find(inlet.publisher_key) : nullptr;
    return principal ? Sender{principal, {}} : Sender{nullptr, inlet.publisher_key};
  }
  const char* user_id = zmq_msg_gets(frame.handle(), "User-Id");
  if (user_id == nullptr || *user_id == '\0') return {};
  if (const Principal* principal = security_.keys ? security_.keys->find(user_id) : nullptr) {
    return {principal, {}};
  }
  return {nullptr, user_id};
}

Bus::Inlet& Bus::add_inlet(Role role, zmq::socket_type type, const std::string& label) {
  auto inlet =
      std::make_unique<Inlet>(Inlet{role, label, make_socket(type, true), nullptr, {}, {}});
  Inlet& ref = *inlet;
  inlets_.push_back(std::move(inlet));
  return ref;
}

void Bus::start() {
  const auto bind_all = [this](Inlet& inlet, const std::vector<std::string>& endpoints,
                               std::vector<std::string>& bound) {
    bound = bind_endpoints(inlet.socket, inlet.label, endpoints);
  };
  if (!config_.ingest.empty()) {
    bind_all(add_inlet(Role::kIngest, zmq::socket_type::router, "ingest"), config_.ingest,
             bound_.ingest);
  }
  if (!config_.push.empty()) {
    bind_all(add_inlet(Role::kPush, zmq::socket_type::pull, "push"), config_.push, bound_.push);
  }
  // Publishers without CURVE share one SUB (they are all the local operator); each CURVE
  // publisher gets its own, because a SUB cannot tell which connection a message came from.
  Inlet* shared_sub = nullptr;
  for (std::size_t i = 0; i < config_.subscribe.size(); ++i) {
    const std::string& endpoint = config_.subscribe[i];
    const std::string key = i < security_.subscribe_server_keys.size()
                                ? security_.subscribe_server_keys[i]
                                : std::string{};
    Inlet* sub = key.empty() ? shared_sub : nullptr;
    if (sub == nullptr) {
      sub = &add_inlet(Role::kSubscribe, zmq::socket_type::sub, "subscribe");
      for (const auto& topic : config_.subscribe_topics)
        sub->socket.set(zmq::sockopt::subscribe, topic);
      if (key.empty()) {
        shared_sub = sub;
      } else {
        sub->publisher_key = key;
        sub->socket.set(zmq::sockopt::curve_serverkey, key);
        sub->socket.set(zmq::sockopt::curve_publickey, security_.server.public_key);
        sub->socket.set(zmq::sockopt::curve_secretkey, security_.server.secret_key);
        monitor_link(sub->socket, endpoint, key);
      }
    }
    try {
      sub->socket.connect(endpoint);
    } catch (const zmq::error_t& error) {
      throw std::runtime_error("cannot connect subscribe endpoint " + endpoint + ": " +
                               error.what());
    }
  }
  if (!config_.control.empty()) {
    bind_all(add_inlet(Role::kControl, zmq::socket_type::router, "control"), config_.control,
             bound_.control);
  }
  if (!config_.notify.empty()) {
    notify_ = std::make_unique<zmq::socket_t>(make_socket(zmq::socket_type::pub, true));
    bound_.notify = bind_endpoints(*notify_, "notify", config_.notify);
  }
  reading_ = true;
  for (auto& monitor : monitors_) {
    LinkMonitor* raw = monitor.get();
    monitor->reactor = std::make_unique<SocketReactor>(io_, monitor->socket,
                                                       [this, raw] { return drain_monitor(*raw); });
    monitor->reactor->check();
  }
  for (auto& inlet : inlets_) {
    Inlet* raw = inlet.get();
    inlet->reactor =
        std::make_unique<SocketReactor>(io_, inlet->socket, [this, raw] { return drain(*raw); });
    inlet->reactor->check();
  }
}

void Bus::stop_reading() {
  reading_ = false;
  // Messages already read but refused by a full writer are part of what was received.
  for (auto& inlet : inlets_) {
    if (inlet->pending && writer_.submit(std::move(*inlet->pending), true)) inlet->pending.reset();
  }
  for (auto& inlet : inlets_) {
    if (inlet->role != Role::kControl && inlet->reactor) inlet->reactor->stop();
  }
}

void Bus::close() {
  if (closed_) return;
  closed_ = true;
  reading_ = false;
  for (auto& monitor : monitors_) {
    if (monitor->reactor) monitor->reactor->stop();
    zmq_socket_monitor(monitor->watched->handle(), nullptr, 0);
    monitor->socket.close();
  }
  for (auto& inlet : inlets_) {
    if (inlet->reactor) inlet->reactor->stop();
    inlet->socket.close();
  }
  if (notify_) notify_->close();
}

void Bus::monitor_link(zmq::socket_t& sub, const std::string& endpoint, const std::string& key) {
  auto monitor = std::make_unique<LinkMonitor>();
  monitor->link.endpoint = endpoint;
  monitor->link.public_key = key;
  monitor->watched = &sub;
  // inproc names are per context; the Bus's address keeps two buses in one context apart.
  const std::string name = fmt::format("inproc://reflectd-subscribe-monitor-{}-{}",
                                       static_cast<const void*>(this), monitors_.size());
  if (zmq_socket_monitor(sub.handle(), name.c_str(),
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                             ZMQ_EVENT_DISCONNECTED) != 0) {
    throw std::runtime_error("cannot monitor subscribe endpoint " + endpoint + ": " +
                             zmq_strerror(zmq_errno()));
  }
  monitor->socket = zmq::socket_t(context_, zmq::socket_type::pair);
  monitor->socket.set(zmq::sockopt::linger, 0);
  monitor->socket.connect(name);
  monitors_.push_back(std::move(monitor));
}

namespace {

std::string handshake_failure(int event, std::uint32_t value) {
  switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
      // What a CURVE client sees when the server cannot open its HELLO (it holds another key
      // than the one configured), and often when the server is not CURVE at all.
      return fmt::format(
          "the publisher closed the connection during the handshake ({}): it holds another "
          "key than the configured one, or is not a CURVE server",
          zmq_strerror(static_cast<int>(value)));
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
        return "mechanism mismatch: the publisher is not a CURVE server";
      }
      if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) {
        return "cryptographic error: the publisher does not hold the configured key";
      }
      return fmt::format("ZMTP protocol error 0x{:x}", value);
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
      return fmt::format(
          "refused by the publisher's ZAP handler (status {}): is the daemon's public key "
          "authorized there?",
          value);
    default: return fmt::format("monitor event 0x{:x}", event);
  }
}

}  // namespace

SocketReactor::Drain Bus::drain_monitor(LinkMonitor& monitor) {
  SubscribeLink& link = monitor.link;
  for (int i = 0; i < kDrainBudget; ++i) {
    std::vector<zmq::message_t> frames;
    std::optional<std::size_t> received;
    try {
      received = recv_message(monitor.socket, frames);
    } catch (const zmq::error_t& error) {
      spdlog::warn("subscribe: monitor of {} failed: {}", link.endpoint, error.what());
      return SocketReactor::Drain::kEmpty;
    }
    if (!received) return SocketReactor::Drain::kEmpty;
    // libzmq 4.x monitor message: [uint16 event, uint32 value] then the peer address.
    if (frames.empty() || frames[0].size() < 6) continue;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, frames[0].data(), sizeof event);
    std::memcpy(&value, static_cast<const char*>(frames[0].data()) + sizeof event, sizeof value);
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      ++link.handshakes_succeeded;
      link.connected = true;
      spdlog::info("subscribe: CURVE handshake with {} (publisher key {}) succeeded", link.endpoint,
                   link.public_key);
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
      link.connected = false;
    } else {
      ++link.handshakes_failed;
      std::string reason = handshake_failure(event, value);
      // libzmq retries every reconnect interval: log a failure once, not on every retry.
      if (reason != link.last_failure || link.handshakes_failed == 1) {
        spdlog::warn("subscribe: CURVE handshake with {} (publisher key {}) failed: {}; retrying",
                     link.endpoint, link.public_key, reason);
      }
      link.connected = false;
      link.last_failure = std::move(reason);
    }
  }
  return SocketReactor::Drain::kBudget;
}

std::vector<SubscribeLink> Bus::subscribe_links() const {
  std::vector<SubscribeLink> out;
  out.reserve(monitors_.size());
  for (const auto& monitor : monitors_) out.push_back(monitor->link);
  return out;
}

SocketReactor::Drain Bus::drain(Inlet& inlet) {
  if (inlet.role != Role::kControl && (!reading_ || paused_)) return SocketReactor::Drain::kPaused;
  for (int i = 0; i < kDrainBudget; ++i) {
    std::vector<zmq::message_t> frames;
    std::optional<std::size_t> received;
    try {
      received = recv_message(inlet.socket, frames);
    } catch (const zmq::error_t& error) {
      spdlog::warn("{}: receive failed: {}", inlet.label, error.what());
      return SocketReactor::Drain::kEmpty;
    }
    if (!received) return SocketReactor::Drain::kEmpty;
    bool accepted = true;
    switch (inlet.role) {
      case Role::kIngest: accepted = handle_ingest(inlet, frames); break;
      case Role::kPush:
      case Role::kSubscribe: accepted = handle_fire_and_forget(inlet, frames); break;
      case Role::kControl: handle_control(inlet, frames); break;
    }
    if (!accepted) return SocketReactor::Drain::kPaused;
  }
  return SocketReactor::Drain::kBudget;
}

bool Bus::handle_ingest(Inlet& inlet, std::vector<zmq::message_t>& frames) {
  stats_.messages.fetch_add(1, std::memory_order_relaxed);
  // Envelope: [routing id] then the payload, optionally preceded by one request-id frame
  // (echoed back) or by REQ's empty delimiter.
  auto envelope = std::make_shared<std::vector<zmq::message_t>>();
  envelope->push_back(std::move(frames[0]));
  store::WriteRequest request;
  std::string_view payload;
  DecodedMessage message;
  if (frames.size() == 2) {
    payload = view(frames[1]);
  } else if (frames.size() == 3 && frames[1].size() <= kMaxRequestIdBytes) {
    envelope->push_back(std::move(frames[1]));
    payload = view(frames[2]);
  } else {
    message.error =
        "message: expected one payload frame, optionally preceded by one request-id "
        "frame of at most 255 bytes; got " +
        std::to_string(frames.size() - 1) + " frames";
  }
  if (message.error.empty()) {
    const Sender sender = sender_of(inlet, frames.back());
    if (!sender.revoked.empty()) {
      message.error =
          "authorization: CURVE key " + sender.revoked + " is no longer in the authorized keys";
    } else {
      message =
          decoder_.decode(payload, static_cast<std::size_t>(max_message_bytes_), sender.principal);
    }
  }
  const bool batch = message.batch;
  request.message_error = std::move(message.error);
  request.entries = std::move(message.events);
  std::weak_ptr<std::atomic<bool>> alive = alive_;
  Inlet* target = &inlet;
  const std::int64_t received_us = clock_.monotonic_us();
  const bool forwarded = forwarder_ != nullptr;
  request.on_done = [this, alive, target, envelope, batch, forwarded,
                     received_us](store::WriteResult&& result) {
    count_results(stats_.ingest, result, 0);
    auto body = std::make_shared<std::string>(reply_body(result, batch, forwarded));
    boost::asio::post(io_, [this, alive, target, envelope, body, received_us] {
      if (auto flag = alive.lock(); flag && flag->load()) {
        send_reply(*target, std::move(*envelope), *body);
        stats_.ack_latency.observe_us(clock_.monotonic_us() - received_us);
      }
    });
  };
  return submit(inlet, std::move(request));
}

void Bus::ingest_message(std::string payload, Principal sender,
                         std::function<void(int status, std::string body)> reply) {
  std::weak_ptr<std::atomic<bool>> alive = alive_;
  boost::asio::post(io_, [this, alive, payload = std::move(payload), sender = std::move(sender),
                          reply = std::move(reply)] {
    if (auto flag = alive.lock(); !flag || !flag->load()) return;
    stats_.messages.fetch_add(1, std::memory_order_relaxed);
    DecodedMessage message = decoder_.decode(payload, static_cast<std::size_t>(max_message_bytes_),
                                             sender.is_local_operator() ? nullptr : &sender);
    store::WriteRequest request;
    const bool batch = message.batch;
    request.message_error = std::move(message.error);
    request.entries = std::move(message.events);
    const bool forwarded = forwarder_ != nullptr;
    request.on_done = [this, reply, batch, forwarded](store::WriteResult&& result) {
      count_results(stats_.http, result, 0);
      const bool ok = result.message_error.empty() &&
                      std::none_of(result.results.begin(), result.results.end(),
                                   [](const store::EventResult& r) {
                                     return r.status == store::EventStatus::kRejected;
                                   });
      reply(ok ? 200 : 400, reply_body(result, batch, forwarded));
    };
    const bool taken =
        forwarded ? forwarder_->submit(std::move(request)) : writer_.submit(std::move(request));
    if (!taken) {
      reply(503, nlohmann::json{{"ok", false},
                                {"error",
                                 "writer: the queue is full (store.writer_queue_events); "
                                 "retry after a second"}}
                     .dump());
    }
  });
}

bool Bus::handle_fire_and_forget(Inlet& inlet, std::vector<zmq::message_t>& frames) {
  stats_.messages.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t now = clock_.now_us();
  store::WriteRequest request;
  request.retry_on_storage_error = true;
  // PULL: exactly one frame. SUB: topic frame(s), payload last.
  const std::string_view payload = view(frames.back());
  if (inlet.role == Role::kPush && frames.size() != 1) {
    request.dead_letters.push_back(
        store::DeadLetter{std::string(payload), inlet.label,
                          "message: expected 1 frame, got " + std::to_string(frames.size()), now});
  } else if (const Sender sender = sender_of(inlet, frames.back()); !sender.revoked.empty()) {
    request.dead_letters.push_back(store::DeadLetter{
        std::string(payload), inlet.label,
        "authorization: CURVE key " + sender.revoked + " is no longer in the authorized keys",
        now});
  } else {
    DecodedMessage message =
        decoder_.decode(payload, static_cast<std::size_t>(max_message_bytes_), sender.principal);
    request.dead_letters = dead_letters_for(message, payload, inlet.label, now);
    request.entries = std::move(message.events);
    if (request.dead_letters.empty()) {
      request.dead_letter_endpoint = inlet.label;
      request.raw_payload.assign(payload);
    }
  }
  SocketEventCounts& counts = inlet.role == Role::kPush ? stats_.push : stats_.subscribe;
  const std::size_t dead_letters = request.dead_letters.size();
  request.on_done = [&counts, dead_letters](store::WriteResult&& result) {
    count_results(counts, result, dead_letters);
  };
  return submit(inlet, std::move(request));
}

void Bus::handle_control(Inlet& inlet, std::vector<zmq::message_t>& frames) {
  auto envelope = std::make_shared<std::vector<zmq::message_t>>();
  for (std::size_t i = 0; i + 1 < frames.size(); ++i) envelope->push_back(std::move(frames[i]));
  std::weak_ptr<std::atomic<bool>> alive = alive_;
  Inlet* target = &inlet;
  ControlReply reply = [this, alive, target, envelope](const nlohmann::json& body) {
    auto text = std::make_shared<std::string>(
        body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    boost::asio::post(io_, [this, alive, target, envelope, text] {
      if (auto flag = alive.lock(); flag && flag->load()) {
        send_reply(*target, std::move(*envelope), *text);
      }
    });
  };
  auto parsed = parse_control_request(frames.size(), view(frames.back()),
                                      static_cast<std::size_t>(max_message_bytes_));
  if (!parsed.error.empty()) {
    reply({{"ok", false}, {"error", std::move(parsed.error)}});
    return;
  }
  const nlohmann::json& request = parsed.request;
  const Sender sender = sender_of(inlet, frames.back());
  if (!sender.revoked.empty()) {
    reply({{"ok", false},
           {"error", "authorization: CURVE key " + sender.revoked +
                         " is no longer in the authorized keys"}});
    return;
  }
  try {
    control_(request, sender.principal ? *sender.principal : Principal::local_operator(), reply);
  } catch (const std::exception& error) {
    reply({{"ok", false}, {"error", std::string("internal error: ") + error.what()}});
  }
}

bool Bus::offer(const Inlet& inlet, store::WriteRequest& request) {
  if (forwarder_ != nullptr && inlet.role == Role::kIngest) {
    return forwarder_->submit(std::move(request));
  }
  return writer_.submit(std::move(request));
}

bool Bus::submit(Inlet& inlet, store::WriteRequest&& request) {
  if (offer(inlet, request)) return true;
  // Writer (or forwarder) full: keep this one, stop reading everywhere until it has room.
  // submit() moves from the request only when it takes it (store/writer.hpp).
  inlet.pending = std::move(request);  // NOLINT(bugprone-use-after-move)
  if (!paused_) {
    paused_ = true;
    stats_.paused.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("writer queue full: pausing ingest");
  }
  return false;
}

void Bus::writer_has_space() {
  std::weak_ptr<std::atomic<bool>> alive = alive_;
  boost::asio::post(io_, [this, alive] {
    if (auto flag = alive.lock(); flag && flag->load()) retry_pending();
  });
}

void Bus::retry_pending() {
  for (auto& inlet : inlets_) {
    if (!inlet->pending) continue;
    if (!offer(*inlet, *inlet->pending)) return;  // Still full; wait for the next signal.
    inlet->pending.reset();
  }
  paused_ = false;
  for (auto& inlet : inlets_) {
    if (inlet->reactor) inlet->reactor->resume();
  }
}

void Bus::send_reply(Inlet& inlet, std::vector<zmq::message_t>&& envelope,
                     const std::string& body) {
  if (closed_) return;
  try {
    for (auto& frame : envelope) {
      if (!send_frame(inlet.socket, std::move(frame), zmq::send_flags::sndmore)) {
        stats_.replies_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    if (!send_frame(inlet.socket, zmq::message_t(body.data(), body.size()),
                    zmq::send_flags::none)) {
      stats_.replies_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (const zmq::error_t& error) {
    // EHOSTUNREACH (ZMQ_ROUTER_MANDATORY): the peer left; it will resend with the same ids.
    stats_.replies_dropped.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("{}: reply not delivered: {}", inlet.label, error.what());
  }
  if (inlet.reactor) inlet.reactor->check();
}

void Bus::publish(const std::string& topic, nlohmann::json payload) {
  if (!notify_ || closed_) return;
  payload["seq"] = ++notify_seq_;
  const std::string body = payload.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    // Frame by frame with EINTR retried: a signal between the two frames must not leave the
    // topic waiting for a body (the next announcement's topic would become it).
    send_frame(*notify_, zmq::message_t(topic.data(), topic.size()), zmq::send_flags::sndmore);
    send_frame(*notify_, zmq::message_t(body.data(), body.size()), zmq::send_flags::none);
  } catch (const zmq::error_t& error) {
    spdlog::warn("notify: publish failed: {}", error.what());
  }
}

}  // namespace reflectd::bus
