#include "bus/nats_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace reflectd::bus {
namespace {

constexpr std::int64_t kReconnectWaitMs = 250;

struct OptionsDeleter {
  void operator()(natsOptions* options) const { natsOptions_Destroy(options); }
};
struct StreamInfoDeleter {
  void operator()(jsStreamInfo* info) const { jsStreamInfo_Destroy(info); }
};

void check(natsStatus status, std::string_view what) {
  if (status != NATS_OK) throw NatsError(nats_error_text(what, status));
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

std::string event_subject(std::string_view ns) {
  return std::string(kEventSubjectPrefix) + std::string(ns);
}

std::string agent_subject(std::string_view agent_id, std::string_view ns) {
  return fmt::format("{}{}.{}", kAgentSubjectPrefix, agent_id, ns);
}

std::string agent_control_subject(std::string_view agent_id, std::string_view ns) {
  return fmt::format("{}{}.{}", kAgentControlSubjectPrefix, agent_id, ns);
}

namespace {

// "<agent_id>.<ns>" after `prefix`: one token, then the rest.
std::optional<EventSubject> split_agent_subject(std::string_view subject, std::string_view prefix) {
  if (!subject.starts_with(prefix)) return std::nullopt;
  const std::string_view rest = subject.substr(prefix.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return std::nullopt;
  return EventSubject{rest.substr(0, dot), rest.substr(dot + 1)};
}

}  // namespace

std::optional<EventSubject> parse_event_subject(std::string_view subject) {
  if (subject.starts_with(kEventSubjectPrefix)) {
    const std::string_view ns = subject.substr(kEventSubjectPrefix.size());
    if (ns.empty()) return std::nullopt;
    return EventSubject{{}, ns};
  }
  return split_agent_subject(subject, kAgentSubjectPrefix);
}

std::optional<EventSubject> parse_agent_control_subject(std::string_view subject) {
  return split_agent_subject(subject, kAgentControlSubjectPrefix);
}

std::string nats_error_text(std::string_view what, natsStatus status) {
  std::string text = fmt::format("{}: {}", what, natsStatus_GetText(status));
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  if (detail != nullptr && *detail != '\0' && text.find(detail) == std::string::npos) {
    text += fmt::format(" ({})", detail);
  }
  return text;
}

NatsConnectionPtr nats_connect(const config::JetStreamConfig& config, const std::string& name,
                               std::int64_t timeout_ms, const NatsConnectionEvents& events) {
  if (config.servers.empty()) throw NatsError("bus.jetstream.servers: no server given");
  natsOptions* raw = nullptr;
  check(natsOptions_Create(&raw), "NATS options");
  const std::unique_ptr<natsOptions, OptionsDeleter> options(raw);
  std::vector<const char*> urls;
  urls.reserve(config.servers.size());
  for (const auto& url : config.servers) urls.push_back(url.c_str());
  check(natsOptions_SetServers(options.get(), urls.data(), static_cast<int>(urls.size())),
        "bus.jetstream.servers");
  check(natsOptions_SetNoRandomize(options.get(), true), "NATS options");
  check(natsOptions_SetName(options.get(), name.c_str()), "NATS options");
  check(natsOptions_SetTimeout(options.get(), timeout_ms), "NATS options");
  check(natsOptions_SetMaxReconnect(options.get(), -1), "NATS options");
  check(natsOptions_SetReconnectWait(options.get(), kReconnectWaitMs), "NATS options");
  if (!config.credentials_file.empty()) {
    check(natsOptions_SetUserCredentialsFromFiles(options.get(), config.credentials_file.c_str(),
                                                  nullptr),
          "bus.jetstream.credentials_file " + config.credentials_file);
  }
  const bool tls = !config.tls_ca_file.empty() || !config.tls_cert_file.empty() ||
                   std::any_of(config.servers.begin(), config.servers.end(),
                               [](const std::string& url) { return url.rfind("tls://", 0) == 0; });
  if (tls) check(natsOptions_SetSecure(options.get(), true), "NATS TLS");
  if (!config.tls_ca_file.empty()) {
    check(natsOptions_LoadCATrustedCertificates(options.get(), config.tls_ca_file.c_str()),
          "bus.jetstream.tls_ca_file " + config.tls_ca_file);
  }
  if (!config.tls_cert_file.empty() || !config.tls_key_file.empty()) {
    check(natsOptions_LoadCertificatesChain(options.get(), config.tls_cert_file.c_str(),
                                            config.tls_key_file.c_str()),
          "bus.jetstream.tls_cert_file/tls_key_file");
  }
  if (events.disconnected != nullptr) {
    check(natsOptions_SetDisconnectedCB(options.get(), events.disconnected, events.closure),
          "NATS options");
  }
  if (events.reconnected != nullptr) {
    check(natsOptions_SetReconnectedCB(options.get(), events.reconnected, events.closure),
          "NATS options");
  }
  if (events.closed != nullptr) {
    check(natsOptions_SetClosedCB(options.get(), events.closed, events.closure), "NATS options");
  }
  if (events.connect_in_background) {
    check(natsOptions_SetRetryOnFailedConnect(options.get(), true, events.reconnected,
                                              events.closure),
          "NATS options");
  }
  natsConnection* connection = nullptr;
  const natsStatus status = natsConnection_Connect(&connection, options.get());
  if (status == NATS_NOT_YET_CONNECTED && events.connect_in_background) {
    return NatsConnectionPtr(connection);
  }
  if (status != NATS_OK) {
    natsConnection_Destroy(connection);
    throw NatsError(nats_error_text("cannot connect to NATS " + joined(config.servers), status));
  }
  return NatsConnectionPtr(connection);
}

JsCtxPtr jetstream_context(natsConnection* connection, std::int64_t timeout_ms) {
  jsOptions options;
  check(jsOptions_Init(&options), "JetStream options");
  options.Wait = timeout_ms;
  jsCtx* js = nullptr;
  check(natsConnection_JetStream(&js, connection, &options), "JetStream context");
  return JsCtxPtr(js);
}

std::vector<std::string> stream_subjects(const StreamLayout& layout) {
  if (layout.namespaces.empty()) {
    return {std::string(kEventSubjectPrefix) + ">", std::string(kAgentSubjectPrefix) + ">"};
  }
  std::vector<std::string> subjects;
  subjects.reserve(layout.namespaces.size() * 2);
  for (const auto& ns : layout.namespaces) {
    subjects.push_back(event_subject(ns));
    subjects.push_back(agent_subject("*", ns));
  }
  return subjects;
}

bool ensure_stream(jsCtx* js, const StreamLayout& layout) {
  const std::vector<std::string> subjects = stream_subjects(layout);
  jsStreamInfo* raw = nullptr;
  auto code = static_cast<jsErrCode>(0);
  natsStatus status = js_GetStreamInfo(&raw, js, layout.name.c_str(), nullptr, &code);
  if (status == NATS_OK) {
    const std::unique_ptr<jsStreamInfo, StreamInfoDeleter> info(raw);
    std::vector<std::string> existing;
    existing.reserve(static_cast<std::size_t>(info->Config->SubjectsLen));
    for (int i = 0; i < info->Config->SubjectsLen; ++i)
      existing.emplace_back(info->Config->Subjects[i]);
    std::vector<std::string> wanted = subjects;
    std::sort(existing.begin(), existing.end());
    std::sort(wanted.begin(), wanted.end());
    if (existing != wanted || info->Config->Replicas != layout.replicas) {
      throw NatsError(fmt::format(
          "stream {} exists with subjects [{}] and {} replicas, not [{}] and {}: reflectd does "
          "not change an existing stream (change it with the nats CLI, or delete it first)",
          layout.name, joined(existing), info->Config->Replicas, joined(wanted), layout.replicas));
    }
    return false;
  }
  if (status != NATS_NOT_FOUND && code != JSStreamNotFoundErr) {
    throw NatsError(nats_error_text("stream " + layout.name, status));
  }
  jsStreamConfig config;
  check(jsStreamConfig_Init(&config), "stream configuration");
  config.Name = layout.name.c_str();
  std::vector<const char*> subject_ptrs;
  subject_ptrs.reserve(subjects.size());
  for (const auto& subject : subjects) subject_ptrs.push_back(subject.c_str());
  config.Subjects = subject_ptrs.data();
  config.SubjectsLen = static_cast<int>(subject_ptrs.size());
  config.Storage = js_FileStorage;
  config.Retention = js_LimitsPolicy;
  config.Discard = js_DiscardOld;
  config.Replicas = layout.replicas;
  config.MaxBytes = layout.max_bytes;
  config.MaxAge = layout.max_age_s * 1'000'000'000;
  config.Duplicates = layout.duplicate_window_s * 1'000'000'000;
  // A cluster that has just started has a meta leader before it knows all its peers, and
  // refuses a replicated stream until then ("no suitable peers for placement"): asked again
  // for up to 10 s, so that an init right after the servers start succeeds.
  const auto placement_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    jsStreamInfo* created = nullptr;
    code = static_cast<jsErrCode>(0);
    status = js_AddStream(&created, js, &config, nullptr, &code);
    jsStreamInfo_Destroy(created);
    if (status == NATS_OK || code != JSClusterNoPeersErr ||
        std::chrono::steady_clock::now() >= placement_deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (status != NATS_OK) {
    throw NatsError(nats_error_text(fmt::format("cannot create stream {} (JetStream error {})",
                                                layout.name, static_cast<int>(code)),
                                    status));
  }
  return true;
}

}  // namespace reflectd::bus
