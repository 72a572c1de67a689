#pragma once
// Groups input lines into wire messages: consecutive object lines become one JSON array
// (a batch) built by joining their raw text, so the bytes sent are the bytes read (plus an
// "id" where a line had none). A line that is not a JSON object travels alone and verbatim,
// so the daemon's precise error for it is reported against its file:line.
//
// Error policy: propagates LineReader's std::runtime_error. Thread-safety: one per thread.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/line_reader.hpp"

namespace reflectd::cli {

/// Where one event of a message came from.
struct EventRef {
  std::uint32_t file = 0;  ///< Index into LineReader::names().
  std::uint64_t line = 0;  ///< 1-based line number.
};

/// One message, ready to send and to resend unchanged.
struct OutgoingMessage {
  std::string payload;
  std::vector<EventRef> events;   ///< events[i] is array element i (or the lone event).
  std::uint64_t input_bytes = 0;  ///< Bytes of input these lines took, newlines included.
  bool raw_line = false;          ///< A lone line that is not a JSON object, sent verbatim.
};

struct BatchLimits {
  std::size_t max_events = 100;     ///< Events per message; 1 sends bare objects, not arrays.
  std::size_t max_bytes = 1 << 20;  ///< A batch stops growing before its payload exceeds this.
};

class MessageBuilder {
 public:
  MessageBuilder(LineReader& reader, BatchLimits limits);

  /// The next message, or nullopt when the input is exhausted. Blank lines are skipped.
  std::optional<OutgoingMessage> next();

 private:
  struct Line {
    EventRef where;
    std::string text;  ///< With an "id" spliced in when the object had none.
    bool object = false;
    std::uint64_t input_bytes = 0;
  };
  std::optional<Line> take();
  static OutgoingMessage alone(Line&& line);

  LineReader& reader_;
  BatchLimits limits_;
  std::optional<Line> held_;  // Read but did not fit the previous message.
};

}  // namespace reflectd::cli
