#!/usr/bin/env bash
# Proves that a change to the jobs keeps their results bit-identical: runs one full cycle of
# every job (bench_jobs --cycle, the daemon's job order) with two bench_jobs binaries over
# copies of the same stored database, with "now" fixed for both (--now-us), then compares a
# dump of every table (sqlite3 .dump: every column of every row, blobs in hex, in storage
# order; the FTS5 shadow tables included) table by table.
#
# Usage: scripts/compare-derived.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [EVENTS] [WORKDIR]
#   OLD_BENCH_JOBS  e.g. a copy of build/bench/bench_jobs built before the change
#   NEW_BENCH_JOBS  e.g. build/bench/bench_jobs
#   EVENTS          events stored before the cycle (default 100000)
#   WORKDIR         where the databases and dumps go (default: a new directory in /var/tmp)
# Both binaries need --now-us (bench/jobs.cpp, from the commit that added this script on).
# Exit status 0 when every table is identical, 1 otherwise (the differing tables are listed
# and `diff` of the first one is shown). Needs the sqlite3 CLI (package sqlite3).
set -euo pipefail

old=${1:?usage: compare-derived.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [EVENTS] [WORKDIR]}
new=${2:?usage: compare-derived.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [EVENTS] [WORKDIR]}
events=${3:-100000}
work=${4:-$(mktemp -d /var/tmp/compare-derived-XXXXXX)}
now_us=1800000000000000  # fixed "now" for decay, importance and medallion (2027-01-15)
mkdir -p "$work"

echo "work directory: $work" >&2
rm -f "$work"/base.db* "$work"/old.db* "$work"/new.db*
"$new" --build "$work/base.db" --events "$events"
sqlite3 "$work/base.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
cp "$work/base.db" "$work/old.db"
cp "$work/base.db" "$work/new.db"

for side in old new; do
  bin=$old
  [[ $side == new ]] && bin=$new
  echo "cycle with $side binary ($bin)..." >&2
  "$bin" --cycle "$work/$side.db" --now-us "$now_us" >"$work/$side.cycle.json"
  sqlite3 "$work/$side.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
  rm -rf "$work/$side.dump"
  mkdir -p "$work/$side.dump"
  for table in $(sqlite3 "$work/$side.db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
    sqlite3 "$work/$side.db" ".dump '$table'" >"$work/$side.dump/$table.sql"
  done
done

status=0
first=
for f in "$work"/old.dump/*.sql; do
  table=$(basename "$f" .sql)
  if ! cmp -s "$f" "$work/new.dump/$table.sql"; then
    echo "DIFFERENT: $table" >&2
    status=1
    first=${first:-$table}
  fi
done
for f in "$work"/new.dump/*.sql; do
  [[ -e "$work/old.dump/$(basename "$f")" ]] || { echo "ONLY IN NEW: $(basename "$f" .sql)" >&2; status=1; }
done
if [[ $status == 0 ]]; then
  echo "identical: $(ls "$work/old.dump" | wc -l) tables, $(cat "$work"/old.dump/*.sql | wc -l) dump lines" >&2
  sha256sum "$work"/old.dump/*.sql | sed "s|$work/old.dump/||" >"$work/tables.sha256"
else
  diff "$work/old.dump/$first.sql" "$work/new.dump/$first.sql" | head -20 >&2 || true
fi
exit $status
