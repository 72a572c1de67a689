#pragma once
// A job's progress markers (job_state table): watermarks and small JSON state, written in the
// same transaction as the job's results so a crash repeats or skips nothing.
// Thread-safety: none (one per connection). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <optional>
#include <string>
#include <vector>

namespace reflectd::jobs {

class JobState {
 public:
  JobState(SQLite::Database& db, std::string job);
  std::optional<std::string> get(const std::string& ns, const std::string& key);
  void set(const std::string& ns, const std::string& key, const std::string& value);

 private:
  std::string job_;
  SQLite::Statement get_;
  SQLite::Statement set_;
};

/// Every namespace that has events, in order. One index seek per namespace (a skip scan over
/// an index on events(namespace, ...)) instead of `SELECT DISTINCT`, which reads an index entry
/// per event: O(namespaces * log events), not O(events). Errors: SQLite::Exception.
std::vector<std::string> event_namespaces(SQLite::Database& db);

}  // namespace reflectd::jobs
