#include "cli/run_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cli/jobs.hpp"
#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

std::string namespace_label(const json& object) {
  const std::string ns = object.is_object() ? object.value("namespace", std::string()) : "";
  return ns.empty() ? "* (every namespace)" : ns;
}

std::int64_t integer(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

std::string render_rows(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, display_width(row.first));
  std::string out;
  for (const auto& [label, value] : rows) {
    out += value.empty()
               ? label + '\n'
               : label + std::string(width - display_width(label) + 2, ' ') + value + '\n';
  }
  return out;
}

}  // namespace

json run_request(const RunJobOptions& options) {
  return {{"cmd", "run"}, {"job", options.job}, {"namespace", options.ns}, {"wait", options.wait}};
}

std::string format_queued(const json& reply) {
  return fmt::format("queued {} ({})\n", cell(reply, "queued"),
                     reply.value("namespace", std::string()).empty()
                         ? "every namespace"
                         : "namespace " + reply.value("namespace", std::string()));
}

std::string format_run(const json& run) {
  if (!run.is_object()) return {};
  const std::int64_t started = integer(run, "started_us");
  const std::int64_t finished = integer(run, "finished_us");
  const std::int64_t run_id = integer(run, "run_id");
  std::vector<std::pair<std::string, std::string>> rows = {
      {"run id", run_id > 0 ? std::to_string(run_id) : "- (never started)"},
      {"job", cell(run, "job")},
      {"namespace", namespace_label(run)},
      {"trigger", cell(run, "trigger")},
      {"status", cell(run, "status")},
      {"started", started > 0 ? rfc3339_utc(started) : "-"},
      {"duration", started > 0 && finished >= started
                       ? fmt::format("{:.1f} ms", static_cast<double>(finished - started) / 1000.0)
                       : "-"},
  };
  if (run.contains("error")) rows.emplace_back("error", cell(run, "error"));
  const auto result = run.find("result");
  if (result != run.end() && result->is_object() && !result->empty()) {
    rows.emplace_back("result", "");
    for (const std::string& key : result_keys(*result)) {
      rows.emplace_back("  " + key, cell(*result, key));
    }
  } else {
    rows.emplace_back("result", "-");
  }
  return render_rows(rows);
}

int run_job(const RunJobOptions& options) {
  const auto format_wait = [](const json& reply) {
    const auto run = reply.find("run");
    return run == reply.end() ? std::string() : format_run(*run);
  };
  const ControlCommand command{
      "run",
      options.wait ? ReplyFormatter(format_wait) : ReplyFormatter(format_queued),
      options.wait ? ReplyFormatter(format_wait) : ReplyFormatter(),
  };
  return run_control_command(command, options.control, run_request(options));
}

}  // namespace reflectd::cli
