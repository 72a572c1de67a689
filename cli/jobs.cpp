#include "cli/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "cli/table.hpp"

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

constexpr std::size_t kResultWidth = 56;
constexpr std::size_t kErrorWidth = 40;
constexpr std::size_t kNamespaceWidth = 24;

// Seed 003's headline counters, shown ahead of the rest.
constexpr std::array<std::string_view, 6> kFirstKeys = {
    "events_processed", "observations_created", "observations_reinforced",
    "facts_scored",     "facts_marked_stale",   "events_archived"};

bool shown(const json& value) {
  if (value.is_number()) return value.get<double>() != 0;
  return value.is_string() && !value.get<std::string>().empty();
}

std::string duration_ms(const json& run) {
  const json started = run.value("started_us", json());
  const json finished = run.value("finished_us", json());
  if (!started.is_number_integer() || !finished.is_number_integer()) return "-";
  const auto begin = started.get<std::int64_t>();
  const auto end = finished.get<std::int64_t>();
  if (begin <= 0 || end < begin) return "-";
  return std::to_string((end - begin) / 1000);
}

std::string started(const json& run) {
  const json value = run.value("started_us", json());
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0) return "-";
  return rfc3339_utc(value.get<std::int64_t>());
}

}  // namespace

json jobs_request(const JobsOptions& options) {
  return {{"cmd", "jobs"}, {"job", options.job}, {"limit", options.limit}};
}

std::vector<std::string> result_keys(const json& result) {
  std::vector<std::string> keys;
  if (!result.is_object()) return keys;
  for (const std::string_view key : kFirstKeys) {
    if (result.contains(key)) keys.emplace_back(key);
  }
  for (const auto& item : result.items()) {
    if (std::find(kFirstKeys.begin(), kFirstKeys.end(), item.key()) == kFirstKeys.end()) {
      keys.push_back(item.key());
    }
  }
  return keys;
}

std::string result_summary(const json& result, std::size_t max_width) {
  if (!result.is_object()) return "-";
  std::vector<std::string> parts;
  if (result.value("skipped", false)) {
    const auto reason = result.find("skip_reason");
    parts.push_back(reason != result.end() && reason->is_string()
                        ? "skipped: " + reason->get<std::string>()
                        : std::string("skipped"));
  }
  const auto add = [&](std::string_view key, const json& value) {
    if (key == "skipped" || key == "skip_reason" || !shown(value)) return;
    parts.push_back(
        fmt::format("{}={}", key, value.is_string() ? value.get<std::string>() : value.dump()));
  };
  for (const std::string& key : result_keys(result)) add(key, result.at(key));
  if (parts.empty()) return "-";
  return clip(fmt::format("{}", fmt::join(parts, ", ")), max_width);
}

std::string format_jobs_table(const json& reply) {
  const json runs = reply.value("runs", json::array());
  const bool any_error = std::any_of(runs.begin(), runs.end(), [](const json& run) {
    return run.is_object() && run.contains("error");
  });
  std::vector<Column> columns = {{"RUN", Align::kRight},
                                 {"JOB"},
                                 {"NAMESPACE", Align::kLeft, kNamespaceWidth},
                                 {"TRIGGER"},
                                 {"STATUS"},
                                 {"STARTED"},
                                 {"DURATION_MS", Align::kRight},
                                 {"RESULT", Align::kLeft, kResultWidth}};
  if (any_error) columns.push_back({"ERROR", Align::kLeft, kErrorWidth});
  Table table(std::move(columns));
  for (const json& run : runs) {
    if (!run.is_object()) continue;
    const std::string ns = run.value("namespace", std::string());
    table.add({cell(run, "run_id"), cell(run, "job"), ns.empty() ? "*" : ns, cell(run, "trigger"),
               cell(run, "status"), started(run), duration_ms(run),
               result_summary(run.value("result", json()), kResultWidth),
               run.contains("error") ? cell(run, "error") : ""});
  }
  std::string out = table.empty() ? std::string("no job runs yet\n") : table.render();
  const json names = reply.value("jobs", json::array());
  if (names.is_array() && !names.empty()) {
    std::vector<std::string> list;
    for (const json& name : names)
      list.push_back(name.is_string() ? name.get<std::string>() : name.dump());
    out += fmt::format("jobs: {}\n", fmt::join(list, ", "));
  }
  return out;
}

int run_jobs(const JobsOptions& options) {
  return run_control_command({"jobs", format_jobs_table, {}}, options.control,
                             jobs_request(options));
}

}  // namespace reflectd::cli
