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
// namespaces), with no admin rights; which commands are answered is the handler's choice (the
// daemon answers status and the reads). Its sensitivity clearance:
//  - reflectd.agent-control.<agent_id>.<ns> (one such subject per reflectd.agents. subject of
//    the stream): the max_sensitivity of the authorized-keys entry whose agent_id that is, as
//    for events on reflectd.agents.<agent_id>.<ns>; NATS permissions make the token
//    trustworthy (docs/CLUSTER.md, "Security"). An agent listed under no key or two, or one
//    whose entry does not cover <ns>, is answered {"ok":false,"error":"authorization: ..."}.
//  - reflectd.control.<ns> and reflectd.cluster.control: nobody vouches for the caller, so the
//    lowest level (public): a record one level above is redacted, two above absent, as over
//    ZeroMQ.
//
// Error policy: the constructor throws NatsError when a subscription cannot be made; a request
// that is not a JSON object is answered {"ok":false,"error":...}; nothing else throws.
// Thread-safety: the handler runs on nats.c's delivery thread and must not block (post the
// work); its ControlReply may be called once, from any thread.

#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bus/nats_client.hpp"
#include "bus/security.hpp"

namespace reflectd::bus {

/// The control subjects matching a stream's event subjects: reflectd.events.X becomes
/// reflectd.control.X and reflectd.agents.X becomes reflectd.agent-control.X (wildcards
/// kept); other subjects are skipped.
std::vector<std::string> control_subjects(const std::vector<std::string>& event_subjects);

/// Answers one request (a JSON object) from `caller`; `reply` delivers the answer.
using NatsControlHandler = std::function<void(nlohmann::json request, const Principal& caller,
                                              std::function<void(nlohmann::json)> reply)>;

/// The authorized keys in force now (SIGHUP may replace them); null when there are none.
/// Called on nats.c's delivery thread.
using NatsControlKeys = std::function<std::shared_ptr<const AuthorizedKeys>()>;

class NatsControl {
 public:
  /// Subscribes to `subjects` and to kClusterControlSubject in queue group `queue` (the
  /// stream's name, which also names the shard in cluster answers) on `connection`. `owner` owns
  /// the connection: a reply sent once it is gone is dropped. Close the connection before
  /// destroying this object, so that no delivery is still running.
  NatsControl(natsConnection* connection, std::weak_ptr<void> owner,
              const std::vector<std::string>& subjects, const std::string& queue,
              NatsControlHandler handler, NatsControlKeys keys = {});
  ~NatsControl();
  NatsControl(const NatsControl&) = delete;
  NatsControl& operator=(const NatsControl&) = delete;

  /// The caller of a request on reflectd.control.`ns`: agent "nats", namespace `ns` only,
  /// clearance public (rank 0), not admin.
  static Principal caller_for(std::string_view ns);

  /// The caller of a request on reflectd.agent-control.`agent_id`.`ns`: the entry of `keys`
  /// with that agent_id, limited to `ns`, not admin. nullopt, with the reason in `refused`,
  /// when `keys` is null, lists the agent under no key or two, or the entry does not cover
  /// `ns`.
  static std::optional<Principal> agent_caller(const AuthorizedKeys* keys,
                                               std::string_view agent_id, std::string_view ns,
                                               std::string& refused);

  /// The caller of a request on kClusterControlSubject: the namespaces of `subjects`
  /// (reflectd.control.<ns>; a wildcard subject means every namespace; agents' subjects are
  /// skipped), clearance public, not admin.
  static Principal shard_caller(const std::vector<std::string>& subjects);

  struct Context;  // what nats.c's callback needs

 private:
  std::shared_ptr<Context> context_;
  std::vector<NatsSubscriptionPtr> subscriptions_;
};

}  // namespace reflectd::bus
