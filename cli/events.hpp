#pragma once
// `reflectctl events tail [--namespace NS] [--kind K] [--agent A] [--episode E] [-n N] [-f]`: the
// latest events
// ({"cmd":"events","limit":N}), oldest first, one line each: seq, time (RFC 3339), namespace,
// kind, id and a one-line preview. With --follow, polls {"cmd":"events","after_seq":LAST}
// every 500 ms and prints new events until SIGINT or SIGTERM (exit 0).
//
// Error policy: run_events_tail() prints every problem to stderr and returns an exit status.
// Thread-safety: call from one thread at a time; --follow installs SIGINT/SIGTERM handlers.

#include <string>

#include <nlohmann/json.hpp>

#include "cli/control.hpp"

namespace reflectd::cli {

struct EventsOptions {
  ControlOptions control;
  std::string ns;          ///< Empty: every namespace.
  std::string kind;        ///< Empty: every kind.
  std::string agent_id;    ///< Empty: every agent.
  std::string episode_id;  ///< Empty: every episode.
  int limit = 20;
  bool follow = false;
};

/// {"cmd":"events",...}; `after_seq` < 0: the latest `limit` events.
nlohmann::json events_request(const EventsOptions& options, long long after_seq);

/// One line per event of the reply's "events" (no header).
std::string format_event_lines(const nlohmann::json& reply);

int run_events_tail(const EventsOptions& options);

}  // namespace reflectd::cli
