#!/usr/bin/env bash
# A longer crash campaign than CI's: ROUNDS SIGKILL rounds during an ingest flood and KILLS
# kills during each job (consolidate, cluster, importance, decay, medallion), seeded (SEED, default random; printed so a failure replays).
#   bash scripts/crash-campaign.sh [ROUNDS] [KILLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
[ -x "$build_dir/tests/crash_campaign_test" ] || bash scripts/build.sh
export REFLECTD_CRASH_ROUNDS=${1:-200}
export REFLECTD_CRASH_JOB_KILLS=${2:-20}
[ -n "${3:-}" ] && export REFLECTD_CRASH_SEED=$3
exec "$build_dir/tests/crash_campaign_test"
