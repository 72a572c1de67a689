#include "cli/jetstream.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli/event_line.hpp"
#include "cli/exit_codes.hpp"
#include "cli/line_reader.hpp"

namespace reflectd::cli {
namespace {

// How long publishes that got no PubAck are resent: a stream leader's election after a server
// is lost takes a few seconds, longer on a loaded machine (12 s seen on 2 cores).
constexpr auto kResendFor = std::chrono::seconds(30);
constexpr auto kResendMaxWait = std::chrono::milliseconds(4000);
constexpr std::size_t kShownProblems = 10;

struct Outgoing {
  std::string subject;
  std::string payload;
  std::string where;  // FILE:LINE
};

// What the PubAck handler (nats.c's thread) and the main thread share.
struct Tally {
  std::mutex mutex;
  std::uint64_t stored = 0;
  std::uint64_t duplicate = 0;
  std::vector<std::string> failed_ids;            // to resend
  std::map<std::string, std::string> last_error;  // id -> error
};

void on_pub_ack(jsCtx* /*js*/, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error, void* closure) {
  auto* tally = static_cast<Tally*>(closure);
  const char* id = nullptr;
  natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
  {
    const std::lock_guard lock(tally->mutex);
    if (ack != nullptr) {
      ++(ack->Duplicate ? tally->duplicate : tally->stored);
    } else if (id != nullptr) {
      tally->failed_ids.emplace_back(id);
      tally->last_error[id] =
          error != nullptr && error->ErrText != nullptr ? error->ErrText : "publish failed";
    }
  }
  natsMsg_Destroy(msg);
}

// The namespace and id of an event line, or an error.
struct LineEvent {
  std::string ns;
  std::string id;
  std::string payload;
  std::string error;
};

// One parse of the line: its shape, namespace and id (the payload gets an id if it has none).
LineEvent read_line(std::string_view text) {
  LineEvent out;
  const std::string_view line = strip_cr(text);
  const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
  if (!event.is_object()) {
    out.error = "not a JSON object";
    return out;
  }
  const auto ns = event.find("namespace");
  if (ns == event.end() || !ns->is_string() || ns->get_ref<const std::string&>().empty()) {
    out.error = "namespace: required to choose the subject reflectd.events.<namespace>";
    return out;
  }
  out.ns = ns->get<std::string>();
  if (out.ns.find_first_of("*> \t") != std::string::npos) {
    out.error = "namespace: must be 1-64 characters of [A-Za-z0-9._:-]";
    return out;
  }
  const auto id = event.find("id");
  out.payload = id != event.end() ? std::string(line) : with_line_id(line);
  out.id = id != event.end() && id->is_string() ? id->get<std::string>() : line_id(line);
  return out;
}

bus::NatsConnectionPtr connect_or_report(const JetStreamOptions& options, int& status) {
  try {
    return bus::nats_connect(options.connection, "reflectctl", options.timeout_ms);
  } catch (const bus::NatsError& error) {
    std::cerr << "reflectctl jetstream: " << error.what() << '\n';
    status = kExitUnreachable;
    return nullptr;
  }
}

// What the first pass sent, by event id (what a resend needs), and the lines it skipped.
struct Sent {
  std::map<std::string, Outgoing> by_id;
  std::vector<std::string> skipped;  // FILE:LINE: error, the first kShownProblems
  std::uint64_t skipped_count = 0;
};

// Every line of `reader` published asynchronously, with its id as Nats-Msg-Id (JetStream's
// duplicate window drops a resend of a stored one); lines that are no event are skipped.
Sent send_all(LineReader& reader, jsCtx* js, const JetStreamOptions& options, Tally& tally) {
  Sent result;
  auto& [sent, skipped, skipped_count] = result;
  while (auto line = reader.next()) {
    if (line->text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", reader.names()[line->file], line->number);
    LineEvent event = read_line(line->text);
    if (!event.error.empty()) {
      ++skipped_count;
      if (skipped.size() < kShownProblems) skipped.push_back(where + ": " + event.error);
      continue;
    }
    Outgoing out{options.agent.empty() ? bus::event_subject(event.ns)
                                       : bus::agent_subject(options.agent, event.ns),
                 std::move(event.payload), where};
    natsMsg* msg = nullptr;
    natsMsg_Create(&msg, out.subject.c_str(), nullptr, out.payload.data(),
                   static_cast<int>(out.payload.size()));
    natsMsgHeader_Set(msg, "Nats-Msg-Id", event.id.c_str());
    // A PubAck lost with a server that died must free its place in the window (and be
    // resent): without MaxWait it would be awaited forever and every later publish would
    // stall on the full window.
    jsPubOptions each;
    jsPubOptions_Init(&each);
    each.MaxWait = options.timeout_ms;
    if (js_PublishMsgAsync(js, &msg, &each) != NATS_OK) {
      natsMsg_Destroy(msg);
      const std::lock_guard lock(tally.mutex);
      tally.failed_ids.push_back(event.id);
    }
    sent.emplace(event.id, std::move(out));
  }
  return result;
}

// Waits for the outstanding PubAcks; the ids of those that never came (a server died with
// them) join the failed ones. Returns the ids to resend.
std::vector<std::string> unacknowledged(jsCtx* js, const JetStreamOptions& options, Tally& tally) {
  jsPubOptions complete;
  jsPubOptions_Init(&complete);
  complete.MaxWait = options.timeout_ms;
  if (js_PublishAsyncComplete(js, &complete) != NATS_OK) {
    // PubAcks that never came (a server died with them): resend those too.
    natsMsgList pending{nullptr, 0};
    if (js_PublishAsyncGetPendingList(&pending, js) == NATS_OK) {
      const std::lock_guard lock(tally.mutex);
      for (int i = 0; i < pending.Count; ++i) {
        const char* id = nullptr;
        if (natsMsgHeader_Get(pending.Msgs[i], "Nats-Msg-Id", &id) == NATS_OK) {
          tally.failed_ids.emplace_back(id);
        }
      }
      natsMsgList_Destroy(&pending);
    }
  }
  std::vector<std::string> failed;
  const std::lock_guard lock(tally.mutex);
  failed.swap(tally.failed_ids);
  return failed;
}

// Resends `failed` one at a time, each awaiting its PubAck (a quorum is being re-elected, or a
// server is back), in rounds with a growing pause, for at most kResendFor. Leaves in `failed`
// the ids never stored; returns how many resends were made.
std::uint64_t resend(jsCtx* js, const JetStreamOptions& options,
                     const std::map<std::string, Outgoing>& sent, Tally& tally,
                     std::vector<std::string>& failed) {
  std::uint64_t resent = 0;
  const auto resend_until = std::chrono::steady_clock::now() + kResendFor;
  auto wait = std::chrono::milliseconds(250);
  for (bool first = true; !failed.empty(); first = false) {
    if (!first) {
      if (std::chrono::steady_clock::now() + wait > resend_until) break;
      std::this_thread::sleep_for(wait);
      wait = std::min(wait * 2, kResendMaxWait);
    }
    std::vector<std::string> still;
    // A resend that fails leaves the rest of the round for the next one: the stream has no
    // leader yet, and every other resend now would fail the same way.
    bool stream_down = false;
    std::string refused;
    for (const std::string& id : failed) {
      if (stream_down) {
        still.push_back(id);
        continue;
      }
      const Outgoing& out = sent.at(id);
      jsPubOptions publish;
      jsPubOptions_Init(&publish);
      publish.MsgId = id.c_str();
      publish.MaxWait = options.timeout_ms;
      jsPubAck* ack = nullptr;
      auto code = static_cast<jsErrCode>(0);
      ++resent;
      const natsStatus s = js_Publish(&ack, js, out.subject.c_str(), out.payload.data(),
                                      static_cast<int>(out.payload.size()), &publish, &code);
      const std::lock_guard lock(tally.mutex);
      if (s == NATS_OK) {
        ++(ack->Duplicate ? tally.duplicate : tally.stored);
        tally.last_error.erase(id);
      } else {
        tally.last_error[id] = bus::nats_error_text("publish", s);
        stream_down = true;
        refused = id;  // last in the next round, so that one it refuses blocks no other
      }
      jsPubAck_Destroy(ack);
    }
    if (!refused.empty()) still.push_back(refused);
    failed.swap(still);
  }
  return resent;
}

}  // namespace

int run_jetstream_init(const JetStreamOptions& options, const bus::StreamLayout& layout) {
  int status = kExitOk;
  const bus::NatsConnectionPtr connection = connect_or_report(options, status);
  if (!connection) return status;
  const bus::JsCtxPtr js = bus::jetstream_context(connection.get(), options.timeout_ms);
  try {
    const bool created = bus::ensure_stream(js.get(), layout);
    std::string subjects;
    for (const auto& subject : bus::stream_subjects(layout)) {
      subjects += (subjects.empty() ? "" : ", ") + subject;
    }
    if (options.json) {
      std::cout << nlohmann::json{{"stream", layout.name},
                                  {"created", created},
                                  {"subjects", bus::stream_subjects(layout)},
                                  {"replicas", layout.replicas}}
                       .dump()
                << '\n';
    } else {
      std::cout << fmt::format("stream {} {}: subjects {}, {} replicas, file storage\n",
                               layout.name, created ? "created" : "already exists", subjects,
                               layout.replicas);
    }
    return kExitOk;
  } catch (const bus::NatsError& error) {
    std::cerr << "reflectctl jetstream init: " << error.what() << '\n';
    return kExitFailed;
  }
}

int run_jetstream_publish(const JetStreamOptions& options, const std::vector<std::string>& files,
                          std::int64_t window) {
  LineReader reader(files);
  int status = kExitOk;
  const bus::NatsConnectionPtr connection = connect_or_report(options, status);
  if (!connection) return status;
  Tally tally;
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = options.timeout_ms;
  js_options.PublishAsync.MaxPending = window;
  js_options.PublishAsync.AckHandler = on_pub_ack;
  js_options.PublishAsync.AckHandlerClosure = &tally;
  jsCtx* raw_js = nullptr;
  if (const natsStatus s = natsConnection_JetStream(&raw_js, connection.get(), &js_options);
      s != NATS_OK) {
    std::cerr << "reflectctl jetstream publish: " << bus::nats_error_text("JetStream", s) << '\n';
    return kExitFailed;
  }
  const bus::JsCtxPtr js(raw_js);

  const auto started = std::chrono::steady_clock::now();
  Sent result = send_all(reader, js.get(), options, tally);
  auto& [sent, skipped, skipped_count] = result;
  std::vector<std::string> failed = unacknowledged(js.get(), options, tally);
  const std::uint64_t resent = resend(js.get(), options, sent, tally, failed);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<std::string> failures;
  for (const std::string& id : failed) {
    if (failures.size() >= kShownProblems) break;
    failures.push_back(fmt::format("{}: {}", sent.at(id).where, tally.last_error[id]));
  }
  const std::lock_guard lock(tally.mutex);
  if (options.json) {
    std::cout << nlohmann::json{{"sent", sent.size()},          {"stored", tally.stored},
                                {"duplicate", tally.duplicate}, {"failed", failed.size()},
                                {"skipped", skipped_count},     {"resent", resent},
                                {"seconds", seconds},           {"failures", failures},
                                {"skipped_lines", skipped}}
                     .dump()
              << '\n';
  } else {
    std::cout << fmt::format(
        "sent {} events: {} stored, {} duplicate, {} failed ({} resends); {} lines skipped; "
        "{:.2f} s\n",
        sent.size(), tally.stored, tally.duplicate, failed.size(), resent, skipped_count, seconds);
    for (const auto& text : skipped) std::cout << "  skipped " << text << '\n';
    for (const auto& text : failures) std::cout << "  failed " << text << '\n';
  }
  return failed.empty() && skipped_count == 0 ? kExitOk : kExitFailed;
}

}  // namespace reflectd::cli
