#include "cli/events.hpp"

#include <zmq.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <iostream>

#include "cli/exit_codes.hpp"
#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kPreviewWidth = 80;
constexpr std::chrono::milliseconds kPollInterval{500};

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) { g_stop = 1; }

// Without SA_RESTART, so a signal interrupts zmq_poll (EINTR) at once.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool is_eintr(const zmq::error_t& error) { return error.num() == EINTR; }

// Waits `interval` on zmq_poll (no items); returns early when a signal arrives.
void pause_interruptibly(std::chrono::milliseconds interval) {
  try {
    zmq::poll(static_cast<zmq::pollitem_t*>(nullptr), 0, interval);
  } catch (const zmq::error_t& error) {
    if (!is_eintr(error)) throw;
  }
}

long long last_seq(const json& reply, long long fallback) {
  const json events = reply.value("events", json::array());
  for (const json& row : events) {
    if (row.is_object() && row.contains("seq") && row["seq"].is_number_integer()) {
      fallback = std::max(fallback, row["seq"].get<long long>());
    }
  }
  return fallback;
}

}  // namespace

json events_request(const EventsOptions& options, long long after_seq) {
  json request = {{"cmd", "events"},
                  {"namespace", options.ns},
                  {"kind", options.kind},
                  {"agent_id", options.agent_id},
                  {"episode_id", options.episode_id},
                  {"limit", options.limit}};
  if (after_seq >= 0) request["after_seq"] = after_seq;
  return request;
}

std::string format_event_lines(const json& reply) {
  std::string out;
  for (const json& row : reply.value("events", json::array())) {
    const auto ts = row.find("ts_us");
    const std::string time = ts != row.end() && ts->is_number_integer()
                                 ? rfc3339_utc(ts->get<std::int64_t>())
                                 : std::string("-");
    out += cell(row, "seq") + "  " + time + "  " + cell(row, "namespace") + "  " +
           cell(row, "kind") + "  " + cell(row, "id") + "  " +
           clip(cell(row, "preview"), kPreviewWidth) + '\n';
  }
  return out;
}

int run_events_tail(const EventsOptions& options) {
  const ControlCommand command{"events", format_event_lines, {}};
  if (!options.follow)
    return run_control_command(command, options.control, events_request(options, -1));

  install_stop_handlers();
  long long after = -1;
  while (g_stop == 0) {
    std::optional<json> reply;
    try {
      reply = control_request(options.control.endpoint, events_request(options, after),
                              options.control.timeout, options.control.curve);
    } catch (const zmq::error_t& error) {
      if (is_eintr(error)) break;
      throw;
    } catch (const std::runtime_error& error) {
      std::cerr << "reflectctl events: " << error.what() << '\n';
      return kExitUsage;
    }
    if (g_stop != 0) break;
    if (!reply) {
      std::cerr << "reflectctl events: no reply from " << options.control.endpoint << " within "
                << options.control.timeout.count() << " ms; is reflectd running there?\n";
      return kExitUnreachable;
    }
    if (!reply->is_object() || !reply->value("ok", false)) {
      std::cerr << "reflectctl events: the daemon answered with an error: "
                << (reply->is_object() && reply->contains("error") && (*reply)["error"].is_string()
                        ? (*reply)["error"].get<std::string>()
                        : reply->dump())
                << '\n';
      return kExitFailed;
    }
    if (options.control.json) {
      for (const json& row : reply->value("events", json::array())) std::cout << row.dump() << '\n';
    } else {
      std::cout << format_event_lines(*reply);
    }
    std::cout.flush();
    after = last_seq(*reply, after < 0 ? 0 : after);
    pause_interruptibly(kPollInterval);
  }
  return kExitOk;
}

}  // namespace reflectd::cli
