#pragma once
// The JetStream inlet: events read from a NATS JetStream stream (one shard) through this
// node's durable pull consumer, validated exactly as on push, committed by the writer, and
// only then acknowledged to JetStream (docs/CLUSTER.md).
//
//   - Delivery: at least once (a message is acknowledged after the fsync that makes its
//     events durable); event ids make each event stored once, so a redelivered message
//     counts as duplicate and is acknowledged again.
//   - Order: every replica stores its shard in stream order, which is what makes replicas'
//     derived tables equal. The database keeps, in the transaction that commits a batch, the
//     batch's highest stream sequence (store/jetstream_positions.hpp); at start and when a gap
//     in the consumer sequence shows a lost delivery, the inlet waits for what it handed to the
//     writer, then recreates its durable consumer to deliver from that position + 1. After a
//     reconnect or a failed pull (a leader election) it waits the same way, then asks the
//     consumer how many messages it has delivered: exactly what this node received means
//     nothing was lost, and it pulls on; any other count, or no such consumer, and it recreates
//     the consumer as above. (Recreating costs a new Raft group and its election on a
//     replicated stream, seconds; the question, milliseconds once the consumer has a leader.)
//     While pulls come back empty it asks the same question once a second, and recreates the
//     consumer when the count differs or when two answers in a row report undelivered messages
//     (a consumer that agrees but delivers nothing, as after a whole cluster's restart). When
//     the consumer reports nothing pending but the stream's leader holds later sequences (its
//     server's copy of the stream is behind), and there is no filter subject, those sequences
//     are read from the leader by sequence and stored before the consumer is recreated past
//     them; they are never acknowledged, having never been delivered.
//     Before a pulled batch is stored, its newest message is compared with the stream leader's
//     message at that sequence (a server's copy of the stream can differ from the leader's after
//     a crash, and the consumer delivers from its own server's copy); a batch the leader does
//     not confirm is neither stored nor acknowledged, and what the leader holds is read from it
//     or the consumer recreated at the committed position.
//     Between those points deliveries come in stream order, and a redelivery (past ack_wait)
//     is of a message already handed to the writer, which stores it once (a duplicate). Each
//     pulled batch is one write request; the consumer's max_ack_pending is three times
//     bus.jetstream.batch: one batch is pulled while one commits and the next waits.
//   - Principals: a message on reflectd.events.<ns> is the local operator's (NATS
//     permissions decide who may publish there); one on reflectd.agents.<agent_id>.<ns> gets
//     the rights of the authorized-keys entry with that agent_id (agent_id stamped, its
//     namespaces and max_sensitivity enforced), exactly as a CURVE client's message would.
//   - Rejects: a message that does not decode, whose subject is neither of those (or names an
//     agent the authorized keys do not list once), or one of whose events breaks a rule,
//     breaks its principal's rights or names another namespace than its subject, is kept
//     in dead_letters (endpoint "jetstream:<subject>") in the same transaction as its valid
//     events, and then terminated (+TERM): JetStream never redelivers it.
//   - Storage errors: the message is negatively acknowledged (+NAK, 1 s delay), so that
//     JetStream redelivers it.
//   - Back-pressure: a pull asks for at most the room left in the writer's queue; when the
//     writer refuses a message the inlet waits for writer_has_space().
//   - The connection is made by the inlet's thread, retried every 0.25-1 s while NATS is
//     unreachable or the stream is missing (status() says why); nats.c then reconnects by
//     itself.
//
// Thread-safety: the constructor, start(), stop_reading() and close() on one thread (the
// daemon's); writer_has_space(), stats() and status() from any thread.
// Errors: the constructor throws std::invalid_argument naming the bus.jetstream key whose
// value cannot work; nothing else throws.

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "bus/message_outcome.hpp"
#include "bus/nats_control.hpp"
#include "bus/security.hpp"
#include "common/clock.hpp"
#include "config/config.hpp"
#include "store/database.hpp"
#include "store/writer.hpp"

namespace reflectd::bus {

/// Counters of the inlet since start; read with relaxed loads.
struct JetStreamStats {
  SocketEventCounts events;                   ///< Outcome of the events read.
  std::atomic<std::uint64_t> pulls{0};        ///< Pulls that returned messages.
  std::atomic<std::uint64_t> messages{0};     ///< Messages pulled (redeliveries included).
  std::atomic<std::uint64_t> acked{0};        ///< +ACK sent after the commit.
  std::atomic<std::uint64_t> terminated{0};   ///< +TERM sent for messages kept as dead letters.
  std::atomic<std::uint64_t> nacked{0};       ///< +NAK sent after a storage error.
  std::atomic<std::uint64_t> pull_errors{0};  ///< Pulls that failed (not counting timeouts).
  /// Messages read from the stream's leader by sequence, past a consumer that did not deliver
  /// them (it had no leader, or its server's copy of the stream was behind the leader's).
  std::atomic<std::uint64_t> from_leader{0};
  /// Messages the consumer delivered after the node had read them from the stream's leader:
  /// acknowledged without being stored again (a message kept as a dead letter would be kept
  /// twice).
  std::atomic<std::uint64_t> already_read{0};
  std::atomic<bool> connected{false};  ///< Subscribed and the connection is up.
};

class JetStreamInlet {
 public:
  /// Checks `config` (servers, stream and consumer names) and keeps what it needs;
  /// `database` is the writer's database (read for the committed position at each bind),
  /// `max_message_bytes` is bus.max_message_bytes, `writer_queue_events` the writer's queue
  /// capacity. Connects nothing yet. Throws std::invalid_argument naming the key.
  /// With a `control` handler, the node also answers control requests on
  /// reflectd.control.<namespace> for its stream's namespaces (bus/nats_control.hpp), in the
  /// queue group named after the stream, from its first bind on.
  JetStreamInlet(config::JetStreamConfig config, store::DatabaseOptions database,
                 store::Writer& writer, const Clock& clock, std::int64_t max_message_bytes,
                 std::int64_t writer_queue_events, NatsControlHandler control = {});
  /// stop_reading() and close().
  ~JetStreamInlet();
  JetStreamInlet(const JetStreamInlet&) = delete;
  JetStreamInlet& operator=(const JetStreamInlet&) = delete;

  /// Starts the inlet's thread: connect, create or bind the durable consumer, pull.
  void start();
  /// Stops pulling and joins the thread. Messages already handed to the writer keep their
  /// completion: they are acknowledged when the writer answers them (call close() after the
  /// writer has stopped).
  void stop_reading();
  /// Flushes the acknowledgements sent so far (at most 2 s) and closes the connection. A
  /// message whose acknowledgement never left is redelivered to the next run and counted as
  /// a duplicate there.
  void close();

  /// Called (any thread) when the writer's queue has room again.
  void writer_has_space();

  /// The authorized keys whose agent_ids may publish on reflectd.agents.<agent_id>.<ns>
  /// (each such message's events get that entry's rights, as from its CURVE key); nullptr
  /// (no CURVE configured) refuses those subjects. Any thread; applies to messages read from
  /// then on (SIGHUP).
  void set_authorized_keys(std::shared_ptr<const AuthorizedKeys> keys);

  const JetStreamStats& stats() const;
  /// {"servers", "stream", "consumer", "connected", "pulls", "messages", "stored", "duplicate",
  /// "rejected", "acked", "terminated", "nacked",
  ///  "pull_errors", "from_leader", "already_read", "in_flight", "last_error"}.
  nlohmann::json status() const;

  struct State;  // shared with the completions of messages in flight

 private:
  void run();

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace reflectd::bus
