#include "cli/summary.hpp"

#include <fmt/format.h>

#include "cli/exit_codes.hpp"

namespace reflectd::cli {
namespace {

double rate(const Summary& summary) {
  return summary.elapsed_s > 0 ? static_cast<double>(summary.events) / summary.elapsed_s : 0.0;
}

}  // namespace

void Summary::record(const EventRef& where, const EventOutcome& outcome,
                     const std::vector<std::string>& names) {
  switch (outcome.outcome) {
    case Outcome::kStored: ++stored; return;
    case Outcome::kDuplicate: ++duplicate; return;
    case Outcome::kRejected: break;
  }
  ++rejected;
  if (problems.size() < kMaxProblems) {
    problems.push_back({names.at(where.file), where.line, outcome.error});
  }
}

std::string format_summary(const Summary& s) {
  std::string out;
  const auto row = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<16}{}\n", label, value);
  };
  row("endpoint", s.endpoint + (s.push ? " (push, fire-and-forget)" : ""));
  row("files", std::to_string(s.files));
  row("events sent", std::to_string(s.events));
  row("messages",
      std::to_string(s.messages) + (s.resends > 0 ? fmt::format(" ({} resent)", s.resends) : ""));
  if (!s.push) {
    row("stored", std::to_string(s.stored));
    row("duplicate", std::to_string(s.duplicate));
  }
  row(s.push ? "not objects" : "rejected", std::to_string(s.rejected));
  row(s.push ? "not sent" : "unacknowledged", std::to_string(s.unacknowledged));
  row("elapsed", fmt::format("{:.2f} s", s.elapsed_s));
  row("rate", fmt::format("{:.0f} events/s", rate(s)));
  if (s.push) {
    out += "(push has no replies: the daemon keeps events it rejects in its dead_letters table)\n";
  }
  if (!s.problems.empty()) {
    out += fmt::format("\nfirst {} of {} {}:\n", s.problems.size(), s.rejected,
                       s.push ? "lines that are not JSON objects" : "rejections");
    for (const Problem& p : s.problems)
      out += fmt::format("  {}:{}: {}\n", p.file, p.line, p.error);
  }
  return out;
}

nlohmann::json summary_json(const Summary& s) {
  nlohmann::json problems = nlohmann::json::array();
  for (const Problem& p : s.problems) {
    problems.push_back({{"file", p.file}, {"line", p.line}, {"error", p.error}});
  }
  nlohmann::json out = {
      {"mode", s.push ? "push" : "ingest"},
      {"endpoint", s.endpoint},
      {"reached", s.reached},
      {"files", s.files},
      {"events", s.events},
      {"messages", s.messages},
      {"resends", s.resends},
      {"rejected", s.rejected},
      {"unacknowledged", s.unacknowledged},
      {"elapsed_s", s.elapsed_s},
      {"events_per_s", rate(s)},
      {"rejections", std::move(problems)},
  };
  if (!s.push) {
    out["stored"] = s.stored;
    out["duplicate"] = s.duplicate;
  }
  return out;
}

int exit_status(const Summary& s) {
  if (!s.reached) return kExitUnreachable;
  return s.rejected > 0 || s.unacknowledged > 0 ? kExitFailed : kExitOk;
}

}  // namespace reflectd::cli
