#include "jobs/job_state.hpp"

namespace reflectd::jobs {

JobState::JobState(SQLite::Database& db, std::string job)
    : job_(std::move(job)),
      get_(db, "SELECT value FROM job_state WHERE job = ?1 AND namespace = ?2 AND key = ?3"),
      set_(db, "INSERT INTO job_state (job, namespace, key, value) VALUES (?1, ?2, ?3, ?4) "
               "ON CONFLICT (job, namespace, key) DO UPDATE SET value = excluded.value") {}

std::optional<std::string> JobState::get(const std::string& ns, const std::string& key) {
  get_.reset();
  get_.bind(1, job_);
  get_.bind(2, ns);
  get_.bind(3, key);
  std::optional<std::string> value;
  if (get_.executeStep()) value = get_.getColumn(0).getString();
  get_.reset();
  return value;
}

void JobState::set(const std::string& ns, const std::string& key, const std::string& value) {
  set_.reset();
  set_.bind(1, job_);
  set_.bind(2, ns);
  set_.bind(3, key);
  set_.bind(4, value);
  set_.exec();
}

}  // namespace reflectd::jobs
