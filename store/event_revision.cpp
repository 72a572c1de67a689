#include "store/event_revision.hpp"

#include <string>

#include "store/event_sql.hpp"

namespace reflectd::store {

std::int64_t insert_revision(SQLite::Database& db, const RevisionRow& row) {
  // The lifecycle profile is the old event's; the salience restarts at 1.0 from received_us,
  // as for a new event.
  SQLite::Statement insert(db, "INSERT INTO events (" + std::string(kEventRowColumns) + R"sql()
SELECT ?2, ?3, namespace, kind, storage_class, source, agent_id, coalesce(?10, ts_us), ?4, ?5, ?6,
       coalesce(?7, context), tags, entities, ?8, episode_id, sequence_number, sensitivity,
       confidence, credibility, importance, salience, emotion, emotional_valence,
       emotional_arousal, lifecycle, resolution, metadata, schema_version, 1.0, ?4, decay_curve,
       half_life_s, min_salience, max_age_s, reinforcement_gain, pinned, deletion_policy, ?9
FROM events WHERE seq = ?1
RETURNING seq, namespace)sql");
  insert.bind(1, row.revised_seq);
  insert.bind(2, row.uid);
  insert.bind(3, row.uid_derived ? 1 : 0);
  insert.bind(4, row.received_us);
  insert.bind(5, row.content);
  insert.bind(6, row.content_hash);
  if (row.context_json)
    insert.bind(7, *row.context_json);
  else
    insert.bind(7);
  insert.bind(8, row.relations_json);
  if (row.archive_at_us)
    insert.bind(9, *row.archive_at_us);
  else
    insert.bind(9);
  if (row.ts_us)
    insert.bind(10, *row.ts_us);
  else
    insert.bind(10);
  if (!insert.executeStep()) {
    throw SQLite::Exception("revision: no event has seq " + std::to_string(row.revised_seq));
  }
  const std::int64_t new_seq = insert.getColumn(0).getInt64();
  const std::string ns = insert.getColumn(1).getString();
  insert.reset();

  // The revision is the namespace's latest activity, whatever time it keeps.
  SQLite::Statement raise(db, kRaiseNamespaceTime);
  raise.bind(1, ns);
  raise.bind(2, row.received_us);
  raise.exec();

  SQLite::Statement supersede(
      db, "UPDATE events SET status = 'superseded', superseded_by = ?2 WHERE seq = ?1");
  supersede.bind(1, row.revised_seq);
  supersede.bind(2, row.uid);
  supersede.exec();
  return new_seq;
}

}  // namespace reflectd::store
