#pragma once
// Logging set-up for the reflectd and reflectctl processes (spdlog to stderr).

namespace reflectd::daemon {

/// Sends spdlog's default logger to stderr. Under systemd ($JOURNAL_STREAM set) the lines
/// carry no timestamp (journald adds one) and a sd-daemon(3) "<N>" priority prefix.
void setup_logging();

}  // namespace reflectd::daemon
