#pragma once
// `reflectctl jetstream init` (create a shard's stream) and `reflectctl jetstream publish`
// (JSON Lines events into JetStream, each acknowledged by a quorum of the stream's servers),
// docs/CLUSTER.md.
//
// Error policy: an unreachable cluster or a refused stream returns kExitUnreachable /
// kExitFailed with the reason on stderr; input lines that cannot be sent (not an object, no
// valid namespace) are reported at FILE:LINE and counted, never sent.
// Thread-safety: call from one thread at a time.

#include <cstdint>
#include <string>
#include <vector>

#include "bus/nats_client.hpp"
#include "config/config.hpp"

namespace reflectd::cli {

struct JetStreamOptions {
  config::JetStreamConfig connection;  ///< servers, credentials, TLS (bus.jetstream, --nats).
  std::int64_t timeout_ms = 5000;      ///< Connecting, API requests, each PubAck.
  bool json = false;                   ///< Print the summary as one JSON object.
  /// publish: "" = subjects reflectd.events.<ns>; else reflectd.agents.<agent>.<ns>, where the
  /// nodes apply the authorized-keys entry of that agent_id (docs/CLUSTER.md, "Security").
  std::string agent;
};

/// Creates `layout` (or confirms an identical stream exists); prints what it did. Returns an
/// exit status (cli/exit_codes.hpp).
int run_jetstream_init(const JetStreamOptions& options, const bus::StreamLayout& layout);

/// Publishes every object line of `files` ("-" or none: standard input) on
/// reflectd.events.<its namespace> with Nats-Msg-Id = its id ("id", or "line:<SHA-256>" as
/// `reflectctl publish` gives it, spliced into the message too), up to `window` unacknowledged
/// at once; prints sent, stored (PubAck), duplicate (within the stream's duplicate window),
/// failed and skipped lines. Returns an exit status: 0 when every line was stored or a
/// duplicate.
int run_jetstream_publish(const JetStreamOptions& options, const std::vector<std::string>& files,
                          std::int64_t window);

}  // namespace reflectd::cli
