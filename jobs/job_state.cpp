#include "jobs/job_state.hpp"

#include <SQLiteCpp/VariadicBind.h>

namespace reflectd::jobs {

JobState::JobState(SQLite::Database& db, std::string job)
    : job_(std::move(job)),
      get_(db, "SELECT value FROM job_state WHERE job = ?1 AND namespace = ?2 AND key = ?3"),
      set_(db,
           "INSERT INTO job_state (job, namespace, key, value) VALUES (?1, ?2, ?3, ?4) "
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
  SQLite::bind(set_, job_, ns, key, value);
  set_.exec();
}

std::vector<std::string> event_namespaces(SQLite::Database& db) {
  SQLite::Statement query(db, R"sql(
WITH RECURSIVE ns (name) AS (
  SELECT min(namespace) FROM events
  UNION ALL
  SELECT (SELECT min(namespace) FROM events WHERE namespace > ns.name) FROM ns WHERE ns.name IS NOT NULL
)
SELECT name FROM ns WHERE name IS NOT NULL)sql");
  std::vector<std::string> out;
  while (query.executeStep()) out.push_back(query.getColumn(0).getString());
  return out;
}

}  // namespace reflectd::jobs
