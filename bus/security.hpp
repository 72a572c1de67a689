#pragma once
// Access control (docs/SECURITY.md): who a connection is, what it may write and read.
//
// With CURVE configured every tcp endpoint is a CURVE server; the ZAP handler
// (bus/zap_handler.hpp) admits only public keys listed in the authorized-keys file and names
// the connection by its Z85 public key (the ZAP user id, read back from each message's
// "User-Id" property). That key selects a Principal: the agent_id stamped on its events, the
// namespaces it may write and read, its sensitivity clearance (seed 002 levels, public < low <
// medium < high < hyper) and whether it may use admin control commands.
// ipc and inproc endpoints carry no CURVE: their file modes (0660) decide who connects, and
// such peers are the local operator (admin, every namespace, full clearance).
//
// Error policy: AuthorizedKeys::load_file() and load_security() throw config::ConfigError
// naming the file, line and column (startup and SIGHUP reload); authorize_event() returns the
// rejection text (event path). Thread-safety: immutable after construction.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/zcert.hpp"
#include "config/config.hpp"
#include "store/event.hpp"

namespace reflectd::bus {

// Seed 002 levels and their ranks live with the event (store/event.hpp).
using store::kSensitivityLevels;
using store::sensitivity_rank;
/// Rank of the highest level (hyper): full clearance.
inline constexpr int kMaxClearance = store::kMaxSensitivityRank;

/// Who sent a message or a control request.
struct Principal {
  std::string public_key;               ///< Z85; empty for the local operator.
  std::string agent_id;                 ///< Stamped on every event; empty for the local operator.
  bool all_namespaces = true;           ///< namespaces: ["*"].
  std::vector<std::string> namespaces;  ///< Writable and readable namespaces (unless all).
  int clearance = kMaxClearance;        ///< max_sensitivity rank, for writes and reads.
  bool admin = true;                    ///< May use admin control commands (run, reinforce).

  /// ipc/inproc peers and every peer when CURVE is not configured.
  static Principal local_operator() { return {}; }
  bool is_local_operator() const { return public_key.empty(); }
  bool may_use(std::string_view ns) const;
  /// "libzmq, muse" or "*".
  std::string namespace_list() const;
};

/// The authorized-keys file: one Principal per client public key.
///
///   keys:
///     - public_key: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
///       agent_id: planner
///       namespaces: [libzmq, muse]     # or ["*"] for every namespace
///       max_sensitivity: medium        # public|low|medium|high|hyper
///       admin: false                   # optional, default false
class AuthorizedKeys {
 public:
  /// Parses and validates strictly: unknown fields, missing fields, malformed keys,
  /// duplicate keys, bad namespaces or levels throw config::ConfigError "FILE:LINE:COL: ...".
  static AuthorizedKeys load_file(const std::string& path);
  static AuthorizedKeys load_string(std::string_view yaml, std::string_view origin);

  /// The entry of a Z85 public key, or nullptr.
  const Principal* find(std::string_view public_key) const;
  /// The entry whose agent_id is `agent_id` (NATS publishers on reflectd.agents.<agent_id>.
  /// subjects, docs/CLUSTER.md), or nullptr when no entry has it or several do.
  const Principal* find_agent(std::string_view agent_id) const;
  std::size_t size() const { return by_key_.size(); }

 private:
  std::map<std::string, Principal, std::less<>> by_key_;
  std::map<std::string, std::string, std::less<>> by_agent_;  // its key; "" when listed twice
};

/// The shape of a YAML list of principals: `list:` holds mappings, each naming the principal
/// by `id_field` (kept in Principal::public_key), checked by `valid_id` whose rule `id_rule`
/// the error quotes, with agent_id, namespaces, max_sensitivity and the optional admin.
struct PrincipalListFormat {
  std::string_view list;
  std::string_view id_field;
  bool (*valid_id)(std::string_view);
  std::string_view id_rule;
};

/// Parses and validates such a list strictly (AuthorizedKeys, http/tokens.hpp): unknown or
/// missing fields, invalid ids, namespaces or levels, and an id listed twice throw
/// config::ConfigError "ORIGIN:LINE:COL: list[i].field: rule". Entries in file order.
std::vector<Principal> load_principal_list(std::string_view yaml, std::string_view origin,
                                           const PrincipalListFormat& format);

/// What the daemon needs to secure its sockets; `curve` is false when CURVE is not configured.
struct SecuritySettings {
  bool curve = false;
  CurveCert server;  ///< The daemon's keypair (security.curve_secret_key_file).
  std::shared_ptr<const AuthorizedKeys> keys;
  bool insecure = false;  ///< security.insecure.
  /// Parallel to bus.subscribe: the Z85 public key of the publisher at each endpoint, which
  /// the daemon's SUB authenticates as a CURVE client; empty for endpoints read without CURVE
  /// (ipc/inproc, or tcp under security.insecure). Empty vector without CURVE.
  std::vector<std::string> subscribe_server_keys;
};

/// Reads the key files named by `config` and checks the endpoints: throws config::ConfigError
/// when only one of the two files is set, a file is unreadable or malformed, (without CURVE
/// and without security.insecure) a tcp endpoint binds a non-loopback address, or
/// bus.subscribe_server_keys does not fit bus.subscribe: a count that differs, a key without
/// CURVE or for a non-tcp endpoint, a tcp endpoint without a key under CURVE (unless
/// security.insecure), an entry that is neither a Z85 key nor a readable certificate, or a
/// publisher key missing from the authorized keys. The message names the key and endpoint.
SecuritySettings load_security(const config::Config& config);

/// The Z85 public key an entry of bus.subscribe_server_keys names: the entry itself when it is
/// 40 Z85 characters, else the public key of the certificate file at that path. Throws
/// std::runtime_error naming the entry when it is neither.
std::string resolve_public_key(const std::string& entry);

/// True for tcp:// endpoints.
bool is_tcp(std::string_view endpoint);
/// True for tcp endpoints on 127.0.0.0/8, ::1, localhost or the interface lo.
bool is_loopback_tcp(std::string_view endpoint);

/// Applies `principal` to a validated event: stamps agent_id (a different claimed value is
/// kept as metadata._claimed_agent_id, never trusted), refuses a namespace outside its scope
/// and a sensitivity above its clearance. Returns the rejection, empty when allowed. The local
/// operator passes unchanged.
std::string authorize_event(store::EventRecord& event, const Principal& principal);

}  // namespace reflectd::bus
