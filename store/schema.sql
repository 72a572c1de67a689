-- The current schema of a reflectd database (PRAGMA user_version 44), as the migrations of
-- store/migration_list.hpp build it: every table, index, trigger and virtual table in creation
-- order (FTS5 shadow tables left out: the virtual table creates them). Read it to see the
-- schema; do not apply it, reflectd migrates. tests/store/schema_test.cpp checks that it equals
-- a migrated database; a new migration updates it below this heading.

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
                    CHECK (sensitivity = 'public' OR sensitivity = 'low' OR sensitivity = 'medium' OR sensitivity = 'high' OR sensitivity = 'hyper'),
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
  status            TEXT    NOT NULL DEFAULT 'active' CHECK (status = 'active' OR status = 'archived' OR status = 'superseded')
, salience_base REAL NOT NULL DEFAULT 1.0, salience_ref_us INTEGER, decay_curve TEXT NOT NULL DEFAULT 'exponential', half_life_s INTEGER NOT NULL DEFAULT 604800, min_salience REAL NOT NULL DEFAULT 0.0, max_age_s INTEGER NOT NULL DEFAULT 0, reinforcement_gain REAL NOT NULL DEFAULT 0.1, pinned INTEGER NOT NULL DEFAULT 0, deletion_policy TEXT NOT NULL DEFAULT 'manual_only', archive_at_us INTEGER, hit_count INTEGER NOT NULL DEFAULT 0, last_hit_us INTEGER, access_count INTEGER NOT NULL DEFAULT 0, last_accessed_us INTEGER, superseded_by TEXT);

CREATE TABLE dead_letters (
  id          INTEGER PRIMARY KEY,
  received_us INTEGER NOT NULL,
  endpoint    TEXT    NOT NULL,
  reason      TEXT    NOT NULL,
  payload     BLOB    NOT NULL
);

CREATE INDEX events_archive_at ON events (archive_at_us) WHERE archive_at_us IS NOT NULL AND status = 'active';

CREATE TABLE knowledge (
  decision_id           TEXT    PRIMARY KEY,
  namespace             TEXT    NOT NULL,
  kind                  TEXT    NOT NULL
                        CHECK (kind = 'decision' OR kind = 'constraint' OR kind = 'assumption' OR kind = 'intervention' OR kind = 'proposal'),
  target                TEXT    NOT NULL,
  title                 TEXT    NOT NULL,
  rationale             TEXT    NOT NULL,
  scope                 TEXT    NOT NULL DEFAULT 'local' CHECK (scope = 'local' OR scope = 'system' OR scope = 'infra'),
  status                TEXT    NOT NULL CHECK (status = 'active' OR status = 'deprecated' OR status = 'superseded' OR status = 'draft' OR status = 'accepted' OR status = 'rejected' OR status = 'falsified'),
  phase                 TEXT    NOT NULL DEFAULT 'pattern' CHECK (phase = 'pattern' OR phase = 'emergent' OR phase = 'canonical'),
  vitality              TEXT    NOT NULL DEFAULT 'active' CHECK (vitality = 'active' OR vitality = 'decaying' OR vitality = 'dormant'),
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
, sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity = 'public' OR sensitivity = 'low' OR sensitivity = 'medium' OR sensitivity = 'high' OR sensitivity = 'hyper'), ended_seq INTEGER);

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
  observation_type      TEXT    NOT NULL CHECK (observation_type = 'pattern' OR observation_type = 'competence' OR observation_type = 'community' OR observation_type = 'trend'),
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
  trigger     TEXT    NOT NULL CHECK (trigger = 'interval' OR trigger = 'events' OR trigger = 'idle' OR trigger = 'demand' OR trigger = 'startup'),
  started_us  INTEGER NOT NULL,
  finished_us INTEGER,
  status      TEXT    NOT NULL
              CHECK (status = 'running' OR status = 'ok' OR status = 'failed' OR status = 'timeout' OR status = 'interrupted' OR status = 'skipped'),
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
  action      TEXT    NOT NULL CHECK (action = 'create' OR action = 'revise' OR action = 'promote' OR action = 'supersede' OR action = 'deprecate' OR action = 'reinforce' OR action = 'decay' OR action = 'archive' OR action = 'delete' OR action = 'accept' OR action = 'merge'),
  actor       TEXT    NOT NULL,
  at_us       INTEGER NOT NULL,
  rationale   TEXT    NOT NULL,
  previous    TEXT
);

CREATE INDEX audit_log_record ON audit_log (record_type, record_id);

CREATE TABLE event_targets (
  seq           INTEGER PRIMARY KEY REFERENCES events (seq),
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  target        TEXT,
  weight        REAL    NOT NULL
);

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
  ts_us         INTEGER NOT NULL, is_change INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, signature, seq)
) WITHOUT ROWID;

CREATE TABLE trajectory_outcomes (
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  target        TEXT,
  success       INTEGER NOT NULL,
  tool_sequence TEXT    NOT NULL,
  procedural    TEXT,
  final_seq     INTEGER NOT NULL REFERENCES events (seq), final_ts_us INTEGER,
  PRIMARY KEY (namespace, trajectory_id)
) WITHOUT ROWID;

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
  is_active        INTEGER NOT NULL DEFAULT 1, sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity = 'public' OR sensitivity = 'low' OR sensitivity = 'medium' OR sensitivity = 'high' OR sensitivity = 'hyper'),
  UNIQUE (namespace, canonical_key)
);

CREATE INDEX entities_importance ON entities (namespace, importance_score DESC);

CREATE TABLE entity_aliases (
  namespace     TEXT NOT NULL,
  alias         TEXT NOT NULL,
  canonical_key TEXT NOT NULL,
  origin        TEXT NOT NULL CHECK (origin IN ('path', 'declared', 'nickname')),
  first_seq     INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  PRIMARY KEY (namespace, alias)
) WITHOUT ROWID;

CREATE TABLE event_entities (
  seq        INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  entity_id  INTEGER NOT NULL REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED,
  is_primary INTEGER NOT NULL CHECK (is_primary IN (0, 1)),
  source     TEXT    NOT NULL,
  PRIMARY KEY (seq, entity_id)
) WITHOUT ROWID;

CREATE INDEX event_entities_entity ON event_entities (entity_id, seq);

CREATE TABLE entity_relationships (
  relationship_id   INTEGER PRIMARY KEY,
  namespace         TEXT    NOT NULL,
  source_id         INTEGER NOT NULL REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED,
  target_id         INTEGER NOT NULL REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED,
  rel_type          TEXT    NOT NULL,
  strength          REAL    NOT NULL,
  strength_base     REAL    NOT NULL,
  strength_ref_us   INTEGER NOT NULL,
  mention_count     INTEGER NOT NULL,
  evidence_seq      INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  last_evidence_seq INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  valid_from_us     INTEGER NOT NULL,
  valid_to_us       INTEGER,
  UNIQUE (namespace, source_id, target_id, rel_type)
);

CREATE INDEX entity_relationships_target ON entity_relationships (target_id);

CREATE TABLE clusters (
  cluster_id      INTEGER PRIMARY KEY,
  namespace       TEXT    NOT NULL,
  label           TEXT    NOT NULL,
  summary_text    TEXT    NOT NULL,
  medoid_seq      INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  medoid_vector   BLOB    NOT NULL,
  centroid        BLOB    NOT NULL,
  member_count    INTEGER NOT NULL,
  duplicate_count INTEGER NOT NULL DEFAULT 0,
  first_seq       INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  last_seq        INTEGER NOT NULL REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  first_seen_us   INTEGER NOT NULL,
  last_seen_us    INTEGER NOT NULL,
  is_active       INTEGER NOT NULL DEFAULT 1
, sensitivity TEXT NOT NULL DEFAULT 'public'
  CHECK (sensitivity = 'public' OR sensitivity = 'low' OR sensitivity = 'medium' OR sensitivity = 'high' OR sensitivity = 'hyper'));

CREATE INDEX clusters_namespace ON clusters (namespace, member_count DESC);

CREATE TABLE event_clusters (
  seq        INTEGER PRIMARY KEY REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED,
  cluster_id INTEGER NOT NULL REFERENCES clusters (cluster_id) DEFERRABLE INITIALLY DEFERRED,
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
  cluster_id  INTEGER NOT NULL REFERENCES clusters (cluster_id) DEFERRABLE INITIALLY DEFERRED,
  touched_seq INTEGER NOT NULL,
  PRIMARY KEY (namespace, term, cluster_id)
) WITHOUT ROWID;

CREATE INDEX cluster_postings_recent ON cluster_postings (namespace, term, touched_seq);

CREATE TABLE cluster_entities (
  cluster_id INTEGER NOT NULL REFERENCES clusters (cluster_id) DEFERRABLE INITIALLY DEFERRED,
  entity_id  INTEGER NOT NULL REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED,
  mentions   INTEGER NOT NULL,
  PRIMARY KEY (cluster_id, entity_id)
) WITHOUT ROWID;

CREATE TABLE community_members (
  observation_id TEXT    NOT NULL REFERENCES observations (observation_id),
  member_type    TEXT    NOT NULL CHECK (member_type IN ('entity', 'cluster')),
  member_id      INTEGER NOT NULL,
  PRIMARY KEY (observation_id, member_type, member_id)
) WITHOUT ROWID;

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
  item_kind    TEXT NOT NULL CHECK (item_kind IN ('D', 'Q', 'F')),
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

CREATE TABLE fts_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_seq INTEGER NOT NULL
);

CREATE INDEX events_namespace_active_seq ON events (namespace, status, seq, ts_us);

CREATE INDEX knowledge_evidence_time ON knowledge_evidence (decision_id, ts_us, event_seq);

CREATE INDEX event_targets_contexts ON event_targets (namespace, target, trajectory_id, seq)
  WHERE target IS NOT NULL AND weight > 0;

CREATE INDEX trajectory_outcomes_target ON trajectory_outcomes (namespace, target, success, final_seq);

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

CREATE TABLE event_namespaces (
  namespace TEXT    PRIMARY KEY,
  max_ts_us INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER events_namespace_changed AFTER UPDATE OF namespace, ts_us ON events BEGIN
  DELETE FROM event_namespaces WHERE namespace IN (old.namespace, new.namespace);
  INSERT INTO event_namespaces (namespace, max_ts_us)
    SELECT namespace, max(ts_us) FROM events WHERE namespace IN (old.namespace, new.namespace)
    GROUP BY namespace;
END;

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

CREATE TABLE entity_summary_epoch (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  changes INTEGER NOT NULL
);

CREATE TRIGGER events_summary_inputs AFTER UPDATE OF salience_base, hit_count, status, content ON events
  WHEN NOT (old.status = 'active' AND new.status != 'active' AND old.salience_base IS new.salience_base
            AND old.hit_count IS new.hit_count AND old.content IS new.content) BEGIN
  INSERT INTO entity_summary_dirty (entity_id, full) SELECT entity_id, 1 FROM event_entities WHERE seq = new.seq
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1
  WHERE id = 1 AND EXISTS (SELECT 1 FROM event_entities WHERE seq = new.seq);
END;

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

CREATE TRIGGER event_entities_updated AFTER UPDATE ON event_entities BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id IN (old.entity_id, new.entity_id);
  DELETE FROM importance_state WHERE namespace IN (SELECT namespace FROM entities
    WHERE entity_id IN (old.entity_id, new.entity_id));
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1), (new.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;

CREATE TABLE problem_patterns (
  namespace    TEXT    NOT NULL,
  signature    TEXT    NOT NULL,
  occurrences  INTEGER NOT NULL,
  max_seq      INTEGER NOT NULL,
  last_ts_us   INTEGER NOT NULL,
  trajectories INTEGER NOT NULL, newest_floor_seq INTEGER,
  PRIMARY KEY (namespace, signature)
) WITHOUT ROWID;

CREATE TABLE problem_pattern_targets (
  namespace   TEXT    NOT NULL,
  signature   TEXT    NOT NULL,
  target      TEXT    NOT NULL,
  occurrences INTEGER NOT NULL,
  PRIMARY KEY (namespace, signature, target)
) WITHOUT ROWID;

CREATE TABLE decay_edge_watermarks (
  namespace   TEXT    PRIMARY KEY,
  through_seq INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE event_span_changes (
  namespace TEXT    PRIMARY KEY,
  changes   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER events_span_updated AFTER UPDATE OF status, ts_us ON events
WHEN old.namespace IS new.namespace AND ((old.status = 'active') IS NOT (new.status = 'active')
  OR (new.status = 'active' AND old.ts_us IS NOT new.ts_us)) BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (new.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;

CREATE TRIGGER events_span_moved AFTER UPDATE OF namespace ON events
WHEN old.namespace IS NOT new.namespace BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (old.namespace, 1), (new.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;

CREATE TRIGGER events_span_deleted AFTER DELETE ON events BEGIN
  INSERT INTO event_span_changes (namespace, changes) VALUES (old.namespace, 1)
  ON CONFLICT (namespace) DO UPDATE SET changes = changes + 1;
END;

CREATE TABLE medallion_spans (
  namespace   TEXT    PRIMARY KEY,
  through_seq INTEGER NOT NULL,
  changes     INTEGER NOT NULL,
  events      INTEGER NOT NULL,
  min_ts_us   INTEGER NOT NULL,
  max_ts_us   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER knowledge_evidence_sensitivity AFTER INSERT ON knowledge_evidence BEGIN
  UPDATE knowledge SET sensitivity = (SELECT e.sensitivity FROM events e WHERE e.seq = new.event_seq)
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (SELECT CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END FROM events e WHERE e.seq = new.event_seq);
END;

CREATE TRIGGER knowledge_source_sensitivity AFTER INSERT ON knowledge WHEN new.source_event_seq IS NOT NULL BEGIN
  UPDATE knowledge SET sensitivity = (SELECT e.sensitivity FROM events e WHERE e.seq = new.source_event_seq)
  WHERE decision_id = new.decision_id AND (CASE knowledge.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END) < (SELECT CASE e.sensitivity WHEN 'public' THEN 0 WHEN 'low' THEN 1 WHEN 'medium' THEN 2 WHEN 'high' THEN 3 ELSE 4 END FROM events e WHERE e.seq = new.source_event_seq);
END;

CREATE INDEX trajectory_outcomes_successes
  ON trajectory_outcomes (namespace, tool_sequence, success, final_ts_us, final_seq, target);

CREATE VIRTUAL TABLE events_fts USING fts5 (content, namespace, content = 'events',
  content_rowid = 'seq', tokenize = 'porter unicode61 remove_diacritics 2');

CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab (events_fts, 'col');

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

CREATE INDEX events_episode_order
  ON events (namespace, episode_id, sequence_number) WHERE episode_id IS NOT NULL;

CREATE INDEX knowledge_source_event
  ON knowledge (source_event_seq) WHERE source_event_seq IS NOT NULL;

CREATE TABLE facts (
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

CREATE INDEX facts_entity ON facts (namespace, entity_key, fact_id);

CREATE INDEX facts_namespace ON facts (namespace, fact_id);

CREATE INDEX facts_current_attribute
  ON facts (namespace, entity_key, attribute_key) WHERE attribute_key IS NOT NULL AND is_stale = 0;

CREATE TABLE fact_entity_links (
  fact_id     INTEGER NOT NULL REFERENCES facts (fact_id),
  entity_key  TEXT    NOT NULL,
  entity_name TEXT    NOT NULL,
  is_primary  INTEGER NOT NULL CHECK (is_primary IN (0, 1)),
  PRIMARY KEY (fact_id, entity_key)
) WITHOUT ROWID;

CREATE INDEX fact_entity_links_entity ON fact_entity_links (entity_key, fact_id);

CREATE TABLE extracted_decisions (
  decision_id       TEXT    PRIMARY KEY REFERENCES knowledge (decision_id),
  namespace         TEXT    NOT NULL,
  source            TEXT    NOT NULL CHECK (source IN ('problem_solution', 'trajectory', 'commit', 'revert', 'conversation')),
  problem_signature TEXT,
  subject           TEXT,
  source_seq        INTEGER NOT NULL REFERENCES events (seq)
, source_commit TEXT) WITHOUT ROWID;

CREATE INDEX extracted_decisions_problem
  ON extracted_decisions (namespace, problem_signature) WHERE problem_signature IS NOT NULL;

CREATE INDEX extracted_decisions_subject
  ON extracted_decisions (namespace, subject) WHERE subject IS NOT NULL;

CREATE TABLE unanswered_questions (
  namespace     TEXT    NOT NULL,
  trajectory_id TEXT    NOT NULL,
  seq           INTEGER NOT NULL REFERENCES events (seq),
  agent_id      TEXT    NOT NULL,
  PRIMARY KEY (namespace, trajectory_id)
) WITHOUT ROWID;

CREATE TABLE forget_in_progress (id INTEGER PRIMARY KEY CHECK (id = 1));

CREATE INDEX facts_superseding ON facts (supersedes_fact_id)
  WHERE supersedes_fact_id IS NOT NULL;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress) OR old.actor NOT LIKE 'job:%'
  OR old.record_type = 'event' BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE INDEX events_superseded_by ON events (superseded_by)
  WHERE superseded_by IS NOT NULL;

CREATE TABLE entity_merges (
  namespace     TEXT    NOT NULL,
  alias_key     TEXT    NOT NULL,
  canonical_key TEXT    NOT NULL,
  actor         TEXT    NOT NULL,
  merged_us     INTEGER NOT NULL,
  PRIMARY KEY (namespace, alias_key)
) WITHOUT ROWID;

CREATE TABLE agent_medallions (
  medallion_id  TEXT    PRIMARY KEY,
  namespace     TEXT    NOT NULL,
  author        TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  superseded_by TEXT
, sensitivity TEXT NOT NULL DEFAULT 'public') WITHOUT ROWID;

CREATE TABLE medallion_evidence (
  medallion_id  TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  actor         TEXT    NOT NULL,
  recorded_us   INTEGER NOT NULL,
  evidence_json TEXT    NOT NULL,
  PRIMARY KEY (medallion_id, version)
) WITHOUT ROWID;

CREATE TABLE derived_clears (
  namespace    TEXT    PRIMARY KEY,
  requested_us INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER derived_clears_done AFTER DELETE ON derived_clears BEGIN
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;

CREATE TRIGGER event_entities_deleted AFTER DELETE ON event_entities
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress) BEGIN
  DELETE FROM entity_mention_weights WHERE entity_id = old.entity_id;
  DELETE FROM importance_state WHERE namespace = (SELECT namespace FROM entities WHERE entity_id = old.entity_id);
  INSERT INTO entity_summary_dirty (entity_id, full) VALUES (old.entity_id, 1)
  ON CONFLICT (entity_id) DO UPDATE SET full = 1;
  UPDATE entity_summary_epoch SET changes = changes + 1 WHERE id = 1;
END;

CREATE TRIGGER events_namespace_deleted AFTER DELETE ON events
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  AND old.ts_us >= (SELECT max_ts_us FROM event_namespaces WHERE namespace = old.namespace) BEGIN
  DELETE FROM event_namespaces WHERE namespace = old.namespace;
  INSERT INTO event_namespaces (namespace, max_ts_us)
    SELECT namespace, max(ts_us) FROM events WHERE namespace = old.namespace GROUP BY namespace;
END;

CREATE TABLE jetstream_positions (
  stream TEXT PRIMARY KEY,
  stream_seq INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  OR NOT (new.rationale = '[forgotten]' AND new.previous IS NULL
          AND new.audit_id = old.audit_id AND new.record_type = old.record_type
          AND new.record_id = old.record_id AND new.action = old.action
          AND (new.actor = old.actor OR new.actor = '[forgotten]') AND new.at_us = old.at_us) BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE INDEX problem_occurrences_open ON problem_occurrences (namespace, seq) WHERE is_change = 0;

CREATE INDEX extracted_decisions_commit
  ON extracted_decisions (namespace, source_commit) WHERE source_commit IS NOT NULL;

CREATE INDEX knowledge_external_target ON knowledge (namespace, target, decision_id)
  WHERE provenance = 'external' AND source_event_seq IS NOT NULL;

