#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/) for SECONDS each (default 300), FUZZ_JOBS targets at a
# time (default: the number of cores), and prints a table: target, executions, exec/s, corpus
# size, coverage, findings. Exits 1 on any finding (crash-*, leak-*, timeout-*, oom-* files,
# kept under build-asan/fuzz-out/<target>/).
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
# The targets are built in the ASan + UBSan tree (preset `asan`, clang-14: the libraries carry
# -fsanitize=fuzzer-no-link there, so the test suite and the fuzzers share one compilation).
# Seeds: fuzz/corpus/<target>/ (hand-written) plus, generated here from the real data,
# up to 2000 single events, 500 batches of consecutive events and config/reflectd.yaml.
# The corpus each run grows is kept in build-asan/fuzz-corpus/<target>/ for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(event_decoder_fuzz batch_decoder_fuzz control_request_fuzz config_loader_fuzz recall_query_fuzz decision_text_fuzz mcp_server_fuzz)
data_dir=${REFLECTD_DATA_DIR:-../shared/data}
build_dir=build-asan
jobs=${FUZZ_JOBS:-$(nproc)}
max_seeds=2000
max_batches=500

bash scripts/install-deps.sh
cmake --preset asan >/dev/null
build=(cmake --build --preset asan --target "${targets[@]}")
# Sibling worktrees on the development machine share one build lock (skipped when up to date).
if ! "${build[@]}" -- -n 2>/dev/null | grep -q "no work to do"; then
  if [ -e /tmp/reflectd-build.lock ]; then flock /tmp/reflectd-build.lock "${build[@]}"; else "${build[@]}"; fi
fi

seeds=$build_dir/fuzz-seeds
out=$build_dir/fuzz-out
rm -rf "$seeds" "$out"
mkdir -p "$seeds"/{event_decoder_fuzz,batch_decoder_fuzz,control_request_fuzz,config_loader_fuzz,recall_query_fuzz,decision_text_fuzz,mcp_server_fuzz}
shopt -s nullglob
data_files=("$data_dir"/*.jsonl)
if [ ${#data_files[@]} -eq 0 ]; then
  echo "fuzz: no $data_dir/*.jsonl; seeds are the hand-written ones only" >&2
else
  # One line = one seed, spread evenly over all lines; batches of 2-8 consecutive lines.
  total=$(cat "${data_files[@]}" | wc -l)
  cat "${data_files[@]}" | awk -v total="$total" -v cap="$max_seeds" -v dir="$seeds/event_decoder_fuzz" '
    BEGIN { step = total > cap ? total / cap : 1; next_pick = 0 }
    NR - 1 >= next_pick { printf "%s", $0 > (dir "/line-" NR); close(dir "/line-" NR); next_pick += step }'
  cat "${data_files[@]}" | awk -v total="$total" -v cap="$max_batches" -v dir="$seeds/batch_decoder_fuzz" '
    BEGIN { step = total > cap ? total / cap : 1; next_pick = 0; size = 0; count = 0 }
    size == 0 && NR - 1 >= next_pick { size = 2 + count % 7; batch = ""; count++; next_pick += step }
    size > 0 { batch = batch (batch == "" ? "" : ",") $0
               if (--size == 0) { file = dir "/batch-" count; printf "[%s]", batch > file; close(file) } }'
fi
for target in "${targets[@]}"; do
  [ -d "fuzz/corpus/$target" ] && cp fuzz/corpus/"$target"/* "$seeds/$target/"
done
cp config/reflectd.yaml "$seeds/config_loader_fuzz/reflectd.yaml"

declare -A dict=([event_decoder_fuzz]=event [batch_decoder_fuzz]=event
                 [control_request_fuzz]=control [config_loader_fuzz]=config
                 [recall_query_fuzz]=recall [decision_text_fuzz]=decision
                 [mcp_server_fuzz]=mcp)
# One target a core: each libFuzzer process is single-threaded.
run_target() {
  local target=$1 corpus=$build_dir/fuzz-corpus/$1 status=0
  mkdir -p "$corpus" "$out/$target"
  echo "fuzz: $target for ${seconds}s ($(ls "$seeds/$target" | wc -l) seeds, log $out/$target.log)"
  # -rss_limit_mb: ASan's shadow memory on top of 1 MiB messages; -timeout: a slow input is
  # a finding (the bus thread must never stall on one message).
  "$build_dir/fuzz/$target" "$corpus" "$seeds/$target" \
    -dict="fuzz/${dict[$target]}.dict" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=4096 -max_len=131072 -artifact_prefix="$out/$target/" \
    >"$out/$target.log" 2>&1 || status=$?
  echo "$status" >"$out/$target.status"
}
running=0
for target in "${targets[@]}"; do
  run_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

rows=()
findings_total=0
for target in "${targets[@]}"; do
  corpus=$build_dir/fuzz-corpus/$target
  log=$out/$target.log
  status=$(cat "$out/$target.status")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)  # none when the first input crashed
  corpus_size=$(ls "$corpus" | wc -l)
  findings=$(ls "$out/$target" | grep -cE '^(crash|leak|timeout|oom|slow-unit)-' || true)
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # died without artifact
  findings_total=$((findings_total + findings))
  rows+=("$(printf '%-22s %12s %8s %8s %6s %9s' "$target" "${execs:-?}" "${rate:-?}" \
            "$corpus_size" "${cov:-?}" "$findings")")
done

printf '\n%-22s %12s %8s %8s %6s %9s\n' target executions exec/s corpus cov findings
printf '%s\n' "${rows[@]}"
echo "fuzz: ${seconds}s per target, $jobs at a time, $(date -u +%FT%TZ), findings total: $findings_total"
if [ "$findings_total" -ne 0 ]; then
  echo "fuzz: findings in $out/<target>/ (reproduce: $build_dir/fuzz/<target> <file>)" >&2
  exit 1
fi
