#pragma once
// reflectd's configuration: one declarative table of keys (config/keys.cpp) drives loading,
// validation, `reflectd --check-config` and the documented example file config/reflectd.yaml.
//
// Error policy: configuration is control plane, so every function here reports errors by
// throwing ConfigError, whose message names file:line:column and the key.

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace reflectd::config {

struct LogConfig {
  std::string level;  ///< spdlog level name: trace, debug, info, warn, error, critical, off.
};

/// JetStream input (bus/jetstream_inlet.hpp, docs/CLUSTER.md). Off while `servers` is empty.
struct JetStreamConfig {
  std::vector<std::string> servers;     ///< nats:// or tls:// URLs of the cluster's servers.
  std::string stream;                   ///< The stream this node consumes (one shard).
  std::string consumer;                 ///< This node's durable pull consumer; one per replica.
  std::string filter_subject;           ///< Consumer filter; "" = every subject of the stream.
  std::int64_t batch = 0;               ///< Most messages per pull (and unacknowledged), messages.
  std::int64_t ack_wait_s = 0;          ///< Seconds before JetStream redelivers an unacked message.
  std::string credentials_file;         ///< NATS user credentials (.creds: JWT and nkey seed).
  std::string tls_ca_file;              ///< CA certificates trusted for tls:// servers.
  std::string tls_cert_file;            ///< Client certificate chain (mutual TLS).
  std::string tls_key_file;             ///< Client private key (mutual TLS).
  std::int64_t forward_timeout_ms = 0;  ///< bus.forward: jetstream: PubAck wait, milliseconds.
  std::int64_t forward_max_pending = 0;  ///< bus.forward: jetstream: unacknowledged events.
};

struct BusConfig {
  std::vector<std::string> ingest;            ///< ROUTER endpoints (acknowledged ingest) to bind.
  std::vector<std::string> push;              ///< PULL endpoints (fire-and-forget ingest) to bind.
  std::vector<std::string> subscribe;         ///< Agents' PUB endpoints to connect a SUB to.
  std::vector<std::string> subscribe_topics;  ///< Topic prefixes subscribed on every SUB.
  /// Publisher CURVE keys (Z85 or certificate path), parallel to `subscribe`; "" = no CURVE.
  std::vector<std::string> subscribe_server_keys;
  std::vector<std::string> notify;         ///< PUB endpoints for the daemon's announcements.
  std::vector<std::string> control;        ///< ROUTER endpoints for JSON control requests.
  std::int64_t max_message_bytes = 0;      ///< Largest accepted message payload, bytes.
  std::int64_t receive_hwm = 0;            ///< ZMQ_RCVHWM, messages.
  std::int64_t send_hwm = 0;               ///< ZMQ_SNDHWM, messages.
  std::int64_t linger_ms = 0;              ///< ZMQ_LINGER at shutdown, milliseconds.
  std::int64_t heartbeat_interval_ms = 0;  ///< ZMQ_HEARTBEAT_IVL on tcp, milliseconds.
  std::int64_t heartbeat_timeout_ms = 0;   ///< ZMQ_HEARTBEAT_TIMEOUT on tcp, milliseconds.
  std::string forward;                     ///< Acknowledged ingest goes to: store|jetstream.
  JetStreamConfig jetstream;               ///< NATS JetStream input (and forwarding).
};

struct StoreConfig {
  std::string path;         ///< SQLite file; relative paths resolve against $STATE_DIRECTORY.
  std::string synchronous;  ///< PRAGMA synchronous: off, normal, full, extra.
  std::int64_t commit_max_events = 0;    ///< Most events in one write transaction.
  std::int64_t commit_max_delay_ms = 0;  ///< Longest a transaction waits for more events, ms.
  std::int64_t writer_queue_events = 0;  ///< Writer queue capacity, events.
  std::int64_t busy_timeout_ms = 0;      ///< sqlite3_busy_timeout, milliseconds.
  std::int64_t max_pages = 0;            ///< PRAGMA max_page_count of the writer; 0 = unlimited.
  std::int64_t fts_batch_events = 0;     ///< Most events full-text indexed per transaction.
  std::int64_t checkpoint_pages = 0;     ///< WAL pages that wake the checkpointer; 0 = inline.
  std::int64_t cache_mib = 0;            ///< Writer page cache, MiB.
  std::string dedup;                     ///< Content-hash deduplication: off|namespace|agent.
  bool commit_pipelining = true;         ///< With synchronous full: fsync the WAL on a sync stage.
};

/// Scheduling of one job (seed 003 background jobs). Triggers: the interval; `after_events`
/// new events in a namespace; `idle_s` seconds of bus silence with unprocessed events; and
/// on demand over the control socket.
struct JobConfig {
  bool enabled = true;
  std::int64_t interval_s = 0;    ///< Seconds between the end of a run and the next.
  std::int64_t jitter_pct = 0;    ///< Stable per-job offset, percent of the interval.
  std::int64_t timeout_s = 0;     ///< A run past this is cancelled and recorded as timeout.
  std::int64_t after_events = 0;  ///< Run after this many new events in a namespace (0 = off).
  std::int64_t idle_s = 0;        ///< Run after this much idle bus time with new events (0 = off).
};

struct JobsConfig {
  JobConfig consolidate;
  JobConfig decay;
  JobConfig cluster;     ///< Entities pass, clustering and communities (jobs/clustering.hpp).
  JobConfig importance;  ///< Entity importance (jobs/importance.hpp).
  JobConfig medallion;
  JobConfig facts;      ///< The fact ledger (jobs/facts.hpp).
  JobConfig retention;  ///< Deletes events past their retention rule (memory_ops/retention.hpp).
  /// Writer priority over jobs' write transactions (store/write_gate.hpp).
  std::int64_t write_wait_ms = 0;   ///< Longest a job waits for the write lock under ingest.
  std::int64_t write_slice_ms = 0;  ///< Least a job keeps the lock once in; writer quiet time.
  /// PRAGMA synchronous of the jobs' connection (normal, full) when store.synchronous is full
  /// or extra; daemon::jobs_database_options() applies it.
  std::string synchronous;
};

/// Medallion refresh (seed 001).
struct MedallionConfig {
  /// Configured scopes, "name=<id>;namespace=<ns>;nodes=<a>,<b>;tags=<t>" each (every
  /// namespace also gets one automatically).
  std::vector<std::string> scopes;
};

/// Retention (memory_ops/retention.hpp).
struct RetentionConfig {
  /// "max_age_days=<N>;namespace=<ns>;kind=<kind>" each (namespace and kind optional).
  std::vector<std::string> rules;
};

/// Entity extraction and the entity graph (jobs/entities.hpp).
struct EntitiesConfig {
  double hebbian_rate = 0;           ///< eta of s += eta (1 - s) per co-mention.
  double edge_half_life_days = 0;    ///< Half-life of edge strength, days.
  std::int64_t max_co_mentions = 0;  ///< Entities per event that get co_occurs edges.
};

/// Lexical clustering and communities (jobs/clustering.hpp, jobs/communities.hpp).
struct ClusteringConfig {
  double similarity_threshold = 0;       ///< Cosine needed to join a cluster.
  double duplicate_threshold = 0;        ///< Cosine to the medoid that makes a near-duplicate.
  std::int64_t vector_terms = 0;         ///< Terms kept per event vector.
  std::int64_t centroid_terms = 0;       ///< Terms kept per centroid.
  std::int64_t index_terms = 0;          ///< Centroid terms a cluster is indexed under.
  std::int64_t query_terms = 0;          ///< Event terms used to look up candidates.
  std::int64_t candidates_per_term = 0;  ///< Most recently touched clusters read per term.
  double community_resolution = 0;       ///< Louvain resolution.
  std::int64_t community_min_entities = 0;
};

/// Entity importance (jobs/importance.hpp).
struct ImportanceConfig {
  double half_life_days = 0;  ///< Recency half-life of mentions, days.
  double damping = 0;         ///< PageRank damping factor.
  std::int64_t max_iterations = 0;
  double tolerance = 0;  ///< L1 change that ends the power iteration.
  double weight_pagerank = 0, weight_mentions = 0, weight_recency = 0;
  std::int64_t top_entities = 0;  ///< Entities listed per namespace in the result.
};

/// The read side's recall and context (recall/recall.hpp, docs/RECALL.md).
struct RecallConfig {
  std::int64_t candidates = 0;     ///< Lexical candidates read per query.
  std::int64_t seeds = 0;          ///< Best lexical hits activation spreads from.
  std::int64_t entity_events = 0;  ///< Events read per primed entity.
  double hop1_weight = 0, hop2_weight = 0, entity_weight = 0, speaker_weight = 0;
  double temporal_weight = 0, salience_weight = 0;
  std::int64_t max_content_bytes = 0;  ///< Content returned in full up to this size.
  double max_term_share = 0;           ///< Collection stop words: share of the indexed events.
  std::int64_t derived_results = 0;    ///< Derived records returned beside the events.
  std::string wordnet_dir;             ///< WordNet database directory; empty: none.
  double semantic_weight = 0;          ///< Weight of the related words' BM25.
  std::int64_t related_words = 0;      ///< Related words looked up per question term.
  std::int64_t related_depth = 0;      ///< Hyponym levels searched below a term.
  std::int64_t related_postings = 0;   ///< Documents the related words may match together.
};

/// Consolidation (LedgerMind reflection, Arandu L2/L3); defaults are the anchors' values.
struct ConsolidationConfig {
  std::int64_t gap_minutes = 0;  ///< A silence this long ends a trajectory.
  double weight_decision = 0, weight_commit_change = 0, weight_error = 0;
  double weight_result_success = 0, weight_result_other = 0, weight_call = 0, weight_task = 0;
  double weight_prompt = 0, weight_problem_solution = 0;
  double stream_weight_threshold = 0;  ///< Evidence weight that creates a proposal stream.
  double window_days = 0;              ///< W of coverage.
  double accept_threshold = 0;         ///< Acceptance score that accepts a proposal.
  std::int64_t pattern_min_occurrences = 0;
  std::int64_t pattern_min_trajectories = 0;
  std::int64_t competence_min_successes = 0;
};

/// One seed 002 decay profile as configured.
struct DecayProfileConfig {
  std::string curve;
  std::int64_t half_life_s = 0;
  double min_salience = 0;
  std::int64_t max_age_s = 0;
  double reinforcement_gain = 0;
  std::string deletion_policy;
};

struct DecayConfig {
  DecayProfileConfig episodic;
  DecayProfileConfig semantic;
  double decaying_after_days = 0, dormant_after_days = 0;
  double decaying_loss_per_week = 0, dormant_loss_per_week = 0;
  double min_confidence_share = 0;  ///< model::VitalityParams::min_confidence_share.
};

struct DaemonConfig {
  std::int64_t stats_interval_ms = 0;  ///< Period of `events.stored` and STATUS=, ms.
  std::string metrics_listen;          ///< host:port of GET /metrics; "" = off.
};

/// The HTTP JSON API (http/api.hpp, docs/HTTP.md).
struct HttpConfig {
  std::string listen;                 ///< host:port of the API; "" = off.
  std::string console_dir;            ///< The web console's files; "" = none.
  std::int64_t max_connections = 0;   ///< Connections open at once; past it: 503.
  std::int64_t header_timeout_s = 0;  ///< Seconds to send a request's header and body.
  std::int64_t idle_timeout_s = 0;    ///< Seconds a kept-alive connection waits for a request.
  double rate_per_s = 0;              ///< Requests a second per token (0 = no limit).
  std::int64_t rate_burst = 0;        ///< Requests a token may send at once.
};

/// Access control (bus/security.hpp, docs/SECURITY.md).
struct SecurityConfig {
  std::string curve_secret_key_file;  ///< The daemon's CURVE certificate (zcert, secret).
  std::string authorized_keys_file;   ///< YAML list of client keys and their rights.
  std::string http_tokens_file;       ///< YAML list of HTTP bearer-token hashes and rights.
  bool insecure = false;              ///< Allow non-loopback tcp binds without CURVE.
};

/// The whole validated configuration. A default-constructed Config is empty; use
/// `defaults()` or `load_file()` to get one filled from the key table.
struct Config {
  LogConfig log;
  BusConfig bus;
  StoreConfig store;
  DaemonConfig daemon;
  HttpConfig http;
  JobsConfig jobs;
  ConsolidationConfig consolidation;
  DecayConfig decay;
  EntitiesConfig entities;
  ClusteringConfig clustering;
  ImportanceConfig importance;
  RecallConfig recall;
  MedallionConfig medallion;
  RetentionConfig retention;
  SecurityConfig security;
};

/// A configuration error. `what()` reads "FILE:LINE:COL: KEY: problem" when the position
/// is known.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class KeyType { kString, kEnum, kInteger, kReal, kBoolean, kStringList, kEndpointList };

/// One row of the key table. `field` points into Config; the table is the only place a key
/// is declared.
struct KeySpec {
  using Field =
      std::variant<std::string& (*)(Config&), std::int64_t& (*)(Config&), double& (*)(Config&),
                   bool& (*)(Config&), std::vector<std::string>& (*)(Config&)>;
  std::string_view path;          ///< Dotted YAML path, e.g. "store.synchronous".
  KeyType type;                   ///< How the YAML scalar or sequence is read.
  std::string_view default_yaml;  ///< The default, as YAML (flow style for lists).
  std::int64_t min = 0;           ///< Integers: inclusive lower bound.
  std::int64_t max = 0;           ///< Integers: inclusive upper bound.
  std::string_view choices;       ///< Enums: allowed values separated by '|'.
  bool live = false;              ///< Applied on SIGHUP without restart.
  std::string_view unit;          ///< Unit for docs ("ms", "bytes", "events", ...).
  std::string_view description;   ///< One or more sentences for docs and the example file.
  Field field;
  double real_min = 0;  ///< Reals: inclusive lower bound.
  double real_max = 0;  ///< Reals: inclusive upper bound.
};

/// The key table, in documentation order.
std::span<const KeySpec> key_table();

/// Returns the configuration built from every key's default.
Config defaults();

/// Loads and validates a YAML file. Keys not present take their defaults; unknown keys,
/// wrong types and out-of-range values throw ConfigError naming file:line:column and key.
Config load_file(const std::string& path);

/// Same as load_file() for YAML text; `origin` names the text in error messages.
Config load_string(std::string_view yaml, std::string_view origin = "<string>");

/// Renders the documented example configuration (the content of config/reflectd.yaml).
std::string render_example();

/// Keys whose values differ between `a` and `b`, in table order.
std::vector<std::string_view> changed_keys(const Config& a, const Config& b);

/// Resolves store.path: absolute paths are kept; relative ones are joined to
/// `state_directory` when it is set (systemd's $STATE_DIRECTORY), else kept relative to the
/// working directory.
std::string resolve_store_path(const std::string& path, const char* state_directory);

}  // namespace reflectd::config
