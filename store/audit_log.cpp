#include "store/audit_log.hpp"

namespace reflectd::store {

AuditLog::AuditLog(SQLite::Database& db)
    : insert_(db,
              "INSERT INTO audit_log (record_type, record_id, action, actor, at_us, rationale, "
              "previous) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)") {}

void AuditLog::append(std::string_view record_type, std::string_view record_id,
                      std::string_view action, std::string_view actor, std::int64_t at_us,
                      std::string_view rationale, std::string_view previous_json) {
  insert_.reset();
  insert_.bind(1, std::string(record_type));
  insert_.bind(2, std::string(record_id));
  insert_.bind(3, std::string(action));
  insert_.bind(4, std::string(actor));
  insert_.bind(5, static_cast<std::int64_t>(at_us));
  insert_.bind(6, std::string(rationale));
  if (previous_json.empty()) {
    insert_.bind(7);
  } else {
    insert_.bind(7, std::string(previous_json));
  }
  insert_.exec();
}

}  // namespace reflectd::store
