#pragma once
// The tally of one `reflectctl publish` run, its rendering (text or JSON) and exit status.
//
// Thread-safety: plain data; no shared state.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/message_builder.hpp"
#include "cli/reply.hpp"

namespace reflectd::cli {

/// One problem to show the user, at file:line.
struct Problem {
  std::string file;
  std::uint64_t line = 0;
  std::string error;
};

struct Summary {
  static constexpr std::size_t kMaxProblems = 10;

  bool push = false;    ///< Fire-and-forget mode: no replies, so no stored/duplicate.
  bool reached = true;  ///< False when the daemon never completed a connection.
  std::string endpoint;
  std::size_t files = 0;
  std::uint64_t events = 0;    ///< Events (non-blank lines) sent at least once.
  std::uint64_t messages = 0;  ///< Messages sent, resends not counted.
  std::uint64_t resends = 0;
  std::uint64_t stored = 0;
  std::uint64_t duplicate = 0;
  std::uint64_t rejected = 0;        ///< Push mode: lines known locally not to be objects.
  std::uint64_t unacknowledged = 0;  ///< Push mode: events that could not be handed over.
  double elapsed_s = 0;
  std::vector<Problem> problems;  ///< The first kMaxProblems rejections.

  /// Counts `outcome` for the event at `where`; `names` are LineReader::names().
  void record(const EventRef& where, const EventOutcome& outcome,
              const std::vector<std::string>& names);
  /// Counts events that got no reply in time (or could not be sent).
  void record_unacknowledged(std::uint64_t count) { unacknowledged += count; }
  /// Events whose outcome is known (or given up on): drives the progress display.
  std::uint64_t settled() const { return stored + duplicate + rejected + unacknowledged; }
};

/// The summary as aligned "label  value" lines, then the first rejections.
std::string format_summary(const Summary& summary);

/// The summary as one JSON object (keys as in the text form, snake_case).
nlohmann::json summary_json(const Summary& summary);

/// kExitOk, kExitFailed or kExitUnreachable (see cli/exit_codes.hpp).
int exit_status(const Summary& summary);

}  // namespace reflectd::cli
