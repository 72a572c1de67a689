#include "recall/read_back.hpp"

#include <fmt/format.h>

#include "common/timestamp.hpp"
#include "recall/event_rows.hpp"

namespace reflectd::recall {
namespace {

using nlohmann::json;

constexpr std::int64_t kDefaultEpisodeEvents = 200;

// Columns named *_json hold JSON text (null when redacted); *_us are rendered as RFC 3339.
std::string full_columns() {
  return fmt::format(R"sql(
e.uid AS id, e.seq, e.namespace, e.kind, e.source, e.agent_id, e.ts_us, e.received_us,
e.episode_id, e.sequence_number, e.sensitivity, e.storage_class,
coalesce((SELECT k.status FROM knowledge k WHERE k.source_event_seq = e.seq LIMIT 1), e.status)
  AS status, e.superseded_by,
CASE WHEN {0} > ?20 THEN ?23 ELSE e.content END AS content,
CASE WHEN {0} > ?20 THEN NULL ELSE e.context END AS context_json,
CASE WHEN {0} > ?20 THEN NULL ELSE e.tags END AS tags_json,
CASE WHEN {0} > ?20 THEN NULL ELSE e.entities END AS entities_json,
CASE WHEN {0} > ?20 THEN NULL ELSE e.relations END AS relations_json,
CASE WHEN {0} > ?20 THEN NULL ELSE e.metadata END AS metadata_json,
CASE WHEN {0} > ?20 THEN NULL ELSE e.resolution END AS resolution_json,
e.confidence, e.credibility, e.importance,
CASE WHEN {0} > ?20 THEN NULL ELSE e.emotion END AS emotion, e.emotional_valence,
e.emotional_arousal,
json_object('curve', e.decay_curve, 'half_life_seconds', e.half_life_s,
            'min_salience', e.min_salience, 'max_age_seconds', e.max_age_s,
            'reinforcement_gain', e.reinforcement_gain, 'pinned', json(CASE e.pinned WHEN 1
            THEN 'true' ELSE 'false' END), 'deletion_policy', e.deletion_policy,
            'salience_base', e.salience_base) AS lifecycle_json,
rd_salience(e.salience_base, e.salience_ref_us, e.received_us, e.decay_curve, e.half_life_s,
            e.min_salience, e.max_age_s, e.pinned, ?24) AS salience_now,
e.access_count, e.last_accessed_us, e.hit_count, e.last_hit_us,
{0} > ?20 AS redacted)sql",
                     kSensitivityRankSql);
}

std::string scope_where() {
  return fmt::format(
      "{0} <= ?20 + 1 AND (?21 = 1 OR e.namespace IN (SELECT value FROM "
      "json_each(?22)))",
      kSensitivityRankSql);
}

void bind_scope(SQLite::Statement& s, const ReadScope& scope, std::int64_t now_us) {
  s.bind(20, scope.clearance);
  s.bind(21, scope.all_namespaces ? 1 : 0);
  s.bind(22, json(scope.namespaces).dump());
  s.bind(23, kRedacted);
  s.bind(24, now_us);
}

json row_json(SQLite::Statement& s) {
  json row = json::object();
  for (int i = 0; i < s.getColumnCount(); ++i) {
    std::string name = s.getColumnName(i);
    const SQLite::Column c = s.getColumn(i);
    if (name.ends_with("_json")) {
      name.resize(name.size() - 5);
      row[name] = c.isNull() ? json() : json::parse(c.getString(), nullptr, false);
    } else if (name.ends_with("_us")) {
      name.resize(name.size() - 3);
      row[name] = c.isNull() ? json() : json(format_rfc3339_us(c.getInt64()));
    } else if (name == "redacted") {
      row[name] = c.getInt() != 0;
    } else if (c.isNull()) {
      row[name] = nullptr;
    } else if (c.isInteger()) {
      row[name] = c.getInt64();
    } else if (c.isFloat()) {
      row[name] = c.getDouble();
    } else {
      row[name] = c.getString();
    }
  }
  return row;
}

}  // namespace

ReadBack::ReadBack(SQLite::Database& db)
    : by_id_(db,
             "SELECT " + full_columns() + " FROM events e WHERE e.uid = ?1 AND " + scope_where()),
      by_episode_(db, "SELECT " + full_columns() +
                          " FROM events e WHERE e.namespace IN (SELECT namespace FROM "
                          "event_namespaces WHERE ?1 = '' OR namespace = ?1) AND e.episode_id = "
                          "?2 AND e.sequence_number > ?3 AND " +
                          scope_where() + " ORDER BY e.sequence_number, e.seq LIMIT ?4") {}

std::variant<json, RecallError> ReadBack::get(const json& request, const ReadScope& scope,
                                              std::int64_t now_us) {
  const auto ids = request.find("ids");
  const std::string rule =
      "ids: must be an array of 1 to " + std::to_string(kMaxGetIds) + " event ids (strings)";
  if (ids == request.end() || !ids->is_array() || ids->empty() || ids->size() > kMaxGetIds) {
    return RecallError{rule};
  }
  json events = json::array();
  json missing = json::array();
  for (const json& id : *ids) {
    if (!id.is_string()) return RecallError{rule};
    by_id_.reset();
    by_id_.bind(1, id.get<std::string>());
    bind_scope(by_id_, scope, now_us);
    if (by_id_.executeStep()) {
      events.push_back(row_json(by_id_));
    } else {
      missing.push_back(id);
    }
    by_id_.reset();
  }
  return json{{"ok", true}, {"events", std::move(events)}, {"missing", std::move(missing)}};
}

std::variant<json, RecallError> ReadBack::episode(const json& request, const ReadScope& scope,
                                                  std::int64_t now_us) {
  std::string episode;
  std::string ns;
  if (auto error = string_field(request, "episode_id", episode)) return RecallError{*error};
  if (episode.empty()) return RecallError{"episode_id: is required (a non-empty string)"};
  if (auto error = string_field(request, "namespace", ns)) return RecallError{*error};
  std::int64_t limit = kDefaultEpisodeEvents;
  if (auto error = int_field(request, "limit", 1, kMaxEpisodeEvents, limit)) {
    return RecallError{*error};
  }
  std::int64_t after = -1;
  if (auto error = int_field(request, "after_sequence_number", -1,
                             std::numeric_limits<std::int64_t>::max(), after)) {
    return RecallError{*error};
  }
  by_episode_.reset();
  by_episode_.bind(1, ns);
  by_episode_.bind(2, episode);
  by_episode_.bind(3, after);
  by_episode_.bind(4, limit);
  bind_scope(by_episode_, scope, now_us);
  json events = json::array();
  while (by_episode_.executeStep()) events.push_back(row_json(by_episode_));
  by_episode_.reset();
  return json{{"ok", true}, {"episode_id", episode}, {"events", std::move(events)}};
}

}  // namespace reflectd::recall
