// Schema migrations 6 to 19 (store/migration_list.hpp). Never edit a released migration: add
// a new one.

#include <array>

#include "store/migration_list.hpp"

namespace reflectd::store {

namespace {

// The table at namespace scope: it is data, read by migrations_6_to_19() below.
constexpr std::array<Migration, 14> kMigrations6To19{{
    // 6: the full-text index leaves the write path (store/fts_index.hpp). The insert trigger
    //    goes; the Writer indexes committed events in batches and records how far it got in
    //    fts_state.indexed_seq, in the same transaction. Everything stored so far was indexed
    //    by the old trigger. Delete and update reach events_fts only for indexed rows; deleting
    //    the watermark row lowers the watermark so that a reused seq is indexed again.
    {6, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 7: the jobs read each namespace's active events in seq order after a watermark
    //    (`namespace = ? AND status = 'active' AND seq > ? ORDER BY seq LIMIT chunk`). With only
    //    (namespace, ts_us) SQLite read and sorted every event of the namespace for each chunk:
    //    quadratic in the events. This index makes each chunk a range scan; ts_us in it also
    //    answers the medallion job's count/min/max per namespace without touching the table.
    //    The others serve the consolidation job's per-stream queries, which read only what a
    //    chunk added: a stream's latest evidence and latest "Solution:" lines (newest first,
    //    stopping early), whether a trajectory already was a context of a target, and a
    //    target's latest successful procedure (it scanned every outcome of the namespace).
    {7, MigrationKind::kStatements, R"sql(
CREATE INDEX events_namespace_active_seq ON events (namespace, status, seq, ts_us);
CREATE INDEX knowledge_evidence_time ON knowledge_evidence (decision_id, ts_us, event_seq);
CREATE INDEX event_targets_contexts ON event_targets (namespace, target, trajectory_id, seq)
  WHERE target IS NOT NULL AND weight > 0;
CREATE INDEX trajectory_outcomes_target ON trajectory_outcomes (namespace, target, success, final_seq);
)sql"},
    // 8: derived records carry a sensitivity (seed 002 MemoryRecord.sensitivity): the highest
    //    level among the events they were derived from, so a summary never shows a reader what
    //    the events behind it would not; it only ever rises. Knowledge keeps it by triggers on
    //    its evidence rows (in the transaction that writes them); entities and clusters by the
    //    cluster job, which reads each event's level anyway (a trigger per link row cost it
    //    ~12%). Existing rows are backfilled here.
    //    Observations and medallions are ranked when read instead (daemon/daemon.cpp): the
    //    consolidation job rewrites observations at every chunk, and triggers there doubled its
    //    cost; they are few, so ranking them from their sources per read is cheap.
    {8, MigrationKind::kStatements, R"sql(
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
)sql"},
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
    {9, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 10: archiving without a full re-search (jobs/entity_summaries.hpp). The decay job archives
    // every event whose time has come, and each archived event marked all its entities for a
    // search over all their mentions (hub entities: tens of thousands each, at every sweep).
    // A summary depends on its entity's mentioned events only through the two most salient
    // active ones (entity_summary_state), and the state counts mentions whatever their status:
    // an event that only leaves `active` changes the summaries of the entities that kept it
    // among their two (or have no state yet), and no other. Every other change of the inputs
    // still marks every mentioning entity, as before.
    {10, MigrationKind::kStatements, R"sql(
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
)sql"},
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
    {11, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 12: consolidation streams' running state (jobs/consolidation_stream_state.hpp): per
    //    proposal stream the exact sums its metrics need (E, t_1, t_E, Σgap² in µs² as two
    //    64-bit limbs: hi·2^64 + lo, lo read as unsigned), its latest evidence, its newest
    //    "Solution:" candidates and its unique contexts, so that an evidence event costs
    //    O(log n) and neither a chunk nor a run reads a stream's whole evidence. A stream
    //    without a row (databases of earlier versions) gets one from its evidence the first
    //    time the job touches it.
    {12, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 13: one B-tree less per consolidated event (consolidate at 300k: 8.8 -> 7.8 s CPU). Every
    //    query of event_targets_target (namespace, target) WHERE target IS NOT NULL, a stream's
    //    backfill and its count of distinct contexts, also filters weight > 0, which
    //    event_targets_contexts (namespace, target, trajectory_id, seq) WHERE target IS NOT NULL
    //    AND weight > 0 answers as well (the count without a temporary B-tree); consolidation
    //    spent
    //    ~7% of its CPU keeping the older index.
    {13, MigrationKind::kStatements, R"sql(
DROP INDEX event_targets_target;
)sql"},
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
    {14, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 15: each recurring problem's totals, kept (jobs/consolidation_patterns.cpp
    //    Patterns::update). The first touch of a signature in a run read its whole history
    //    from problem_occurrences to count occurrences, targets and distinct trajectories, so
    //    a run's cost grew with the log: at 1M events half of a +10,000 run's instructions.
    //    The consolidation job updates these rows in the transaction that inserts the
    //    occurrences. Filled here from the occurrences stored so far, which are exactly those
    //    the job has consolidated (both are written by its chunks).
    {15, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 16: the cluster job's foreign keys are checked at COMMIT (DEFERRABLE INITIALLY DEFERRED)
    //    instead of after each statement. SQLite gives a statement that writes several rows, or
    //    changes a foreign-key column (the multi-row INSERTs of event_entities and
    //    event_clusters,
    //    each edge's and cluster's UPDATE), a statement journal when an immediate foreign key
    //    could
    //    abort it half way: a copy of every page the statement changes, 8% of a +10,000 cluster
    //    run's instructions at 1M events. A violation still fails the chunk's transaction, which
    //    rolls back whole. Only tables no other writer touches are changed, so an ingest batch
    //    never fails at its COMMIT for one event. The clauses are edited in sqlite_schema as
    //    SQLite's ALTER TABLE page describes for constraint changes that leave the stored rows as
    //    they are (migrate() runs this under writable_schema and bumps schema_version):
    //    rebuilding
    //    event_entities would copy millions of rows.
    {16, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(replace(replace(sql,
  'REFERENCES events (seq)', 'REFERENCES events (seq) DEFERRABLE INITIALLY DEFERRED'),
  'REFERENCES entities (entity_id)', 'REFERENCES entities (entity_id) DEFERRABLE INITIALLY DEFERRED'),
  'REFERENCES clusters (cluster_id)', 'REFERENCES clusters (cluster_id) DEFERRABLE INITIALLY DEFERRED')
WHERE type = 'table' AND name IN ('event_entities', 'entity_relationships', 'entity_aliases',
  'clusters', 'event_clusters', 'cluster_entities', 'cluster_postings')
  AND sql NOT LIKE '%DEFERRABLE%';
)sql"},
    // 17: the decay job's edges_reinforced (seed 003 MemifyResult) from each edge's
    //    last_evidence_seq, above a watermark per namespace that each sweep leaves, instead
    //    of a flag `unswept` that the cluster job set on every edge it reinforced (an entry
    //    in a partial index) and every sweep cleared (a rewrite of each such row and its
    //    index entry): 120,000 reinforcements per 10,000 events (the decay job
    //    0.55 -> 0.08 G instructions). A namespace's events are clustered once each, in seq
    //    order,
    //    so every edge
    //    still flagged has newer evidence than every edge swept: the newest evidence of the
    //    swept ones is where the count resumes.
    {17, MigrationKind::kDropColumn, R"sql(
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
     "entity_relationships", "unswept"},
    // 18: a medallion's span (count, oldest and newest time of its scope's active events) kept
    //    per namespace (medallion_spans) and extended by the events stored since, instead of a
    //    read of the whole scope at every refresh. New events have
    //    higher seqs, so only a change of a stored event can invalidate a kept span: these
    //    triggers count them per namespace (an event entering or leaving `active`, an active
    //    event's time changed, an event moved to another namespace or deleted), and a span
    //    kept under another count is read again whole. Inserts fire nothing. The
    //    span of a scope over every namespace is kept under namespace ''. IF NOT EXISTS: a
    //    database whose user_version was set back migrates again without an error.
    {18, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 19: the sensitivity triggers of migration 8 read the event's level by scalar
    //    subqueries instead of UPDATE ... FROM (subquery): SQLite materialised that subquery
    //    into a temporary B-tree at every evidence row (a new table, its zeroed pages and their
    //    release: 15% of the consolidation job's evidence inserts). Same condition, same value;
    //    an evidence row whose event does not exist changes nothing, as before (the rank
    //    compared with NULL is not smaller). DROP IF EXISTS: re-runnable.
    {19, MigrationKind::kStatements, R"sql(
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
)sql"},
}};

}  // namespace

std::span<const Migration> migrations_6_to_19() { return kMigrations6To19; }

}  // namespace reflectd::store
