// Schema migrations 20 to 44 (store/migration_list.hpp). Never edit a released migration: add
// a new one.

#include <array>

#include "store/migration_list.hpp"

namespace reflectd::store {

namespace {

// The table at namespace scope: it is data, read by migrations_20_to_44() below.
constexpr std::array<Migration, 25> kMigrations20To44{{
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
    {20, MigrationKind::kSchemaEdit, R"sql(
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
)sql"},
    // 21: each namespace's newest event time (event_namespaces, migration 11) is raised by the
    //    code that stores events (store::EventStore: per event, or the writer once per
    //    namespace and group, before its COMMIT) instead of by an AFTER INSERT trigger. The
    //    trigger made every event insert run a sub-program and, because a trigger's
    //    statement may abort after the row is written, keep a statement journal: without it
    //    the daemon's push ran ~40% faster. Deletes and
    //    updates of events keep their triggers (rare, and their rule is a recount).
    {21, MigrationKind::kStatements, R"sql(
DROP TRIGGER IF EXISTS events_namespace_inserted;
)sql"},
    // 22: each recurring problem's floor: the seq of the oldest of its newest min(occurrences,
    //    200) occurrences (200: jobs/consolidation_pattern_walk.hpp kMaxSupportIdsListed). A
    //    run takes a signature's newest ids from its observation's list once it knows the list
    //    is the newest: it counted the occurrences in the list's range (~200 index entries a
    //    signature), and a list that starts at the floor is.
    //    Filled by kAddedColumns below.
    {22, MigrationKind::kAddColumn, R"sql(
ALTER TABLE problem_patterns ADD COLUMN newest_floor_seq INTEGER;
)sql",
     "problem_patterns", "newest_floor_seq",
     // Fill: from the occurrences stored (the job keeps the floors from then on).
     R"sql(
UPDATE problem_patterns SET newest_floor_seq = (SELECT min(seq) FROM (SELECT o.seq
  FROM problem_occurrences o
  WHERE o.namespace = problem_patterns.namespace AND o.signature = problem_patterns.signature
  ORDER BY o.seq DESC LIMIT 200));
)sql"},
    // 23: each trajectory outcome keeps its final event's time (final_ts_us), and the
    //    successful runs of a tool sequence are read from one covering index in (time, seq)
    //    order. A competence's first touch in a run read them joined with `events` for that
    //    time: one random read of the 1.3 GB events table per success, the part of the
    //    consolidation job that grew with the log (37 of 360 ms of a +10,000 run after 1M
    //    events, 5 ms after 100k). An event's time is never
    //    rewritten, as knowledge_evidence and problem_occurrences, which copy it too, assume.
    //    Filled by kAddedColumns below.
    {23, MigrationKind::kAddColumn, R"sql(
ALTER TABLE trajectory_outcomes ADD COLUMN final_ts_us INTEGER;
DROP INDEX IF EXISTS trajectory_outcomes_tools;
CREATE INDEX IF NOT EXISTS trajectory_outcomes_successes
  ON trajectory_outcomes (namespace, tool_sequence, success, final_ts_us, final_seq, target);
)sql",
     "trajectory_outcomes", "final_ts_us",
     // Fill: from the final events (the job writes them from then on); a row without a time was
     // replaced by a reflectd that did not know the column.
     R"sql(
UPDATE trajectory_outcomes SET final_ts_us = (SELECT e.ts_us FROM events e WHERE e.seq = final_seq)
WHERE final_ts_us IS NULL;
)sql"},
    // 24: the full-text index stems (FTS5's porter tokenizer over unicode61, diacritics
    //    removed), so that `recall` finds "support groups" for "support group" and "fixed" for
    //    "fix" (docs/RECALL.md, "Lexical"). One rule for the index and every query: FTS5 runs
    //    the same tokenizer over the query's terms. The namespace is indexed as a second
    //    column, so a query within one namespace is an FTS5 AND (doclist merges) instead of
    //    a join of every match with `events`; reads score the content column only.
    //    events_fts_vocab: each term's document frequency per column, for recall's collection
    //    stop
    //    words (docs/RECALL.md, "Lexical"). The index is
    //    rebuilt in the background
    //    from seq 1 by the writer (store/fts_index.hpp); `status` reports the lag meanwhile.
    //    events_episode_order: recall's spreading activation and the `episode` read walk an
    //    episode in sequence_number order (docs/RECALL.md, "Spreading activation").
    //    knowledge_source_event: every read joins an event to the knowledge row it became
    //    (its vitality), which was a scan of knowledge per event read.
    {24, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 25: seed 004 access counts of events (store/access_counts.hpp): how often recall,
    //    context and get returned an event, and when last. Written in batches by the writer.
    {25, MigrationKind::kAddColumn, R"sql(
ALTER TABLE events ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN last_accessed_us INTEGER;
)sql",
     "events", "access_count"},
    // 26: the fact ledger (seed 003 MemoryFact, MemoryFactEntityLink), written by the
    //    `facts` job (jobs/facts.hpp) through store/fact_store.hpp. One fact per sentence of
    //    an event (source_seq, sentence_index); a later fact on the same entity and attribute
    //    supersedes an earlier one (supersedes_fact_id, the earlier one's valid_to_us).
    {26, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 27: where the consolidation job's decisions come from
    //    (store/extracted_decisions.hpp): the problem they answer (a later decision on the same
    //    problem supersedes them) and the subject of their commit (a revert falsifies them);
    //    and the questions asked and not answered yet, the newest per trajectory.
    {27, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 28: the audit log stays append-only outside a hard forget (memory_ops/forget.hpp). Inside
    //    one, marked by the forget's own row in forget_in_progress (written and removed in its
    //    transaction, so no other connection ever sees it), a rationale that quoted a deleted
    //    event
    //    may become '[forgotten]' without its previous state, and the jobs' rows about a
    //    namespace's derived records, which are cleared and rebuilt with them, may go.
    //    facts_superseding finds the fact that superseded a forgotten one.
    {28, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 29: an event revised (memory_ops/revise.hpp) is `superseded` by its
    //    revision. The status clause is edited in sqlite_schema like migration 20's (the
    //    stored rows stay valid: the old values are still allowed); running it again changes
    //    nothing.
    {29, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (status IN (''active'', ''archived''))',
  'CHECK (status = ''active'' OR status = ''archived'' OR status = ''superseded'')')
WHERE type = 'table' AND name = 'events';
)sql"},
    // 30: the id of the revision that superseded an event (NULL for all others), indexed for
    //    a forget of the revision, which reinstates the event it superseded.
    {30, MigrationKind::kAddColumn, R"sql(
ALTER TABLE events ADD COLUMN superseded_by TEXT;
CREATE INDEX IF NOT EXISTS events_superseded_by ON events (superseded_by)
  WHERE superseded_by IS NOT NULL;
)sql",
     "events", "superseded_by"},
    // 31: the audit log's action `merge` (seed 002 AuditEntry.action), edited in
    //    sqlite_schema like migration 20 (every stored row stays valid).
    {31, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(sql, 'OR action = ''accept'')',
  'OR action = ''accept'' OR action = ''merge'')')
WHERE type = 'table' AND name = 'audit_log' AND sql NOT LIKE '%''merge''%';
)sql"},
    // 32: entity merges an operator asked for (merge_entities): the entity store
    //    resolves through them as through declared aliases. Not derived from events, so a
    //    forget's rebuild of a namespace keeps them.
    {32, MigrationKind::kStatements, R"sql(
CREATE TABLE IF NOT EXISTS entity_merges (
  namespace     TEXT    NOT NULL,
  alias_key     TEXT    NOT NULL,
  canonical_key TEXT    NOT NULL,
  actor         TEXT    NOT NULL,
  merged_us     INTEGER NOT NULL,
  PRIMARY KEY (namespace, alias_key)
) WITHOUT ROWID;
)sql"},
    // 33: medallions written by agents (memory_ops/medallions.hpp; seed 001).
    //    They live in the seed's tables beside the job's, so every read finds them; this table
    //    says which ones an agent owns (the job never rebuilds them, new events never mark them
    //    stale, a forget's rebuild keeps them) and what superseded one. medallion_evidence keeps
    //    the seed's Evidence of each version (version 1 = the create).
    {33, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 34: where an agent's record stopped taking evidence: the seq of the event
    //    that superseded or deprecated it, or the next seq when a verdict rejected or
    //    falsified it. The consolidation job evaluates an agent's record over the weighted
    //    events of its target from its own event up to that seq (jobs/consolidation.hpp).
    {34, MigrationKind::kAddColumn, R"sql(
ALTER TABLE knowledge ADD COLUMN ended_seq INTEGER;
)sql",
     "knowledge", "ended_seq",
     // Fill: an agent's record ended before this version knew: by the record that superseded it
     // when that is known, else before any later event.
     R"sql(
UPDATE knowledge SET ended_seq = coalesce(
  (SELECT s.source_event_seq FROM knowledge s WHERE s.decision_id = knowledge.superseded_by),
  (SELECT coalesce(max(seq), 0) + 1 FROM events))
WHERE provenance = 'external' AND ended_seq IS NULL
  AND status IN ('superseded', 'deprecated', 'rejected', 'falsified');
)sql"},
    // 35: an agent's medallion's own sensitivity (seed 002 level; memory_ops/medallions.hpp).
    {35, MigrationKind::kAddColumn, R"sql(
ALTER TABLE agent_medallions ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'public';
)sql",
     // No fill (agents' medallions written before it were public).
     "agent_medallions", "sensitivity"},
    // 36: a hard forget clears a namespace's derived state in chunks (memory_ops/
    //    derived_state.hpp): derived_clears marks the namespaces whose clear is under way, so
    //    that one a crash interrupted is finished at the next start before any job runs. The
    //    mention trigger stands aside while a forget runs: per deleted mention it did four
    //    writes on rows the same clear deletes (21.6 of 27.8 s of a clear at 1M events); a
    //    finished clear counts itself once in entity_summary_epoch instead. So does the
    //    trigger that keeps each namespace's newest time: deleting events that share the
    //    newest time scanned the namespace once per event (8.9 s of a 10,000-event forget at
    //    300,000 events); the forget computes it once per namespace.
    {36, MigrationKind::kStatements, R"sql(
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
)sql"},
    // 37: where this database stands in each JetStream stream it reads (bus/jetstream_inlet.hpp):
    // the highest stream sequence whose events are committed, written in the same transaction.
    {37, MigrationKind::kStatements, R"sql(
CREATE TABLE IF NOT EXISTS jetstream_positions (
  stream TEXT PRIMARY KEY,
  stream_seq INTEGER NOT NULL
) WITHOUT ROWID;
)sql"},
    // 38: inside a hard forget the actor of a redacted row may become '[forgotten]' too: the
    //    rows about an agent's forgotten decision name the agent of the forgotten event
    //    (docs/MEMORY.md, "Where content can reach").
    {38, MigrationKind::kStatements, R"sql(
DROP TRIGGER IF EXISTS audit_log_no_update;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
WHEN NOT EXISTS (SELECT 1 FROM forget_in_progress)
  OR NOT (new.rationale = '[forgotten]' AND new.previous IS NULL
          AND new.audit_id = old.audit_id AND new.record_type = old.record_type
          AND new.record_id = old.record_id AND new.action = old.action
          AND (new.actor = old.actor OR new.actor = '[forgotten]') AND new.at_us = old.at_us) BEGIN
  SELECT RAISE(ABORT, 'audit_log is append-only');
END;
)sql"},
    // 39: decisions read from a commit's subject line, and the reverted changes recorded as
    //    falsified decisions (jobs/commit_decisions.hpp), edited in sqlite_schema like
    //    migration 20 (every stored row stays valid).
    {39, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (source IN (''problem_solution'', ''trajectory''))',
  'CHECK (source IN (''problem_solution'', ''trajectory'', ''commit'', ''revert''))')
WHERE type = 'table' AND name = 'extracted_decisions';
)sql"},
    // 40: medallion items that are facts (F-<n>: a conversation's people,
    //    jobs/medallion_people.hpp), so that a medallion reads at the level of the facts it
    //    quotes, and decisions said in a conversation (jobs/conversation_decisions.hpp);
    //    edited in sqlite_schema like migration 20 (every stored row stays valid).
    {40, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (item_kind IN (''D'', ''Q''))',
  'CHECK (item_kind IN (''D'', ''Q'', ''F''))')
WHERE type = 'table' AND name = 'medallion_items';
UPDATE sqlite_master SET sql = replace(sql,
  '''commit'', ''revert''))',
  '''commit'', ''revert'', ''conversation''))')
WHERE type = 'table' AND name = 'extracted_decisions';
)sql"},
    // 41: aliases learnt from a nickname ("Mel" for the speaker Melanie, jobs/entities.hpp),
    //    edited in sqlite_schema like migration 20 (every stored row stays valid).
    {41, MigrationKind::kSchemaEdit, R"sql(
UPDATE sqlite_master SET sql = replace(sql,
  'CHECK (origin IN (''path'', ''declared''))',
  'CHECK (origin IN (''path'', ''declared'', ''nickname''))')
WHERE type = 'table' AND name = 'entity_aliases';
)sql"},
    // 42: entity, relationship and cluster ids are assigned in event order (seq-based,
    //    jobs/event_order_ids.hpp), so that replicas agree; an older database holds ids
    //    assigned in run order that the new ones could collide with. Every namespace with
    //    derived state is marked for a clear (memory_ops/derived_state.hpp): the daemon clears
    //    it at start, before any job runs, and the jobs rebuild it from the events.
    {42, MigrationKind::kStatements, R"sql(
INSERT OR IGNORE INTO derived_clears (namespace, requested_us)
SELECT namespace, 0 FROM entities UNION SELECT namespace, 0 FROM clusters;
)sql"},
    // 43: whether a problem's occurrence is a commit (kind commit_change), so that the
    //    medallion's open problems, which are never changes, read the others alone instead of
    //    every event of a history's "Problem:" paragraphs (jobs/medallion.cpp); filled from
    //    the events (kAddedColumns).
    {43, MigrationKind::kAddColumn, R"sql(
ALTER TABLE problem_occurrences ADD COLUMN is_change INTEGER NOT NULL DEFAULT 0;
CREATE INDEX problem_occurrences_open ON problem_occurrences (namespace, seq) WHERE is_change = 0;
)sql",
     "problem_occurrences", "is_change",
     // Fill: from the occurrences' events (consolidation writes it from then on).
     R"sql(
UPDATE problem_occurrences SET is_change = coalesce(
  (SELECT e.kind = 'commit_change' FROM events e WHERE e.seq = problem_occurrences.seq), 0);
)sql"},
    // 44: the id of the commit that stated a decision (lower case), so that a revert naming
    //    a commit id finds its decisions by an index range instead of reading the context of
    //    every decision's event in the namespace (store/extracted_decisions.cpp); filled from
    //    the events (kAddedColumns). And the agents' records by target, which consolidation
    //    looks up for every target a chunk touched (jobs/consolidation_agent_streams.cpp):
    //    without it, each look-up read every decision found on the target.
    {44, MigrationKind::kAddColumn, R"sql(
ALTER TABLE extracted_decisions ADD COLUMN source_commit TEXT;
CREATE INDEX extracted_decisions_commit
  ON extracted_decisions (namespace, source_commit) WHERE source_commit IS NOT NULL;
CREATE INDEX IF NOT EXISTS knowledge_external_target ON knowledge (namespace, target, decision_id)
  WHERE provenance = 'external' AND source_event_seq IS NOT NULL;
)sql",
     "extracted_decisions", "source_commit",
     // Fill: from the decisions' events (consolidation writes it from then on).
     R"sql(
UPDATE extracted_decisions SET source_commit = (SELECT lower(json_extract(e.context, '$.commit'))
  FROM events e WHERE e.seq = extracted_decisions.source_seq);
)sql"},
}};

}  // namespace

std::span<const Migration> migrations_20_to_44() { return kMigrations20To44; }

}  // namespace reflectd::store
