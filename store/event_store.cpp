#include "store/event_store.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "store/bound_exec.hpp"
#include "store/event_sql.hpp"

namespace reflectd::store {
namespace {

std::string insert_event_sql() {
  return "INSERT INTO events (" + std::string(kEventRowColumns) + R"sql()
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
        ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37,
        ?38, ?39)
ON CONFLICT (uid) DO NOTHING)sql";
}

constexpr const char* kFindUid = "SELECT seq FROM events WHERE uid = ?1";

constexpr const char* kMarkMedallionsStale =
    "UPDATE medallions SET status = 'stale' WHERE status = 'active' AND id IN "
    "(SELECT medallion_id FROM medallion_scopes WHERE namespace IN (?1, '') "
    "AND config_hash != 'agent')";

constexpr const char* kInsertDeadLetter =
    "INSERT INTO dead_letters (received_us, endpoint, reason, payload) VALUES (?1, ?2, ?3, ?4)";

// Binds text without copying, or NULL when empty (optional fields).
void bind_text_or_null(SQLite::Statement& statement, int index, const std::string& value) {
  if (value.empty()) {
    statement.bind(index);
  } else {
    statement.bindNoCopy(index, value);
  }
}

void bind_optional(SQLite::Statement& statement, int index, const std::optional<double>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);
  }
}

}  // namespace

EventStore::EventStore(SQLite::Database& db, NamespaceTimes times)
    : db_(db),
      times_(times),
      insert_event_(db, insert_event_sql()),
      find_uid_(db, kFindUid),
      insert_dead_letter_(db, kInsertDeadLetter),
      mark_stale_(db, kMarkMedallionsStale) {}

void mark_medallions_stale(SQLite::Database& db, const std::string& ns) {
  SQLite::Statement mark(db, kMarkMedallionsStale);
  mark.bind(1, ns);
  mark.exec();
}

void EventStore::mark_medallions_stale(const std::string& ns) {
  store::exec_bound(mark_stale_, ns);
}

std::optional<ContentDedup> parse_content_dedup(std::string_view text) {
  if (text == "off") return ContentDedup::kOff;
  if (text == "namespace") return ContentDedup::kNamespace;
  if (text == "agent") return ContentDedup::kAgent;
  return std::nullopt;
}

void EventStore::enable_content_dedup(ContentDedup mode) {
  dedup_ = mode;
  if (mode == ContentDedup::kOff) {
    find_content_.reset();
    return;
  }
  db_.exec("CREATE INDEX IF NOT EXISTS events_content_hash ON events (namespace, content_hash)");
  find_content_.emplace(db_, R"sql(
SELECT seq, uid FROM events
WHERE namespace = ?1 AND content_hash = ?2 AND (?3 = 0 OR agent_id IS ?4)
ORDER BY seq LIMIT 1)sql");
}

std::optional<StoredCopy> EventStore::find_same_content(const EventRecord& event) {
  if (!find_content_) return std::nullopt;
  auto& s = *find_content_;
  s.reset();
  s.bindNoCopy(1, event.ns);
  s.bindNoCopy(2, event.content_hash);
  s.bind(3, dedup_ == ContentDedup::kAgent ? 1 : 0);
  bind_text_or_null(s, 4, event.agent_id);
  std::optional<StoredCopy> copy;
  if (s.executeStep()) copy = StoredCopy{s.getColumn(0).getInt64(), s.getColumn(1).getString()};
  s.reset();
  return copy;
}

std::optional<std::int64_t> EventStore::find(const std::string& uid) {
  find_uid_.reset();
  find_uid_.bindNoCopy(1, uid);
  std::optional<std::int64_t> seq;
  if (find_uid_.executeStep()) seq = find_uid_.getColumn(0).getInt64();
  find_uid_.reset();
  return seq;
}

InsertOutcome EventStore::insert(const EventRecord& e, const ResolvedLifecycle& l) {
  auto& s = insert_event_;
  s.reset();
  s.bindNoCopy(1, e.uid);
  s.bind(2, e.uid_derived ? 1 : 0);
  s.bindNoCopy(3, e.ns);
  s.bindNoCopy(4, e.kind);
  s.bind(5, to_string(e.storage_class));
  s.bindNoCopy(6, e.source);
  bind_text_or_null(s, 7, e.agent_id);
  s.bind(8, static_cast<std::int64_t>(e.timestamp_us));
  s.bind(9, static_cast<std::int64_t>(e.received_us));
  s.bindNoCopy(10, e.content);
  s.bindNoCopy(11, e.content_hash);
  bind_text_or_null(s, 12, e.context_json);
  bind_text_or_null(s, 13, e.tags_json);
  bind_text_or_null(s, 14, e.entities_json);
  bind_text_or_null(s, 15, e.relations_json);
  bind_text_or_null(s, 16, e.episode_id);
  if (e.sequence_number) {
    s.bind(17, static_cast<std::int64_t>(*e.sequence_number));
  } else {
    s.bind(17);
  }
  s.bindNoCopy(18, e.sensitivity);
  bind_optional(s, 19, e.confidence);
  bind_optional(s, 20, e.credibility);
  bind_optional(s, 21, e.importance);
  bind_optional(s, 22, e.salience);
  bind_text_or_null(s, 23, e.emotion);
  bind_optional(s, 24, e.emotional_valence);
  bind_optional(s, 25, e.emotional_arousal);
  bind_text_or_null(s, 26, e.lifecycle_json);
  bind_text_or_null(s, 27, e.resolution_json);
  bind_text_or_null(s, 28, e.metadata_json);
  s.bind(29, static_cast<std::int64_t>(e.schema_version));
  s.bind(30, l.base);
  s.bind(31, static_cast<std::int64_t>(l.ref_us));
  s.bind(32, model::to_string(l.profile.curve));
  s.bind(33, static_cast<std::int64_t>(l.profile.half_life_s));
  s.bind(34, l.profile.min_salience);
  s.bind(35, static_cast<std::int64_t>(l.profile.max_age_s));
  s.bind(36, l.profile.reinforcement_gain);
  s.bind(37, l.profile.pinned ? 1 : 0);
  s.bind(38, model::to_string(l.profile.deletion_policy));
  if (l.archive_at) {
    s.bind(39, static_cast<std::int64_t>(*l.archive_at));
  } else {
    s.bind(39);
  }
  s.exec();
  if (db_.getChanges() == 1) {
    const std::int64_t seq = db_.getLastInsertRowid();
    if (times_ == NamespaceTimes::kPerEvent) {
      raise_namespace_time(e.ns, e.timestamp_us);
    } else if (const auto [it, inserted] = pending_times_.try_emplace(e.ns, e.timestamp_us);
               !inserted) {
      it->second = std::max(it->second, static_cast<std::int64_t>(e.timestamp_us));
    }
    return {seq, false};
  }

  return {find(e.uid).value_or(0), true};
}

void EventStore::raise_namespace_time(const std::string& ns, std::int64_t ts_us) {
  if (!raise_time_) raise_time_.emplace(db_, kRaiseNamespaceTime);
  raise_time_->reset();
  raise_time_->bindNoCopy(1, ns);
  raise_time_->bind(2, ts_us);
  raise_time_->exec();
}

void EventStore::write_namespace_times() {
  for (const auto& [ns, ts_us] : pending_times_) raise_namespace_time(ns, ts_us);
  pending_times_.clear();
}

void EventStore::insert_dead_letter(std::string_view payload, std::string_view endpoint,
                                    std::string_view reason, std::int64_t received_us) {
  auto& s = insert_dead_letter_;
  s.reset();
  s.bind(1, static_cast<std::int64_t>(received_us));
  s.bind(2, std::string(endpoint));
  s.bind(3, std::string(reason));
  s.bind(4, payload.data(), static_cast<int>(payload.size()));
  s.exec();
}

}  // namespace reflectd::store
