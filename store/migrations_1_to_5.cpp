// Schema migrations 1 to 5 (store/migration_list.hpp). Never edit a released migration: add
// a new one.

#include <array>

#include "store/migration_list.hpp"

namespace reflectd::store {

namespace {

// The table at namespace scope: it is data, read by migrations_1_to_5() below.
constexpr std::array<Migration, 5> kMigrations1To5{{
    // 1: the event log, its full-text index and the dead-letter table.
    {1, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 2: knowledge lifecycle (seed 000 DecisionStream), salience decay columns (seed 002),
    //    meta-observations (seed 003), job bookkeeping and the append-only audit log.
    {2, MigrationKind::kStatements, R"sql(
ALTER TABLE events ADD COLUMN salience_base REAL NOT NULL DEFAULT 1.0;
ALTER TABLE events ADD COLUMN salience_ref_us INTEGER;
ALTER TABLE events ADD COLUMN decay_curve TEXT NOT NULL DEFAULT 'exponential';
ALTER TABLE events ADD COLUMN half_life_s INTEGER NOT NULL DEFAULT 604800;
ALTER TABLE events ADD COLUMN min_salience REAL NOT NULL DEFAULT 0.0;
ALTER TABLE events ADD COLUMN max_age_s INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN reinforcement_gain REAL NOT NULL DEFAULT 0.1;
ALTER TABLE events ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN deletion_policy TEXT NOT NULL DEFAULT 'manual_only';
ALTER TABLE events ADD COLUMN archive_at_us INTEGER;
ALTER TABLE events ADD COLUMN hit_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN last_hit_us INTEGER;
CREATE INDEX events_archive_at ON events (archive_at_us) WHERE archive_at_us IS NOT NULL AND status = 'active';

CREATE TABLE knowledge (
  decision_id           TEXT    PRIMARY KEY,
  namespace             TEXT    NOT NULL,
  kind                  TEXT    NOT NULL
                        CHECK (kind IN ('decision', 'constraint', 'assumption', 'intervention', 'proposal')),
  target                TEXT    NOT NULL,
  title                 TEXT    NOT NULL,
  rationale             TEXT    NOT NULL,
  scope                 TEXT    NOT NULL DEFAULT 'local' CHECK (scope IN ('local', 'system', 'infra')),
  status                TEXT    NOT NULL CHECK (status IN ('active', 'deprecated', 'superseded',
                                                           'draft', 'accepted', 'rejected', 'falsified')),
  phase                 TEXT    NOT NULL DEFAULT 'pattern' CHECK (phase IN ('pattern', 'emergent', 'canonical')),
  vitality              TEXT    NOT NULL DEFAULT 'active' CHECK (vitality IN ('active', 'decaying', 'dormant')),
  provenance            TEXT    NOT NULL CHECK (provenance IN ('internal', 'external')),
  keywords              TEXT    NOT NULL DEFAULT '[]',
  evidence_event_ids    TEXT    NOT NULL DEFAULT '[]',
  consequences          TEXT    NOT NULL DEFAULT '[]',
  supersedes            TEXT    NOT NULL DEFAULT '[]',
  superseded_by         TEXT,
  procedural            TEXT,
  frequency             INTEGER NOT NULL DEFAULT 0,
  unique_contexts       INTEGER NOT NULL DEFAULT 0,
  hit_count             INTEGER NOT NULL DEFAULT 0,
  last_hit_us           INTEGER,
  confidence            REAL    NOT NULL DEFAULT 1.0,
  confidence_base       REAL    NOT NULL DEFAULT 1.0,
  stability_score       REAL    NOT NULL DEFAULT 0.0,
  reinforcement_density REAL    NOT NULL DEFAULT 0.0,
  coverage              REAL    NOT NULL DEFAULT 0.0,
  lifetime_days         REAL    NOT NULL DEFAULT 0.0,
  estimated_removal_cost REAL   NOT NULL DEFAULT 0.0,
  estimated_utility     REAL    NOT NULL DEFAULT 0.0,
  acceptance_score      REAL,
  salience_base         REAL    NOT NULL DEFAULT 1.0,
  salience_ref_us       INTEGER NOT NULL,
  first_seen_us         INTEGER NOT NULL,
  last_seen_us          INTEGER NOT NULL,
  updated_us            INTEGER NOT NULL,
  source_event_seq      INTEGER REFERENCES events (seq)
);
CREATE INDEX knowledge_target ON knowledge (namespace, target, kind, status);
CREATE INDEX knowledge_phase ON knowledge (namespace, phase);

CREATE TABLE knowledge_evidence (
  decision_id TEXT    NOT NULL REFERENCES knowledge (decision_id),
  event_seq   INTEGER NOT NULL REFERENCES events (seq),
  ts_us       INTEGER NOT NULL,
  weight      REAL    NOT NULL,
  PRIMARY KEY (decision_id, event_seq)
) WITHOUT ROWID;

CREATE TABLE observations (
  observation_id        TEXT    PRIMARY KEY,
  namespace             TEXT    NOT NULL,
  observation_type      TEXT    NOT NULL CHECK (observation_type IN ('pattern', 'competence', 'community', 'trend')),
  signature             TEXT    NOT NULL,
  target                TEXT,
  title                 TEXT    NOT NULL,
  text                  TEXT    NOT NULL,
  supporting_event_ids  TEXT    NOT NULL DEFAULT '[]',
  support_count         INTEGER NOT NULL DEFAULT 0,
  trajectory_count      INTEGER NOT NULL DEFAULT 0,
  success_count         INTEGER NOT NULL DEFAULT 0,
  confidence            REAL    NOT NULL DEFAULT 0.7,
  importance            REAL    NOT NULL DEFAULT 0.5,
  times_reinforced      INTEGER NOT NULL DEFAULT 0,
  is_active             INTEGER NOT NULL DEFAULT 1,
  first_detected_us     INTEGER NOT NULL,
  last_reinforced_us    INTEGER NOT NULL
);
CREATE INDEX observations_type ON observations (namespace, observation_type);

CREATE TABLE job_runs (
  run_id      INTEGER PRIMARY KEY,
  job         TEXT    NOT NULL,
  namespace   TEXT    NOT NULL DEFAULT '',
  trigger     TEXT    NOT NULL CHECK (trigger IN ('interval', 'events', 'idle', 'demand', 'startup')),
  started_us  INTEGER NOT NULL,
  finished_us INTEGER,
  status      TEXT    NOT NULL
              CHECK (status IN ('running', 'ok', 'failed', 'timeout', 'interrupted', 'skipped')),
  result      TEXT,
  error       TEXT
);
CREATE INDEX job_runs_job ON job_runs (job, run_id);
CREATE INDEX job_runs_running ON job_runs (status) WHERE status = 'running';

CREATE TABLE job_state (
  job       TEXT NOT NULL,
  namespace TEXT NOT NULL,
  key       TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (job, namespace, key)
) WITHOUT ROWID;

CREATE TABLE audit_log (
  audit_id    INTEGER PRIMARY KEY,
  record_type TEXT    NOT NULL,
  record_id   TEXT    NOT NULL,
  action      TEXT    NOT NULL CHECK (action IN ('create', 'revise', 'promote', 'supersede', 'deprecate',
                                                 'reinforce', 'decay', 'archive', 'delete', 'accept')),
  actor       TEXT    NOT NULL,
  at_us       INTEGER NOT NULL,
  rationale   TEXT    NOT NULL,
  previous    TEXT
);
CREATE INDEX audit_log_record ON audit_log (record_type, record_id);
-- Append-only: the log survives whatever happens to the records it describes.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
)sql"},
    // 3: the consolidation job's incremental state: each event's trajectory and target, the
    //    evidence weight per target, problem occurrences and finished trajectories.
    {3, MigrationKind::kStatements, R"sql(
CREATE TABLE event_targets (
  seq           INTEGER PRIMARY KEY REFERENCES events (seq),
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  target        TEXT,
  weight        REAL    NOT NULL
);
CREATE INDEX event_targets_target ON event_targets (namespace, target) WHERE target IS NOT NULL;
CREATE INDEX event_targets_trajectory ON event_targets (namespace, trajectory_id);

CREATE TABLE consolidation_targets (
  namespace TEXT    NOT NULL,
  target    TEXT    NOT NULL,
  weight    REAL    NOT NULL DEFAULT 0,
  events    INTEGER NOT NULL DEFAULT 0,
  commits   INTEGER NOT NULL DEFAULT 0,
  errors    INTEGER NOT NULL DEFAULT 0,
  successes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, target)
) WITHOUT ROWID;

CREATE TABLE problem_occurrences (
  namespace     TEXT    NOT NULL,
  signature     TEXT    NOT NULL,
  seq           INTEGER NOT NULL REFERENCES events (seq),
  trajectory_id TEXT    NOT NULL,
  target        TEXT,
  ts_us         INTEGER NOT NULL,
  PRIMARY KEY (namespace, signature, seq)
) WITHOUT ROWID;

CREATE TABLE trajectory_outcomes (
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  target        TEXT,
  success       INTEGER NOT NULL,
  tool_sequence TEXT    NOT NULL,
  procedural    TEXT,
  final_seq     INTEGER NOT NULL REFERENCES events (seq),
  PRIMARY KEY (namespace, trajectory_id)
) WITHOUT ROWID;
CREATE INDEX trajectory_outcomes_tools ON trajectory_outcomes (namespace, tool_sequence, success);
)sql"},
    // 4: entities, aliases, event links and relationships (seed 003 MemoryEntity,
    //    MemoryEntityAlias, MemoryFactEntityLink, MemoryEntityRelationship), lexical clusters
    //    (seed 003 MemoryCluster) with their incremental TF-IDF state and inverted index, and
    //    the members of community observations.
    {4, MigrationKind::kStatements, R"sql(
CREATE TABLE entities (
  entity_id        INTEGER PRIMARY KEY,
  namespace        TEXT    NOT NULL,
  canonical_key    TEXT    NOT NULL,
  display_name     TEXT    NOT NULL,
  entity_type      TEXT    NOT NULL,
  mention_count    INTEGER NOT NULL DEFAULT 0,
  first_seen_us    INTEGER NOT NULL,
  last_seen_us     INTEGER NOT NULL,
  importance_score REAL    NOT NULL DEFAULT 0,
  summary_text     TEXT,
  is_active        INTEGER NOT NULL DEFAULT 1,
  UNIQUE (namespace, canonical_key)
);
CREATE INDEX entities_importance ON entities (namespace, importance_score DESC);

CREATE TABLE entity_aliases (
  namespace     TEXT NOT NULL,
  alias         TEXT NOT NULL,
  canonical_key TEXT NOT NULL,
  origin        TEXT NOT NULL CHECK (origin IN ('path', 'declared')),
  first_seq     INTEGER NOT NULL REFERENCES events (seq),
  PRIMARY KEY (namespace, alias)
) WITHOUT ROWID;

CREATE TABLE event_entities (
  seq        INTEGER NOT NULL REFERENCES events (seq),
  entity_id  INTEGER NOT NULL REFERENCES entities (entity_id),
  is_primary INTEGER NOT NULL CHECK (is_primary IN (0, 1)),
  source     TEXT    NOT NULL,
  PRIMARY KEY (seq, entity_id)
) WITHOUT ROWID;
CREATE INDEX event_entities_entity ON event_entities (entity_id, seq);

CREATE TABLE entity_relationships (
  relationship_id   INTEGER PRIMARY KEY,
  namespace         TEXT    NOT NULL,
  source_id         INTEGER NOT NULL REFERENCES entities (entity_id),
  target_id         INTEGER NOT NULL REFERENCES entities (entity_id),
  rel_type          TEXT    NOT NULL,
  strength          REAL    NOT NULL,
  strength_base     REAL    NOT NULL,
  strength_ref_us   INTEGER NOT NULL,
  mention_count     INTEGER NOT NULL,
  evidence_seq      INTEGER NOT NULL REFERENCES events (seq),
  last_evidence_seq INTEGER NOT NULL REFERENCES events (seq),
  valid_from_us     INTEGER NOT NULL,
  valid_to_us       INTEGER,
  unswept           INTEGER NOT NULL DEFAULT 1,
  UNIQUE (namespace, source_id, target_id, rel_type)
);
CREATE INDEX entity_relationships_target ON entity_relationships (target_id);
CREATE INDEX entity_relationships_unswept ON entity_relationships (namespace) WHERE unswept = 1;

CREATE TABLE clusters (
  cluster_id      INTEGER PRIMARY KEY,
  namespace       TEXT    NOT NULL,
  label           TEXT    NOT NULL,
  summary_text    TEXT    NOT NULL,
  medoid_seq      INTEGER NOT NULL REFERENCES events (seq),
  medoid_vector   BLOB    NOT NULL,
  centroid        BLOB    NOT NULL,
  member_count    INTEGER NOT NULL,
  duplicate_count INTEGER NOT NULL DEFAULT 0,
  first_seq       INTEGER NOT NULL REFERENCES events (seq),
  last_seq        INTEGER NOT NULL REFERENCES events (seq),
  first_seen_us   INTEGER NOT NULL,
  last_seen_us    INTEGER NOT NULL,
  is_active       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX clusters_namespace ON clusters (namespace, member_count DESC);

CREATE TABLE event_clusters (
  seq        INTEGER PRIMARY KEY REFERENCES events (seq),
  cluster_id INTEGER NOT NULL REFERENCES clusters (cluster_id),
  role       TEXT    NOT NULL CHECK (role IN ('member', 'duplicate')),
  similarity REAL    NOT NULL
);
CREATE INDEX event_clusters_cluster ON event_clusters (cluster_id, seq);

CREATE TABLE cluster_terms (
  namespace TEXT    NOT NULL,
  term      TEXT    NOT NULL,
  df        INTEGER NOT NULL,
  surface   TEXT    NOT NULL,
  PRIMARY KEY (namespace, term)
) WITHOUT ROWID;

CREATE TABLE cluster_postings (
  namespace   TEXT    NOT NULL,
  term        TEXT    NOT NULL,
  cluster_id  INTEGER NOT NULL REFERENCES clusters (cluster_id),
  touched_seq INTEGER NOT NULL,
  PRIMARY KEY (namespace, term, cluster_id)
) WITHOUT ROWID;
CREATE INDEX cluster_postings_recent ON cluster_postings (namespace, term, touched_seq);

CREATE TABLE cluster_entities (
  cluster_id INTEGER NOT NULL REFERENCES clusters (cluster_id),
  entity_id  INTEGER NOT NULL REFERENCES entities (entity_id),
  mentions   INTEGER NOT NULL,
  PRIMARY KEY (cluster_id, entity_id)
) WITHOUT ROWID;

CREATE TABLE community_members (
  observation_id TEXT    NOT NULL REFERENCES observations (observation_id),
  member_type    TEXT    NOT NULL CHECK (member_type IN ('entity', 'cluster')),
  member_id      INTEGER NOT NULL,
  PRIMARY KEY (observation_id, member_type, member_id)
) WITHOUT ROWID;
)sql"},
    // 5: medallions (seed 001: the exact `medallions` table), their scopes in join tables so
    //    scope queries run in SQL, stable item ids, and the history of previous versions.
    {5, MigrationKind::kStatements, R"sql(
CREATE TABLE medallions (
    id TEXT PRIMARY KEY,
    content_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    status TEXT NOT NULL,
    scope_graph_nodes TEXT NOT NULL,
    scope_tags TEXT NOT NULL,
    knowledge_min_ts TEXT,
    knowledge_max_ts TEXT,
    schema_version TEXT NOT NULL DEFAULT 'medallion.v1'
);
CREATE INDEX idx_medallions_status ON medallions(status);
CREATE INDEX idx_medallions_updated_at ON medallions(updated_at DESC);
CREATE INDEX idx_medallions_scope_nodes ON medallions(scope_graph_nodes);
CREATE INDEX idx_medallions_scope_tags ON medallions(scope_tags);

CREATE TABLE medallion_scopes (
  medallion_id TEXT PRIMARY KEY REFERENCES medallions (id),
  namespace    TEXT NOT NULL,
  config_hash  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX medallion_scopes_namespace ON medallion_scopes (namespace);
CREATE TABLE medallion_nodes (
  medallion_id TEXT NOT NULL REFERENCES medallions (id),
  node         TEXT NOT NULL,
  PRIMARY KEY (medallion_id, node)
) WITHOUT ROWID;
CREATE INDEX medallion_nodes_node ON medallion_nodes (node);
CREATE TABLE medallion_tags (
  medallion_id TEXT NOT NULL REFERENCES medallions (id),
  tag          TEXT NOT NULL,
  PRIMARY KEY (medallion_id, tag)
) WITHOUT ROWID;
CREATE INDEX medallion_tags_tag ON medallion_tags (tag);
CREATE TABLE medallion_items (
  medallion_id TEXT NOT NULL,
  item_kind    TEXT NOT NULL CHECK (item_kind IN ('D', 'Q')),
  source_id    TEXT NOT NULL,
  item_id      TEXT NOT NULL,
  PRIMARY KEY (medallion_id, item_kind, source_id)
) WITHOUT ROWID;
CREATE TABLE medallion_history (
  medallion_id TEXT    NOT NULL,
  version      INTEGER NOT NULL,
  updated_at   TEXT    NOT NULL,
  content_json TEXT    NOT NULL,
  PRIMARY KEY (medallion_id, version)
) WITHOUT ROWID;
)sql"},
}};

}  // namespace

std::span<const Migration> migrations_1_to_5() { return kMigrations1To5; }

}  // namespace reflectd::store
