#!/usr/bin/env bash
# Like scripts/compare-derived.sh, with an incremental cycle and across schema changes: stores
# N events with the OLD binary, then for each binary on its own copy: one full cycle at a fixed
# now, INC more events stored by that binary, a second cycle one day later. Dumps every table
# (sqlite3 .dump) and compares them table by table; also compares `events` on its derived
# columns only (the storage-time columns received_us, salience_ref_us and archive_at_us come
# from the wall clock of each side's store) and entity_relationships without `strength`.
#
# Usage: scripts/compare-derived-incremental.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [N] [INC] [WORKDIR]
#   N 30000 and INC 10000 by default; WORKDIR a new directory in /var/tmp by default.
# Exit status 0 when every table is identical (events.sql is expected to differ, see above).
set -euo pipefail
old=${1:?usage: compare-derived-incremental.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [N] [INC] [WORKDIR]}
new=${2:?usage: compare-derived-incremental.sh OLD_BENCH_JOBS NEW_BENCH_JOBS [N] [INC] [WORKDIR]}
n=${3:-30000}
inc=${4:-10000}
work=${5:-$(mktemp -d /var/tmp/compare-incr-XXXXXX)}
t1=1800000000000000
t2=$((t1 + 86400000000))
echo "work directory: $work" >&2
mkdir -p "$work"
rm -rf "$work"/base.db* "$work"/old* "$work"/new*
"$old" --build "$work/base.db" --events "$n" >/dev/null
sqlite3 "$work/base.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
for side in old new; do
  bin=$old
  [[ $side == new ]] && bin=$new
  cp "$work/base.db" "$work/$side.db"
  "$bin" --cycle "$work/$side.db" --now-us $t1 >"$work/$side.c1.json"
  "$bin" --build "$work/$side.db" --first "$n" --events "$inc" >/dev/null
  "$bin" --cycle "$work/$side.db" --now-us $t2 >"$work/$side.c2.json"
  sqlite3 "$work/$side.db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
  mkdir -p "$work/$side.dump"
  for table in $(sqlite3 "$work/$side.db" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
    sqlite3 "$work/$side.db" ".dump '$table'" | grep -v '^CREATE\|^PRAGMA\|^BEGIN\|^COMMIT' >"$work/$side.dump/$table.sql" || true
  done
  sqlite3 "$work/$side.db" "SELECT seq, uid, status, hit_count, salience_base FROM events ORDER BY seq" \
    >"$work/$side.events_derived.txt"
  sqlite3 "$work/$side.db" "SELECT relationship_id, namespace, source_id, target_id, rel_type, strength_base, \
    strength_ref_us, mention_count, evidence_seq, last_evidence_seq, valid_from_us, unswept FROM \
    entity_relationships ORDER BY relationship_id" >"$work/$side.edges_without_strength.txt"
done
rc=0
for f in "$work"/old.dump/*.sql; do
  t=$(basename "$f")
  if cmp -s "$f" "$work/new.dump/$t"; then
    echo "same: ${t%.sql} ($(wc -l <"$f") rows)"
  else
    echo "DIFFERS: ${t%.sql}"
    [[ $t == events.sql ]] || rc=1
  fi
done
for f in events_derived edges_without_strength; do
  if cmp -s "$work/old.$f.txt" "$work/new.$f.txt"; then echo "same: $f"; else echo "DIFFERS: $f"; rc=1; fi
done
exit $rc
