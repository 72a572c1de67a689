#include "bench/locomo.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <fstream>
#include <limits>
#include <regex>
#include <stdexcept>

#include <unistd.h>

#include "bus/event_decoder.hpp"
#include "common/timestamp.hpp"
#include "config/config.hpp"
#include "daemon/settings.hpp"
#include "jobs/facts.hpp"
#include "jobs/job.hpp"
#include "store/database.hpp"
#include "store/event_store.hpp"
#include "store/fts_index.hpp"
#include "store/lifecycle.hpp"

namespace reflectd::bench {

using nlohmann::json;

ScratchDir::ScratchDir(const std::string& name)
    : path_(std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))) {
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<json> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

void store_turns(const std::string& path, const std::vector<json>& turns, const Clock& clock) {
  auto db = store::open_database({path, "off", 5000}, store::Access::kWriter);
  store::EventStore events(db);
  bus::EventDecoder decoder(clock);
  const auto profiles = daemon::decay_profiles(config::defaults().decay);
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  for (const json& turn : turns) {
    auto decoded = decoder.decode(turn.dump(), 1 << 22);
    if (decoded.events.size() != 1 || !decoded.events[0].event) {
      throw std::runtime_error("turn " + turn.value("id", "?") + " rejected");
    }
    store::EventRecord row = std::move(*decoded.events[0].event);
    events.insert(row, store::resolve_lifecycle(row, profiles));
  }
  transaction.commit();
  store::index_all_pending(db);
}

#ifndef REFLECTD_DATA_DIR
#define REFLECTD_DATA_DIR "."
#endif

std::string locomo_dev_dir() { return std::string(REFLECTD_DATA_DIR) + "/locomo-dev"; }

SQLite::Database open_jobs_database(const std::string& path) {
  return store::open_database(daemon::jobs_database_options(config::defaults(), path),
                              store::Access::kWriter);
}

json run_facts_once(SQLite::Database& db, const Clock& clock) {
  std::atomic<bool> stopping{false};
  jobs::CancelToken cancel(clock, std::numeric_limits<std::int64_t>::max(), stopping);
  jobs::JobContext ctx{db, clock, cancel, "", "demand", 0, {}, nullptr};
  return jobs::run_facts(ctx);
}

std::int64_t day_after_last_turn_us(const std::vector<json>& turns) {
  std::int64_t last_us = 0;
  for (const json& t : turns) {
    last_us = std::max(last_us, parse_rfc3339_us(t["timestamp"].get<std::string>()).value_or(0));
  }
  return last_us + std::int64_t{86'400} * 1'000'000;
}

// The gold answer's date as a label in recall's style ("7 May 2023", "May 2023", "2022"), or
// nothing when the answer is no date. "The week before 9 June 2023" -> "9 June 2023".
std::optional<std::string> gold_date(std::string answer) {
  static const std::vector<std::string> months{"January",   "February", "March",    "April",
                                               "May",       "June",     "July",     "August",
                                               "September", "October",  "November", "December"};
  // "6October, 2022" -> "6 October 2022"; "December 11, 2023" -> "11 December 2023".
  answer = std::regex_replace(answer, std::regex("([0-9])([A-Za-z])"), "$1 $2");
  answer = std::regex_replace(answer, std::regex("[,.]"), " ");
  std::smatch m;
  const std::string month_alt =
      "(January|February|March|April|May|June|July|August|September|October|November|December)";
  if (std::regex_search(answer, m, std::regex("\\b([0-9]{1,2}) +" + month_alt + " +([0-9]{4})"))) {
    return std::to_string(std::stoi(m[1])) + " " + m[2].str() + " " + m[3].str();
  }
  if (std::regex_search(answer, m, std::regex(month_alt + " +([0-9]{1,2}) +([0-9]{4})"))) {
    return std::to_string(std::stoi(m[2])) + " " + m[1].str() + " " + m[3].str();
  }
  if (std::regex_search(answer, m, std::regex(month_alt + " +([0-9]{4})"))) {
    return m[1].str() + " " + m[2].str();
  }
  if (std::regex_search(answer, m, std::regex("^ *(?:[Ii]n )?((19|20)[0-9]{2}) *$"))) {
    return m[1].str();
  }
  return std::nullopt;
}

bool contains_label(const std::string& text, const std::string& label) {
  std::size_t at = 0;
  while ((at = text.find(label, at)) != std::string::npos) {
    const bool digit_before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const std::size_t after = at + label.size();
    const bool digit_after =
        after < text.size() && std::isdigit(static_cast<unsigned char>(text[after]));
    if (!digit_before && !digit_after) return true;
    ++at;
  }
  return false;
}

namespace {

std::int64_t day_us(int y, unsigned m, unsigned d) {
  using namespace std::chrono;
  const sys_days days{year{y} / month{m} / day{d}};
  return static_cast<std::int64_t>(days.time_since_epoch().count()) * kDayUs;
}

int month_number(const std::string& name) {
  static const std::vector<std::string> months{"january",   "february", "march",    "april",
                                               "may",       "june",     "july",     "august",
                                               "september", "october",  "november", "december"};
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto it = std::find(months.begin(), months.end(), lower);
  return it == months.end() ? 0 : static_cast<int>(it - months.begin()) + 1;
}

}  // namespace

std::optional<std::pair<std::int64_t, std::int64_t>> gold_range(const std::string& answer) {
  const auto label = gold_date(answer);
  if (!label) return std::nullopt;
  std::smatch m;
  std::pair<std::int64_t, std::int64_t> range;
  if (std::regex_match(*label, m, std::regex("([0-9]{1,2}) ([A-Za-z]+) ([0-9]{4})"))) {
    const std::int64_t d = day_us(std::stoi(m[3]), static_cast<unsigned>(month_number(m[2])),
                                  static_cast<unsigned>(std::stoi(m[1])));
    range = {d, d + kDayUs};
  } else if (std::regex_match(*label, m, std::regex("([A-Za-z]+) ([0-9]{4})"))) {
    const int month = month_number(m[1]);
    const int year = std::stoi(m[2]);
    range = {
        day_us(year, static_cast<unsigned>(month), 1),
        month == 12 ? day_us(year + 1, 1, 1) : day_us(year, static_cast<unsigned>(month + 1), 1)};
    return range;
  } else {
    const int year = std::stoi(*label);
    return std::pair{day_us(year, 1, 1), day_us(year + 1, 1, 1)};
  }
  // "The week before D", "the weekend before D", "the sunday before D": relative to a day.
  std::string lower = answer;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::int64_t d = range.first;
  if (lower.find("week before") != std::string::npos) return std::pair{d - 7 * kDayUs, d};
  if (lower.find("weekend before") != std::string::npos) {
    // Days since the epoch: 1970-01-01 was a Thursday; Saturday is (days + 4) % 7 == 6.
    std::int64_t day = d / kDayUs - 1;
    while ((day + 4) % 7 != 6) --day;
    return std::pair{day * kDayUs, (day + 2) * kDayUs};
  }
  static const std::vector<std::string> weekdays{"sunday",   "monday", "tuesday", "wednesday",
                                                 "thursday", "friday", "saturday"};
  for (std::size_t w = 0; w < weekdays.size(); ++w) {
    if (lower.find(weekdays[w] + " before") != std::string::npos) {
      std::int64_t day = d / kDayUs - 1;
      while (static_cast<std::size_t>((day + 4) % 7) != w) --day;
      return std::pair{day * kDayUs, (day + 1) * kDayUs};
    }
  }
  return range;
}

}  // namespace reflectd::bench
