#pragma once
// The LoCoMo development set (../shared/data/locomo-dev: five conversations, 2,760 turns, 999
// questions with their evidence turns and gold answers) as bench_recall and bench_facts read
// it: the turns stored as the daemon stores them, and the gold answers' dates.
//
// Errors: std::runtime_error (a file missing, a turn rejected); SQLite::Exception.

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.hpp"

namespace reflectd::bench {

/// A fresh directory under the system's temporary directory ("<name>.<pid>"), removed with
/// everything in it on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  /// `file` inside the directory.
  std::string file(const std::string& file) const { return (path_ / file).string(); }

 private:
  std::filesystem::path path_;
};

/// The locomo-dev folder of the data the build was configured with (CMake's
/// REFLECTD_DATA_DIR): the benches' default --data.
std::string locomo_dev_dir();

/// Every JSON line of `path`.
std::vector<nlohmann::json> read_lines(const std::string& path);

/// Stores `turns` in the database at `path` (migrated on open) through the wire decoder and
/// EventStore, in one transaction, and indexes them for full-text search.
void store_turns(const std::string& path, const std::vector<nlohmann::json>& turns,
                 const Clock& clock);

/// The database at `path` opened as the jobs open it (daemon::jobs_database_options of the
/// default configuration), for writing.
SQLite::Database open_jobs_database(const std::string& path);

/// Runs the facts job (jobs/facts.hpp) once over `db` at `clock`'s time, with no deadline;
/// returns its result (facts_added, events_read, …).
nlohmann::json run_facts_once(SQLite::Database& db, const Clock& clock);

/// A fixed "now" one day after the last turn (µs), so every run scores at the same time.
std::int64_t day_after_last_turn_us(const std::vector<nlohmann::json>& turns);

/// The gold answer's date as a label in recall's style ("7 May 2023", "May 2023", "2022"), or
/// nothing when the answer is no date. "The week before 9 June 2023" -> "9 June 2023".
std::optional<std::string> gold_date(std::string answer);

/// True when `label` occurs in `text` with no digit right before or after it.
bool contains_label(const std::string& text, const std::string& label);

/// The span of time a gold answer names, half-open [from, to) in µs (UTC days): "7 May 2023"
/// a day, "May 2023" a month, "2022" a year, "The week before 9 June 2023" the seven days
/// before, "The weekend before 9 June 2023" the Saturday and Sunday before, "The sunday before
/// 25 May 2023" that day. Nothing when the answer is no date.
std::optional<std::pair<std::int64_t, std::int64_t>> gold_range(const std::string& answer);

}  // namespace reflectd::bench
