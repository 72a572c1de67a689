#pragma once
// Control requests over NATS request-reply (docs/CLUSTER.md, "Reads over NATS"): a node that
// holds a shard answers on reflectd.control.<namespace> for each namespace of its stream, in a
// queue group named after the stream, so that any live replica of the shard answers.
//
// Requests that span namespaces (`reflectctl --nats URL status` without --namespace) go to
// reflectd.cluster.control, which every node also subscribes to in its stream's queue group:
// NATS hands such a request to one replica of each shard, and each answer carries "shard" (the
// stream's name), so that the requester can tell which shards did not answer.
//
// A request is the same JSON object as on the control socket. Its caller is a Principal
// limited to the subject's namespace (on reflectd.cluster.control: to the shard's
// namespaces), with no admin rights (NatsControl::caller_for); which commands are answered
// is the handler's choice (the daemon answers status and the reads).
//
// Error policy: the constructor throws NatsError when a subscription cannot be made; a request
// that is not a JSON object is answered {"ok":false,"error":...}; nothing else throws.
// Thread-safety: the handler runs on nats.c's delivery thread and must not block (post the
// work); its ControlReply may be called once, from any thread.

#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bus/nats_client.hpp"
#include "bus/security.hpp"

namespace reflectd::bus {

/// The control subjects matching a stream's event subjects: reflectd.events.X becomes
/// reflectd.control.X (wildcards kept); subjects outside reflectd.events. are skipped.
std::vector<std::string> control_subjects(const std::vector<std::string>& event_subjects);

/// Answers one request (a JSON object) from `caller`; `reply` delivers the answer.
using NatsControlHandler = std::function<void(nlohmann::json request, const Principal& caller,
                                              std::function<void(nlohmann::json)> reply)>;

class NatsControl {
 public:
  /// Subscribes to `subjects` and to kClusterControlSubject in queue group `queue` (the
  /// stream's name, which also names the shard in cluster answers) on `connection`. `owner` owns
  /// the connection: a reply sent once it is gone is dropped. Close the connection before
  /// destroying this object, so that no delivery is still running.
  NatsControl(natsConnection* connection, std::weak_ptr<void> owner,
              const std::vector<std::string>& subjects, const std::string& queue,
              NatsControlHandler handler);
  ~NatsControl();
  NatsControl(const NatsControl&) = delete;
  NatsControl& operator=(const NatsControl&) = delete;

  /// The caller of a request on reflectd.control.`ns`: agent "nats", namespace `ns` only,
  /// every sensitivity, not admin.
  static Principal caller_for(std::string_view ns);

  /// The caller of a request on kClusterControlSubject: the namespaces of `subjects`
  /// (reflectd.control.<ns>; a wildcard subject means every namespace), not admin.
  static Principal shard_caller(const std::vector<std::string>& subjects);

  struct Context;  // what nats.c's callback needs

 private:
  std::shared_ptr<Context> context_;
  std::vector<NatsSubscriptionPtr> subscriptions_;
};

}  // namespace reflectd::bus
