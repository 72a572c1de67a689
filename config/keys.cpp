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
  KeySpec{"bus.receive_hwm", KT::kInteger, "10000", 1, 10000000, "", false, "messages",
          "ZMQ_RCVHWM: messages queued per connection before libzmq pushes back on the peer.",
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

  KeySpec{"store.path", KT::kString, "reflectd.db", 0, 0, "", false, "",
          "SQLite database file. A relative path resolves against $STATE_DIRECTORY when "
          "systemd sets it, else against the working directory.",
          +[](Config& c) -> std::string& { return c.store.path; }},
  KeySpec{"store.synchronous", KT::kEnum, "full", 0, 0, "off|normal|full|extra", false, "",
          "PRAGMA synchronous for the WAL database. full makes every acknowledged event "
          "survive power loss; with group commit it costs little.",
          +[](Config& c) -> std::string& { return c.store.synchronous; }},
  KeySpec{"store.commit_max_events", KT::kInteger, "2000", 1, 100000, "", true, "events",
          "Most events committed in one write transaction (group commit).",
          +[](Config& c) -> std::int64_t& { return c.store.commit_max_events; }},
  KeySpec{"store.commit_max_delay_ms", KT::kInteger, "2", 0, 1000, "", true, "ms",
          "Longest an open write transaction keeps collecting events that are still arriving "
          "before it commits. The writer never waits when its queue is empty.",
          +[](Config& c) -> std::int64_t& { return c.store.commit_max_delay_ms; }},
  KeySpec{"store.writer_queue_events", KT::kInteger, "100000", 1000, 10000000, "", false,
          "events",
          "Capacity of the queue between the bus and the writer. When it is full the bus stops "
          "reading and libzmq's high-water marks push back on publishers.",
          +[](Config& c) -> std::int64_t& { return c.store.writer_queue_events; }},
  KeySpec{"store.busy_timeout_ms", KT::kInteger, "5000", 0, 600000, "", false, "ms",
          "How long a connection waits for another process's lock before failing.",
          +[](Config& c) -> std::int64_t& { return c.store.busy_timeout_ms; }},

  KeySpec{"daemon.stats_interval_ms", KT::kInteger, "1000", 100, 3600000, "", true, "ms",
          "Period of the events.stored announcement on notify and of systemd STATUS= lines.",
          +[](Config& c) -> std::int64_t& { return c.daemon.stats_interval_ms; }},
};
// clang-format on

}  // namespace

std::span<const KeySpec> key_table() { return kKeys; }

}  // namespace reflectd::config
