#!/usr/bin/env bash
# CI's second half (after scripts/test.sh): the whole suite under AddressSanitizer +
# UndefinedBehaviorSanitizer, the threaded tests under ThreadSanitizer, and every fuzz target
# for FUZZ_SECONDS (default 60) each. Prints the time of each step.
#   bash scripts/ci-extra.sh
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${FUZZ_SECONDS:-60}
bash scripts/install-deps.sh

build() {  # sibling worktrees on the development machine share one build lock
  if [ -e /tmp/reflectd-build.lock ]; then flock /tmp/reflectd-build.lock "$@"; else "$@"; fi
}
start=$SECONDS
step_start=$SECONDS
timings=()
step_done() {
  timings+=("$(printf '%-40s %5d s' "$1" $((SECONDS - step_start)))")
  step_start=$SECONDS
}

cmake --preset asan
build cmake --build --preset asan
step_done "asan: configure + build"
ctest --preset asan
step_done "asan: ctest (whole suite)"

cmake --preset tsan
build cmake --build --preset tsan
step_done "tsan: configure + build"
ctest --preset tsan
step_done "tsan: ctest -L threaded"

bash scripts/fuzz.sh "$fuzz_seconds"
step_done "fuzz: 4 targets x ${fuzz_seconds}s"

printf '\nci-extra timings\n'
printf '%s\n' "${timings[@]}"
printf '%-40s %5d s\n' "total" $((SECONDS - start))
