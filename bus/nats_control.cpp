#include "bus/nats_control.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace reflectd::bus {

struct NatsControl::Context {
  natsConnection* connection = nullptr;
  std::weak_ptr<void> owner;
  NatsControlHandler handler;
  std::string shard;       // the queue group: the stream's name
  Principal shard_caller;  // the caller of a cluster-wide request
  NatsControlKeys keys;    // the authorized keys of agents reading as themselves
};

namespace {

void send_reply(const std::shared_ptr<NatsControl::Context>& context, const std::string& subject,
                const nlohmann::json& body) {
  // Invalid UTF-8 quoted from a request is replaced rather than thrown on.
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::shared_ptr<void> alive = context->owner.lock();
  if (!alive) return;  // the connection is gone: the requester times out
  natsConnection_Publish(context->connection, subject.c_str(), text.data(),
                         static_cast<int>(text.size()));
}

void on_request(natsConnection* /*connection*/, natsSubscription* /*sub*/, natsMsg* msg,
                void* closure) {
  const NatsMsgPtr owned(msg);
  // The context lives as long as a subscription can call this.
  const auto& context = *static_cast<std::shared_ptr<NatsControl::Context>*>(closure);
  const char* reply_to = natsMsg_GetReply(msg);
  if (reply_to == nullptr) return;  // a publish, not a request: nobody to answer
  const std::string subject = natsMsg_GetSubject(msg);
  const std::string reply_subject = reply_to;
  const bool cluster = subject == kClusterControlSubject;
  nlohmann::json request = nlohmann::json::parse(
      natsMsg_GetData(msg), natsMsg_GetData(msg) + natsMsg_GetDataLength(msg), nullptr, false);
  if (!request.is_object()) {
    nlohmann::json error = {{"ok", false}, {"error", "request: must be a JSON object"}};
    if (cluster) error["shard"] = context->shard;
    send_reply(context, reply_subject, error);
    return;
  }
  Principal caller;
  if (cluster) {
    caller = context->shard_caller;
  } else if (const auto agent = parse_agent_control_subject(subject)) {
    const std::shared_ptr<const AuthorizedKeys> keys = context->keys ? context->keys() : nullptr;
    std::string refused;
    const std::optional<Principal> found =
        NatsControl::agent_caller(keys.get(), agent->agent_id, agent->ns, refused);
    if (!found) {
      send_reply(context, reply_subject, {{"ok", false}, {"error", refused}});
      return;
    }
    caller = *found;
  } else {
    caller =
        NatsControl::caller_for(std::string_view(subject).substr(kControlSubjectPrefix.size()));
  }
  context->handler(std::move(request), caller,
                   [context, reply_subject, cluster](nlohmann::json body) {
                     if (cluster && body.is_object()) body["shard"] = context->shard;
                     send_reply(context, reply_subject, body);
                   });
}

}  // namespace

std::vector<std::string> control_subjects(const std::vector<std::string>& event_subjects) {
  std::vector<std::string> out;
  for (const auto& subject : event_subjects) {
    if (subject.starts_with(kEventSubjectPrefix)) {
      out.push_back(std::string(kControlSubjectPrefix) +
                    subject.substr(kEventSubjectPrefix.size()));
    } else if (subject.starts_with(kAgentSubjectPrefix)) {
      out.push_back(std::string(kAgentControlSubjectPrefix) +
                    subject.substr(kAgentSubjectPrefix.size()));
    }
  }
  return out;
}

Principal NatsControl::caller_for(std::string_view ns) {
  Principal caller;
  caller.public_key = "nats";  // not the local operator
  caller.agent_id = "nats";
  caller.all_namespaces = false;
  caller.namespaces = {std::string(ns)};
  caller.clearance = 0;  // nobody vouched for the caller: the public level only
  caller.admin = false;
  return caller;
}

std::optional<Principal> NatsControl::agent_caller(const AuthorizedKeys* keys,
                                                   std::string_view agent_id, std::string_view ns,
                                                   std::string& refused) {
  const Principal* entry = keys ? keys->find_agent(agent_id) : nullptr;
  if (entry == nullptr) {
    refused = fmt::format(
        "authorization: agent \"{}\" of subject {}{}.{} is not listed once in the authorized "
        "keys (security.authorized_keys_file)",
        agent_id, kAgentControlSubjectPrefix, agent_id, ns);
    return std::nullopt;
  }
  if (!entry->may_use(ns)) {
    refused = fmt::format(
        "authorization: agent \"{}\" may not read namespace \"{}\" (its "
        "namespaces: {})",
        agent_id, ns, entry->namespace_list());
    return std::nullopt;
  }
  Principal caller = *entry;
  caller.all_namespaces = false;
  caller.namespaces = {std::string(ns)};
  caller.admin = false;
  return caller;
}

Principal NatsControl::shard_caller(const std::vector<std::string>& subjects) {
  Principal caller = caller_for("");
  caller.namespaces.clear();
  for (const auto& subject : subjects) {
    if (!subject.starts_with(kControlSubjectPrefix)) continue;  // an agent's subject
    const std::string ns = subject.substr(kControlSubjectPrefix.size());
    if (ns.find_first_of("*>") != std::string::npos) {
      caller.all_namespaces = true;
      caller.namespaces.clear();
      break;
    }
    caller.namespaces.push_back(ns);
  }
  return caller;
}

NatsControl::NatsControl(natsConnection* connection, std::weak_ptr<void> owner,
                         const std::vector<std::string>& subjects, const std::string& queue,
                         NatsControlHandler handler, NatsControlKeys keys)
    : context_(std::make_shared<Context>(Context{connection, std::move(owner), std::move(handler),
                                                 queue, shard_caller(subjects), std::move(keys)})) {
  std::vector<std::string> all = subjects;
  all.emplace_back(kClusterControlSubject);
  for (const auto& subject : all) {
    natsSubscription* sub = nullptr;
    const natsStatus status = natsConnection_QueueSubscribe(&sub, connection, subject.c_str(),
                                                            queue.c_str(), on_request, &context_);
    if (status != NATS_OK) {
      natsSubscription_Destroy(sub);
      throw NatsError(nats_error_text("cannot subscribe to " + subject, status));
    }
    subscriptions_.emplace_back(sub);
  }
}

NatsControl::~NatsControl() {
  for (auto& sub : subscriptions_) natsSubscription_Unsubscribe(sub.get());
  subscriptions_.clear();
}

}  // namespace reflectd::bus
