// The numbered schema migrations. Migration N brings the schema from user_version N-1 to N.
// Never edit a released migration: add a new one.

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "store/database.hpp"

namespace reflectd::store {
namespace {

constexpr std::array<const char*, 44> kMigrations{
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

    // 2: knowledge lifecycle (seed 000 DecisionStream), salience decay columns (seed 002),
    //    meta-observations (seed 003), job bookkeeping and the append-only audit log.
    R"sql(
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
)sql",
    // 3: the consolidation job's incremental state: each event's trajectory and target, the
    //    evidence weight per target, problem occurrences and finished trajectories.
    R"sql(
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
)sql",
    // 4: entities, aliases, event links and relationships (seed 003 MemoryEntity,
    //    MemoryEntityAlias, MemoryFactEntityLink, MemoryEntityRelationship), lexical clusters
    //    (seed 003 MemoryCluster) with their incremental TF-IDF state and inverted index, and
    //    the members of community observations.
    R"sql(
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
)sql",
    // 5: medallions (seed 001: the exact `medallions` table), their scopes in join tables so
    //    scope queries run in SQL, stable item ids, and the history of previous versions.
    R"sql(
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
)sql",
    // 6: the full-text index leaves the write path (store/fts_index.hpp). The insert trigger
    //    goes; the Writer indexes committed events in batches and records how far it got in
    //    fts_state.indexed_seq, in the same transaction. Everything stored so far was indexed
    //    by the old trigger. Delete and update reach events_fts only for indexed rows; deleting
    //    the watermark row lowers the watermark so that a reused seq is indexed again.
    R"sql(
DROP TRIGGER events_fts_insert;
DROP TRIGGER events_fts_delete;
DROP TRIGGER events_fts_update;
CREATE TABLE fts_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_seq INTEGER NOT NULL
);
INSERT INTO fts_state (id, indexed_seq) SELECT 1, coalesce(max(seq), 0) FROM events;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events
WHEN old.seq <= (SELECT indexed_seq FROM fts_state WHERE id = 1) BEGIN
  INSERT INTO events_fts (events_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  UPDATE fts_state SET indexed_seq = (SELECT coalesce(max(seq), 0) FROM events WHERE seq < old.seq)
  WHERE id = 1 AND indexed_seq = old.seq;
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF content ON events
WHEN old.seq <= (SELECT indexed_seq FROM fts_state WHERE id = 1) BEGIN
  INSERT INTO events_fts (events_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO events_fts (rowid, content) VALUES (new.seq, new.content);
END;
)sql",
    // 7: the jobs read each namespace's active events in seq order after a watermark
    //    (`namespace = ? AND status = 'active' AND seq > ? ORDER BY seq LIMIT chunk`). With only
    //    (namespace, ts_us) SQLite read and sorted every event of the namespace for each chunk:
    //    quadratic in the events. This index makes each chunk a range scan; ts_us in it also
    //    answers the medallion job's count/min/max per namespace without touching the table.
    //    The others serve the consolidation job's per-stream queries, which read only what a
    //    chunk added: a stream's latest evidence and latest "Solution:" lines (newest first,
    //    stopping early), whether a trajectory already was a context of a target, and a
    //    target's latest successful procedure (it scanned every outcome of the namespace).
    R"sql(
CREATE INDEX events_namespace_active_seq ON events (namespace, status, seq, ts_us);
CREATE INDEX knowledge_evidence_time ON knowledge_evidence (decision_id, ts_us, event_seq);
CREATE INDEX event_targets_contexts ON event_targets (namespace, target, trajectory_id, seq)
  WHERE target IS NOT NULL AND weight > 0;
CREATE INDEX trajectory_outcomes_target ON trajectory_outcomes (namespace, target, success, final_seq);
)sql",
    // 8: derived records carry a sensitivity (seed 002 MemoryRecord.sensitivity): the highest
    //    level among the events they were derived from, so a summary never shows a reader what
    //    the events behind it would not; it only ever rises. Knowledge keeps it by triggers on
    //    its evidence rows (in the transaction that writes them); entities and clusters by the
    //    cluster job, which reads each event's level anyway (a trigger per link row cost it
    //    ~12%). Existing rows are backfilled here.
    //    Observations and medallions are ranked when read instead (daemon/daemon.cpp): the
    //    consolidation job rewrites observations at every chunk, and triggers there doubled its
    //    cost; they are few, so ranking them from their sources per read is cheap.
    R"sql(
ALTER TABLE knowledge ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity IN ('public', 'low', 'medium', 'high', 'hyper'));
ALTER TABLE entities ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity IN ('public', 'low', 'medium', 'high', 'hyper'));
ALTER TABLE clusters ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity IN ('public', 'low', 'medium', 'high', 'hyper'));
UPDATE knowledge SET sensitivity = (CASE m.r WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' ELSE 'hyper' END) FROM (
  SELECT x.decision_id AS k, max((CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END)) AS r FROM (SELECT decision_id, event_seq AS seq FROM knowledge_evidence UNION ALL SELECT decision_id, source_event_seq FROM knowledge WHERE source_event_seq IS NOT NULL) x JOIN events e ON e.seq = x.seq GROUP BY x.decision_id) AS m
WHERE knowledge.decision_id = m.k;
UPDATE entities SET sensitivity = (CASE m.r WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' ELSE 'hyper' END) FROM (
  SELECT ee.entity_id AS k, max((CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END)) AS r FROM event_entities ee JOIN events e ON e.seq = ee.seq GROUP BY ee.entity_id) AS m
WHERE entities.entity_id = m.k;
UPDATE clusters SET sensitivity = (CASE m.r WHEN 0 THEN 'public' WHEN 1 THEN 'low' WHEN 2 THEN 'medium' WHEN 3 THEN 'high' ELSE 'hyper' END) FROM (
  SELECT ec.cluster_id AS k, max((CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END)) AS r FROM event_clusters ec JOIN events e ON e.seq = ec.seq GROUP BY ec.cluster_id) AS m
WHERE clusters.cluster_id = m.k;
CREATE TRIGGER knowledge_evidence_sensitivity AFTER INSERT ON knowledge_evidence BEGIN
  UPDATE knowledge SET sensitivity = e.sensitivity FROM (SELECT sensitivity FROM events WHERE seq = new.event_seq) AS e
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END);
END;
CREATE TRIGGER knowledge_source_sensitivity AFTER INSERT ON knowledge WHEN new.source_event_seq IS NOT NULL BEGIN
  UPDATE knowledge SET sensitivity = e.sensitivity FROM (SELECT sensitivity FROM events WHERE seq = new.source_event_seq) AS e
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END);
END;
)sql",
    // 9: incremental state of the importance job and of the entity summaries, so that a run
    //    costs what changed since the last one instead of every mention (docs/PERFORMANCE.md).
    //    entity_mention_weights: per entity, the sum in seq order of 2^((ts - ref_us) / h) over
    //    its `mentions` mentions (jobs/importance.hpp); importance_state: per namespace the
    //    reference time, the half-life it was computed with, the newest event time and the
    //    largest mention seq summed. entity_summary_state: each entity's two most salient
    //    events, the number of mentions and the largest mention seq they were chosen from
    //    (jobs/entity_summaries.hpp); entity_summary_watermarks: per namespace the largest
    //    mention seq the summaries have seen. New mentions are found by reading event_entities
    //    after those watermarks, and an entity whose mention_count differs from the mentions
    //    its state has seen plus the new ones is recomputed from scratch, so the cluster job's
    //    inserts carry no trigger. The triggers cover what changes a summary or a weight
    //    without a new mention: a mentioned event's salience, hits, status or text
    //    (reinforcement, decay's archiving), a renamed, retyped, moved or (de)activated entity,
    //    a rewired or deleted edge, a deleted or changed mention. Edges are created and
    //    reinforced only by the cluster job, from an event that mentions both endpoints, so the
    //    new mention already brings the source entity (jobs/entities.cpp). entity_summary_dirty
    //    holds those entities; full = 1 when the two most salient events must be searched among
    //    all mentions again. Every entity starts dirty (full).
    R"sql(
CREATE TABLE entity_mention_weights (
  entity_id   INTEGER PRIMARY KEY,
  weight_sum  REAL    NOT NULL,
  mentions    INTEGER NOT NULL,
  through_seq INTEGER NOT NULL
);
CREATE TABLE importance_state (
  namespace      TEXT    PRIMARY KEY,
  half_life_days REAL    NOT NULL,
  ref_us         INTEGER NOT NULL,
  max_ts_us      INTEGER NOT NULL,
  through_seq    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE entity_summary_dirty (
  entity_id INTEGER PRIMARY KEY,
  full      INTEGER NOT NULL CHECK (full IN (0, 1))
);
CREATE TABLE entity_summary_state (
  entity_id   INTEGER PRIMARY KEY,
  top1_seq    INTEGER,
  top2_seq    INTEGER,
  mentions    INTEGER NOT NULL,
  through_seq INTEGER NOT NULL
);
CREATE TABLE entity_summary_watermarks (
  namespace   TEXT    PRIMARY KEY,
  through_seq INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM entities;

CREATE TRIGGER event_entities_deleted AFTER DELETE ON event_entities BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id = old.entity_id;
  DELETE FROM importance_state WHERE namespace = (SELECT namespace FROM entities WHERE entity_id = old.entity_id);
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER event_entities_updated AFTER UPDATE ON event_entities BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id IN (old.entity_id, new.entity_id);
  DELETE FROM importance_state WHERE namespace IN (SELECT namespace FROM entities
    WHERE entity_id IN (old.entity_id, new.entity_id));
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1), (new.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER events_summary_inputs AFTER UPDATE OF salience_base, hit_count, status, content ON events BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM event_entities WHERE seq = new.seq
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER entities_inserted AFTER INSERT ON entities BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (new.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER entities_summary_inputs AFTER UPDATE OF namespace, display_name, entity_type, is_active
  ON entities BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (new.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER entities_key_changed AFTER UPDATE OF canonical_key, namespace ON entities BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full)
  SELECT source_id, 0 FROM entity_relationships WHERE target_id = new.entity_id ON CONFLICT (entity_id) DO NOTHING;
  DELETE FROM entity_mention_weights WHERE entity_id = new.entity_id AND old.namespace != new.namespace;
END;
CREATE TRIGGER entity_relationships_rewired AFTER UPDATE OF namespace, source_id, target_id
  ON entity_relationships BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.source_id, 0), (new.source_id, 0)
  ON CONFLICT (entity_id) DO NOTHING;
END;
CREATE TRIGGER entity_relationships_deleted AFTER DELETE ON entity_relationships BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.source_id, 0) ON CONFLICT (entity_id) DO NOTHING;
END;
)sql",
    // 10: archiving without a full re-search (jobs/entity_summaries.hpp). The decay job archives
    // every event whose time has come, and each archived event marked all its entities for a
    // search over all their mentions (hub entities: tens of thousands each, at every sweep).
    // A summary depends on its entity's mentioned events only through the two most salient
    // active ones (entity_summary_state), and the state counts mentions whatever their status:
    // an event that only leaves `active` changes the summaries of the entities that kept it
    // among their two (or have no state yet), and no other. Every other change of the inputs
    // still marks every mentioning entity, as before.
    R"sql(
DROP TRIGGER events_summary_inputs;
CREATE TRIGGER events_summary_inputs AFTER UPDATE OF salience_base, hit_count, status, content ON events
  WHEN NOT (old.status = 'active' AND new.status != 'active' AND old.salience_base IS new.salience_base
            AND old.hit_count IS new.hit_count AND old.content IS new.content) BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM event_entities WHERE seq = new.seq
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
CREATE TRIGGER events_summary_deactivated AFTER UPDATE OF salience_base, hit_count, status, content ON events
  WHEN old.status = 'active' AND new.status != 'active' AND old.salience_base IS new.salience_base
       AND old.hit_count IS new.hit_count AND old.content IS new.content BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full)
  SELECT ee.entity_id, 1 FROM event_entities ee LEFT JOIN entity_summary_state s ON s.entity_id = ee.entity_id
  WHERE ee.seq = new.seq AND (s.entity_id IS NULL OR s.top1_seq IS new.seq OR s.top2_seq IS new.seq)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
END;
)sql",
    // 11: ingest at 100,000 events/s (docs/PERFORMANCE.md, "Targets and results"). Every insert
    //    went into events_namespace_ts (namespace, ts_us) at its timestamp's place: events that
    //    do not arrive in time order (a replayed or imported history, agents' clocks) each
    //    dirtied another leaf page, so a commit of 2,000 events wrote ~2,000 index pages to the
    //    WAL (4.9 KB written per 0.8 KB row) and inserts ran at half the rate they have
    //    without it. Its only reader was the importance job's newest event time per namespace,
    //    now one row per namespace kept by triggers (exact: every change of events' namespace
    //    or ts_us goes through them). The
    //    namespace list and the medallion spans use events_namespace_active_seq, which covers
    //    ts_us. events_episode served no query at all.
    R"sql(
DROP INDEX events_namespace_ts;
DROP INDEX events_episode;
CREATE TABLE event_namespaces (
  namespace TEXT    PRIMARY KEY,
  max_ts_us INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO event_namespaces (namespace, max_ts_us)
  SELECT namespace, max(ts_us) FROM events GROUP BY namespace;
CREATE TRIGGER events_namespace_inserted AFTER INSERT ON events BEGIN
  INSERT INTO event_namespaces (namespace, max_ts_us) VALUES (new.namespace, new.ts_us)
  ON CONFLICT (namespace) DO UPDATE SET max_ts_us = excluded.max_ts_us
  WHERE excluded.max_ts_us > event_namespaces.max_ts_us;
END;
CREATE TRIGGER events_namespace_deleted AFTER DELETE ON events
WHEN old.ts_us >= (SELECT max_ts_us FROM event_namespaces WHERE namespace = old.namespace) BEGIN
  DELETE FROM event_namespaces WHERE namespace = old.namespace;
  INSERT INTO event_namespaces (namespace, max_ts_us)
    SELECT namespace, max(ts_us) FROM events WHERE namespace = old.namespace GROUP BY namespace;
END;
CREATE TRIGGER events_namespace_changed AFTER UPDATE OF namespace, ts_us ON events BEGIN
  DELETE FROM event_namespaces WHERE namespace IN (old.namespace, new.namespace);
  INSERT INTO event_namespaces (namespace, max_ts_us)
    SELECT namespace, max(ts_us) FROM events WHERE namespace IN (old.namespace, new.namespace)
    GROUP BY namespace;
END;
)sql",
    // 12: consolidation streams' running state (jobs/consolidation_stream_state.hpp): per
    //    proposal stream the exact sums its metrics need (E, t_1, t_E, Σgap² in µs² as two
    //    64-bit limbs: hi·2^64 + lo, lo read as unsigned), its latest evidence, its newest
    //    "Solution:" candidates and its unique contexts, so that an evidence event costs
    //    O(log n) and neither a chunk nor a run reads a stream's whole evidence. A stream
    //    without a row (databases of earlier versions) gets one from its evidence the first
    //    time the job touches it.
    R"sql(
CREATE TABLE consolidation_streams (
  decision_id     TEXT    PRIMARY KEY REFERENCES knowledge (decision_id),
  evidence        INTEGER NOT NULL,
  first_ts_us     INTEGER NOT NULL,
  last_ts_us      INTEGER NOT NULL,
  last_seq        INTEGER NOT NULL,
  gap_squares_hi  INTEGER NOT NULL,
  gap_squares_lo  INTEGER NOT NULL,
  solutions       TEXT    NOT NULL,
  unique_contexts INTEGER NOT NULL
) WITHOUT ROWID;
)sql",
    // 13: one B-tree less per consolidated event (consolidate at 300k: 8.8 -> 7.8 s CPU). Every
    //    query of event_targets_target (namespace, target) WHERE target IS NOT NULL, a stream's
    //    backfill and its count of distinct contexts, also filters weight > 0, which
    //    event_targets_contexts (namespace, target, trajectory_id, seq) WHERE target IS NOT NULL
    //    AND weight > 0 answers as well (the count without a temporary B-tree); consolidation spent
    //    ~7% of its CPU keeping the older index.
    R"sql(
DROP INDEX event_targets_target;
)sql",
    // 14: a version of the entity summaries' inputs (jobs/entity_summaries.hpp). A first run
    //    searches every mention of every entity; read entity by entity, that is one random read
    //    of the events table per mention (~5 million at 1M events). One pass over all mentions
    //    in seq order reads each event once, in order, but in a snapshot, before the write
    //    transactions that save the summaries: it may use what it found only if no mention and
    //    no mentioned event's salience, hits, status or content changed in between. Every such
    //    change goes through the triggers below (whatever the connection), so each one now also
    //    counts itself in entity_summary_epoch; inserts of new events do not (they have no
    //    mentions yet), so ingest does not invalidate the pass. New mentions come only from the
    //    cluster job, which never runs during the summaries (one job at a time).
    R"sql(
CREATE TABLE entity_summary_epoch (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  changes INTEGER NOT NULL
);
INSERT INTO entity_summary_epoch (id, changes) VALUES (1, 0);
DROP TRIGGER events_summary_inputs;
CREATE TRIGGER events_summary_inputs AFTER UPDATE OF salience_base, hit_count, status, content ON events
  WHEN NOT (old.status = 'active' AND new.status != 'active' AND old.salience_base IS new.salience_base
            AND old.hit_count IS new.hit_count AND old.content IS new.content) BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM event_entities WHERE seq = new.seq
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1
  WHERE id = 1 AND EXISTS (SELECT 1 FROM event_entities WHERE seq = new.seq);
END;
DROP TRIGGER events_summary_deactivated;
CREATE TRIGGER events_summary_deactivated AFTER UPDATE OF salience_base, hit_count, status, content ON events
  WHEN old.status = 'active' AND new.status != 'active' AND old.salience_base IS new.salience_base
       AND old.hit_count IS new.hit_count AND old.content IS new.content BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full)
  SELECT ee.entity_id, 1 FROM event_entities ee LEFT JOIN entity_summary_state s ON s.entity_id = ee.entity_id
  WHERE ee.seq = new.seq AND (s.entity_id IS NULL OR s.top1_seq IS new.seq OR s.top2_seq IS new.seq)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1
  WHERE id = 1 AND EXISTS (SELECT 1 FROM event_entities WHERE seq = new.seq);
END;
DROP TRIGGER event_entities_deleted;
CREATE TRIGGER event_entities_deleted AFTER DELETE ON event_entities BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id = old.entity_id;
  DELETE FROM importance_state WHERE namespace = (SELECT namespace FROM entities WHERE entity_id = old.entity_id);
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;
DROP TRIGGER event_entities_updated;
CREATE TRIGGER event_entities_updated AFTER UPDATE ON event_entities BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id IN (old.entity_id, new.entity_id);
  DELETE FROM importance_state WHERE namespace IN (SELECT namespace FROM entities
    WHERE entity_id IN (old.entity_id, new.entity_id));
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1), (new.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;
)sql",
    // 15: each recurring problem's totals, kept (jobs/consolidation_patterns.cpp
    //    Patterns::update). The first touch of a signature in a run read its whole history
    //    from problem_occurrences to count occurrences, targets and distinct trajectories, so
    //    a run's cost grew with the log: at 1M events half of a +10,000 run's instructions.
    //    The consolidation job updates these rows in the transaction that inserts the
    //    occurrences. Filled here from the occurrences stored so far, which are exactly those
    //    the job has consolidated (both are written by its chunks).
    R"sql(
CREATE TABLE problem_patterns (
  namespace    TEXT    NOT NULL,
  signature    TEXT    NOT NULL,
  occurrences  INTEGER NOT NULL,
  max_seq      INTEGER NOT NULL,
  last_ts_us   INTEGER NOT NULL,
  trajectories INTEGER NOT NULL,
  PRIMARY KEY (namespace, signature)
) WITHOUT ROWID;
CREATE TABLE problem_pattern_targets (
  namespace   TEXT    NOT NULL,
  signature   TEXT    NOT NULL,
  target      TEXT    NOT NULL,
  occurrences INTEGER NOT NULL,
  PRIMARY KEY (namespace, signature, target)
) WITHOUT ROWID;
INSERT INTO problem_patterns (namespace, signature, occurrences, max_seq, last_ts_us, trajectories)
SELECT namespace, signature, count(*), max(seq), max(ts_us), count(DISTINCT trajectory_id)
FROM problem_occurrences GROUP BY namespace, signature;
INSERT INTO problem_pattern_targets (namespace, signature, target, occurrences)
SELECT namespace, signature, target, count(*) FROM problem_occurrences WHERE target IS NOT NULL
GROUP BY namespace, signature, target;
)sql",
    // 16: the cluster job's foreign keys are checked at COMMIT (DEFERRABLE INITIALLY DEFERRED)
    //    instead of after each statement. SQLite gives a statement that writes several rows, or
    //    changes a foreign-key column (the multi-row INSERTs of event_entities and event_clusters,
    //    each edge's and cluster's UPDATE), a statement journal when an immediate foreign key could
    //    abort it half way: a copy of every page the statement changes, 8% of a +10,000 cluster
    //    run's instructions at 1M events. A violation still fails the chunk's transaction, which
    //    rolls back whole. Only tables no other writer touches are changed, so an ingest batch
    //    never fails at its COMMIT for one event. The clauses are edited in sqlite_schema as
    //    SQLite's ALTER TABLE page describes for constraint changes that leave the stored rows as
    //    they are (migrate() runs this under writable_schema and bumps schema_version): rebuilding
    //    event_entities would copy millions of rows.
    R"sql(
UPDATE sqlite_master SET sql = replace(replace(replace(sql,
  'REFERENCES events (seq)', 'REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED'),
  'REFERENCES entities (entity_id)', 'REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED'),
  'REFERENCES clusters (cluster_id)', 'REFERENCES clusters (cluster_id) DEFERRABLE INITIALLY DEFERRED')
WHERE type = 'table' AND name IN ('event_entities', 'entity_relationships', 'entity_aliases',
  'clusters', 'event_clusters', 'cluster_entities', 'cluster_postings')
  AND sql NOT LIKE '%DEFERRABLE%';
)sql",
    // 17: the decay job's edges_reinforced (seed 003 MemifyResult) from each edge's
    //    last_evidence_seq, above a watermark per namespace that each sweep leaves, instead
    //    of a flag `unswept` that the cluster job set on every edge it reinforced (an entry
    //    in a partial index) and every sweep cleared (a rewrite of each such row and its
    //    index entry): 120,000 reinforcements per 10,000 events (the decay job
    //    0.55 -> 0.08 G instructions). A namespace's events are clustered once each, in seq order,
    //    so every edge
    //    still flagged has newer evidence than every edge swept: the newest evidence of the
    //    swept ones is where the count resumes.
    R"sql(
CREATE TABLE decay_edge_watermarks (
  namespace   TEXT    PRIMARY KEY,
  through_seq INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO decay_edge_watermarks (namespace, through_seq)
SELECT namespace, max(last_evidence_seq) FROM entity_relationships WHERE unswept = 0
GROUP BY namespace;
DROP INDEX entity_relationships_unswept;
ALTER TABLE entity_relationships DROP COLUMN unswept;
)sql",
    // 18: a medallion's span (count, oldest and newest time of its scope's active events) kept
    //    per namespace (medallion_spans) and extended by the events stored since, instead of a
    //    read of the whole scope at every refresh. New events have
    //    higher seqs, so only a change of a stored event can invalidate a kept span: these
    //    triggers count them per namespace (an event entering or leaving `active`, an active
    //    event's time changed, an event moved to another namespace or deleted), and a span
    //    kept under another count is read again whole. Inserts fire nothing. The
    //    span of a scope over every namespace is kept under namespace ''. IF NOT EXISTS: a
    //    database whose user_version was set back migrates again without an error.
    R"sql(
CREATE TABLE IF NOT EXISTS event_span_changes (
  namespace TEXT    PRIMARY KEY,
  changes   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_span_updated AFTER UPDATE OF status, ts_us ON events
WHEN old.namespace IS new.namespace AND ((old.status = 'active') IS NOT (new.status = 'active')
  OR (new.status = 'active' AND old.ts_us IS NOT new.ts_us)) BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (new.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS events_span_moved AFTER UPDATE OF namespace ON events
WHEN old.namespace IS NOT new.namespace BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (old.namespace, 1), (new.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;
CREATE TRIGGER IF NOT EXISTS events_span_deleted AFTER DELETE ON events BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (old.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;
CREATE TABLE IF NOT EXISTS medallion_spans (
  namespace   TEXT    PRIMARY KEY,
  through_seq INTEGER NOT NULL,
  changes     INTEGER NOT NULL,
  events      INTEGER NOT NULL,
  min_ts_us   INTEGER NOT NULL,
  max_ts_us   INTEGER NOT NULL
) WITHOUT ROWID;
)sql",
    // 19: the sensitivity triggers of migration 8 read the event's level by scalar
    //    subqueries instead of UPDATE ... FROM (subquery): SQLite materialised that subquery
    //    into a temporary B-tree at every evidence row (a new table, its zeroed pages and their
    //    release: 15% of the consolidation job's evidence inserts). Same condition, same value;
    //    an evidence row whose event does not exist changes nothing, as before (the rank
    //    compared with NULL is not smaller). DROP IF EXISTS: re-runnable.
    R"sql(
DROP TRIGGER IF EXISTS knowledge_evidence_sensitivity;
CREATE TRIGGER knowledge_evidence_sensitivity AFTER INSERT ON knowledge_evidence BEGIN
  UPDATE knowledge SET sensitivity = (SELECT e.sensitivity FROM events e WHERE e.seq = new.event_seq)
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (SELECT CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END FROM events e WHERE e.seq = new.event_seq);
END;
DROP TRIGGER IF EXISTS knowledge_source_sensitivity;
CREATE TRIGGER knowledge_source_sensitivity AFTER INSERT ON knowledge WHEN new.source_event_seq IS NOT NULL BEGIN
  UPDATE knowledge SET sensitivity = (SELECT e.sensitivity FROM events e WHERE e.seq = new.source_event_seq)
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (SELECT CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END FROM events e WHERE e.seq = new.source_event_seq);
END;
)sql",
    // 20: the CHECK constraints that list three or more allowed values compare with each
    //    value in turn (a = 'x' OR a = 'y' ...) instead of `a IN ('x', 'y', ...)`. SQLite
    //    codes a CHECK's IN list of more than two values as a temporary B-tree built anew
    //    for every row it checks (a new table, its zeroed page, five or more inserts, its
    //    release): about 1.5 µs per row, on every event the writer stores (sensitivity) and on
    //    each entity, cluster, knowledge, observation and audit row the jobs write
    //    The same values are allowed, and a NULL passes either
    //    form, so the stored rows stay valid: the clauses are edited in sqlite_schema like
    //    migration 16's (writable_schema, schema_version bumped by migrate()). Each clause is
    //    matched as migration 1 or 8 wrote it; running it again changes nothing.
    R"sql(
UPDATE sqlite_master SET sql = replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(sql,
  'CHECK (sensitivity IN (''public'', ''low'', ''medium'', ''high'', ''hyper''))',
  'CHECK (sensitivity = ''public'' OR sensitivity = ''low'' OR sensitivity = ''medium'' OR sensitivity = ''high'' OR sensitivity = ''hyper'')'),
  'CHECK (kind IN (''decision'', ''constraint'', ''assumption'', ''intervention'', ''proposal''))',
  'CHECK (kind = ''decision'' OR kind = ''constraint'' OR kind = ''assumption'' OR kind = ''intervention'' OR kind = ''proposal'')'),
  'CHECK (scope IN (''local'', ''system'', ''infra''))',
  'CHECK (scope = ''local'' OR scope = ''system'' OR scope = ''infra'')'),
  'CHECK (status IN (''active'', ''deprecated'', ''superseded'',
                                                           ''draft'', ''accepted'', ''rejected'', ''falsified''))',
  'CHECK (status = ''active'' OR status = ''deprecated'' OR status = ''superseded'' OR status = ''draft'' OR status = ''accepted'' OR status = ''rejected'' OR status = ''falsified'')'),
  'CHECK (phase IN (''pattern'', ''emergent'', ''canonical''))',
  'CHECK (phase = ''pattern'' OR phase = ''emergent'' OR phase = ''canonical'')'),
  'CHECK (vitality IN (''active'', ''decaying'', ''dormant''))',
  'CHECK (vitality = ''active'' OR vitality = ''decaying'' OR vitality = ''dormant'')'),
  'CHECK (observation_type IN (''pattern'', ''competence'', ''community'', ''trend''))',
  'CHECK (observation_type = ''pattern'' OR observation_type = ''competence'' OR observation_type = ''community'' OR observation_type = ''trend'')'),
  'CHECK (trigger IN (''interval'', ''events'', ''idle'', ''demand'', ''startup''))',
  'CHECK (trigger = ''interval'' OR trigger = ''events'' OR trigger = ''idle'' OR trigger = ''demand'' OR trigger = ''startup'')'),
  'CHECK (status IN (''running'', ''ok'', ''failed'', ''timeout'', ''interrupted'', ''skipped''))',
  'CHECK (status = ''running'' OR status = ''ok'' OR status = ''failed'' OR status = ''timeout'' OR status = ''interrupted'' OR status = ''skipped'')'),
  'CHECK (action IN (''create'', ''revise'', ''promote'', ''supersede'', ''deprecate'',
                                                 ''reinforce'', ''decay'', ''archive'', ''delete'', ''accept''))',
  'CHECK (action = ''create'' OR action = ''revise'' OR action = ''promote'' OR action = ''supersede'' OR action = ''deprecate'' OR action = ''reinforce'' OR action = ''decay'' OR action = ''archive'' OR action = ''delete'' OR action = ''accept'')')
WHERE type = 'table' AND name IN ('events', 'knowledge', 'observations', 'job_runs', 'audit_log',
  'entities', 'clusters') AND sql LIKE '% IN (''%';
)sql",
    // 21: each namespace's newest event time (event_namespaces, migration 11) is raised by the
    //    code that stores events (store::EventStore: per event, or the writer once per
    //    namespace and group, before its COMMIT) instead of by an AFTER INSERT trigger. The
    //    trigger made every event insert run a sub-program and, because a trigger's
    //    statement may abort after the row is written, keep a statement journal: without it
    //    the daemon's push ran ~40% faster. Deletes and
    //    updates of events keep their triggers (rare, and their rule is a recount).
    R"sql(
DROP TRIGGER IF EXISTS events_namespace_inserted;
)sql",
    // 22: each recurring problem's floor: the seq of the oldest of its newest min(occurrences,
    //    200) occurrences (200: jobs/consolidation_pattern_walk.hpp kMaxSupportIdsListed). A
    //    run takes a signature's newest ids from its observation's list once it knows the list
    //    is the newest: it counted the occurrences in the list's range (~200 index entries a
    //    signature), and a list that starts at the floor is.
    //    Filled by kAddedColumns below.
    R"sql(
ALTER TABLE problem_patterns ADD COLUMN newest_floor_seq INTEGER;
)sql",
    // 23: each trajectory outcome keeps its final event's time (final_ts_us), and the
    //    successful runs of a tool sequence are read from one covering index in (time, seq)
    //    order. A competence's first touch in a run read them joined with `events` for that
    //    time: one random read of the 1.3 GB events table per success, the part of the
    //    consolidation job that grew with the log (37 of 360 ms of a +10,000 run after 1M
    //    events, 5 ms after 100k). An event's time is never
    //    rewritten, as knowledge_evidence and problem_occurrences, which copy it too, assume.
    //    Filled by kAddedColumns below.
    R"sql(
ALTER TABLE trajectory_outcomes ADD COLUMN final_ts_us INTEGER;
DROP INDEX IF EXISTS trajectory_outcomes_tools;
CREATE INDEX IF NOT EXISTS trajectory_outcomes_successes
  ON trajectory_outcomes (namespace, tool_sequence, success, final_ts_us, final_seq, target);
)sql",
    // 24: the full-text index stems (FTS5's porter tokenizer over unicode61, diacritics
    //    removed), so that `recall` finds "support groups" for "support group" and "fixed" for
    //    "fix" (docs/RECALL.md, "Lexical"). One rule for the index and every query: FTS5 runs
    //    the same tokenizer over the query's terms. The namespace is indexed as a second
    //    column, so a query within one namespace is an FTS5 AND (doclist merges) instead of
    //    a join of every match with `events`; reads score the content column only.
    //    events_fts_vocab: each term's document frequency per column, for recall's collection stop
    //    words (docs/RECALL.md, "Lexical"). The index is
    //    rebuilt in the background
    //    from seq 1 by the writer (store/fts_index.hpp); `status` reports the lag meanwhile.
    //    events_episode_order: recall's spreading activation and the `episode` read walk an
    //    episode in sequence_number order (docs/RECALL.md, "Spreading activation").
    //    knowledge_source_event: every read joins an event to the knowledge row it became
    //    (its vitality), which was a scan of knowledge per event read.
    R"sql(
DROP TABLE IF EXISTS events_fts;
CREATE VIRTUAL TABLE events_fts USING fts5 (content, namespace, content = 'events',
  content_rowid = 'seq', tokenize = 'porter unicode61 remove_diacritics 2');
UPDATE fts_state SET indexed_seq = 0 WHERE id = 1;
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts_vocab USING fts5vocab (events_fts, 'col');
DROP TRIGGER IF EXISTS events_fts_delete;
DROP TRIGGER IF EXISTS events_fts_update;
CREATE TRIGGER events_fts_delete AFTER DELETE ON events
WHEN old.seq <= (SELECT indexed_seq FROM fts_state WHERE id = 1) BEGIN
  INSERT INTO events_fts (events_fts, rowid, content, namespace)
    VALUES ('delete', old.seq, old.content, old.namespace);
  UPDATE fts_state SET indexed_seq = (SELECT coalesce(max(seq), 0) FROM events WHERE seq < old.seq)
  WHERE id = 1 AND indexed_seq = old.seq;
END;
CREATE TRIGGER events_fts_update AFTER UPDATE OF content, namespace ON events
WHEN old.seq <= (SELECT indexed_seq FROM fts_state WHERE id = 1) BEGIN
  INSERT INTO events_fts (events_fts, rowid, content, namespace)
    VALUES ('delete', old.seq, old.content, old.namespace);
  INSERT INTO events_fts (rowid, content, namespace) VALUES (new.seq, new.content, new.namespace);
END;
CREATE INDEX IF NOT EXISTS events_episode_order
  ON events (namespace, episode_id, sequence_number) WHERE episode_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowledge_source_event
  ON knowledge (source_event_seq) WHERE source_event_seq IS NOT NULL;
)sql",
    // 25: seed 004 access counts of events (store/access_counts.hpp): how often recall,
    //    context and get returned an event, and when last. Written in batches by the writer.
    R"sql(
ALTER TABLE events ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN last_accessed_us INTEGER;
)sql",
    // 26: the fact ledger (seed 003 MemoryFact, MemoryFactEntityLink), written by the
    //    `facts` job (jobs/facts.hpp) through store/fact_store.hpp. One fact per sentence of
    //    an event (source_seq, sentence_index); a later fact on the same entity and attribute
    //    supersedes an earlier one (supersedes_fact_id, the earlier one's valid_to_us).
    R"sql(
CREATE TABLE IF NOT EXISTS facts (
  fact_id            INTEGER PRIMARY KEY,
  namespace          TEXT    NOT NULL,
  entity_key         TEXT    NOT NULL,
  entity_name        TEXT    NOT NULL,
  entity_type        TEXT    NOT NULL,
  attribute_key      TEXT,
  fact_text          TEXT    NOT NULL,
  confidence         REAL    NOT NULL,
  valid_from_us      INTEGER NOT NULL,
  valid_to_us        INTEGER,
  whole_days         INTEGER NOT NULL CHECK (whole_days IN (0, 1)),
  source_seq         INTEGER NOT NULL REFERENCES events (seq),
  sentence_index     INTEGER NOT NULL,
  supersedes_fact_id INTEGER REFERENCES facts (fact_id),
  is_stale           INTEGER NOT NULL DEFAULT 0 CHECK (is_stale IN (0, 1)),
  sensitivity        TEXT    NOT NULL,
  times_retrieved    INTEGER NOT NULL DEFAULT 0,
  UNIQUE (source_seq, sentence_index)
);
CREATE INDEX IF NOT EXISTS facts_entity ON facts (namespace, entity_key, fact_id);
CREATE INDEX IF NOT EXISTS facts_namespace ON facts (namespace, fact_id);
CREATE INDEX IF NOT EXISTS facts_current_attribute
  ON facts (namespace, entity_key, attribute_key) WHERE attribute_key IS NOT NULL AND is_stale = 0;
CREATE TABLE IF NOT EXISTS fact_entity_links (
  fact_id     INTEGER NOT NULL REFERENCES facts (fact_id),
  entity_key  TEXT    NOT NULL,
  entity_name TEXT    NOT NULL,
  is_primary  INTEGER NOT NULL CHECK (is_primary IN (0, 1)),
  PRIMARY KEY (fact_id, entity_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fact_entity_links_entity ON fact_entity_links (entity_key, fact_id);
)sql",
    // 27: where the consolidation job's decisions come from
    //    (store/extracted_decisions.hpp): the problem they answer (a later decision on the same
    //    problem supersedes them) and the subject of their commit (a revert falsifies them);
    //    and the questions asked and not answered yet, the newest per trajectory.
    R"sql(
CREATE TABLE IF NOT EXISTS extracted_decisions (
  decision_id       TEXT    PRIMARY KEY REFERENCES knowledge (decision_id),
  namespace         TEXT    NOT NULL,
  source            TEXT    NOT NULL CHECK (source IN ('problem_solution', 'trajectory')),
  problem_signature TEXT,
  subject           TEXT,
  source_seq        INTEGER NOT NULL REFERENCES events (seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS extracted_decisions_problem
  ON extracted_decisions (namespace, problem_signature) WHERE problem_signature IS NOT NULL;
CREATE INDEX IF NOT EXISTS extracted_decisions_subject
  ON extracted_decisions (namespace, subject) WHERE subject IS NOT NULL;
CREATE TABLE IF NOT EXISTS unanswered_questions (
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  seq           INTEGER NOT NULL REFERENCES events (seq),
  agent_id      TEXT    NOT NULL,
  PRIMARY KEY (namespace, trajectory_id)
) WITHOUT ROWID;
)sql",
    // 28: the audit log stays append-only outside a hard forget (memory_ops/forget.hpp). Inside
    //    one, marked by the forget's own row in forget_in_progress (written and removed in its
    //    transaction, so no other connection ever sees it), a rationale that quoted a deleted event
    //    may become '[forgotten]' without its previous state, and the jobs' rows about a
    //    namespace's derived records, which are cleared and rebuilt with them, may go.
    //    facts_superseding finds the fact that superseded a forgotten one.
    R"sql(
CREATE TABLE IF NOT EXISTS forget_in_progress (id INTEGER PRIMARY KEY CHECK (id = 1));
CREATE INDEX IF NOT EXISTS facts_superseding ON facts (supersedes_fact_id)
  WHERE supersedes_fact_id IS NOT NULL;
DROP TRIGGER IF EXISTS audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  OR NOT (new.rationale = '[forgotten]' AND new.previous IS NULL
          AND new.audit_id = old.audit_id AND new.record_type = old.record_type
          AND new.record_id = old.record_id AND new.action = old.action
          AND new.actor = old.actor AND new.at_us = old.at_us) BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
DROP TRIGGER IF EXISTS audit_log_no_delete;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress) OR old.actor NOT LIKE 'job:%'
  OR old.record_type = 'event' BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
)sql",
    // 29: an event revised (memory_ops/revise.hpp) is `superseded` by its
    //    revision. The status clause is edited in sqlite_schema like migration 20's (the
    //    stored rows stay valid: the old values are still allowed); running it again changes
    //    nothing.
    R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (status IN (''active'', ''archived''))',
  'CHECK (status = ''active'' OR status = ''archived'' OR status = ''superseded'')')
WHERE type = 'table' AND name = 'events';
)sql",
    // 30: the id of the revision that superseded an event (NULL for all others), indexed for
    //    a forget of the revision, which reinstates the event it superseded.
    R"sql(
ALTER TABLE events ADD COLUMN superseded_by TEXT;
CREATE INDEX IF NOT EXISTS events_superseded_by ON events (superseded_by)
  WHERE superseded_by IS NOT NULL;
)sql",
    // 31: the audit log's action `merge` (seed 002 AuditEntry.action), edited in
    //    sqlite_schema like migration 20 (every stored row stays valid).
    R"sql(
UPDATE sqlite_master SET sql = replace(sql, 'OR action = ''accept'')',
  'OR action = ''accept'' OR action = ''merge'')')
WHERE type = 'table' AND name = 'audit_log' AND sql NOT LIKE '%''merge''%';
)sql",
    // 32: entity merges an operator asked for (merge_entities): the entity store
    //    resolves through them as through declared aliases. Not derived from events, so a
    //    forget's rebuild of a namespace keeps them.
    R"sql(
CREATE TABLE IF NOT EXISTS entity_merges (
  namespace     TEXT    NOT NULL,
  alias_key     TEXT    NOT NULL,
  canonical_key TEXT    NOT NULL,
  actor         TEXT    NOT NULL,
  merged_us     INTEGER NOT NULL,
  PRIMARY KEY (namespace, alias_key)
) WITHOUT ROWID;
)sql",
    // 33: medallions written by agents (memory_ops/medallions.hpp; seed 001).
    //    They live in the seed's tables beside the job's, so every read finds them; this table
    //    says which ones an agent owns (the job never rebuilds them, new events never mark them
    //    stale, a forget's rebuild keeps them) and what superseded one. medallion_evidence keeps
    //    the seed's Evidence of each version (version 1 = the create).
    R"sql(
CREATE TABLE IF NOT EXISTS agent_medallions (
  medallion_id  TEXT    PRIMARY KEY,
  namespace     TEXT    NOT NULL,
  author        TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  superseded_by TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS medallion_evidence (
  medallion_id  TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  actor         TEXT    NOT NULL,
  recorded_us   INTEGER NOT NULL,
  evidence_json TEXT    NOT NULL,
  PRIMARY KEY (medallion_id, version)
) WITHOUT ROWID;
)sql",
    // 34: where an agent's record stopped taking evidence: the seq of the event
    //    that superseded or deprecated it, or the next seq when a verdict rejected or
    //    falsified it. The consolidation job evaluates an agent's record over the weighted
    //    events of its target from its own event up to that seq (jobs/consolidation.hpp).
    R"sql(
ALTER TABLE knowledge ADD COLUMN ended_seq INTEGER;
)sql",
    // 35: an agent's medallion's own sensitivity (seed 002 level; memory_ops/medallions.hpp).
    R"sql(
ALTER TABLE agent_medallions ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public';
)sql",
    // 36: a hard forget clears a namespace's derived state in chunks (memory_ops/
    //    derived_state.hpp): derived_clears marks the namespaces whose clear is under way, so
    //    that one a crash interrupted is finished at the next start before any job runs. The
    //    mention trigger stands aside while a forget runs: per deleted mention it did four
    //    writes on rows the same clear deletes (21.6 of 27.8 s of a clear at 1M events); a
    //    finished clear counts itself once in entity_summary_epoch instead. So does the
    //    trigger that keeps each namespace's newest time: deleting events that share the
    //    newest time scanned the namespace once per event (8.9 s of a 10,000-event forget at
    //    300,000 events); the forget computes it once per namespace.
    R"sql(
CREATE TABLE IF NOT EXISTS derived_clears (
  namespace    TEXT    PRIMARY KEY,
  requested_us INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS derived_clears_done AFTER DELETE ON derived_clears BEGIN
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;
DROP TRIGGER IF EXISTS event_entities_deleted;
CREATE TRIGGER event_entities_deleted AFTER DELETE ON event_entities
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress) BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id = old.entity_id;
  DELETE FROM importance_state WHERE namespace = (SELECT namespace FROM entities WHERE entity_id = old.entity_id);
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;
DROP TRIGGER IF EXISTS events_namespace_deleted;
CREATE TRIGGER events_namespace_deleted AFTER DELETE ON events
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  AND old.ts_us >= (SELECT max_ts_us FROM event_namespaces WHERE namespace = old.namespace) BEGIN
  DELETE FROM event_namespaces WHERE namespace = old.namespace;
  INSERT INTO event_namespaces (namespace, max_ts_us)
    SELECT namespace, max(ts_us) FROM events WHERE namespace = old.namespace GROUP BY namespace;
END;
)sql",
    // 37: where this database stands in each JetStream stream it reads (bus/jetstream_inlet.hpp):
    // the highest stream sequence whose events are committed, written in the same transaction.
    R"sql(
CREATE TABLE IF NOT EXISTS jetstream_positions (
  stream TEXT PRIMARY KEY,
  stream_seq INTEGER NOT NULL
) WITHOUT ROWID;
)sql",
    // 38: inside a hard forget the actor of a redacted row may become '[forgotten]' too: the
    //    rows about an agent's forgotten decision name the agent of the forgotten event
    //    (docs/MEMORY.md, "Where content can reach").
    R"sql(
DROP TRIGGER IF EXISTS audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  OR NOT (new.rationale = '[forgotten]' AND new.previous IS NULL
          AND new.audit_id = old.audit_id AND new.record_type = old.record_type
          AND new.record_id = old.record_id AND new.action = old.action
          AND (new.actor = old.actor OR new.actor = '[forgotten]') AND new.at_us = old.at_us) BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
)sql",
    // 39: decisions read from a commit's subject line, and the reverted changes recorded as
    //    falsified decisions (jobs/commit_decisions.hpp), edited in sqlite_schema like
    //    migration 20 (every stored row stays valid).
    R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (source IN (''problem_solution'', ''trajectory''))',
  'CHECK (source IN (''problem_solution'', ''trajectory'', ''commit'', ''revert''))')
WHERE type = 'table' AND name = 'extracted_decisions';
)sql",
    // 40: medallion items that are facts (F-<n>: a conversation's people,
    //    jobs/medallion_people.hpp), so that a medallion reads at the level of the facts it
    //    quotes, and decisions said in a conversation (jobs/conversation_decisions.hpp);
    //    edited in sqlite_schema like migration 20 (every stored row stays valid).
    R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (item_kind IN (''D'', ''Q''))',
  'CHECK (item_kind IN (''D'', ''Q'', ''F''))')
WHERE type = 'table' AND name = 'medallion_items';
UPDATE sqlite_master SET sql = replace(sql,
  '''commit'', ''revert''))',
  '''commit'', ''revert'', ''conversation''))')
WHERE type = 'table' AND name = 'extracted_decisions';
)sql",
    // 41: aliases learnt from a nickname ("Mel" for the speaker Melanie, jobs/entities.hpp),
    //    edited in sqlite_schema like migration 20 (every stored row stays valid).
    R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (origin IN (''path'', ''declared''))',
  'CHECK (origin IN (''path'', ''declared'', ''nickname''))')
WHERE type = 'table' AND name = 'entity_aliases';
)sql",
    // 42: entity, relationship and cluster ids are assigned in event order (seq-based,
    //    jobs/event_order_ids.hpp), so that replicas agree; an older database holds ids
    //    assigned in run order that the new ones could collide with. Every namespace with
    //    derived state is marked for a clear (memory_ops/derived_state.hpp): the daemon clears
    //    it at start, before any job runs, and the jobs rebuild it from the events.
    R"sql(
INSERT OR IGNORE INTO derived_clears (namespace, requested_us)
SELECT namespace, 0 FROM entities UNION SELECT namespace, 0 FROM clusters;
)sql",
    // 43: whether a problem's occurrence is a commit (kind commit_change), so that the
    //    medallion's open problems, which are never changes, read the others alone instead of
    //    every event of a history's "Problem:" paragraphs (jobs/medallion.cpp); filled from
    //    the events (kAddedColumns).
    R"sql(
ALTER TABLE problem_occurrences ADD COLUMN is_change INTEGER NOT NULL DEFAULT 0;
CREATE INDEX problem_occurrences_open ON problem_occurrences (namespace, seq) WHERE is_change = 0;
)sql",
    // 44: the id of the commit that stated a decision (lower case), so that a revert naming
    //    a commit id finds its decisions by an index range instead of reading the context of
    //    every decision's event in the namespace (store/extracted_decisions.cpp); filled from
    //    the events (kAddedColumns). And the agents' records by target, which consolidation
    //    looks up for every target a chunk touched (jobs/consolidation_agent_streams.cpp):
    //    without it, each look-up read every decision found on the target.
    R"sql(
ALTER TABLE extracted_decisions ADD COLUMN source_commit TEXT;
CREATE INDEX extracted_decisions_commit
  ON extracted_decisions (namespace, source_commit) WHERE source_commit IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowledge_external_target ON knowledge (namespace, target, decision_id)
  WHERE provenance = 'external' AND source_event_seq IS NOT NULL;
)sql",
};

// A migration that adds a column whose values are computed from other tables. Its fill runs
// right after the column is added, and again when the migration runs on a database that
// already has the column (its user_version set back: a downgrade test, an operator's repair),
// because a reflectd that did not know the column may have left it stale or empty.
struct AddedColumn {
  int migration;
  const char* table;
  const char* column;
  const char* fill;
};
constexpr std::array<AddedColumn, 6> kAddedColumns{{
    // 22: from the occurrences stored (the job keeps the floors from then on).
    {22, "problem_patterns", "newest_floor_seq", R"sql(
UPDATE problem_patterns SET newest_floor_seq = (SELECT min(seq) FROM (SELECT o.seq
  FROM problem_occurrences o
  WHERE o.namespace = problem_patterns.namespace AND o.signature = problem_patterns.signature
  ORDER BY o.seq DESC LIMIT 200));
)sql"},
    // 23: from the final events (the job writes them from then on); a row without a time was
    // replaced by a reflectd that did not know the column.
    {23, "trajectory_outcomes", "final_ts_us", R"sql(
UPDATE trajectory_outcomes SET final_ts_us = (SELECT e.ts_us FROM events e WHERE e.seq = final_seq)
WHERE final_ts_us IS NULL;
)sql"},
    // 34: an agent's record ended before this version knew: by the record that superseded it
    // when that is known, else before any later event.
    {34, "knowledge", "ended_seq", R"sql(
UPDATE knowledge SET ended_seq = coalesce(
  (SELECT s.source_event_seq FROM knowledge s WHERE s.decision_id = knowledge.superseded_by),
  (SELECT coalesce(max(seq), 0) + 1 FROM events))
WHERE provenance = 'external' AND ended_seq IS NULL
  AND status IN ('superseded', 'deprecated', 'rejected', 'falsified');
)sql"},
    // 35: no fill (agents' medallions written before it were public).
    {35, "agent_medallions", "sensitivity", ""},
    // 43: from the occurrences' events (consolidation writes it from then on).
    {43, "problem_occurrences", "is_change", R"sql(
UPDATE problem_occurrences SET is_change = coalesce(
  (SELECT e.kind = 'commit_change' FROM events e WHERE e.seq = problem_occurrences.seq), 0);
)sql"},
    // 44: from the decisions' events (consolidation writes it from then on).
    {44, "extracted_decisions", "source_commit", R"sql(
UPDATE extracted_decisions SET source_commit = (SELECT lower(json_extract(e.context, '$.commit'))
  FROM events e WHERE e.seq = extracted_decisions.source_seq);
)sql"},
}};

const AddedColumn* added_column(int migration) {
  for (const AddedColumn& added : kAddedColumns) {
    if (added.migration == migration) return &added;
  }
  return nullptr;
}

// The migrations that edit table definitions in sqlite_schema (constraint clauses only).
constexpr std::array<int, 7> kSchemaEditMigrations{16, 20, 29, 31, 39, 40, 41};
// The migration that drops entity_relationships.unswept: a database whose user_version was
// set back below it (a downgrade test, an operator's repair) has nothing left to drop.
constexpr int kDropUnsweptMigration = 17;
// The migration that adds the events' access counts (no fill: they start at zero).
constexpr int kAccessCountMigration = 25;
// The migration that adds events.superseded_by (no fill: nothing was revised before it).
constexpr int kSupersededByMigration = 30;

bool has_column(SQLite::Database& db, const char* table, const char* column) {
  SQLite::Statement query(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  query.bind(1, table);
  query.bind(2, column);
  return query.executeStep();
}

// A migration whose change a database already has: its user_version was set back below it (a
// downgrade test, an operator's repair).
bool applied_already(SQLite::Database& db, int migration) {
  // The watermarks it created are the decay job's since.
  if (migration == kDropUnsweptMigration) return !has_column(db, "entity_relationships", "unswept");
  if (migration == kAccessCountMigration) return has_column(db, "events", "access_count");
  if (migration == kSupersededByMigration) return has_column(db, "events", "superseded_by");
  // Only its values are computed again (kAddedColumns).
  if (const AddedColumn* added = added_column(migration)) {
    return has_column(db, added->table, added->column);
  }
  return false;
}

}  // namespace

int latest_schema_version() { return static_cast<int>(kMigrations.size()); }

int migrate(SQLite::Database& db) { return migrate(db, latest_schema_version()); }

int migrate(SQLite::Database& db, int up_to) {
  int version = db.execAndGet("PRAGMA user_version").getInt();
  if (version > latest_schema_version()) {
    throw std::runtime_error(db.getFilename() + ": schema version " + std::to_string(version) +
                             " is newer than this reflectd (" +
                             std::to_string(latest_schema_version()) + ")");
  }
  up_to = std::min(up_to, latest_schema_version());
  while (version < up_to) {
    SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
    if (std::find(kSchemaEditMigrations.begin(), kSchemaEditMigrations.end(), version + 1) !=
        kSchemaEditMigrations.end()) {
      // SQLite's procedure for such edits: the new schema_version makes every other
      // connection parse the edited definitions again. This one keeps the definitions it
      // parsed (its cookie is the one it wrote) until RESET, which also ends writable_schema:
      // without it, the writer that migrated would check rows by the old clauses until
      // restarted.
      const int schema_version = db.execAndGet("PRAGMA schema_version").getInt();
      db.exec("PRAGMA writable_schema = ON");
      try {
        db.exec(kMigrations[static_cast<std::size_t>(version)]);
        db.exec("PRAGMA schema_version = " + std::to_string(schema_version + 1));
      } catch (...) {
        db.exec("PRAGMA writable_schema = RESET");
        throw;
      }
      db.exec("PRAGMA writable_schema = RESET");
    } else if (!applied_already(db, version + 1)) {
      db.exec(kMigrations[static_cast<std::size_t>(version)]);
    }
    if (const AddedColumn* added = added_column(version + 1); added && *added->fill != '\0') {
      db.exec(added->fill);
    }
    ++version;
    db.exec("PRAGMA user_version = " + std::to_string(version));
    transaction.commit();
  }
  return version;
}

}  // namespace reflectd::store
