#pragma once
// reflectctl's man-page text: descriptions and footers shown by --help.

namespace reflectd::cli {

inline constexpr const char* kMainDescription =
    "reflectctl - command-line client of reflectd, the AI-agent event daemon.\n\n"
    "Publishes JSON Lines files of wire events to a running reflectd and reports what it did\n"
    "with each event, or shows the daemon's status. Endpoints come from --ingest,\n"
    "--push-endpoint and --control, else from the daemon's configuration file (--config),\n"
    "else from reflectd's built-in defaults.\n";

inline constexpr const char* kMainFooter = R"(
COMMANDS
  publish [FILE...|-]   send events, wait for every acknowledgement, print a summary
  status                show the daemon's counters, database and endpoints
  Run `reflectctl COMMAND --help` for the options of a command. Global options may be given
  before or after the command; --push EP (an alias of --push-endpoint) only before `publish`,
  where --push is publish's mode flag.

ENDPOINTS
  With --config FILE the first endpoint of bus.ingest, bus.push and bus.control is used; a
  wildcard bind host (tcp://*:7701, tcp://0.0.0.0:7701) is reached at 127.0.0.1. An endpoint
  bound to an ephemeral port (tcp://127.0.0.1:*) cannot be derived: pass it explicitly.
  Built-in defaults: ingest tcp://127.0.0.1:7701, push tcp://127.0.0.1:7702,
  control tcp://127.0.0.1:7704.

EXAMPLES
  reflectctl publish events.jsonl
  reflectctl --config /etc/reflectd/reflectd.yaml publish logs/*.jsonl
  zcat events.jsonl.gz | reflectctl publish --batch 500 -
  reflectctl status
  reflectctl --control tcp://10.0.0.5:7704 status --json

EXIT STATUS
  0  publish: every event stored or duplicate; status: the daemon answered
  1  publish: some event rejected or unacknowledged; status: the daemon answered an error
  2  invalid command line, configuration file, endpoint or input file
  3  the daemon could not be reached (no connection or no reply within --timeout-ms))";

inline constexpr const char* kPublishDescription =
    "Send JSON Lines events to reflectd and report what it did with each one.\n";

inline constexpr const char* kPublishFooter = R"(
DESCRIPTION
  Every non-blank line of the input is one wire event, a JSON object. Consecutive events are
  grouped into batches (a JSON array made of the lines' own text) and sent over the daemon's
  ingest socket; up to --window messages are in flight, and a message whose acknowledgement
  is late is resent unchanged. A line that is not a JSON object is sent on its own, so the
  daemon's precise error is reported at its FILE:LINE.

GLOBAL OPTIONS
  --config FILE, --ingest EP and --push-endpoint EP (see reflectctl --help) may be given
  before or after `publish`. After `publish`, --push is this command's mode flag: write
  `reflectctl --push EP publish --push` or `reflectctl publish --push --push-endpoint EP`.

IDEMPOTENCE
  A JSON object line without an "id" member is given "id":"line:<SHA-256 of the line>" as
  its first member (the rest of the line is sent byte for byte). The daemon stores each id
  once, so resends, interrupted runs and publishing the same file again never duplicate an
  event: repeats are reported as "duplicate". Lines that carry their own "id" keep it.

OUTPUT
  While running, a progress line (events/s, and a bar when the input size is known) is drawn
  on stderr if stderr is a terminal. At the end a summary goes to stdout: files, events sent,
  stored, duplicate, rejected, unacknowledged (no reply after --retries resends), elapsed
  time, rate, and the first 10 rejections as FILE:LINE: error. --json prints the same as one
  JSON object.

PUSH MODE
  --push sends over the fire-and-forget push socket (PUSH to the daemon's PULL). There are no
  replies: the summary counts events handed over; the daemon keeps the ones it rejects in its
  dead_letters table. Lines that are not JSON objects are sent anyway and counted as
  "not objects". The push endpoint is set with the global --push-endpoint option.

EXAMPLES
  reflectctl publish a.jsonl b.jsonl
  reflectctl --config /etc/reflectd/reflectd.yaml publish --json events.jsonl
  zcat events.jsonl.gz | reflectctl publish -
  reflectctl publish --push events.jsonl

EXIT STATUS
  0  every event was stored or was a duplicate (push: every event was handed over)
  1  some event was rejected or unacknowledged (push: not a JSON object, or not sent)
  2  invalid command line, configuration file, endpoint or unreadable input file
  3  no connection to the daemon within --timeout-ms)";

inline constexpr const char* kStatusDescription =
    "Show the counters, database and endpoints of a running reflectd.\n";

inline constexpr const char* kStatusFooter = R"(
DESCRIPTION
  Sends {"cmd":"status"} to the daemon's control socket and prints the reply as a table:
  version, uptime, events stored / duplicate / rejected, dead letters, writer queue, commits,
  storage errors, messages read, replies dropped, database size and path, endpoints, and the
  outcome of the last configuration reload (SIGHUP). --json prints the reply as JSON.

GLOBAL OPTIONS
  --config FILE and --control EP (see reflectctl --help) may be given before or after
  `status`.

EXAMPLES
  reflectctl status
  reflectctl --config /etc/reflectd/reflectd.yaml status --json | jq .events

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

}  // namespace reflectd::cli
