#include "bus/jetstream_forwarder.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bus/event_decoder.hpp"
#include "bus/event_encoder.hpp"

namespace reflectd::bus {
namespace {

// Connecting gives up on one server after this long (then the next, then in the background).
constexpr std::int64_t kConnectTimeoutMs = 2000;

std::string not_stored(std::string_view why) {
  return fmt::format("jetstream: {} (not stored; resend with the same id)", why);
}

}  // namespace

struct JetStreamForwarder::Pending {
  std::vector<store::EventResult> results;
  std::string message_error;
  std::function<void(store::WriteResult&&)> on_done;
  std::size_t unsettled = 0;
};

JetStreamForwarder::JetStreamForwarder(const config::BusConfig& bus,
                                       std::function<void()> has_space)
    : config_(bus.jetstream), has_space_(std::move(has_space)) {
  if (config_.servers.empty()) {
    throw std::runtime_error(
        "bus.forward: jetstream needs bus.jetstream.servers (the cluster to publish to)");
  }
  if (!bus.push.empty() || !bus.subscribe.empty()) {
    throw std::runtime_error(
        "bus.forward: jetstream forwards acknowledged ingest only; set bus.push and "
        "bus.subscribe to [] (their events would bypass the stream, and this node would hold "
        "events its replicas do not)");
  }
}

JetStreamForwarder::~JetStreamForwarder() { close(); }

void JetStreamForwarder::start() {
  NatsConnectionEvents events;
  events.connect_in_background = true;
  connection_ = nats_connect(config_, "reflectd forwarder", kConnectTimeoutMs, events);
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = config_.forward_timeout_ms;
  // Room for one message beyond the limit (submit() takes a whole message), so that nats.c
  // never stalls the publishing thread: the bus's own back-pressure comes first.
  options.PublishAsync.MaxPending =
      config_.forward_max_pending + static_cast<std::int64_t>(kMaxBatchEvents);
  options.PublishAsync.AckHandler = &JetStreamForwarder::on_pub_ack;
  options.PublishAsync.AckHandlerClosure = this;
  jsCtx* js = nullptr;
  if (const natsStatus s = natsConnection_JetStream(&js, connection_.get(), &options);
      s != NATS_OK) {
    throw NatsError(nats_error_text("JetStream context", s));
  }
  js_.reset(js);
}

bool JetStreamForwarder::submit(store::WriteRequest&& request) {
  std::size_t valid = 0;
  for (const auto& entry : request.entries) valid += entry.event ? 1 : 0;
  auto message = std::make_shared<Pending>();
  std::vector<std::pair<natsMsg*, const store::EventRecord*>> outgoing;
  {
    const std::lock_guard lock(mutex_);
    if (pending_events_ > 0 &&
        pending_events_ + static_cast<std::int64_t>(valid) > config_.forward_max_pending) {
      refused_ = true;
      return false;
    }
    message->message_error = std::move(request.message_error);
    message->on_done = std::move(request.on_done);
    message->results.reserve(request.entries.size());
    for (const auto& entry : request.entries) {
      store::EventResult& r = message->results.emplace_back();
      r.index = entry.index;
      r.id = entry.id;
      r.status = store::EventStatus::kRejected;
      if (!entry.event) {
        r.error = entry.error;
        continue;
      }
      r.ns = entry.event->ns;
      if (closed_ || !js_) {
        r.error = not_stored("reflectd is stopping");
        continue;
      }
      const std::string subject = event_subject(entry.event->ns);
      const std::string payload =
          encode_event(*entry.event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      natsMsg* msg = nullptr;
      if (const natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, payload.data(),
                                              static_cast<int>(payload.size()));
          s != NATS_OK) {
        r.error = not_stored(nats_error_text("message", s));
        continue;
      }
      in_flight_.emplace(msg, InFlight{message, message->results.size() - 1});
      outgoing.emplace_back(msg, &*entry.event);
      ++message->unsettled;
      ++pending_events_;
    }
    queue_.push_back(message);
  }
  // Outside the lock: a PubAck may be handled (on nats.c's thread) before the call returns,
  // which is why each message was registered first.
  for (auto [msg, event] : outgoing) {
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MsgId = event->uid.c_str();
    options.MaxWait = config_.forward_timeout_ms;
    natsMsg* owned = msg;
    const natsStatus s = js_PublishMsgAsync(js_.get(), &owned, &options);
    if (s == NATS_OK) {
      stats_.published.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    natsMsg_Destroy(owned);  // still ours: nats.c takes a message only when it accepts it
    settle(msg, nullptr, not_stored(nats_error_text("publish", s)));
  }
  const std::lock_guard lock(mutex_);
  complete_ready();
  return true;
}

void JetStreamForwarder::on_pub_ack(jsCtx* /*js*/, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error,
                                    void* closure) {
  auto* self = static_cast<JetStreamForwarder*>(closure);
  std::string why;
  if (ack == nullptr) {
    if (error != nullptr && error->ErrText != nullptr && *error->ErrText != '\0') {
      why = error->ErrText;
    } else {
      why = natsStatus_GetText(error != nullptr ? error->Err : NATS_ERR);
    }
    why = not_stored(why);
  }
  self->settle(msg, ack, why);
  natsMsg_Destroy(msg);
}

void JetStreamForwarder::settle(natsMsg* msg, const jsPubAck* ack, const std::string& error) {
  const std::lock_guard lock(mutex_);
  const auto it = in_flight_.find(msg);
  if (it == in_flight_.end()) return;  // completed by close() already
  settle_event(*it->second.message, it->second.result, ack, error);
  in_flight_.erase(it);
  --pending_events_;
  complete_ready();
  if (refused_ && pending_events_ <= config_.forward_max_pending / 2) {
    refused_ = false;
    if (has_space_) has_space_();
  }
  if (in_flight_.empty()) drained_.notify_all();
}

void JetStreamForwarder::settle_event(Pending& message, std::size_t result, const jsPubAck* ack,
                                      const std::string& error) {
  store::EventResult& r = message.results[result];
  if (ack != nullptr) {
    r.status = ack->Duplicate ? store::EventStatus::kDuplicate : store::EventStatus::kStored;
    r.seq = static_cast<std::int64_t>(ack->Sequence);
    (ack->Duplicate ? stats_.duplicate : stats_.stored).fetch_add(1, std::memory_order_relaxed);
  } else {
    r.status = store::EventStatus::kRejected;
    r.error = error;
    stats_.failed.fetch_add(1, std::memory_order_relaxed);
    if (last_error_ != error) spdlog::warn("forwarding to JetStream: {}", error);
    last_error_ = error;
  }
  --message.unsettled;
}

void JetStreamForwarder::complete_ready() {
  while (!queue_.empty() && queue_.front()->unsettled == 0) {
    const std::shared_ptr<Pending> message = std::move(queue_.front());
    queue_.pop_front();
    if (!message->on_done) continue;
    store::WriteResult result;
    result.results = std::move(message->results);
    result.message_error = std::move(message->message_error);
    message->on_done(std::move(result));
  }
}

void JetStreamForwarder::close() {
  {
    std::unique_lock lock(mutex_);
    if (closed_) return;
    closed_ = true;
    // Every publish carries MaxWait, so nats.c settles each one within forward_timeout_ms.
    drained_.wait_for(lock, std::chrono::milliseconds(config_.forward_timeout_ms + 1000),
                      [this] { return in_flight_.empty(); });
    for (auto& [msg, flight] : in_flight_) {
      settle_event(*flight.message, flight.result, nullptr,
                   not_stored("reflectd stopped before the PubAck"));
      --pending_events_;
    }
    in_flight_.clear();
    complete_ready();
  }
  js_.reset();
  if (connection_) natsConnection_Close(connection_.get());
  connection_.reset();
}

nlohmann::json JetStreamForwarder::status() const {
  const std::lock_guard lock(mutex_);
  // close() sets closed_ (under this lock) before it lets the connection go.
  const bool connected = !closed_ && connection_ &&
                         natsConnection_Status(connection_.get()) == NATS_CONN_STATUS_CONNECTED;
  return {{"connected", connected},
          {"pending_events", pending_events_},
          {"published", stats_.published.load(std::memory_order_relaxed)},
          {"stored", stats_.stored.load(std::memory_order_relaxed)},
          {"duplicate", stats_.duplicate.load(std::memory_order_relaxed)},
          {"failed", stats_.failed.load(std::memory_order_relaxed)},
          {"last_error", last_error_}};
}

}  // namespace reflectd::bus
