#include "bus/jetstream_inlet.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>

#include "bus/jetstream_inlet_state.hpp"
#include "store/database.hpp"
#include "store/jetstream_positions.hpp"

namespace reflectd::bus {

using namespace jetstream_timing;

namespace {

// Stream and consumer names: JetStream refuses '.', '*', '>', whitespace and path separators.
void check_name(const std::string& value, const char* key) {
  if (value.empty()) {
    throw std::invalid_argument(fmt::format(
        "{}: required with bus.jetstream.servers (each replica of a shard needs a consumer name "
        "of its own)",
        key));
  }
  // Whitespace characters need escapes, so no raw string literal here.
  if (value.find_first_of(".*> \t\r\n/\\") != std::string::npos) {  // NOLINT
    throw std::invalid_argument(fmt::format(
        R"({}: "{}" must not contain '.', '*', '>', '/', '\' or whitespace)", key, value));
  }
}

}  // namespace

namespace {

void on_disconnected(natsConnection* /*connection*/, void* closure) {
  auto* state = static_cast<JetStreamInlet::State*>(closure);
  state->stats.connected.store(false, std::memory_order_relaxed);
  bool stopping = false;
  {
    const std::lock_guard lock(state->mutex);
    stopping = state->stopping;
  }
  // close() disconnects too: only a lost connection is worth a warning.
  if (!stopping) spdlog::warn("jetstream: disconnected from NATS; reconnecting");
}

// The last callback nats.c makes for the connection: close() waits for it, so that no
// callback touches the State after the inlet is gone.
void on_closed(natsConnection* /*connection*/, void* closure) {
  auto* state = static_cast<JetStreamInlet::State*>(closure);
  const std::lock_guard lock(state->mutex);
  state->closed = true;
  state->wake.notify_all();
}

void on_reconnected(natsConnection* connection, void* closure) {
  auto* state = static_cast<JetStreamInlet::State*>(closure);
  state->stats.connected.store(true, std::memory_order_relaxed);
  // A pull answered while the connection was down may be lost: start again from what is
  // committed rather than risk storing a later message before it.
  state->resync.store(true);
  std::array<char, 256> url{};
  natsConnection_GetConnectedUrl(connection, url.data(), url.size());
  spdlog::info("jetstream: reconnected to {}", url.data());
}

}  // namespace

void JetStreamInlet::State::connect_and_bind() {
  if (!connection) {
    connection = nats_connect(config, "reflectd " + config.consumer, kRequestTimeoutMs,
                              {on_disconnected, on_reconnected, this, on_closed});
    js = jetstream_context(connection.get(), kApiTimeoutMs);
  }
  // The committed position is the truth: the consumer is recreated to deliver from the next
  // stream sequence on, so that whatever was in flight when this node stopped (or lost its
  // connection) is delivered again, in stream order, before anything later. The consumer is
  // created here and the subscription binds to it, so that nats.c never deletes it (it
  // deletes consumers it created itself when a subscription goes away).
  std::uint64_t position = 0;
  {
    SQLite::Database db = store::open_database(database, store::Access::kReader);
    position = store::jetstream_position(db, config.stream);
  }
  subscription.reset();
  auto deleted_code = static_cast<jsErrCode>(0);
  const natsStatus deleted = js_DeleteConsumer(js.get(), config.stream.c_str(),
                                               config.consumer.c_str(), nullptr, &deleted_code);
  if (deleted != NATS_OK && !consumer_gone(deleted, deleted_code)) {
    throw NatsError(nats_error_text(
        fmt::format("cannot recreate consumer {} on stream {} at sequence {} (JetStream error {})",
                    config.consumer, config.stream, position + 1, static_cast<int>(deleted_code)),
        deleted));
  }
  jsConsumerConfig consumer;
  jsConsumerConfig_Init(&consumer);
  consumer.Durable = config.consumer.c_str();
  consumer.AckPolicy = js_AckExplicit;
  consumer.AckWait = config.ack_wait_s * kNanosPerSecond;
  consumer.MaxAckPending = kBatchesInFlight * config.batch;
  consumer.DeliverPolicy = position > 0 ? js_DeliverByStartSequence : js_DeliverAll;
  consumer.OptStartSeq = position > 0 ? position + 1 : 0;
  if (!config.filter_subject.empty()) consumer.FilterSubject = config.filter_subject.c_str();
  jsConsumerInfo* info = nullptr;
  auto code = static_cast<jsErrCode>(0);
  natsStatus status =
      js_AddConsumer(&info, js.get(), config.stream.c_str(), &consumer, nullptr, &code);
  jsConsumerInfo_Destroy(info);
  if (status != NATS_OK) {
    if (code == JSStreamNotFoundErr) {
      throw NatsError(
          fmt::format("stream {} not found: create it with `reflectctl jetstream init --stream {}` "
                      "(docs/CLUSTER.md)",
                      config.stream, config.stream));
    }
    throw NatsError(
        nats_error_text(fmt::format("cannot create consumer {} on stream {} (JetStream error {})",
                                    config.consumer, config.stream, static_cast<int>(code)),
                        status));
  }
  jsSubOptions options;
  jsSubOptions_Init(&options);
  options.Stream = config.stream.c_str();
  options.Consumer = config.consumer.c_str();
  natsSubscription* sub = nullptr;
  status = js_PullSubscribe(&sub, js.get(), config.filter_subject.c_str(), config.consumer.c_str(),
                            nullptr, &options, &code);
  if (status != NATS_OK) {
    natsSubscription_Destroy(sub);
    throw NatsError(nats_error_text(
        fmt::format("cannot bind to consumer {} on stream {}", config.consumer, config.stream),
        status));
  }
  subscription.reset(sub);
  next_consumer_seq = 1;
  submitted_stream_seq = position;
  consumer_stream_seq = position;
  // What this process did not read itself is taken as the leader's: a divergence found later is
  // read again from the leader only as far back as this.
  if (!bound_once) verified_stream_seq = position;
  bound_once = true;
  verified_stream_seq = std::min(verified_stream_seq, position);
  resync.store(false);
  recreate = false;
  empty_pulls = 0;
  stuck_checks = 0;
  unanswered_checks = 0;
  {
    const std::lock_guard lock(mutex);
    last_error.clear();
  }
  ensure_control();
  std::array<char, 256> url{};
  natsConnection_GetConnectedUrl(connection.get(), url.data(), url.size());
  spdlog::info("jetstream: consuming stream {} as {} from sequence {} through {}", config.stream,
               config.consumer, position + 1, url.data());
}

void JetStreamInlet::State::ensure_control() {
  if (!control_handler || control) return;
  try {
    subscribe_control();
  } catch (const NatsError& error) {
    record_error(error.what());
    resync.store(true);  // tried again before the next pull
  }
}

void JetStreamInlet::State::subscribe_control() {
  jsStreamInfo* info = nullptr;
  const natsStatus status =
      js_GetStreamInfo(&info, js.get(), config.stream.c_str(), nullptr, nullptr);
  if (status != NATS_OK) {
    jsStreamInfo_Destroy(info);
    throw NatsError(nats_error_text("stream " + config.stream + " info", status));
  }
  std::vector<std::string> events;
  events.reserve(static_cast<std::size_t>(info->Config->SubjectsLen));
  for (int i = 0; i < info->Config->SubjectsLen; ++i)
    events.emplace_back(info->Config->Subjects[i]);
  jsStreamInfo_Destroy(info);
  const std::vector<std::string> subjects = control_subjects(events);
  // The keys are read at each request: a SIGHUP reload applies to the next read.
  const std::weak_ptr<State> self = weak_from_this();
  control = std::make_unique<NatsControl>(connection.get(), weak_from_this(), subjects,
                                          config.stream, control_handler,
                                          [self]() -> std::shared_ptr<const AuthorizedKeys> {
                                            const std::shared_ptr<State> state = self.lock();
                                            if (!state) return nullptr;
                                            const std::lock_guard lock(state->mutex);
                                            return state->keys;
                                          });
  std::string list;
  for (const auto& subject : subjects) list += (list.empty() ? "" : ", ") + subject;
  spdlog::info("jetstream: answering control requests on {} (queue group {})", list, config.stream);
}

void JetStreamInlet::State::pull_once() {
  {
    // A pull waits while kBatchesInFlight - 1 batches are in flight (max_ack_pending is
    // kBatchesInFlight x batch): this keeps the writer's queue bounded.
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return stopping || in_flight <= (kBatchesInFlight - 1) * config.batch; });
    if (stopping) return;
  }
  const auto queued =
      static_cast<std::int64_t>(writer.stats().queue_events.load(std::memory_order_relaxed));
  const std::int64_t room = std::clamp<std::int64_t>(writer_queue_events - queued, 1, config.batch);
  natsMsgList list{nullptr, 0};
  auto code = static_cast<jsErrCode>(0);
  const natsStatus status = natsSubscription_Fetch(&list, subscription.get(),
                                                   static_cast<int>(room), kPullTimeoutMs, &code);
  if (status == NATS_TIMEOUT) {
    if (++empty_pulls % kEmptyPullsPerIdleCheck == 0) idle_check();
    return;
  }
  empty_pulls = 0;
  stuck_checks = 0;
  if (status != NATS_OK) {
    stats.pull_errors.fetch_add(1, std::memory_order_relaxed);
    record_error(nats_error_text("pull from " + config.stream + "/" + config.consumer, status));
    resync.store(true);
    pause(kFirstRetryMs);
    return;
  }
  stats.pulls.fetch_add(1, std::memory_order_relaxed);
  // Only an unbroken run of consumer sequences is stored: a gap means a delivery never
  // reached this node, and storing what follows it would put the stream out of order.
  int usable = 0;
  std::uint64_t last_new = 0;  // index + 1 of the last message that advances the position
  std::uint64_t batch_newest = submitted_stream_seq;
  std::vector<bool> read_before(static_cast<std::size_t>(list.Count), false);
  for (; usable < list.Count; ++usable) {
    jsMsgMetaData* meta = nullptr;
    if (natsMsg_GetMetaData(&meta, list.Msgs[usable]) != NATS_OK) break;
    const std::uint64_t consumer_seq = meta->Sequence.Consumer;
    const std::uint64_t stream_seq = meta->Sequence.Stream;
    jsMsgMetaData_Destroy(meta);
    if (consumer_seq != next_consumer_seq) break;
    ++next_consumer_seq;
    consumer_stream_seq = std::max(consumer_stream_seq, stream_seq);
    read_before[static_cast<std::size_t>(usable)] = stream_seq <= leader_read_through;
    if (stream_seq > batch_newest) {
      batch_newest = stream_seq;
      last_new = static_cast<std::uint64_t>(usable) + 1;
    }
  }
  if (usable < list.Count) {
    spdlog::warn("jetstream: a delivery of {}/{} was lost; resuming from the committed position",
                 config.stream, config.consumer);
    recreate = true;
    resync.store(true);
  }
  if (last_new > 0) {
    // Nothing of a batch the stream's leader does not confirm is stored or acknowledged: the
    // consumer is recreated at the committed position (leader_holds).
    if (!leader_holds(list.Msgs[last_new - 1], batch_newest)) {
      natsMsgList_Destroy(&list);
      return;
    }
    submitted_stream_seq = batch_newest;
    note_newest(list.Msgs[last_new - 1], batch_newest);
  }
  // Read from the leader and committed already: acknowledged here, never stored twice (it
  // never advances the position, which is past it).
  std::vector<natsMsg*> batch;
  batch.reserve(static_cast<std::size_t>(usable));
  for (int i = 0; i < usable; ++i) {
    natsMsg* msg = list.Msgs[i];
    list.Msgs[i] = nullptr;  // owned by the batch's completion from here on
    if (read_before[static_cast<std::size_t>(i)]) {
      natsMsg_Ack(msg, nullptr);
      natsMsg_Destroy(msg);
      stats.already_read.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    batch.push_back(msg);
  }
  if (!batch.empty()) submit(std::move(batch), last_new > 0 ? submitted_stream_seq : 0, false);
  natsMsgList_Destroy(&list);  // what follows a gap: delivered again after the resync
}

JetStreamInlet::JetStreamInlet(config::JetStreamConfig config, store::DatabaseOptions database,
                               store::Writer& writer, const Clock& clock,
                               std::int64_t max_message_bytes, std::int64_t writer_queue_events,
                               NatsControlHandler control) {
  if (config.servers.empty()) {
    throw std::invalid_argument("bus.jetstream.servers: at least one NATS server URL is needed");
  }
  check_name(config.stream, "bus.jetstream.stream");
  check_name(config.consumer, "bus.jetstream.consumer");
  state_ = std::make_shared<State>(std::move(config), std::move(database), writer, clock,
                                   max_message_bytes, writer_queue_events, std::move(control));
}

JetStreamInlet::~JetStreamInlet() {
  stop_reading();
  close();
}

void JetStreamInlet::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void JetStreamInlet::run() {
  State& state = *state_;
  std::int64_t retry_ms = kFirstRetryMs;
  for (;;) {
    {
      const std::lock_guard lock(state.mutex);
      if (state.stopping) return;
    }
    if (!state.subscription || state.resync.load()) {
      {
        // Everything handed to the writer is committed (and its position recorded) first.
        std::unique_lock lock(state.mutex);
        state.wake.wait(lock, [&] { return state.stopping || state.in_flight == 0; });
        if (state.stopping) return;
      }
      try {
        if (state.subscription && !state.recreate) {
          const State::Check check = state.consumer_agrees();
          if (check == State::Check::kUnanswered) {
            state.bridge();
            // Not backed off: the consumer answers as soon as it has a leader again.
            if (!state.pause(kCheckRetryMs)) return;
            continue;
          }
          if (check == State::Check::kAgrees) continue;
        }
        state.connect_and_bind();
        retry_ms = kFirstRetryMs;
      } catch (const std::exception& error) {
        state.record_error(error.what());
        state.bridge();  // a consumer being recreated can take seconds to elect its leader
        if (!state.pause(retry_ms)) return;
        retry_ms = std::min(retry_ms * 2, kMaxRetryMs);
        continue;
      }
    }
    state.pull_once();
  }
}

void JetStreamInlet::stop_reading() {
  {
    const std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JetStreamInlet::close() {
  if (!state_->connection) return;
  natsConnection_FlushTimeout(state_->connection.get(), kCloseFlushMs);
  // Dropping interest only: the consumer was bound, not created, by the subscription.
  state_->subscription.reset();
  natsConnection_Close(state_->connection.get());
  state_->stats.connected.store(false, std::memory_order_relaxed);
  std::unique_lock lock(state_->mutex);
  state_->wake.wait_for(lock, std::chrono::milliseconds(kCloseFlushMs),
                        [this] { return state_->closed; });
}

void JetStreamInlet::writer_has_space() {
  {
    const std::lock_guard lock(state_->mutex);
    state_->writer_space = true;
  }
  state_->wake.notify_all();
}

void JetStreamInlet::set_authorized_keys(std::shared_ptr<const AuthorizedKeys> keys) {
  const std::lock_guard lock(state_->mutex);
  state_->keys = std::move(keys);
}

const JetStreamStats& JetStreamInlet::stats() const { return state_->stats; }

nlohmann::json JetStreamInlet::status() const {
  const State& state = *state_;
  const JetStreamStats& s = state.stats;
  auto load = [](const std::atomic<std::uint64_t>& value) {
    return value.load(std::memory_order_relaxed);
  };
  nlohmann::json out = {
      {"servers", state.config.servers},
      {"stream", state.config.stream},
      {"consumer", state.config.consumer},
      {"connected", s.connected.load(std::memory_order_relaxed)},
      {"pulls", load(s.pulls)},
      {"messages", load(s.messages)},
      {"stored", load(s.events.stored)},
      {"duplicate", load(s.events.duplicate)},
      {"rejected", load(s.events.rejected)},
      {"acked", load(s.acked)},
      {"terminated", load(s.terminated)},
      {"nacked", load(s.nacked)},
      {"pull_errors", load(s.pull_errors)},
      {"from_leader", load(s.from_leader)},
      {"already_read", load(s.already_read)},
  };
  const std::lock_guard lock(state.mutex);
  out["in_flight"] = state.in_flight;
  out["last_error"] = state.last_error;
  return out;
}

}  // namespace reflectd::bus
