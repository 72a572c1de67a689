// The numbered schema migrations. Migration N brings the schema from user_version N-1 to N.
// Never edit a released migration: add a new one.

#include <array>
#include <stdexcept>
#include <string>

#include "store/database.hpp"

namespace reflectd::store {
namespace {

constexpr std::array<const char*, 1> kMigrations{
    // 1: the event log, its full-text index and the dead-letter table.
    R"sql(
CREATE TABLE events (
  seq               INTEGER PRIMARY KEY,
  uid               TEXT    NOT NULL UNIQUE,
  uid_derived       INTEGER NOT NULL CHECK (uid_derived IN (0, 1)),
  namespace         TEXT    NOT NULL,
  kind              TEXT    NOT NULL,
  storage_class     TEXT    NOT NULL CHECK (storage_class IN ('episodic', 'semantic')),
  source            TEXT    NOT NULL,
  agent_id          TEXT,
  ts_us             INTEGER NOT NULL,
  received_us       INTEGER NOT NULL,
  content           TEXT    NOT NULL,
  content_hash      TEXT    NOT NULL,
  context           TEXT,
  tags              TEXT,
  entities          TEXT,
  relations         TEXT,
  episode_id        TEXT,
  sequence_number   INTEGER,
  sensitivity       TEXT    NOT NULL
                    CHECK (sensitivity IN ('public', 'low', 'medium', 'high', 'hyper')),
  confidence        REAL,
  credibility       REAL,
  importance        REAL,
  salience          REAL,
  emotion           TEXT,
  emotional_valence REAL,
  emotional_arousal REAL,
  lifecycle         TEXT,
  resolution        TEXT,
  metadata          TEXT,
  schema_version    INTEGER NOT NULL,
  status            TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived'))
);
CREATE INDEX events_namespace_ts ON events (namespace, ts_us);
CREATE INDEX events_episode ON events (episode_id, sequence_number) WHERE episode_id IS NOT NULL;

CREATE VIRTUAL TABLE events_fts USING fts5 (content, content = 'events', content_rowid = 'seq');
CREATE TRIGGER events_fts_insert AFTER INSERT ON events BEGIN
  INSERT INTO events_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF content ON events BEGIN
  INSERT INTO events_fts (events_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO events_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TABLE dead_letters (
  id          INTEGER PRIMARY KEY,
  received_us INTEGER NOT NULL,
  endpoint    TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  payload     BLOB    NOT NULL
);
)sql",
};

}  // namespace

int latest_schema_version() { return static_cast<int>(kMigrations.size()); }

int migrate(SQLite::Database& db) {
  int version = db.execAndGet("PRAGMA user_version").getInt();
  if (version > latest_schema_version()) {
    throw std::runtime_error(db.getFilename() + ": schema version " + std::to_string(version) +
                             " is newer than this reflectd (" +
                             std::to_string(latest_schema_version()) + ")");
  }
  while (version < latest_schema_version()) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    db.exec(kMigrations[static_cast<std::size_t>(version)]);
    ++version;
    db.exec("PRAGMA user_version = " + std::to_string(version));
    transaction.commit();
  }
  return version;
}

}  // namespace reflectd::store
