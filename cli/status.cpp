#include "cli/status.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <utility>
#include <vector>

namespace reflectd::cli {
using json = nlohmann::json;

namespace {

using Rows = std::vector<std::pair<std::string, std::string>>;

const json* find(const json& root, const char* pointer) {
  const json::json_pointer path(pointer);
  return root.contains(path) ? &root.at(path) : nullptr;
}

std::string text(const json& root, const char* pointer) {
  const json* value = find(root, pointer);
  if (value == nullptr || value->is_null()) return "-";
  return value->is_string() ? value->get<std::string>() : value->dump();
}

std::string human_bytes(const json& root, const char* pointer) {
  const json* value = find(root, pointer);
  if (value == nullptr || !value->is_number()) return "-";
  const double bytes = value->get<double>();
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double scaled = bytes;
  std::size_t unit = 0;
  while (scaled >= 1024 && unit + 1 < kUnits.size()) {
    scaled /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.1f} {} ({:.0f} bytes)", scaled, kUnits[unit], bytes);
}

std::string human_duration(const json& root, const char* pointer) {
  const json* value = find(root, pointer);
  if (value == nullptr || !value->is_number()) return "-";
  auto seconds = static_cast<std::int64_t>(std::floor(value->get<double>()));
  const std::int64_t days = seconds / 86400;
  seconds %= 86400;
  const std::string clock =
      fmt::format("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  return days > 0 ? fmt::format("{}d {}", days, clock) : clock;
}

std::string utc_time(std::int64_t epoch_us) {
  const auto seconds = static_cast<std::time_t>(epoch_us / 1'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  std::array<char, 32> buffer{};
  std::strftime(buffer.data(), buffer.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer.data();
}

std::string last_reload(const json& root) {
  const json* at = find(root, "/last_reload/at_us");
  if (at == nullptr || !at->is_number_integer() || at->get<std::int64_t>() == 0) return "never";
  const json* ok = find(root, "/last_reload/ok");
  const bool succeeded = ok != nullptr && ok->is_boolean() && ok->get<bool>();
  return utc_time(at->get<std::int64_t>()) + (succeeded ? " ok: " : " FAILED: ") +
         text(root, "/last_reload/message");
}

std::string joined(const json& root, const char* pointer) {
  const json* list = find(root, pointer);
  if (list == nullptr || !list->is_array() || list->empty()) return "-";
  std::string out;
  for (const json& item : *list) {
    if (!out.empty()) out += ", ";
    out += item.is_string() ? item.get<std::string>() : item.dump();
  }
  return out;
}

Rows status_rows(const json& s) {
  return {
      {"version", text(s, "/version")},
      {"uptime", human_duration(s, "/uptime_s")},
      {"events stored", text(s, "/events/stored")},
      {"events duplicate", text(s, "/events/duplicate")},
      {"events rejected", text(s, "/events/rejected")},
      {"dead letters", text(s, "/dead_letters")},
      {"writer queue", text(s, "/writer_queue_events") + " events"},
      {"commits", text(s, "/commits")},
      {"storage errors", text(s, "/storage_errors")},
      {"messages", text(s, "/messages")},
      {"replies dropped", text(s, "/replies_dropped")},
      {"search index", "through seq " + text(s, "/search_index/indexed_through_seq") + ", " +
                           text(s, "/search_index/lag_events") + " events behind"},
      {"database size", human_bytes(s, "/db_bytes")},
      {"page size", text(s, "/page_size_bytes") + " bytes"},
      {"database", text(s, "/database")},
      {"ingest", joined(s, "/endpoints/ingest")},
      {"push", joined(s, "/endpoints/push")},
      {"notify", joined(s, "/endpoints/notify")},
      {"control", joined(s, "/endpoints/control")},
      {"last reload", last_reload(s)},
  };
}

}  // namespace

std::string format_status_table(const json& status) {
  const Rows rows = status_rows(status);
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out;
  for (const auto& [label, value] : rows) out += fmt::format("{:<{}}  {}\n", label, width, value);
  return out;
}

int run_status(const StatusOptions& options) {
  return run_control_command({"status", format_status_table, {}}, options, {{"cmd", "status"}});
}

}  // namespace reflectd::cli
