#pragma once
// The append-only audit_log (seed 002 AuditEntry, extended with the record it describes and
// its previous state). Rows are written in the same transaction as the change they describe;
// triggers forbid UPDATE and DELETE, and nothing cascades into it.
//
// Thread-safety: none (one per connection). Errors: SQLite::Exception.

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace reflectd::store {

class AuditLog {
 public:
  explicit AuditLog(SQLite::Database& db);

  /// Appends one entry. `action` is one of create, revise, promote, supersede, deprecate,
  /// reinforce, decay, archive, delete, accept, merge; `previous_json` may be empty (NULL).
  void append(std::string_view record_type, std::string_view record_id, std::string_view action,
              std::string_view actor, std::int64_t at_us, std::string_view rationale,
              std::string_view previous_json = {});

 private:
  SQLite::Statement insert_;
};

}  // namespace reflectd::store
