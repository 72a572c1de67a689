#pragma once
// NATS connections for reflectd (nats.c, Debian's libnats-dev): RAII owners for nats.c's
// objects, connection options built from bus.jetstream, the subject rule for events, and the
// stream layout that `reflectctl jetstream init` creates (docs/CLUSTER.md).
//
// Subjects: an event of namespace NS is published on "reflectd.events.NS" (namespaces are
// 1-64 characters of [A-Za-z0-9._:-], so a namespace with dots spans several subject tokens,
// which is allowed: the JetStream inlet compares the whole remainder to the event's namespace).
//
// Error policy: functions that connect or create throw NatsError (a std::runtime_error whose
// text names the server, stream or consumer, nats.c's status text and its last error).
// Thread-safety: a natsConnection and a jsCtx may be used from any thread (nats.c locks
// them); a natsSubscription used by one thread at a time.

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace reflectd::bus {

/// The prefix of every event subject: "reflectd.events." + namespace.
inline constexpr std::string_view kEventSubjectPrefix = "reflectd.events.";

/// The prefix of every control subject: "reflectd.control." + namespace (bus/nats_control.hpp).
inline constexpr std::string_view kControlSubjectPrefix = "reflectd.control.";

/// The subject of control requests gathered from every shard: each node subscribes in its
/// stream's queue group, so one replica of each shard answers (bus/nats_control.hpp).
inline constexpr std::string_view kClusterControlSubject = "reflectd.cluster.control";

/// The prefix of the subjects an authenticated agent publishes on:
/// "reflectd.agents." + agent_id + "." + namespace. NATS permissions give each agent's user
/// publish rights on its own prefix only, and the node applies the authorized-keys entry of
/// that agent_id to the events (docs/CLUSTER.md, "Security").
inline constexpr std::string_view kAgentSubjectPrefix = "reflectd.agents.";

/// The prefix of the control subjects an authenticated agent reads on:
/// "reflectd.agent-control." + agent_id + "." + namespace. As for kAgentSubjectPrefix, NATS
/// permissions give each agent's user publish rights on its own prefix only, and the node
/// answers with the rights of that agent_id's authorized-keys entry (its namespaces and
/// max_sensitivity). Not under "reflectd.agents.": a stream capturing reflectd.agents.> would
/// store a request there as an event.
inline constexpr std::string_view kAgentControlSubjectPrefix = "reflectd.agent-control.";

/// "reflectd.events." + `ns`.
std::string event_subject(std::string_view ns);

/// "reflectd.agent-control." + `agent_id` + "." + `ns`.
std::string agent_control_subject(std::string_view agent_id, std::string_view ns);

/// "reflectd.agents." + `agent_id` + "." + `ns`.
std::string agent_subject(std::string_view agent_id, std::string_view ns);

/// What an event subject names: the namespace, and the agent for reflectd.agents. subjects
/// (empty for reflectd.events.).
struct EventSubject {
  std::string_view agent_id;
  std::string_view ns;
};

/// Parses reflectd.events.<ns> or reflectd.agents.<agent_id>.<ns> (the agent is one subject
/// token, so an agent_id with '.' cannot publish there); nullopt for any other subject or an
/// empty part.
std::optional<EventSubject> parse_event_subject(std::string_view subject);

/// Parses reflectd.agent-control.<agent_id>.<ns> the same way (the agent is one token);
/// nullopt for any other subject or an empty part.
std::optional<EventSubject> parse_agent_control_subject(std::string_view subject);

class NatsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// `what` + ": " + nats.c's text for `status` (+ its last error detail when it has one).
std::string nats_error_text(std::string_view what, natsStatus status);

struct NatsConnectionDeleter {
  void operator()(natsConnection* connection) const { natsConnection_Destroy(connection); }
};
struct JsCtxDeleter {
  void operator()(jsCtx* js) const { jsCtx_Destroy(js); }
};
struct NatsSubscriptionDeleter {
  void operator()(natsSubscription* sub) const { natsSubscription_Destroy(sub); }
};
struct NatsMsgDeleter {
  void operator()(natsMsg* msg) const { natsMsg_Destroy(msg); }
};
using NatsConnectionPtr = std::unique_ptr<natsConnection, NatsConnectionDeleter>;
using JsCtxPtr = std::unique_ptr<jsCtx, JsCtxDeleter>;
using NatsSubscriptionPtr = std::unique_ptr<natsSubscription, NatsSubscriptionDeleter>;
using NatsMsgPtr = std::unique_ptr<natsMsg, NatsMsgDeleter>;

/// Callbacks for the connection's life (nats.c's own thread calls them; keep them quick).
struct NatsConnectionEvents {
  natsConnectionHandler disconnected = nullptr;
  natsConnectionHandler reconnected = nullptr;
  void* closure = nullptr;
  /// The connection's last callback (after natsConnection_Close): once it has run, nats.c
  /// calls none of these again, so `closure` may be freed.
  natsConnectionHandler closed = nullptr;
  /// When no server accepts the first connection: false = throw NatsError; true = return a
  /// connection that keeps trying in the background (nats.c's RetryOnFailedConnect; what is
  /// published meanwhile waits in its reconnect buffer, and `reconnected` fires on success).
  bool connect_in_background = false;
};

/// Connects to `config.servers` (tried in order, no randomizing, so that tests and operators
/// see which server a node uses) as client `name`, with the credentials and TLS files of
/// `config`, reconnecting forever every 250 ms once connected. Throws NatsError when no
/// server accepts the connection within `timeout_ms` each, or a file cannot be loaded.
NatsConnectionPtr nats_connect(const config::JetStreamConfig& config, const std::string& name,
                               std::int64_t timeout_ms, const NatsConnectionEvents& events = {});

/// A JetStream context on `connection` whose API requests wait at most `timeout_ms`.
JsCtxPtr jetstream_context(natsConnection* connection, std::int64_t timeout_ms);

/// What `reflectctl jetstream init` creates: one stream = one shard.
struct StreamLayout {
  std::string name;                       ///< Stream name (e.g. REFLECTD, or one per shard).
  std::vector<std::string> namespaces;    ///< Its subjects: reflectd.events.<ns>; [] = all (">").
  int replicas = 3;                       ///< Raft replicas (1-5; 3 survives one server's loss).
  std::int64_t max_bytes = -1;            ///< Limit on stored bytes; -1 = none.
  std::int64_t max_age_s = 0;             ///< Oldest message kept, seconds; 0 = forever.
  std::int64_t duplicate_window_s = 120;  ///< Nats-Msg-Id deduplication window, seconds.
};

/// The subjects of `layout`: reflectd.events.<ns> and reflectd.agents.*.<ns> per namespace,
/// or "reflectd.events.>" and "reflectd.agents.>".
std::vector<std::string> stream_subjects(const StreamLayout& layout);

/// Creates the stream (file storage, limits retention, discard old). An existing stream with
/// the same subjects and replicas is left as it is (returns false); one that differs is never
/// changed: NatsError names what differs, so an operator's settings are not fought. Returns
/// true when it created the stream. A cluster that does not yet know enough peers for the
/// replicas (JetStream error 10005, just after its servers started) is asked again every
/// 0.25 s for up to 10 s before NatsError. Blocks the calling thread meanwhile.
bool ensure_stream(jsCtx* js, const StreamLayout& layout);

}  // namespace reflectd::bus
