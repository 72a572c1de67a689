#!/usr/bin/env bash
# CI's second half (after scripts/test.sh): the whole suite under AddressSanitizer +
# UndefinedBehaviorSanitizer, every fuzz target for FUZZ_SECONDS (default 30) each, and the
# threaded tests under ThreadSanitizer. Prints the time and the free disk after each step.
#   bash scripts/ci-extra.sh
# Both sanitized trees are built with clang-14. The ASan + UBSan tree (preset `asan`) also
# holds the libFuzzer targets: its libraries carry -fsanitize=fuzzer-no-link, so one
# compilation serves the test suite and the fuzzers (clang compiled the jobs library's first
# batch in 76 s there, GCC without the fuzz instrumentation in 162 s).
# REFLECTD_CI_PRUNE=1 (set by .ci/run) removes each sanitized build tree once its checks have
# passed: CI's disk need not hold build/, build-asan/ and build-tsan/ at once. A failed step
# keeps its tree for the report.
set -euo pipefail
cd "$(dirname "$0")/.."
# 30 s a target, two at a time; longer campaigns: scripts/fuzz.sh 3600.
fuzz_seconds=${FUZZ_SECONDS:-30}
prune=${REFLECTD_CI_PRUNE:-0}
bash scripts/install-deps.sh

build() {  # sibling worktrees on the development machine share one build lock
  if [ -e /tmp/reflectd-build.lock ]; then flock /tmp/reflectd-build.lock "$@"; else "$@"; fi
}
start=$SECONDS
step_start=$SECONDS
timings=()
free_disk() { df -Ph . | awk 'NR == 2 { print $4 }'; }
step_done() {
  timings+=("$(printf '%-40s %5d s   %6s free' "$1" $((SECONDS - step_start)) "$(free_disk)")")
  echo "ci-extra: ${timings[-1]}"
  step_start=$SECONDS
}
prune_tree() {
  if [ "$prune" = 1 ]; then
    rm -rf "$1"
    step_done "prune: rm -rf $1"
  fi
}
echo "ci-extra: $(free_disk) free on the build disk"

cmake --preset asan
build cmake --build --preset asan
step_done "asan: configure + build (+ fuzz targets)"
ctest --preset asan
step_done "asan: ctest (whole suite)"
bash scripts/fuzz.sh "$fuzz_seconds"
step_done "fuzz: 7 targets x ${fuzz_seconds}s, 2 at a time"
prune_tree build-asan

cmake --preset tsan
build cmake --build --preset tsan
step_done "tsan: configure + build"
ctest --preset tsan
step_done "tsan: ctest -L threaded"
prune_tree build-tsan

printf '\nci-extra timings\n'
printf '%s\n' "${timings[@]}"
printf '%-40s %5d s\n' "total" $((SECONDS - start))
