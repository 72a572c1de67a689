// The JetStream inlet's consumer checks: whether the durable consumer still stands where this
// node left it, whether an empty pull hides undelivered messages, whether what it delivered is
// what the stream's leader holds at the same sequences, and the read from the leader where it
// is not (docs/CLUSTER.md).

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

#include "bus/jetstream_inlet_state.hpp"

namespace reflectd::bus {

using namespace jetstream_timing;

namespace {
constexpr std::string_view kThenRecreate = "recreating the consumer past them";
}  // namespace

// CONSUMER.INFO with the check's short wait: the consumer's info (the caller destroys it), or
// nullptr with the failure in `status` and `code`.
jsConsumerInfo* JetStreamInlet::State::ask_consumer(natsStatus& status, jsErrCode& code) {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = kCheckTimeoutMs;
  jsConsumerInfo* info = nullptr;
  code = static_cast<jsErrCode>(0);
  status = js_GetConsumerInfo(&info, js.get(), config.stream.c_str(), config.consumer.c_str(),
                              &options, &code);
  if (status == NATS_OK) return info;
  jsConsumerInfo_Destroy(info);
  return nullptr;
}

bool JetStreamInlet::State::consumer_gone(natsStatus status, jsErrCode code) {
  return status == NATS_NOT_FOUND || code == JSConsumerNotFoundErr || code == JSStreamNotFoundErr;
}

// Recreating the consumer costs a new Raft group and its election on a replicated stream
// (seconds, and longer while the stream itself elects a leader), so after a reconnect or a
// failed pull the consumer is first asked where it stands. When it has delivered exactly the
// consumer sequences this node received, nothing was lost in between and the next pull goes
// on in stream order; a delivery this node never received (or a new leader that forgot some)
// shows as a different count, and the consumer is recreated at the committed position.
JetStreamInlet::State::Check JetStreamInlet::State::consumer_agrees() {
  jsErrCode code{};
  natsStatus status = NATS_OK;
  jsConsumerInfo* info = ask_consumer(status, code);
  if (info == nullptr) {
    if (consumer_gone(status, code)) return Check::kDiffers;
    record_error(
        nats_error_text(fmt::format("consumer {} on stream {}: no answer (JetStream error {})",
                                    config.consumer, config.stream, static_cast<int>(code)),
                        status));
    return Check::kUnanswered;
  }
  const bool agrees = delivered_as_received(*info);
  jsConsumerInfo_Destroy(info);
  if (!agrees) return Check::kDiffers;
  resync.store(false);
  {
    const std::lock_guard lock(mutex);
    last_error.clear();
  }
  ensure_control();
  std::array<char, 256> url{};
  natsConnection_GetConnectedUrl(connection.get(), url.data(), url.size());
  spdlog::info("jetstream: consumer {} stands where this node left it; pulling through {}",
               config.consumer, url.data());
  return Check::kAgrees;
}

// The consumer's own account of its deliveries (the count, redeliveries included, and the last
// stream sequence it delivered) against what this node received since it bound: a restarted
// cluster's consumer can come back having forgotten deliveries, or with deliveries this node
// never got.
bool JetStreamInlet::State::delivered_as_received(const jsConsumerInfo& info) const {
  const std::uint64_t delivered = info.Delivered.Consumer;
  const std::uint64_t stream_seq = info.Delivered.Stream;
  if (delivered + 1 == next_consumer_seq && stream_seq == consumer_stream_seq) return true;
  spdlog::info(
      "jetstream: consumer {} delivered {} messages through stream sequence {}, this node "
      "received {} through {}; recreating it",
      config.consumer, delivered, stream_seq, next_consumer_seq - 1, consumer_stream_seq);
  return false;
}

// The last message this node's consumer would deliver, as the stream's leader has it
// (STREAM.MSG.GET by last subject: the filter, or every subject); sequence 0 when the leader
// does not answer or the stream holds no such message.
JetStreamInlet::State::LeaderMessage JetStreamInlet::State::last_stream_message() {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = kCheckTimeoutMs;
  natsMsg* msg = nullptr;
  auto code = static_cast<jsErrCode>(0);
  const std::string subject = config.filter_subject.empty() ? ">" : config.filter_subject;
  const natsStatus status =
      js_GetLastMsg(&msg, js.get(), config.stream.c_str(), subject.c_str(), &options, &code);
  LeaderMessage last;
  if (status == NATS_OK) last = {natsMsg_GetSequence(msg), payload_hash(msg)};
  natsMsg_Destroy(msg);
  return last;
}

// The stream's message at `seq` as its leader has it (STREAM.MSG.GET by sequence, which only
// the leader answers); sequence 0 when the leader does not answer or holds no message there.
JetStreamInlet::State::LeaderMessage JetStreamInlet::State::leader_message(std::uint64_t seq) {
  natsMsg* msg = nullptr;
  jsErrCode code{};
  const natsStatus status = get_from_leader(seq, msg, code);
  LeaderMessage message;
  if (status == NATS_OK) message = {seq, payload_hash(msg)};
  natsMsg_Destroy(msg);
  return message;
}

natsStatus JetStreamInlet::State::get_from_leader(std::uint64_t seq, natsMsg*& msg,
                                                  jsErrCode& code) {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = kCheckTimeoutMs;
  msg = nullptr;
  code = static_cast<jsErrCode>(0);
  return js_GetMsg(&msg, js.get(), config.stream.c_str(), seq, &options, &code);
}

std::size_t JetStreamInlet::State::payload_hash(natsMsg* msg) {
  return std::hash<std::string_view>{}(
      std::string_view(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg))));
}

void JetStreamInlet::State::note_newest(natsMsg* msg, std::uint64_t stream_seq) {
  if (stream_seq > newest.seq) newest = {stream_seq, payload_hash(msg)};
}

// Before a batch is handed to the writer: its newest message against the leader's at its
// sequence (one STREAM.MSG.GET a batch, asked while the batch before it commits). Equal, and
// every sequence through it is the leader's (a consumer delivers in stream order), so the batch
// is stored in the leader's order. Checked after the commit instead, a copy that differs would
// have its order stored before the difference is seen, and reading the leader's messages again
// adds only the missing ones: two replicas would hold the same events in different orders.
// Different: nothing of the batch is stored, and what the leader holds is read from it
// (diverged). No answer (the stream is electing a leader): nothing is stored either, and the
// consumer is recreated at the committed position. A sequence the leader no longer holds
// (deleted, or past the stream's limits) cannot be compared, and the batch is stored.
bool JetStreamInlet::State::leader_holds(natsMsg* msg, std::uint64_t seq) {
  if (seq <= verified_stream_seq) return true;
  natsMsg* at_leader = nullptr;
  jsErrCode code{};
  const natsStatus status = get_from_leader(seq, at_leader, code);
  const bool answered = status == NATS_OK;
  const bool equal = answered && payload_hash(at_leader) == payload_hash(msg);
  natsMsg_Destroy(at_leader);
  if (equal) {
    verified_stream_seq = seq;
    return true;
  }
  if (!answered && code == JSNoMessageFoundErr) return true;
  if (answered) {
    diverged(seq);
    return false;
  }
  record_error(nats_error_text(
      fmt::format("stream {} sequence {} from its leader, to confirm consumer {}'s delivery "
                  "(JetStream error {}); recreating the consumer at the committed position",
                  config.stream, seq, config.consumer, static_cast<int>(code)),
      status));
  recreate = true;
  resync.store(true);
  return false;
}

// The consumer delivered, at stream sequence `seq`, another message than the leader holds
// there: its server's copy of the stream lost messages (or holds others), and every later
// sequence it delivered may name a different message than the leader's. Everything after the
// verified sequence is read from the leader (anything this node stored there already is a
// duplicate, by event id) and the consumer is recreated past it. With a filter subject only the
// consumer can be recreated (not every sequence is the consumer's).
void JetStreamInlet::State::diverged(std::uint64_t seq) {
  spdlog::warn(
      "jetstream: consumer {} delivered another message at stream sequence {} than the stream's "
      "leader holds: its server's copy of the stream differs; {}",
      config.consumer, seq,
      config.filter_subject.empty()
          ? fmt::format("reading from the leader after sequence {}", verified_stream_seq)
          : std::string("recreating the consumer"));
  if (config.filter_subject.empty()) {
    const LeaderMessage last = last_stream_message();
    if (last.seq > verified_stream_seq) read_from_leader(last.seq, kThenRecreate);
  }
  stuck_checks = 0;
  recreate = true;
  resync.store(true);
}

// An empty pull is normal when the stream holds nothing new; it is a fault when the consumer
// reports messages it has not delivered, or a delivered count this node never received.
void JetStreamInlet::State::idle_check() {
  jsErrCode code{};
  natsStatus status = NATS_OK;
  jsConsumerInfo* info = ask_consumer(status, code);
  if (info == nullptr) {
    // A consumer that is gone (deleted by a delete request answered only after its re-creation)
    // never answers a pull again. No answer at all is an election unless it lasts: pulls stand
    // still through one, and kUnansweredIdleChecks in a row (about 7 s) outlast any seen (each
    // check follows two empty pulls, about 1.3 s).
    const bool gone = consumer_gone(status, code);
    if (!gone && ++unanswered_checks < kUnansweredIdleChecks) {
      bridge();
      return;
    }
    spdlog::info("jetstream: consumer {} {}; recreating it", config.consumer,
                 gone ? "no longer exists"
                      : fmt::format("has not answered for {} ms", empty_pulls * kPullTimeoutMs));
    unanswered_checks = 0;
    stuck_checks = 0;
    recreate = true;
    resync.store(true);
    return;
  }
  unanswered_checks = 0;
  // Its delivered count as received, nothing pending at its server, and yet the stream's
  // leader holds sequences past what this node received: the consumer's server has a stale
  // copy of the stream (seen in CI after a whole cluster's restart; the consumer's pending
  // count is its own server's). The consumer's stream position says nothing here, its server
  // having scanned only its own copy. Recreating the consumer alone brought the same gap back,
  // so the missing sequences are read from the leader. With a filter subject a sequence need
  // not be the consumer's, so the consumer is recreated instead.
  const bool counted = info->Delivered.Consumer + 1 == next_consumer_seq;
  const bool positioned = info->Delivered.Stream == consumer_stream_seq;
  const std::uint64_t pending = info->NumPending;
  const LeaderMessage last = counted && pending == 0 ? last_stream_message() : LeaderMessage{};
  const bool behind = counted && pending == 0 && last.seq > submitted_stream_seq;
  const bool at_last = last.seq != 0 && last.seq == submitted_stream_seq && newest.seq == last.seq;
  if (at_last && newest.payload_hash != last.payload_hash) {
    jsConsumerInfo_Destroy(info);
    diverged(last.seq);
    return;
  }
  if (counted && positioned && !behind && pending == 0) {
    jsConsumerInfo_Destroy(info);
    if (at_last) verified_stream_seq = std::max(verified_stream_seq, last.seq);
    stuck_checks = 0;
    return;
  }
  // One answer is not enough while the positions agree: a message published in the pull's
  // last moments is pending, or at the leader only, without anything being wrong.
  if (counted && positioned && ++stuck_checks < kStuckIdleChecks) {
    jsConsumerInfo_Destroy(info);
    return;
  }
  if (behind && config.filter_subject.empty()) {
    read_from_leader(last.seq, kThenRecreate);
  } else if (!counted || !positioned) {
    static_cast<void>(delivered_as_received(*info));  // logs the difference
  } else {
    spdlog::info(
        "jetstream: consumer {} reports {} undelivered messages and the stream's last sequence "
        "is {}, but its pulls brought none past {} for {} ms; recreating it",
        config.consumer, pending, last.seq, submitted_stream_seq, empty_pulls * kPullTimeoutMs);
  }
  jsConsumerInfo_Destroy(info);
  stuck_checks = 0;
  recreate = true;
  resync.store(true);
}

// Reads the stream sequences after the verified one, through `last`, from the stream's leader
// (STREAM.MSG.GET by sequence, which only the leader answers) and stores them one at a time in
// stream order, each with its position; the caller then recreates the consumer past them.
// Those this node already stored from its consumer are duplicates (by event id), so the read
// is right whichever of them the consumer's server numbered differently. Only without a
// filter subject: every sequence of the stream is then one the consumer would deliver. A
// sequence the leader no longer holds (deleted, or past the stream's limits) is skipped; any
// other failure, or a storage error, ends the read where it stands.
void JetStreamInlet::State::read_from_leader(std::uint64_t last, std::string_view then) {
  auto drained = [&] {
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return stopping || in_flight == 0; });
    return !stopping && !leader_read_failed;
  };
  {
    const std::lock_guard lock(mutex);
    leader_read_failed = false;
  }
  if (!drained()) return;
  const std::uint64_t from = verified_stream_seq;
  const std::uint64_t received = submitted_stream_seq;
  std::uint64_t read = 0;
  std::string failure;
  for (std::uint64_t seq = from + 1; seq <= last; ++seq) {
    natsMsg* msg = nullptr;
    jsErrCode code{};
    const natsStatus status = get_from_leader(seq, msg, code);
    if (status != NATS_OK) {
      natsMsg_Destroy(msg);
      if (code == JSNoMessageFoundErr) {
        verified_stream_seq = seq;
        continue;
      }
      failure = nats_error_text(fmt::format("stream {} sequence {} from its leader (JetStream "
                                            "error {})",
                                            config.stream, seq, static_cast<int>(code)),
                                status);
      break;
    }
    // The position recorded never goes back (store::record_jetstream_position keeps the
    // highest), so a read that starts before what the consumer delivered moves it only past it.
    submitted_stream_seq = std::max(submitted_stream_seq, seq);
    note_newest(msg, seq);
    submit({msg}, submitted_stream_seq, true);
    if (!drained()) break;
    verified_stream_seq = seq;
    leader_read_through = std::max(leader_read_through, seq);
    ++read;
  }
  stats.from_leader.fetch_add(read, std::memory_order_relaxed);
  spdlog::info(
      "jetstream: consumer {} delivered through stream sequence {} while the stream's leader "
      "holds {}; read {} messages from the leader after sequence {}{}, {}",
      config.consumer, received, last, read, from, failure.empty() ? "" : " before an error", then);
  if (!failure.empty()) record_error(failure);
}

// The consumer has a Raft group of its own, which nats-server elects apart from the stream's:
// after the stream's leader is lost, the consumer's leader can come seconds after the stream's
// (3.1 and 10.7 s in 2 of 18 failover trials) or be unreachable while the node recreates it.
// Meanwhile the stream's leader already answers STREAM.MSG.GET, so what it holds past this
// node's position is read from it by sequence and stored with its position: what is published
// after a failover is stored as soon as the stream has a leader. The consumer, once it answers,
// delivers those messages again, acknowledged without being stored twice (pull_once), and goes
// on; its own count is compared with what it delivered (consumer_stream_seq), so the bridge
// recreates nothing. Only without a filter subject (then every stream sequence is the
// consumer's), and only when this node's newest message is the leader's at its sequence: a copy
// that differs is a divergence (diverged), read again from the verified sequence. Not before the
// first bind: this process knows no position then, so a read would start at sequence 1 and keep
// every dead letter before the committed position a second time; a node restarted during an
// election waits until it can create its consumer.
void JetStreamInlet::State::bridge() {
  if (!js || !bound_once || !config.filter_subject.empty()) return;
  const LeaderMessage last = last_stream_message();
  if (last.seq <= submitted_stream_seq) return;  // no leader yet, or nothing new
  if (newest.seq > verified_stream_seq) {
    const LeaderMessage at = leader_message(newest.seq);
    if (at.seq == 0) return;
    if (at.payload_hash != newest.payload_hash) {
      diverged(newest.seq);
      return;
    }
    verified_stream_seq = newest.seq;
  }
  read_from_leader(last.seq, fmt::format("while consumer {} has no leader", config.consumer));
}

}  // namespace reflectd::bus
