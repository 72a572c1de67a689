// read_audit (declared in record_reads.hpp): the audit log, scoped by each record's namespace
// and level.
#include "recall/record_reads.hpp"

#include <optional>

#include "common/timestamp.hpp"
#include "model/request_params.hpp"
#include "recall/read_sql.hpp"

namespace reflectd::recall {

using model::limit_param;
using model::text_param;

nlohmann::json read_audit(SQLite::Database& db, const nlohmann::json& request,
                          const ReadScope& caller) {
  std::int64_t since_us = 0;
  if (const auto since = request.find("since"); since != request.end() && !since->is_null()) {
    const auto parsed =
        since->is_string() ? parse_rfc3339_us(since->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return {{"ok", false},
              {"error", "audit: since: must be an RFC 3339 date-time with an offset"}};
    }
    since_us = *parsed;
  }
  // A record's namespace and level come from the record; a deleted event's namespace from its
  // delete row's previous state (memory_ops/forget.hpp), and it reads as public.
  SQLite::Statement query(db, R"sql(
SELECT audit_id, record_type, record_id, namespace, action, actor, at_us, )sql" +
                                  read_sql::redacted_text("rationale") + ", " +
                                  read_sql::hidden("previous", "previous_json") +
                                  R"sql(, r > ?20 AS redacted
FROM (SELECT a.*,
        CASE a.record_type
          WHEN 'event' THEN coalesce((SELECT namespace FROM events WHERE uid = a.record_id),
                                     (SELECT json_extract(d.previous, '$.namespace')
                                      FROM audit_log d WHERE d.record_type = 'event'
                                        AND d.record_id = a.record_id AND d.action = 'delete'))
          WHEN 'knowledge' THEN (SELECT namespace FROM knowledge WHERE decision_id = a.record_id)
          WHEN 'medallion' THEN (SELECT namespace FROM medallion_scopes
                                 WHERE medallion_id = a.record_id)
          WHEN 'entity' THEN json_extract(a.previous, '$.namespace')
        END AS namespace,
        coalesce(CASE a.record_type
          WHEN 'event' THEN (SELECT )sql" +
                                  read_sql::rank_sql("sensitivity") +
                                  R"sql( FROM events WHERE uid = a.record_id)
          WHEN 'knowledge' THEN (SELECT )sql" +
                                  read_sql::rank_sql("sensitivity") +
                                  R"sql( FROM knowledge WHERE decision_id = a.record_id)
        END, 0) AS r
      FROM audit_log a
      WHERE (?1 = '' OR a.record_id = ?1) AND a.at_us >= ?2)
WHERE (?3 = '' OR namespace = ?3) AND )sql" +
                                  read_sql::scope_sql("namespace") + R"sql( AND r <= ?20 + 1
ORDER BY audit_id DESC
LIMIT ?4)sql");
  query.bind(1, text_param(request, "record_id"));
  query.bind(2, static_cast<std::int64_t>(since_us));
  query.bind(3, text_param(request, "namespace"));
  query.bind(4, limit_param(request, 50));
  read_sql::bind_scope(query, caller, true);
  query.bind(23, kRedacted);
  nlohmann::json entries = read_sql::rows(query);
  for (auto& row : entries) {
    row["at"] = format_rfc3339_us(row["at_us"].get<std::int64_t>());
  }
  return {{"ok", true}, {"audit", std::move(entries)}};
}

}  // namespace reflectd::recall
