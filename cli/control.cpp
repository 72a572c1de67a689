#include "cli/control.hpp"

#include <zmq_addon.hpp>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "bus/nats_client.hpp"
#include "cli/exit_codes.hpp"
#include "cli/socket.hpp"

namespace reflectd::cli {

using json = nlohmann::json;

std::optional<json> control_request(const std::string& endpoint, const json& request,
                                    std::chrono::milliseconds timeout,
                                    const std::optional<CurveClientKeys>& curve) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto remaining = [&deadline] {
    return std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(
                                                      deadline - std::chrono::steady_clock::now()));
  };
  zmq::context_t context(1);
  zmq::socket_t socket =
      connect_socket(context, zmq::socket_type::dealer, endpoint,
                     SocketOptions{1000, std::chrono::milliseconds(1000), curve});
  if (!wait_writable(socket, remaining())) return std::nullopt;
  const std::string body = request.dump();
  socket.send(zmq::str_buffer("1"), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(body), zmq::send_flags::none);
  while (wait_readable(socket, remaining())) {
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(socket, std::back_inserter(frames), zmq::recv_flags::dontwait))
      continue;
    if (frames.size() != 2 || frames[0].to_string_view() != "1") continue;
    json reply = json::parse(frames[1].to_string_view(), nullptr, false);
    if (reply.is_discarded()) return json(frames[1].to_string());
    return reply;
  }
  return std::nullopt;
}

std::optional<json> nats_control_request(const std::vector<std::string>& servers,
                                         const json& request, std::chrono::milliseconds timeout,
                                         const std::string& agent) {
  const auto ns = request.find("namespace");
  if (ns == request.end() || !ns->is_string() || ns->get_ref<const std::string&>().empty()) {
    throw std::runtime_error(
        "with --nats a request goes to the shard of its namespace: give --namespace NS");
  }
  config::JetStreamConfig config;
  config.servers = servers;
  const bus::NatsConnectionPtr connection =
      bus::nats_connect(config, "reflectctl", timeout.count());
  const std::string subject = agent.empty()
                                  ? std::string(bus::kControlSubjectPrefix) + ns->get<std::string>()
                                  : bus::agent_control_subject(agent, ns->get<std::string>());
  const std::string body = request.dump();
  natsMsg* reply = nullptr;
  const natsStatus status =
      natsConnection_Request(&reply, connection.get(), subject.c_str(), body.data(),
                             static_cast<int>(body.size()), timeout.count());
  if (status == NATS_TIMEOUT || status == NATS_NO_RESPONDERS) return std::nullopt;
  if (status != NATS_OK) throw std::runtime_error(bus::nats_error_text(subject, status));
  const bus::NatsMsgPtr owned(reply);
  const char* data = natsMsg_GetData(reply);
  json parsed = json::parse(data, data + natsMsg_GetDataLength(reply), nullptr, false);
  if (parsed.is_discarded()) return json(std::string(data, natsMsg_GetDataLength(reply)));
  return parsed;
}

GatheredReplies nats_gather(const std::vector<std::string>& servers, const json& request,
                            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  config::JetStreamConfig config;
  config.servers = servers;
  const bus::NatsConnectionPtr connection =
      bus::nats_connect(config, "reflectctl", timeout.count());
  GatheredReplies out;
  {
    const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), timeout.count());
    jsStreamInfoList* streams = nullptr;
    const natsStatus status = js_Streams(&streams, js.get(), nullptr, nullptr);
    if (status != NATS_OK && status != NATS_NOT_FOUND) {
      throw std::runtime_error(bus::nats_error_text("listing the JetStream streams", status));
    }
    for (int i = 0; streams != nullptr && i < streams->Count; ++i) {
      const jsStreamConfig* stream = streams->List[i]->Config;
      for (int j = 0; j < stream->SubjectsLen; ++j) {
        if (std::string_view(stream->Subjects[j]).starts_with(bus::kEventSubjectPrefix)) {
          out.shards.emplace_back(stream->Name);
          break;
        }
      }
    }
    jsStreamInfoList_Destroy(streams);
  }
  std::sort(out.shards.begin(), out.shards.end());
  natsInbox* inbox = nullptr;
  natsInbox_Create(&inbox);
  const std::unique_ptr<natsInbox, void (*)(natsInbox*)> owned_inbox(inbox, natsInbox_Destroy);
  natsSubscription* raw = nullptr;
  if (const natsStatus s = natsConnection_SubscribeSync(&raw, connection.get(), inbox);
      s != NATS_OK) {
    throw std::runtime_error(bus::nats_error_text("subscribing to the reply inbox", s));
  }
  const bus::NatsSubscriptionPtr sub(raw);
  const std::string body = request.dump();
  const std::string subject(bus::kClusterControlSubject);
  if (const natsStatus s = natsConnection_PublishRequest(
          connection.get(), subject.c_str(), inbox, body.data(), static_cast<int>(body.size()));
      s != NATS_OK) {
    throw std::runtime_error(bus::nats_error_text(subject, s));
  }
  const auto answered_all = [&out] {
    return std::all_of(out.shards.begin(), out.shards.end(),
                       [&out](const std::string& shard) { return out.replies.count(shard) > 0; });
  };
  while (out.shards.empty() || !answered_all()) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    natsMsg* msg = nullptr;
    if (natsSubscription_NextMsg(&msg, sub.get(), left.count()) != NATS_OK) break;
    const bus::NatsMsgPtr owned(msg);
    const char* data = natsMsg_GetData(msg);
    json reply = json::parse(data, data + natsMsg_GetDataLength(msg), nullptr, false);
    if (!reply.is_object() || !reply.contains("shard") || !reply["shard"].is_string()) continue;
    const std::string shard = reply["shard"].get<std::string>();
    reply.erase("shard");
    // A node of a stream created after the listing still counts.
    if (std::find(out.shards.begin(), out.shards.end(), shard) == out.shards.end()) {
      out.shards.insert(std::upper_bound(out.shards.begin(), out.shards.end(), shard), shard);
    }
    out.replies.emplace(shard, std::move(reply));
  }
  for (const auto& shard : out.shards) {
    if (out.replies.count(shard) == 0) out.missing.push_back(shard);
  }
  return out;
}

namespace {

int run_gathered(const ControlCommand& command, const ControlOptions& options,
                 const json& request) {
  const std::string prefix = "reflectctl " + std::string(command.name) + ": ";
  GatheredReplies gathered;
  try {
    gathered = nats_gather(options.nats, request, options.timeout);
  } catch (const std::runtime_error& error) {
    std::cerr << prefix << error.what() << '\n';
    return kExitUnreachable;
  }
  bool all_ok = true;
  json shards = json::object();
  for (const auto& [shard, reply] : gathered.replies) {
    all_ok = all_ok && reply.value("ok", false);
    shards[shard] = reply;
  }
  if (options.json) {
    std::cout << json({{"ok", all_ok && gathered.missing.empty()},
                       {"shards", shards},
                       {"missing", gathered.missing}})
                     .dump(2)
              << '\n';
  }
  for (const auto& [shard, reply] : gathered.replies) {
    const bool ok = reply.value("ok", false);
    if (!options.json) {
      std::cout << "shard " << shard << ":\n";
      if (ok) std::cout << command.format(reply);
      if (!ok && command.format_failure) std::cout << command.format_failure(reply);
    }
    if (!ok) {
      std::cerr << prefix << "shard " << shard
                << " answered with an error: " << reply.value("error", reply.dump()) << '\n';
    }
  }
  if (gathered.shards.empty()) {
    std::cerr << prefix << "no JetStream stream has reflectd.events. subjects and no node "
              << "answered within " << options.timeout.count() << " ms\n";
    return kExitUnreachable;
  }
  if (!gathered.missing.empty()) {
    std::string names;
    for (const auto& shard : gathered.missing) names += (names.empty() ? "" : ", ") + shard;
    std::cerr << prefix << "no answer within " << options.timeout.count()
              << " ms from shard(s): " << names << '\n';
    return kExitUnreachable;
  }
  return all_ok ? kExitOk : kExitFailed;
}

}  // namespace

int run_control_command(const ControlCommand& command, const ControlOptions& options,
                        const json& request) {
  const std::string prefix = "reflectctl " + std::string(command.name) + ": ";
  const auto ns = request.find("namespace");
  if (!options.nats.empty() && (ns == request.end() || ns->is_null())) {
    return run_gathered(command, options, request);
  }
  std::optional<json> reply;
  try {
    reply = options.nats.empty()
                ? control_request(options.endpoint, request, options.timeout, options.curve)
                : nats_control_request(options.nats, request, options.timeout, options.nats_agent);
  } catch (const std::runtime_error& error) {
    std::cerr << prefix << error.what() << '\n';
    return kExitUsage;
  }
  if (!reply) {
    std::cerr << prefix << "no reply from "
              << (options.nats.empty() ? options.endpoint : "any node over NATS") << " within "
              << options.timeout.count() << " ms; is reflectd running there?\n";
    return kExitUnreachable;
  }
  const bool ok = reply->is_object() && reply->value("ok", false);
  if (options.json) {
    std::cout << (reply->is_string() ? reply->get<std::string>() : reply->dump(2)) << '\n';
  } else if (ok) {
    std::cout << command.format(*reply);
  } else if (reply->is_object() && command.format_failure) {
    std::cout << command.format_failure(*reply);
  }
  if (!ok) {
    const json* error = nullptr;
    if (reply->is_object()) {
      const auto it = reply->find("error");
      if (it != reply->end()) error = &*it;
    }
    std::cerr << prefix << "the daemon answered with an error: "
              << (error == nullptr
                      ? (reply->is_string() ? reply->get<std::string>() : reply->dump())
                  : error->is_string() ? error->get<std::string>()
                                       : error->dump())
              << '\n';
  }
  return ok ? kExitOk : kExitFailed;
}

}  // namespace reflectd::cli
