#pragma once
// reflectctl's man-page text: descriptions and footers shown by --help.

namespace reflectd::model::help {

inline constexpr const char* kMainDescription =
    "reflectctl - command-line client of reflectd, the AI-agent event daemon.\n\n"
    "Publishes JSON Lines files of wire events to a running reflectd and reports what it did\n"
    "with each event, shows the daemon's status, runs its reflection jobs on demand and lists\n"
    "their runs and what they derived (knowledge, observations). Endpoints come from --ingest,\n"
    "--push-endpoint and --control, else from the daemon's configuration file (--config),\n"
    "else from reflectd's built-in defaults.\n";

inline constexpr const char* kMainFooter = R"(
  Run `reflectctl COMMAND --help` for the options of a command. Global options may be given
  before or after the command; --push EP (an alias of --push-endpoint) only before `publish`,
  where --push is publish's mode flag.

ENDPOINTS
  With --config FILE the first endpoint of bus.ingest, bus.push and bus.control is used; a
  wildcard bind host (tcp://*:7701, tcp://0.0.0.0:7701) is reached at 127.0.0.1. An endpoint
  bound to an ephemeral port (tcp://127.0.0.1:*) cannot be derived: pass it explicitly.
  Built-in defaults: ingest tcp://127.0.0.1:7701, push tcp://127.0.0.1:7702,
  control tcp://127.0.0.1:7704.

SECURITY
  When reflectd runs with CURVE (security.curve_secret_key_file), connect with
  --curve-key FILE (your secret key file, from `reflectctl keygen`) and --server-key FILE
  (the daemon's .pub file), or $REFLECTCTL_CURVE_KEY and $REFLECTCTL_SERVER_KEY. Your public
  key must be listed in the daemon's authorized keys; an unlisted key is refused at the
  handshake, which shows as "no connection" (the daemon logs the refused key).

EXAMPLES
  reflectctl publish events.jsonl
  reflectctl --config /etc/reflectd/reflectd.yaml publish logs/*.jsonl
  zcat events.jsonl.gz | reflectctl publish --batch 500 -
  reflectctl status
  reflectctl --control tcp://10.0.0.5:7704 status --json
  reflectctl run consolidate --namespace libzmq --wait
  reflectctl jobs --job consolidate --limit 5
  reflectctl knowledge --namespace libzmq --phase canonical
  reflectctl observations --type pattern --json | jq '.observations[].title'
  reflectctl search "socket timeout" --namespace libzmq --limit 5
  reflectctl reinforce 7f3c9a --misleading
  reflectctl events tail --namespace libzmq -n 50 -f
  reflectctl medallion get libzmq
  reflectctl entities --namespace libzmq --top 10
  reflectctl clusters --limit 5
  reflectctl keygen ~/.config/reflectd/agent.key
  reflectctl --curve-key agent.key --server-key server.key.pub --control tcp://10.0.0.5:7704 status

EXIT STATUS
  0  publish: every event stored or duplicate; run --wait: the run ended ok or skipped;
     other commands: the daemon answered
  1  publish: some event rejected or unacknowledged; run --wait: the run failed, timed out
     or was interrupted; any command: the daemon answered an error (printed on stderr)
  2  invalid command line, configuration file, endpoint or input file
  3  the daemon could not be reached (no connection or no reply within --timeout-ms))";

inline constexpr const char* kPublishDescription =
    "Send JSON Lines events to reflectd and report what it did with each one.\n";

inline constexpr const char* kPublishFooter = R"(
DESCRIPTION
  Every non-blank line of the input is one wire event, a JSON object. Consecutive events are
  grouped into batches (a JSON array made of the lines' own text) and sent over the daemon's
  ingest socket; up to --window messages are in flight, and a message whose acknowledgement
  is late is resent unchanged. A line that is not a JSON object is sent on its own, so the
  daemon's precise error is reported at its FILE:LINE.

GLOBAL OPTIONS
  --config FILE, --ingest EP and --push-endpoint EP (see reflectctl --help) may be given
  before or after `publish`. After `publish`, --push is this command's mode flag: write
  `reflectctl --push EP publish --push` or `reflectctl publish --push --push-endpoint EP`.

IDEMPOTENCE
  A JSON object line without an "id" member is given "id":"line:<SHA-256 of the line>" as
  its first member (the rest of the line is sent byte for byte). The daemon stores each id
  once, so resends, interrupted runs and publishing the same file again never duplicate an
  event: repeats are reported as "duplicate". Lines that carry their own "id" keep it.

OUTPUT
  While running, a progress line (events/s, and a bar when the input size is known) is drawn
  on stderr if stderr is a terminal. At the end a summary goes to stdout: files, events sent,
  stored, duplicate, rejected, unacknowledged (no reply after --retries resends), elapsed
  time, rate, and the first 10 rejections as FILE:LINE: error. --json prints the same as one
  JSON object.

PUSH MODE
  --push sends over the fire-and-forget push socket (PUSH to the daemon's PULL). There are no
  replies: the summary counts events handed over; the daemon keeps the ones it rejects in its
  dead_letters table. Lines that are not JSON objects are sent anyway and counted as
  "not objects". The push endpoint is set with the global --push-endpoint option.

EXAMPLES
  reflectctl publish a.jsonl b.jsonl
  reflectctl --config /etc/reflectd/reflectd.yaml publish --json events.jsonl
  zcat events.jsonl.gz | reflectctl publish -
  reflectctl publish --push events.jsonl

EXIT STATUS
  0  every event was stored or was a duplicate (push: every event was handed over)
  1  some event was rejected or unacknowledged (push: not a JSON object, or not sent)
  2  invalid command line, configuration file, endpoint or unreadable input file
  3  no connection to the daemon within --timeout-ms)";

inline constexpr const char* kStatusDescription =
    "Show the counters, database and endpoints of a running reflectd.\n";

inline constexpr const char* kStatusFooter = R"(
DESCRIPTION
  Sends {"cmd":"status"} to the daemon's control socket and prints the reply as a table:
  version, uptime, events stored / duplicate / rejected, dead letters, writer queue, commits,
  storage errors, messages read, replies dropped, how far the search index is complete,
  database size, page size and path, endpoints, and the outcome of the last configuration
  reload (SIGHUP). --json prints the reply as JSON.

GLOBAL OPTIONS
  --config FILE and --control EP (see reflectctl --help) may be given before or after
  `status`.

EXAMPLES
  reflectctl status
  reflectctl --config /etc/reflectd/reflectd.yaml status --json | jq .events

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kRunDescription =
    "Run one of reflectd's jobs now, for one namespace or for all of them.\n";

inline constexpr const char* kRunFooter = R"(
DESCRIPTION
  Sends {"cmd":"run","job":JOB,"namespace":NS,"wait":...} to the control socket. Jobs run
  one at a time on the daemon's scheduler thread, so a requested run starts after the one in
  progress (if any). Jobs include consolidate (trajectories, targets, knowledge streams,
  patterns, procedures, competences from new events) and decay (vitality and confidence of
  knowledge, archiving of expired events); `reflectctl jobs` lists the configured ones.

  Without --wait, prints "queued JOB" and the namespace once the daemon has queued the run.
  With --wait, waits for the run to end and prints its run id, job, namespace, trigger,
  status (ok, skipped, failed, timeout, interrupted), start, duration, error, and each field
  of its result object on its own line (consolidate: events_processed,
  observations_created, observations_reinforced, streams_created, ...). A run with no new
  events to process is "skipped" (skipped true, events_processed 0).

  The reply timeout is 3000 ms, or 660000 ms with --wait (longer than the default job
  timeout, jobs.<name>.timeout_s 600): raise it with --timeout-ms for longer job timeouts.
  --json prints the daemon's reply: {"ok","queued","namespace"}, or with --wait
  {"ok","run":{"run_id","job","namespace","trigger","status","started_us","finished_us",
  "result",["error"]}}.

EXAMPLES
  reflectctl run consolidate
  reflectctl run consolidate --namespace libzmq --wait
  reflectctl run decay --wait --json | jq .run.result

EXIT STATUS
  0  the run was queued; with --wait: it ended with status ok or skipped
  1  the daemon refused the request (unknown job: the known ones are listed) or, with
     --wait, the run failed, timed out or was interrupted
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kJobsDescription = "List the latest job runs of reflectd.\n";

inline constexpr const char* kJobsFooter = R"(
DESCRIPTION
  Sends {"cmd":"jobs","job":J,"limit":N} and prints the runs, newest first, one per line:
  RUN (run id), JOB, NAMESPACE (* = every namespace), TRIGGER (interval, events, idle,
  demand), STATUS (running, ok, skipped, failed, timeout, interrupted), STARTED (RFC 3339,
  UTC), DURATION_MS, RESULT (the result's non-zero counters as key=value, or
  "skipped: REASON"; cut at 56 characters) and, when some run has one, ERROR. The configured
  job names follow the table. --json prints the full reply, results included.

EXAMPLES
  reflectctl jobs
  reflectctl jobs --job consolidate --limit 5
  reflectctl jobs --json | jq '.runs[0].result'

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kKnowledgeDescription =
    "List reflectd's knowledge: decisions (agents' and those found in the events), constraints,\n"
    "assumptions and proposal streams.\n";

inline constexpr const char* kKnowledgeFooter = R"(
DESCRIPTION
  Sends {"cmd":"knowledge","namespace":NS,"kind":K,"phase":P,"status":S,"limit":N} and
  prints the rows, canonical first, then emergent, then pattern, most frequent first, then
  newest (by their latest evidence): DECISION_ID,
  PHASE (pattern, emergent, canonical), STATUS, VITALITY (active, decaying, dormant),
  CONFIDENCE (3 decimals), FREQUENCY (evidence events), TARGET and TITLE (long ids, targets
  and titles are cut with "…"). --json prints every column of every row: rationale,
  evidence event ids, procedural steps, metrics, timestamps.

  Kinds: decision (an agent's, decision_id = its event id; or found by the consolidation job
  in a Problem:/Solution: message, decision:<event id>, or in a successful trajectory,
  decision:<namespace>:<trajectory>: title = what was decided, rationale = the problem),
  constraint, assumption, intervention, proposal (agents' proposals, and the consolidation
  streams proposal:<namespace>:<target>, one per area of work).

EXAMPLES
  reflectctl knowledge --namespace libzmq
  reflectctl knowledge --phase canonical --status active --limit 10
  reflectctl knowledge --namespace libzmq --kind decision --status active
  reflectctl knowledge --json | jq '.knowledge[] | {target, phase, confidence}'

EXIT STATUS
  0  the daemon answered (possibly with no rows)
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kObservationsDescription =
    "List the recurring patterns and competences reflectd's consolidation found.\n";

inline constexpr const char* kObservationsFooter = R"(
DESCRIPTION
  Sends {"cmd":"observations","namespace":NS,"type":T,"limit":N} and prints the active
  observations, best supported first: TYPE (pattern: a problem seen again and again across
  trajectories; competence: a tool sequence that keeps succeeding), SUPPORT (supporting
  events), TRAJECTORIES, TARGET and TITLE. --json prints every column: text, supporting
  event ids, success count, confidence, importance, reinforcement times.

EXAMPLES
  reflectctl observations --namespace libzmq --type pattern
  reflectctl observations --type competence --json | jq '.observations[].title'

EXIT STATUS
  0  the daemon answered (possibly with no rows)
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kFactsDescription =
    "List the facts reflectd keeps about people and things, with the dates they hold.\n";

inline constexpr const char* kFactsFooter = R"(
DESCRIPTION
  Sends {"cmd":"facts","namespace":NS,"entity":E,"attribute":A,"current":B,"limit":N,
  "after_id":ID} and prints the fact ledger (seed 003 MemoryFact) oldest first: ID, ENTITY
  (the subject's canonical key), ATTRIBUTE (occupation, residence, age, ... when one was
  recognised), VALID (valid_from .. valid_to: dates when the fact came from a date, such
  as "yesterday" said on 8 May 2023 -> 2023-05-07; "FROM .." while it still holds) and
  STATEMENT (what was said, in the third person, relative times made absolute).
  A statement that begins with (superseded) is a fact that a later one on the same entity
  and attribute replaced.
  The `facts` job extracts them from conversation turns and SHODH statements
  (docs/JOBS.md "Facts"). --json adds evidence_ids (the events' ids as published), linked
  entities, supersedes_fact_id, confidence and sensitivity.

EXAMPLES
  reflectctl facts --namespace locomo-conv-26 --entity Caroline
  reflectctl facts --entity person:caroline --attribute residence
  reflectctl facts --namespace team --current --json | jq '.facts[].statement'

EXIT STATUS
  0  the daemon answered (possibly with no rows)
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kSearchDescription =
    "Full-text search of the events stored by reflectd, best match first.\n";

inline constexpr const char* kSearchFooter = R"(
DESCRIPTION
  Sends {"cmd":"search","text":TEXT,"namespace":NS,"kind":K,"limit":N}. Every word of TEXT
  must match. Prints SCORE (relevance x salience x vitality, 2 decimals), KIND, STATUS, ID
  and PREVIEW (matches in [brackets], one line, cut). --json prints the reply.
  The full-text index is built in the background: the reply says how far it is complete
  (indexed_through_seq, lag_events), and the table ends with a note while it trails.

EXAMPLES
  reflectctl search "socket timeout" --namespace libzmq --limit 5

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kRecallDescription =
    "Ask reflectd's memory a question in plain words: the events that answer it, each whole.\n";

inline constexpr const char* kRecallFooter = R"(
DESCRIPTION
  Sends {"cmd":"recall","text":TEXT,"namespace":NS,"limit":N,"offset":O}. Prints, best
  first, each event's id, score, date, kind and agent, why it matched (the question's words
  it holds, the entities it names or speaks as) and its whole content (cut past
  recall.max_content_bytes, marked [truncated]). --json prints the reply with every score
  component (lexical, entity, graph, temporal, speaker, salience, vitality, importance), the
  expanded query (primed entities, temporal range, terms) and the spreading activation's
  counts. Ranking: BM25 over a stemmed index, speakers and entities the question names,
  episode neighbours, time, salience; docs/RECALL.md has every formula. Archived events
  (forget's archive, the decay job's auto_prune) are left out unless --include-archived
  ("include_archived":true); `get` reads them by id either way. Relative dates in the
  question ("last week", "in May") count from the daemon's clock, or from "as_of" (RFC 3339)
  when the request gives it.

EXAMPLES
  reflectctl recall "When did Caroline go to the LGBTQ support group?" -N locomo-conv-26
  reflectctl recall "how was the memory leak in the socket fixed?" -N libzmq --limit 5

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error (e.g. "recall: text: must not be empty")
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kContextDescription =
    "Prompt-ready memory for a question, within a token budget.\n";

inline constexpr const char* kContextFooter = R"(
DESCRIPTION
  Sends {"cmd":"context","text":TEXT,"namespace":NS,"max_tokens":N} and prints context_text:
  the best hits whole (hot), their episode neighbours and the summaries of the entities the
  question names (warm), one-line pointers to further hits (cold). Every item starts with
  its [id] and its date; relative times are followed by their absolute date
  ("yesterday [7 May 2023]"). Tokens are estimated as code points / 4, rounded up.
  Archived events are left out unless --include-archived ("include_archived":true).

EXAMPLES
  reflectctl context "What did Caroline research?" -N locomo-conv-26 --max-tokens 500

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kGetDescription = "Events in full, by id.\n";

inline constexpr const char* kGetFooter = R"(
DESCRIPTION
  Sends {"cmd":"get","ids":[ID...]} and prints each event whole: content, context, tags,
  entities, relations, metadata, lifecycle, salience now, status. Ids that are not stored,
  or not readable by this caller, are listed as not found.

EXAMPLES
  reflectctl get locomo:conv-26:D1:3 locomo:conv-26:D1:4

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kEpisodeDescription = "An episode's events, in sequence order.\n";

inline constexpr const char* kEpisodeFooter = R"(
DESCRIPTION
  Sends {"cmd":"episode","episode_id":E,"namespace":NS,"limit":N} and prints the episode's
  events whole, in sequence_number order.

EXAMPLES
  reflectctl episode conv-26-session-1 -N locomo-conv-26

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kReinforceDescription =
    "Tell reflectd an event or knowledge record was useful, or misleading.\n";

inline constexpr const char* kReinforceFooter = R"(
DESCRIPTION
  Sends {"cmd":"reinforce","id":ID,"useful":true|false} (--useful is the default) and prints
  the reinforced record's fields: record_type, id, hit_count, salience (and confidence,
  vitality for knowledge). An unknown id is the daemon's error (exit 1).

EXAMPLES
  reflectctl reinforce 7f3c9a --misleading

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kForgetDescription =
    "Forget events: archive them (restorable) or delete them and what was derived from them.\n";

inline constexpr const char* kForgetFooter = R"(
DESCRIPTION
  Sends {"cmd":"forget","ids":[...]} or {"cmd":"forget","filter":{namespace, agent_id, kind,
  before, after, text}} with "mode" archive (the default) or delete (--delete).

  archive: the events leave the jobs' input (reads still return them, marked archived);
  `reflectctl restore` brings them back. delete: the events, their full-text postings, their facts and the agents'
  decisions they carried are deleted, and everything the jobs derived for their namespaces
  (entities, clusters, knowledge, patterns, summaries, medallions and their history) is
  cleared and rebuilt by the jobs from the events left. Freed pages are zeroed
  (secure_delete) and the WAL is truncated, so no copy of the text stays in the files. One
  audit row per event (`reflectctl audit`), without the content.

  Events with deletion_policy never, and pinned ones, are not forgotten: listed by id they
  fail the request; matched by a filter they are left out and listed as kept. A filter
  without --namespace spans namespaces and needs an admin key; one matching nothing is an
  error. At most 100,000 events per request. --dry-run lists the events and changes nothing.

  A delete runs between two job runs; without --wait the reply comes when the delete is
  committed, with --wait when the jobs have rebuilt the namespaces. It prints the counts:
  events_deleted, facts_deleted, agent_decisions_deleted, audit_rows_redacted,
  derived_rows_cleared, rebuild_runs, wal_truncated, namespaces.

EXAMPLES
  reflectctl forget 7f3c9a --dry-run
  reflectctl forget --namespace muse --agent-id planner --before 2024-06-01T00:00:00Z
  reflectctl forget --namespace muse --text "api key" --delete --wait

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error (unknown id, policy, filter matching nothing)
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms (default 600000 for forget))";

inline constexpr const char* kRestoreDescription =
    "Bring archived events back: active again, with the salience of a new event.\n";
inline constexpr const char* kPinDescription =
    "Pin events: their salience stops decaying and they are never archived or forgotten.\n";
inline constexpr const char* kUnpinDescription =
    "Unpin events: their salience decays again from now.\n";

inline constexpr const char* kEventStateFooter = R"(
DESCRIPTION
  Sends {"cmd":"restore"|"pin"|"unpin","ids":[...]} and prints the ids changed and those
  already in that state (unchanged). Each change writes an audit row (action revise) with
  the previous status, pinned flag and salience. Ids must be events of namespaces the key
  may write.

EXAMPLES
  reflectctl pin 7f3c9a 81d2e0
  reflectctl restore 7f3c9a

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kReviseDescription =
    "Write a new revision of an event that supersedes it (seed 002 revise).\n";

inline constexpr const char* kReviseFooter = R"(
DESCRIPTION
  Sends {"cmd":"revise","id","content","rationale","context","new_id"} and prints the
  revision's id and seq. The revision is a new event with the old one's namespace, kind,
  agent, episode, tags, entities and sensitivity, the new content (and context, when given),
  the time of the revision as its timestamp (--keep-timestamp: the old one's, for a
  correction of what was said then), and the relation supersedes -> the old id. The
  old event keeps its content, turns status superseded with superseded_by set, and gets an
  audit row (action revise, the rationale, its previous status and content hash). get shows
  both; recall returns only the newest revision. Only episodic events are revised: a
  decision, constraint, assumption, intervention or proposal is superseded by publishing a
  new one with a resolution (seed 000 ResolutionIntent). Deleting a revision (forget
  --delete) makes the event it superseded current again.

EXAMPLES
  reflectctl revise 7f3c9a --content "Caroline moved to Boston in June 2023" \
      --rationale "she corrected the city"

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error (unknown id, a semantic kind, already superseded)
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kMergeEntitiesDescription =
    "Merge one entity into another: mentions, edges, facts and later events move.\n";

inline constexpr const char* kMergeEntitiesFooter = R"(
DESCRIPTION
  Sends {"cmd":"merge_entities","namespace","from","into","rationale"} and prints what moved.
  FROM and INTO are canonical keys (person:mel, file:src/zmq.cpp; list them with
  `reflectctl entities`) or display names that exactly one entity of the namespace has.
  The merge is recorded (FROM's key resolves to INTO's for every later event, and for a
  rebuild after a forget) and executed at once: FROM's mentions become INTO's (one per event),
  its edges are re-pointed (an edge between the two is dropped; two edges that become the same
  one add their mentions and keep the stronger strength), its cluster and community
  memberships and its facts move, and FROM's entity row goes. INTO's summary and importance
  are recomputed by the next jobs. An audit row (action merge) keeps FROM's name, mention
  count and the counts moved. Merges declared by events (a relation alias_of or same_as) are
  executed the same way by the decay job (merges_executed).
  The caller must be allowed to write the namespace. Runs between jobs, never beside one.

EXAMPLES
  reflectctl merge-entities person:mel person:melanie --namespace locomo-conv-26
  reflectctl merge-entities "Mel" "Melanie" --namespace team --rationale "same person" --json

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error (unknown entity, a merge onto itself, a namespace you
     may not write)
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kProposalDescription =
    "Accept, reject or falsify a proposal (seed 000 AcceptProposalRequest).\n";

inline constexpr const char* kProposalFooter = R"(
DESCRIPTION
  Sends {"cmd":"proposal","action":"accept"|"reject"|"falsify","proposal_id","rationale"}
  and prints the proposal's new and previous status. A proposal is an agent's proposal event
  or a hypothesis of the consolidation job (proposal:<namespace>:<target>; list them with
  `reflectctl knowledge --status draft`). Transitions: accept and reject take a draft;
  falsify takes a draft or an accepted proposal. Each verdict writes an audit row and marks
  the namespace's medallions stale (their open questions list drafts awaiting a verdict).
  The consolidation job never overrides a verdict.

EXAMPLES
  reflectctl proposal accept proposal:libzmq:socket --rationale "matches the fix in 4.3.5"
  reflectctl proposal falsify prop-17 --rationale "the benchmark regressed"

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error (unknown proposal, a transition not allowed)
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kAuditDescription =
    "Read the audit log: who changed which record, when and why, newest first.\n";

inline constexpr const char* kAuditFooter = R"(
DESCRIPTION
  Sends {"cmd":"audit","record_id","namespace","since","limit"} and prints AT, ACTION,
  ACTOR, RECORD_TYPE, RECORD_ID, NAMESPACE and RATIONALE. Entries are scoped by the
  record's namespace and sensitivity like every read; a deleted event's entries keep its
  namespace. Actions: create, revise, promote, supersede, deprecate, reinforce, decay,
  archive, delete, accept.

EXAMPLES
  reflectctl audit --record-id 7f3c9a
  reflectctl audit --namespace muse --since 2026-11-01T00:00:00Z -n 100

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kMcpDescription =
    "Serve reflectd to an AI agent over the Model Context Protocol (stdio).\n";

inline constexpr const char* kMcpFooter = R"(
DESCRIPTION
  Speaks the Model Context Protocol (specification 2025-11-25; also 2025-06-18, 2025-03-26
  and 2024-11-05 when a client asks for them) as JSON-RPC 2.0 lines on stdin and stdout,
  until stdin ends. An MCP client (an agent, an IDE) starts it as a subprocess. Every call
  goes to the running daemon through the endpoints, configuration file and CURVE keys given
  to reflectctl, as with every other command; nothing but protocol messages is written to
  stdout.

  Tools: remember (store one event; answers after the durable acknowledgement), recall (a
  question in plain words: the events that answer it), context (prompt-ready memory within
  a token budget), get (events in full by id), forget (archive or delete), medallion (list,
  get, query, history). A failed call is a tool result with isError and the daemon's
  reason. Resources: every medallion, as reflectd://medallion/<id> (application/json).

  Add it to a client's configuration (Claude Desktop, VS Code and others use this shape):
    {"mcpServers": {"reflectd": {"command": "reflectctl",
       "args": ["--config", "/etc/reflectd/reflectd.yaml", "mcp", "--namespace", "myproject"]}}}

EXAMPLES
  reflectctl --config /etc/reflectd/reflectd.yaml mcp --namespace myproject
  reflectctl --curve-key agent.key --server-key server.pub --control tcp://10.0.0.5:7704 \
      --ingest tcp://10.0.0.5:7701 mcp

EXIT STATUS
  0  stdin ended
  2  invalid command line, configuration file or endpoint)";

inline constexpr const char* kEventsDescription = "Print the latest events, or follow new ones.\n";

inline constexpr const char* kEventsFooter = R"(
DESCRIPTION
  `events tail` sends {"cmd":"events","limit":N,"namespace":NS,"kind":K,"agent_id":A,
  "episode_id":E} and prints the latest N events (default 20), oldest first, one per line:
  SEQ, TIME (RFC 3339, UTC), NAMESPACE, KIND, ID and a one-line PREVIEW. With -f it then
  polls {"cmd":"events","after_seq":LAST} (with the same filters) every 500 ms and prints
  new events until SIGINT or SIGTERM, then exits 0. --json prints the reply (with -f: one JSON object per event).

EXAMPLES
  reflectctl events tail --namespace libzmq -n 50 -f

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kMedallionDescription =
    "Get, query, list the medallions (per-scope project summaries) and their history; write an "
    "agent's medallion.\n";

inline constexpr const char* kMedallionFooter = R"(
DESCRIPTION
  Sends {"cmd":"medallion","action":ACTION,...}:
    get ID                  the medallion: meta line, high-level summary, subsystems,
                            decisions (D-..., confidence), open questions (Q-..., priority),
                            affordances; --json prints it raw
    query [--node N]... [--tag T]...   medallions covering every node and one of the tags
    history ID [--limit N]  earlier versions, newest first
    list                    every medallion: ID, STATUS, UPDATED, HIGH_LEVEL
    create --namespace NS --file F --evidence TEXT [--transcript T]... [--id ID]
           [--supersedes OLD]
                            an agent's medallion: F holds a seed 001 Medallion (scope,
                            summary, affordances, decisions, open_questions; - = stdin);
                            reflectd sets meta.created_at/updated_at; --supersedes marks
                            OLD (same namespace and scope) superseded by it
    update ID --file F --evidence TEXT [--transcript T]...
                            a new version: the top-level fields F holds replace the old
                            ones; the old version goes to history with its evidence
    set-status ID active|stale|superseded [--superseded-by NEWER] --rationale TEXT
                            the seed's manual status; superseded needs a newer medallion
                            of the same namespace and scope
  The medallion job builds med:<namespace> and the configured scopes (`reflectctl run
  medallion --wait`) and marks them stale when new events arrive; agents' medallions change
  only by these commands, and a hard forget keeps them. Ids starting "med:" are the job's.

EXAMPLES
  reflectctl medallion get libzmq
  reflectctl medallion create --namespace proj --id proj-resume --file m.json \
      --evidence "finished the parser refactor"
  reflectctl medallion set-status proj-resume superseded --superseded-by proj-resume-2 \
      --rationale "new sprint"

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kEntitiesDescription = "List reflectd's most important entities.\n";

inline constexpr const char* kEntitiesFooter = R"(
DESCRIPTION
  Sends {"cmd":"entities","namespace":NS,"top":K,"type":T} and prints NAMESPACE, TYPE, NAME,
  IMPORTANCE (3 decimals), MENTIONS, LAST_SEEN and SUMMARY, most important first.

EXAMPLES
  reflectctl entities --namespace libzmq --top 10

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kClustersDescription =
    "List the largest clusters of similar events reflectd found.\n";

inline constexpr const char* kClustersFooter = R"(
DESCRIPTION
  Sends {"cmd":"clusters","namespace":NS,"limit":N} and prints CLUSTER, NAMESPACE, MEMBERS,
  DUPLICATES, LABEL and SUMMARY, largest first.

EXAMPLES
  reflectctl clusters --limit 5

EXIT STATUS
  0  the daemon answered
  1  the daemon answered with an error
  2  invalid command line, configuration file or endpoint
  3  no reply within --timeout-ms)";

inline constexpr const char* kJetStreamDescription =
    "NATS JetStream: create a shard's stream, publish events into it (docs/CLUSTER.md).\n";

inline constexpr const char* kJetStreamFooter = R"(
DESCRIPTION
  reflectd nodes read events from a JetStream stream (bus.jetstream in reflectd.yaml): one
  stream is one shard, whose subjects are reflectd.events.<namespace> and
  reflectd.agents.*.<namespace> for the namespaces it holds. Each replica of a shard has a
  durable consumer of its own and stores every event of the stream, in stream order, before
  acknowledging it. Events on reflectd.agents.<agent_id>.<namespace> get the rights of the
  authorized-keys entry with that agent_id (NATS permissions must keep that subject to the
  agent's own user); events on reflectd.events. are the operator's.

  init      creates the stream (file storage, --replicas Raft copies, Nats-Msg-Id
            deduplication within --duplicate-window-s). A stream that already exists with the
            same subjects and replicas is left as it is; one that differs is never changed:
            the command fails and says what differs.
  publish   sends each JSON object line on reflectd.events.<its "namespace">, with
            Nats-Msg-Id = its "id" (a line without one gets "id":"line:<SHA-256 of the
            line>", as with `reflectctl publish`), and waits for every PubAck: an
            acknowledged event is on a quorum of the stream's servers. Publishes whose PubAck
            does not come are resent for up to 30 s (0.25 s, 0.5 s, ... 4 s apart); JetStream's duplicate window and the
            event ids keep resends from storing anything twice. With --agent ID, on
            reflectd.agents.<ID>.<namespace> instead.

SERVERS
  --nats URL (repeatable, a global option) names the servers; without it,
  bus.jetstream.servers of --config FILE, and its credentials_file and tls_* files.

READS OVER NATS
  With --nats, the read commands (recall, context, get, search, ...) are sent over NATS to
  reflectd.control.<--namespace>, where one live replica of the shard holding it answers.
  Without --namespace (status, jobs, knowledge, ...) the request goes to
  reflectd.cluster.control, one replica of every shard answers, each answer is printed under
  its shard's name, and shards silent for --timeout-ms are named (exit status 3).
  Such reads see the public level only (a low record redacted, higher ones absent); with
  --nats-agent ID they go to reflectd.agent-control.ID.<--namespace> and see what the
  authorized-keys entry of agent ID may (its namespaces, its max_sensitivity).

ZEROMQ PUBLISHERS
  A node with bus.forward: jetstream publishes the events of its ingest socket into the
  stream and answers each message after JetStream's PubAck (docs/CLUSTER.md).

EXIT STATUS
  0 done (publish: every line stored or duplicate); 1 failed (publish: a line skipped or
  never acknowledged); 2 usage; 3 no NATS server reachable.

EXAMPLES
  reflectctl jetstream init --nats nats://10.0.0.1:4222 --stream TEAM_A \
      --namespace team-a --namespace team-a-ci --replicas 3
  reflectctl jetstream publish --nats nats://10.0.0.1:4222 events.jsonl
  reflectctl jetstream publish --nats nats://10.0.0.1:4222 --agent planner plans.jsonl
  reflectctl --nats nats://10.0.0.1:4222 status
  reflectctl --config /etc/reflectd/reflectd.yaml jetstream publish --json - < events.jsonl
)";

inline constexpr const char* kKeygenDescription =
    "Write a CURVE keypair in the ZeroMQ certificate format (zcert): PATH holds the secret\n"
    "and public key (mode 0600), PATH.pub the public key only (mode 0644).\n";

inline constexpr const char* kKeygenFooter = R"(
The files interoperate with other ZeroMQ tools (CZMQ zcert, pyzmq zmq.auth). For the daemon,
point security.curve_secret_key_file at PATH and give clients PATH.pub (their --server-key).
For a client, add the public key printed here to the daemon's authorized keys file.
Existing files are never replaced unless --force is given.

EXAMPLES
  reflectctl keygen /etc/reflectd/server.key
  reflectctl keygen agent.key --force

EXIT STATUS
  0  both files written
  1  a file could not be written
  2  a file exists (without --force), or bad usage
)";

}  // namespace reflectd::model::help
