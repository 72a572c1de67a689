#pragma once
// The JetStream inlet's state, shared by its pull loop (bus/jetstream_inlet.cpp) and its
// consumer checks (bus/jetstream_consumer_checks.cpp). Private to bus/: nothing outside the
// inlet includes it.

#include <nats/nats.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bus/event_decoder.hpp"
#include "bus/jetstream_inlet.hpp"
#include "bus/nats_client.hpp"

namespace reflectd::bus::jetstream_timing {

// A pull waits this long for messages before it checks for shutdown and asks again.
inline constexpr std::int64_t kPullTimeoutMs = 500;
// Connecting gives up after this long.
inline constexpr std::int64_t kRequestTimeoutMs = 5000;
// JetStream API requests (the consumer's deletion and creation) give up after this long. A
// stream whose leader was lost answers nothing until it has a new one; a short timeout and a
// short retry cap let the inlet ask again soon after the election (within about 3 s, where 5 s
// each gave stalls of up to 12 s), while a healthy cluster answers in milliseconds.
inline constexpr std::int64_t kApiTimeoutMs = 2000;
// The consumer-info request that checks whether the consumer still stands where this node
// left it (after a reconnect or a failed pull). During an election a request goes unanswered
// (none waits for the leader to come), so a short wait and a fixed 100 ms between tries, not
// backed off, find the consumer's new leader within 0.4 s of its election; on a slow machine an
// answer later than the wait costs only another try.
inline constexpr std::int64_t kCheckTimeoutMs = 300;
inline constexpr std::int64_t kCheckRetryMs = 100;
// While pulls come back empty, the consumer is asked every this many empty pulls (1 s) whether
// it holds messages it has not delivered. A consumer that answers "where this node left it"
// after a whole cluster's restart can still deliver nothing (seen once in CI: the last events
// never reached one replica); two such answers in a row, with nothing delivered between them,
// and the consumer is recreated. One answer is not enough: a message published during the
// pull's last moments is pending without anything being wrong.
inline constexpr int kEmptyPullsPerIdleCheck = 2;
inline constexpr int kStuckIdleChecks = 2;
inline constexpr int kUnansweredIdleChecks = 5;
// Batches in flight: one committing, one waiting in the writer's queue for the commit to end,
// one being pulled. With two (one committing, one pulled) the writer ran dry while the next
// pull came, and spent the gap indexing: at the default batch, 0.29x push with two and one
// write request a message, 0.46-0.49x with three and one a batch; four or five did no better
// (`bench_ingest --modes push,jetstream`, docs/PERFORMANCE.md).
inline constexpr std::int64_t kBatchesInFlight = 3;
inline constexpr std::int64_t kFirstRetryMs = 250;
inline constexpr std::int64_t kMaxRetryMs = 1000;
// Redelivery delay after a storage error.
inline constexpr std::int64_t kNakDelayMs = 1000;
inline constexpr std::int64_t kCloseFlushMs = 2000;
inline constexpr std::int64_t kNanosPerSecond = 1'000'000'000;

}  // namespace reflectd::bus::jetstream_timing

namespace reflectd::bus {

struct JetStreamInlet::State : std::enable_shared_from_this<JetStreamInlet::State> {
  State(config::JetStreamConfig config_in, store::DatabaseOptions database_in,
        store::Writer& writer_in, const Clock& clock_in, std::int64_t max_message_bytes_in,
        std::int64_t writer_queue_events_in, NatsControlHandler control_handler_in)
      : config(std::move(config_in)),
        database(std::move(database_in)),
        writer(writer_in),
        clock(clock_in),
        decoder(clock_in),
        max_message_bytes(max_message_bytes_in),
        writer_queue_events(writer_queue_events_in),
        control_handler(std::move(control_handler_in)) {}

  const config::JetStreamConfig config;
  const store::DatabaseOptions database;  // read for the committed position at each bind
  store::Writer& writer;
  const Clock& clock;
  EventDecoder decoder;  // the inlet's thread only
  const std::int64_t max_message_bytes;
  const std::int64_t writer_queue_events;
  const NatsControlHandler control_handler;
  JetStreamStats stats;
  std::shared_ptr<const AuthorizedKeys> keys;  // guarded by mutex (SIGHUP replaces it)

  // Destroyed in reverse order: the subscription before the context and the connection.
  NatsConnectionPtr connection;
  JsCtxPtr js;
  NatsSubscriptionPtr subscription;
  std::unique_ptr<NatsControl> control;  // reads over NATS, made at the first bind

  mutable std::mutex mutex;
  std::condition_variable wake;  // an answer arrived, the writer has room, or stopping
  std::int64_t in_flight = 0;    // messages handed to the writer, not yet answered
  bool writer_space = false;
  bool stopping = false;
  bool closed = false;  // nats.c's last callback for the connection has run
  std::string last_error;
  bool leader_read_failed = false;  // a message read from the leader met a storage error
  // Set by a reconnect (nats.c's thread), a failed pull or a gap in the consumer sequence: before
  // the next pull the consumer is checked (consumer_agrees) and, unless it has delivered exactly
  // what this node received, recreated at the committed position.
  std::atomic<bool> resync{false};
  // The inlet's thread only: a gap was seen, so messages after it were dropped here and the
  // consumer must be recreated, whatever it reports.
  bool recreate = false;
  // The inlet's thread only: the next consumer sequence expected (each delivery, redeliveries
  // included, takes the next one) and the highest stream sequence handed to the writer.
  std::uint64_t next_consumer_seq = 1;
  std::uint64_t submitted_stream_seq = 0;
  // The inlet's thread only: the highest stream sequence the consumer delivered since the bind
  // (the committed position at the bind). Behind submitted_stream_seq after a bridge, which
  // stores what the consumer has not delivered yet.
  std::uint64_t consumer_stream_seq = 0;
  // The inlet's thread only: the highest stream sequence read from the leader and committed.
  // The consumer delivering it (or one before it) again is acknowledged, not stored again.
  std::uint64_t leader_read_through = 0;
  // The inlet's thread only: the message of the highest stream sequence handed to the writer
  // (its payload's hash), and the stream sequence through which this node's sequences are known
  // to be the leader's: the committed position at the first bind, then the newest message of
  // each batch, found equal to the leader's at its sequence before the batch is stored, or one
  // read from the leader. A consumer's server whose copy of the stream lost messages numbers
  // every later one differently; what the leader holds past the verified sequence is then read
  // from it (read_from_leader).
  struct Newest {
    std::uint64_t seq = 0;
    std::size_t payload_hash = 0;
  };
  Newest newest;
  std::uint64_t verified_stream_seq = 0;
  bool bound_once = false;
  // The inlet's thread only: pulls in a row that brought nothing, and idle checks in a row that
  // found messages pending at the consumer all the same (idle_check).
  int empty_pulls = 0;
  int stuck_checks = 0;
  int unanswered_checks = 0;

  void record_error(const std::string& error) {
    bool changed = false;
    {
      const std::lock_guard lock(mutex);
      changed = error != last_error;
      last_error = error;
    }
    if (changed) spdlog::warn("jetstream: {}", error);
  }

  // Waits `ms` or until stopping; returns false when stopping.
  bool pause(std::int64_t ms) {
    std::unique_lock lock(mutex);
    return !wake.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping; });
  }

  enum class Check { kAgrees, kDiffers, kUnanswered };
  Check consumer_agrees();
  jsConsumerInfo* ask_consumer(natsStatus& status, jsErrCode& code);
  static bool consumer_gone(natsStatus status, jsErrCode code);
  [[nodiscard]] bool delivered_as_received(const jsConsumerInfo& info) const;
  // A stream message as the stream's leader holds it: its sequence (0: none, or no answer) and
  // its payload's hash.
  struct LeaderMessage {
    std::uint64_t seq = 0;
    std::size_t payload_hash = 0;
  };
  [[nodiscard]] LeaderMessage last_stream_message();
  [[nodiscard]] LeaderMessage leader_message(std::uint64_t seq);
  // STREAM.MSG.GET of `seq`, which only the stream's leader answers, waiting at most
  // kCheckTimeoutMs; `msg` is the caller's to destroy, `code` the JetStream error (0: none).
  natsStatus get_from_leader(std::uint64_t seq, natsMsg*& msg, jsErrCode& code);
  static std::size_t payload_hash(natsMsg* msg);
  void note_newest(natsMsg* msg, std::uint64_t stream_seq);
  // Whether the stream's leader holds `msg`, the newest of a pulled batch, at `seq`; false when
  // the batch must not be stored (the consumer is then recreated).
  [[nodiscard]] bool leader_holds(natsMsg* msg, std::uint64_t seq);
  void diverged(std::uint64_t seq);
  void idle_check();
  // `then`: what follows the read, for the log line.
  void read_from_leader(std::uint64_t last, std::string_view then);
  void bridge();
  void connect_and_bind();
  void ensure_control();
  void subscribe_control();
  void pull_once();
  // One message's place in a batch's write request: its entries [first_entry, end_entry) and
  // the dead letters it added.
  struct MessageSpan {
    std::size_t first_entry = 0;
    std::size_t end_entry = 0;
    std::size_t dead_letters = 0;
  };
  struct PendingBatch;  // the messages of a submitted request, until it is answered
  // Adds `msg`'s events, or its dead letter, to `request` (bus/jetstream_batch.cpp).
  MessageSpan add_message(store::WriteRequest& request, natsMsg* msg, std::int64_t now_us);
  // Hands `msgs` to the writer as one request, taking them over; `position` (0: none) is
  // recorded in its transaction. When it commits, each message is acknowledged, terminated (a
  // dead letter, or an event refused) or, after a storage error, negatively acknowledged.
  // `from_leader`: read from the stream's leader by sequence (read_from_leader), not delivered
  // by the consumer, so nothing is acknowledged.
  void submit(std::vector<natsMsg*> msgs, std::uint64_t position, bool from_leader);
  void answered(const PendingBatch& batch, const store::WriteResult& result, bool from_leader);
};

}  // namespace reflectd::bus
