#!/usr/bin/env bash
# Proves that a change to the jobs keeps their results bit-identical. The OLD binary stores
# EVENTS events once; then each binary, on its own copy of that database, runs one full cycle
# of every job (bench_jobs --cycle, the daemon's job order) at a fixed "now" (--now-us) and,
# with --incremental INC, stores INC more events itself and runs a second cycle one day later.
# Every table is then dumped (sqlite3 .dump: every column of every row, blobs in hex, in
# storage order; the FTS5 shadow tables included; `--data-only`, so that a migration's
# schema change, even inside a CREATE TABLE, does not count as a difference) and compared
# table by table.
#
# The database is built by the OLD binary, so the NEW one may bring a migration: it converts
# the database when it opens it, as the daemon would.
#
# Usage: scripts/compare-derived.sh [--incremental INC] [--new-page-size BYTES] OLD_BENCH_JOBS
#                                   NEW_BENCH_JOBS [EVENTS] [WORKDIR]
#   --incremental INC  events stored by each side after the first cycle, then a second cycle
#   --new-page-size BYTES  the new side's copy is rewritten with this page size first (VACUUM),
#                      to show that a page size changes no result
#   OLD_BENCH_JOBS     e.g. a copy of build/bench/bench_jobs built before the change
#   NEW_BENCH_JOBS     e.g. build/bench/bench_jobs
#   EVENTS             events stored before the first cycle (default 100000)
#   WORKDIR            where the databases and dumps go (default: a new directory in /var/tmp)
# Both binaries need --now-us and --build/--first (bench/jobs.cpp).
#
# With --incremental, `events` is compared on its derived columns only (seq, uid, status,
# hit_count, salience_base): received_us, salience_ref_us and archive_at_us of the INC events
# come from each side's wall clock when it stores them. When entity_relationships differs,
# it is also compared without `strength` (a column whose meaning a migration may change) to
# tell which columns differ. A table to which a migration added columns, or from which it
# dropped some, counts as the same when every column both sides have is. Tables only in the
# new database (added by a migration) are listed, not counted as differences.
# Exit status 0 when every table is identical, 1 otherwise (the differing tables are listed
# and `diff` of the first one is shown), 2 on a usage error. Needs the sqlite3 CLI.
set -euo pipefail

usage="usage: compare-derived.sh [--incremental INC] [--new-page-size BYTES] OLD_BENCH_JOBS NEW_BENCH_JOBS [EVENTS] [WORKDIR]"
inc=0
new_page_size=
while [[ ${1:-} == --* ]]; do
  case $1 in
    --incremental) inc=${2:?$usage} ;;
    --new-page-size) new_page_size=${2:?$usage} ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $inc =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
[[ -z $new_page_size || $new_page_size =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
old=${1:?$usage}
new=${2:?$usage}
events=${3:-100000}
work=${4:-$(mktemp -d /var/tmp/compare-derived-XXXXXX)}
t1=1800000000000000       # fixed "now" of the first cycle (2027-01-15)
t2=$((t1 + 86400000000))  # one day later for the second
mkdir -p "$work"
echo "work directory: $work" >&2
rm -rf "$work"/base.db* "$work"/old.* "$work"/new.*
"$old" --build "$work/base.db" --events "$events" >/dev/null
sqlite3 "$work/base.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null

for side in old new; do
  bin=$old
  [[ $side == new ]] && bin=$new
  echo "cycles with the $side binary ($bin)..." >&2
  cp "$work/base.db" "$work/$side.db"
  if [[ $side == new && -n $new_page_size ]]; then
    sqlite3 "$work/new.db" "PRAGMA journal_mode = DELETE; PRAGMA page_size = $new_page_size; \
      VACUUM; PRAGMA journal_mode = WAL;" >/dev/null
    echo "new side: page size $(sqlite3 "$work/new.db" 'PRAGMA page_size')" >&2
  fi
  "$bin" --cycle "$work/$side.db" --now-us "$t1" >"$work/$side.cycle1.json"
  if ((inc > 0)); then
    "$bin" --build "$work/$side.db" --first "$events" --events "$inc" >/dev/null
    "$bin" --cycle "$work/$side.db" --now-us "$t2" >"$work/$side.cycle2.json"
  fi
  sqlite3 "$work/$side.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
  mkdir -p "$work/$side.dump"
  for table in $(sqlite3 "$work/$side.db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
    sqlite3 "$work/$side.db" ".dump --data-only '$table'" | grep -v '^PRAGMA\|^BEGIN\|^COMMIT' \
      >"$work/$side.dump/$table.sql" || true
  done
  sqlite3 "$work/$side.db" "SELECT seq, uid, status, hit_count, salience_base FROM events ORDER BY seq" \
    >"$work/$side.events_derived.txt"
  sqlite3 "$work/$side.db" "SELECT relationship_id, namespace, source_id, target_id, rel_type, \
    strength_base, strength_ref_us, mention_count, evidence_seq, last_evidence_seq, valid_from_us \
    FROM entity_relationships ORDER BY relationship_id" >"$work/$side.edges_without_strength.txt"
done

# The columns of table $1 in database $2, one per line, in declaration order.
columns() { sqlite3 "$2" "SELECT name FROM pragma_table_info('$1')"; }

status=0
first=
same=0
for f in "$work"/old.dump/*.sql; do
  table=$(basename "$f" .sql)
  if [[ ! -e "$work/new.dump/$table.sql" ]]; then
    echo "ONLY IN OLD: $table" >&2
    status=1
  elif cmp -s "$f" "$work/new.dump/$table.sql"; then
    same=$((same + 1))
  elif [[ $(sqlite3 "$work/new.db" "SELECT sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_master \
      WHERE name = '$table'") == 1 ]] &&
    cmp -s <(sort "$f") <(sort "$work/new.dump/$table.sql"); then
    # A virtual table's dump is its shadow tables' rows, in sqlite_master's order (which a
    # VACUUM may change); the shadow tables themselves are compared as stored.
    echo "$table: the same rows (virtual table, its shadow tables dumped in another order)" >&2
    same=$((same + 1))
  elif [[ $table == events ]] && ((inc > 0)); then
    if cmp -s "$work/old.events_derived.txt" "$work/new.events_derived.txt"; then
      echo "events: the same on its derived columns (storage times differ, as expected)" >&2
      same=$((same + 1))
    else
      echo "DIFFERENT: events (derived columns)" >&2
      status=1
      first=${first:-$table}
    fi
  elif dropped=$(comm -23 <(columns "$table" "$work/old.db" | sort) \
      <(columns "$table" "$work/new.db" | sort)) &&
    added=$(comm -13 <(columns "$table" "$work/old.db" | sort) \
      <(columns "$table" "$work/new.db" | sort)) && [[ -n $dropped$added ]] &&
    common=$(columns "$table" "$work/old.db" | grep -vxF "$dropped" | paste -sd,) &&
    cmp -s <(sqlite3 "$work/old.db" "SELECT $common FROM \"$table\" ORDER BY $common") \
      <(sqlite3 "$work/new.db" "SELECT $common FROM \"$table\" ORDER BY $common"); then
    echo "$table: the same on every column both have (dropped: $(echo ${dropped:-none});" \
      "added: $(echo ${added:-none}))" >&2
    same=$((same + 1))
  else
    echo "DIFFERENT: $table" >&2
    if [[ $table == entity_relationships ]]; then
      if cmp -s "$work/old.edges_without_strength.txt" "$work/new.edges_without_strength.txt"; then
        echo "  (the same without the strength column)" >&2
      else
        echo "  (also without the strength column)" >&2
      fi
    fi
    status=1
    first=${first:-$table}
  fi
done
for f in "$work"/new.dump/*.sql; do
  [[ -e "$work/old.dump/$(basename "$f")" ]] || echo "new table: $(basename "$f" .sql)" >&2
done
if [[ $status == 0 ]]; then
  echo "identical: $same tables, $(cat "$work"/old.dump/*.sql | wc -l) dump lines" >&2
  sha256sum "$work"/old.dump/*.sql | sed "s|$work/old.dump/||" >"$work/tables.sha256"
else
  diff "$work/old.dump/$first.sql" "$work/new.dump/$first.sql" | head -20 >&2 || true
fi
exit $status
