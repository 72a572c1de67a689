#include "memory_ops/event_selection.hpp"

#include <algorithm>
#include <set>

#include "common/timestamp.hpp"
#include "store/columns.hpp"

namespace reflectd::memory_ops {
using json = nlohmann::json;

namespace {

constexpr const char* kColumns =
    "SELECT seq, uid, namespace, kind, status, deletion_policy, pinned, CASE sensitivity WHEN "
    "'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END "
    "FROM events ";

SelectedEvent read_row(SQLite::Statement& row) {
  SelectedEvent e;
  store::Columns(row) >> e.seq >> e.id >> e.ns >> e.kind >> e.status >> e.deletion_policy >>
      e.pinned;
  return e;
}

std::optional<std::int64_t> parse_time(const json& filter, const char* field,
                                       const std::string& cmd, std::string& error) {
  const auto it = filter.find(field);
  if (it == filter.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    if (auto us = parse_rfc3339_us(it->get<std::string>())) return us;
  }
  error = cmd + ": filter." + field +
          ": must be an RFC 3339 date-time with an offset (e.g. 2024-05-01T00:00:00Z)";
  return std::nullopt;
}

bool text_field(const json& filter, const char* field, std::string& out, const std::string& cmd,
                std::string& error) {
  const auto it = filter.find(field);
  if (it == filter.end() || it->is_null()) return true;
  if (!it->is_string() || it->get<std::string>().empty()) {
    error = cmd + ": filter." + field + ": must be a non-empty string";
    return false;
  }
  out = it->get<std::string>();
  return true;
}

}  // namespace

bool WriteScope::may_use(const std::string& ns) const {
  return all_namespaces || std::find(namespaces.begin(), namespaces.end(), ns) != namespaces.end();
}

std::optional<EventSelection> parse_event_selection(const json& request, const std::string& cmd,
                                                    std::string& error) {
  const bool has_ids = request.contains("ids");
  const bool has_filter = request.contains("filter");
  if (has_ids == has_filter) {
    error = cmd + R"(: give either "ids" (an array of event ids) or "filter" (an object))";
    return std::nullopt;
  }
  EventSelection selection;
  if (has_ids) {
    const json& ids = request["ids"];
    if (!ids.is_array() || ids.empty() || ids.size() > kMaxIds) {
      error = cmd + ": ids: must be an array of 1 to " + std::to_string(kMaxIds) + " event ids";
      return std::nullopt;
    }
    std::set<std::string> seen;
    for (const json& id : ids) {
      if (!id.is_string() || id.get<std::string>().empty()) {
        error = cmd + ": ids: every element must be a non-empty string";
        return std::nullopt;
      }
      if (seen.insert(id.get<std::string>()).second) selection.ids.push_back(id);
    }
    return selection;
  }
  const json& filter = request["filter"];
  if (!filter.is_object() || filter.empty()) {
    error = cmd +
            ": filter: must be an object with at least one of namespace, agent_id, kind, before, "
            "after, text";
    return std::nullopt;
  }
  static const std::set<std::string> kFields{"namespace", "agent_id", "kind",
                                             "before",    "after",    "text"};
  for (const auto& [key, value] : filter.items()) {
    if (kFields.count(key) == 0) {
      error = cmd + ": filter." + key +
              ": unknown field; known: namespace, agent_id, kind, before, after, text";
      return std::nullopt;
    }
  }
  EventFilter f;
  if (!text_field(filter, "namespace", f.ns, cmd, error) ||
      !text_field(filter, "agent_id", f.agent_id, cmd, error) ||
      !text_field(filter, "kind", f.kind, cmd, error) ||
      !text_field(filter, "text", f.text, cmd, error)) {
    return std::nullopt;
  }
  f.before_us = parse_time(filter, "before", cmd, error);
  if (!error.empty()) return std::nullopt;
  f.after_us = parse_time(filter, "after", cmd, error);
  if (!error.empty()) return std::nullopt;
  selection.filter = std::move(f);
  return selection;
}

std::optional<std::vector<SelectedEvent>> resolve_event_selection(SQLite::Database& db,
                                                                  const EventSelection& selection,
                                                                  const WriteScope& scope,
                                                                  const std::string& cmd,
                                                                  std::string& error) {
  std::vector<SelectedEvent> out;
  if (!selection.filter) {
    SQLite::Statement row(db, std::string(kColumns) + "WHERE uid = ?1");
    for (const auto& id : selection.ids) {
      row.reset();
      row.bind(1, id);
      if (!row.executeStep() || !scope.may_use(row.getColumn(2).getString()) ||
          row.getColumn(7).getInt() > scope.clearance) {
        error = cmd + ": ids: no event '" + id + "' in the namespaces you may write (" +
                (scope.all_namespaces ? std::string("*") : json(scope.namespaces).dump()) + ")";
        return std::nullopt;
      }
      out.push_back(read_row(row));
    }
    return out;
  }
  const EventFilter& f = *selection.filter;
  if (f.ns.empty() && !scope.admin) {
    error = cmd + ": filter.namespace: required (a filter across namespaces needs admin)";
    return std::nullopt;
  }
  if (!f.ns.empty() && !scope.may_use(f.ns)) {
    error = cmd + ": filter.namespace: '" + f.ns + "' is not one of your namespaces";
    return std::nullopt;
  }
  std::string sql = std::string(kColumns) + "WHERE 1";
  if (!f.ns.empty()) sql += " AND namespace = :ns";
  if (!f.agent_id.empty()) sql += " AND agent_id = :agent";
  if (!f.kind.empty()) sql += " AND kind = :kind";
  if (f.before_us) sql += " AND ts_us < :before";
  if (f.after_us) sql += " AND ts_us > :after";
  if (!f.text.empty()) sql += " AND content LIKE '%' || :text || '%' ESCAPE '\\'";
  sql += " ORDER BY seq LIMIT :limit";
  SQLite::Statement query(db, sql);
  if (!f.ns.empty()) query.bind(":ns", f.ns);
  if (!f.agent_id.empty()) query.bind(":agent", f.agent_id);
  if (!f.kind.empty()) query.bind(":kind", f.kind);
  if (f.before_us) query.bind(":before", static_cast<std::int64_t>(*f.before_us));
  if (f.after_us) query.bind(":after", static_cast<std::int64_t>(*f.after_us));
  if (!f.text.empty()) {
    std::string escaped;
    for (char c : f.text) {
      if (c == '%' || c == '_' || c == '\\') escaped += '\\';
      escaped += c;
    }
    query.bind(":text", escaped);
  }
  query.bind(":limit", static_cast<std::int64_t>(kMaxSelectedEvents + 1));
  while (query.executeStep()) {
    // Without a namespace (admin), the caller's namespaces and clearance still bound what it
    // may change.
    if (scope.may_use(query.getColumn(2).getString()) &&
        query.getColumn(7).getInt() <= scope.clearance) {
      out.push_back(read_row(query));
    }
  }
  if (out.size() > kMaxSelectedEvents) {
    error = cmd + ": filter: matches more than " + std::to_string(kMaxSelectedEvents) +
            " events; narrow it (before/after) and repeat";
    return std::nullopt;
  }
  if (out.empty()) {
    error = cmd + ": filter: matches no event";
    return std::nullopt;
  }
  return out;
}

json to_json(const std::vector<SelectedEvent>& events) {
  json out = json::array();
  for (const auto& e : events) {
    out.push_back({{"id", e.id},
                   {"namespace", e.ns},
                   {"kind", e.kind},
                   {"status", e.status},
                   {"pinned", e.pinned},
                   {"deletion_policy", e.deletion_policy}});
  }
  return out;
}

}  // namespace reflectd::memory_ops
