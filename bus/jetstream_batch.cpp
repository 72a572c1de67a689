// The JetStream inlet's write path: a pulled batch (or one message read from the stream's
// leader) decoded into one write request, and each message's acknowledgement once it commits
// (docs/CLUSTER.md). One request a batch, not one a message: the writer then always holds the
// next batch while it commits one, instead of running dry between pulls and indexing in the
// gap (`bench_ingest --modes push,jetstream`, docs/PERFORMANCE.md).

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bus/jetstream_inlet_state.hpp"
#include "store/jetstream_positions.hpp"

namespace reflectd::bus {

using namespace jetstream_timing;

struct JetStreamInlet::State::PendingBatch {
  std::vector<natsMsg*> msgs;
  std::vector<MessageSpan> spans;  // one per message
  PendingBatch() = default;
  PendingBatch(const PendingBatch&) = delete;
  PendingBatch& operator=(const PendingBatch&) = delete;
  ~PendingBatch() {
    for (natsMsg* msg : msgs) natsMsg_Destroy(msg);
  }
};

JetStreamInlet::State::MessageSpan JetStreamInlet::State::add_message(store::WriteRequest& request,
                                                                      natsMsg* msg,
                                                                      std::int64_t now_us) {
  stats.messages.fetch_add(1, std::memory_order_relaxed);
  const std::string_view payload(natsMsg_GetData(msg),
                                 static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
  const std::string subject = natsMsg_GetSubject(msg);
  const std::string label = "jetstream:" + subject;
  const std::optional<EventSubject> parsed = parse_event_subject(subject);
  const std::string_view ns = parsed ? parsed->ns : std::string_view();
  // The publisher's rights: the local operator's on reflectd.events., the agent's entry on
  // reflectd.agents.<agent_id>. (its key is kept alive while the message is decoded).
  std::shared_ptr<const AuthorizedKeys> rights;
  const Principal* sender = nullptr;
  std::string refused;
  if (!parsed) {
    refused = fmt::format("subject: must be {}<namespace> or {}<agent_id>.<namespace>, got \"{}\"",
                          kEventSubjectPrefix, kAgentSubjectPrefix, subject);
  } else if (!parsed->agent_id.empty()) {
    {
      const std::lock_guard lock(mutex);
      rights = keys;
    }
    sender = rights ? rights->find_agent(parsed->agent_id) : nullptr;
    if (sender == nullptr) {
      refused = fmt::format(
          "authorization: agent \"{}\" of subject {} is not listed once in the authorized keys "
          "(security.authorized_keys_file)",
          parsed->agent_id, subject);
    }
  }
  MessageSpan span{request.entries.size(), request.entries.size(), 0};
  if (!refused.empty()) {
    request.dead_letters.push_back(
        store::DeadLetter{std::string(payload), label, std::move(refused), now_us});
    span.dead_letters = 1;
    return span;
  }
  DecodedMessage message =
      decoder.decode(payload, static_cast<std::size_t>(max_message_bytes), sender);
  for (auto& entry : message.events) {
    if (entry.event && entry.event->ns != ns) {
      entry.error =
          fmt::format(R"(namespace: must be the namespace of the subject {} ("{}"), got "{}")",
                      subject, ns, entry.event->ns);
      entry.event.reset();
    }
  }
  std::vector<store::DeadLetter> letters = dead_letters_for(message, payload, label, now_us);
  span.dead_letters = letters.size();
  // A message kept as a dead letter already is not kept again for an event the writer refuses.
  const auto origin = static_cast<std::uint32_t>(request.origins.size());
  request.origins.push_back(letters.empty()
                                ? store::WriteRequest::Origin{label, std::string(payload)}
                                : store::WriteRequest::Origin{});
  for (auto& letter : letters) request.dead_letters.push_back(std::move(letter));
  for (auto& entry : message.events) {
    request.entries.push_back(std::move(entry));
    request.entry_origins.push_back(origin);
  }
  span.end_entry = request.entries.size();
  return span;
}

void JetStreamInlet::State::submit(std::vector<natsMsg*> msgs, std::uint64_t position,
                                   bool from_leader) {
  auto batch = std::make_shared<PendingBatch>();
  batch->msgs = std::move(msgs);
  batch->spans.reserve(batch->msgs.size());
  {
    const std::lock_guard lock(mutex);
    in_flight += static_cast<std::int64_t>(batch->msgs.size());
  }
  const std::int64_t now = clock.now_us();
  store::WriteRequest request;
  for (natsMsg* msg : batch->msgs) batch->spans.push_back(add_message(request, msg, now));
  if (position > 0) {
    // Requests commit in order, so when this one commits, every message before it has.
    request.apply = [stream = config.stream, position](SQLite::Database& db) {
      store::record_jetstream_position(db, stream, position);
      return std::string();
    };
  }
  // A std::function must be copyable: the batch travels in a shared_ptr.
  request.on_done = [self = shared_from_this(), batch, from_leader](store::WriteResult&& result) {
    self->answered(*batch, result, from_leader);
  };
  // submit() leaves a refused request untouched, so it is submitted again.
  while (!writer.submit(std::move(request))) {  // NOLINT(bugprone-use-after-move)
    std::unique_lock lock(mutex);
    wake.wait(lock, [&] { return stopping || writer_space; });
    writer_space = false;
    if (stopping) {
      // Already read: queue it anyway rather than leave it for ack_wait to redeliver.
      lock.unlock();
      writer.submit(std::move(request), true);  // NOLINT(bugprone-use-after-move)
      return;
    }
  }
}

void JetStreamInlet::State::answered(const PendingBatch& batch, const store::WriteResult& result,
                                     bool from_leader) {
  std::size_t dead_letters = 0;
  for (const MessageSpan& span : batch.spans) dead_letters += span.dead_letters;
  count_results(stats.events, result, dead_letters);
  const bool failed = !result.storage_error.empty();
  if (from_leader) {
    // Never delivered, so there is nothing to acknowledge: a storage error stops the read, and
    // the consumer recreated at the committed position delivers the message again.
    const std::lock_guard lock(mutex);
    if (failed) leader_read_failed = true;
  } else {
    for (std::size_t i = 0; i < batch.msgs.size(); ++i) {
      natsMsg* msg = batch.msgs[i];
      const MessageSpan& span = batch.spans[i];
      const auto first = result.results.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                      span.first_entry, result.results.size()));
      const auto end = result.results.begin() +
                       static_cast<std::ptrdiff_t>(std::min(span.end_entry, result.results.size()));
      const bool refused =
          span.dead_letters > 0 || std::any_of(first, end, [](const store::EventResult& r) {
            return r.status == store::EventStatus::kRejected;
          });
      if (failed) {
        natsMsg_NakWithDelay(msg, kNakDelayMs, nullptr);
        stats.nacked.fetch_add(1, std::memory_order_relaxed);
      } else if (refused) {
        natsMsg_Term(msg, nullptr);
        stats.terminated.fetch_add(1, std::memory_order_relaxed);
      } else {
        natsMsg_Ack(msg, nullptr);
        stats.acked.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  {
    const std::lock_guard lock(mutex);
    in_flight -= static_cast<std::int64_t>(batch.msgs.size());
  }
  wake.notify_all();
}

}  // namespace reflectd::bus
