#pragma once
// One request/reply exchange with the daemon's control socket, and the behaviour every
// control command of reflectctl shares: the raw reply with --json, a table otherwise, the
// daemon's error on stderr, and the same exit statuses.
//
// Error policy: control_request() throws std::runtime_error for an endpoint that cannot be
// used; run_control_command() prints every problem to stderr and returns an exit status.
// Thread-safety: call from one thread at a time.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/socket.hpp"

namespace reflectd::cli {

/// What every control command needs.
struct ControlOptions {
  std::string endpoint;                     ///< The control endpoint.
  std::chrono::milliseconds timeout{3000};  ///< For connecting and the reply together.
  bool json = false;                        ///< Print the daemon's JSON reply instead of a table.
  std::optional<CurveClientKeys> curve;     ///< Connect with CURVE (--curve-key, --server-key).
  /// --nats: send the request over NATS instead, to reflectd.control.<its "namespace">, where
  /// any live replica of the shard holding that namespace answers (docs/CLUSTER.md).
  std::vector<std::string> nats;
  /// --nats-agent: over NATS, read as this agent, on reflectd.agent-control.<agent>.<namespace>:
  /// the node applies that agent's authorized-keys entry (its namespaces, its max_sensitivity).
  /// Empty: reflectd.control.<namespace>, where reads get the public level only.
  std::string nats_agent;
};

/// Sends `request` as [request id, JSON] on a DEALER connected to `endpoint` and returns the
/// parsed reply, or nullopt when none arrived within `timeout`. A reply that is not JSON is
/// returned as a string value. Throws std::runtime_error for an endpoint that cannot be used.
std::optional<nlohmann::json> control_request(
    const std::string& endpoint, const nlohmann::json& request, std::chrono::milliseconds timeout,
    const std::optional<CurveClientKeys>& curve = std::nullopt);

/// Sends `request` over NATS request-reply to reflectd.control.<request["namespace"]> (with
/// `agent`: reflectd.agent-control.<agent>.<namespace>) through `servers`; nullopt when no node
/// answered within `timeout`. Throws std::runtime_error when the request names no namespace or
/// no server accepts the connection.
std::optional<nlohmann::json> nats_control_request(const std::vector<std::string>& servers,
                                                   const nlohmann::json& request,
                                                   std::chrono::milliseconds timeout,
                                                   const std::string& agent = "");

/// What every shard answered to one request gathered over NATS.
struct GatheredReplies {
  std::vector<std::string> shards;  ///< Every JetStream stream of reflectd.events., sorted.
  std::map<std::string, nlohmann::json> replies;  ///< By shard (stream name).
  std::vector<std::string> missing;               ///< Shards with no answer within the timeout.
};

/// Sends `request` once to reflectd.cluster.control (bus/nats_control.hpp), where one replica
/// of each shard answers, and collects the answers until every shard listed by JetStream
/// (streams with a reflectd.events. subject) has answered or `timeout` has passed. Throws
/// std::runtime_error when no server accepts the connection or the streams cannot be listed.
GatheredReplies nats_gather(const std::vector<std::string>& servers, const nlohmann::json& request,
                            std::chrono::milliseconds timeout);

/// Turns a reply into the text printed on stdout.
using ReplyFormatter = std::function<std::string(const nlohmann::json& reply)>;

/// How one command presents its reply.
struct ControlCommand {
  std::string_view name;  ///< "status", "jobs"...: prefixes messages on stderr.
  ReplyFormatter format;  ///< The table for a reply with "ok": true.
  /// Also formats (to stdout) a reply with "ok": false, ahead of its error on stderr; for
  /// replies that carry details besides the error (run --wait: the failed run).
  ReplyFormatter format_failure;
};

/// Sends `request` and prints the reply: with options.json the reply verbatim (pretty JSON),
/// else `command.format`'s text; an "ok": false reply's "error" goes to stderr. Returns
/// kExitOk, kExitFailed (the daemon answered "ok": false), kExitUsage (bad endpoint) or
/// kExitUnreachable (no reply within options.timeout).
///
/// With options.nats and a request without "namespace", the request is gathered from every
/// shard (nats_gather): each shard's reply is printed under its name (with --json, one object
/// {"ok","shards":{name: reply},"missing":[...]}) and the shards that did not answer are
/// named on stderr; kExitFailed when a shard answered "ok": false, kExitUnreachable when one
/// did not answer.
int run_control_command(const ControlCommand& command, const ControlOptions& options,
                        const nlohmann::json& request);

}  // namespace reflectd::cli
