#!/usr/bin/env bash
# Checks that every C++ file is formatted as .clang-format says (fails listing the files that
# are not; `bash scripts/lint.sh --fix` reformats them), then, with LINT_TIDY set, runs
# clang-tidy (.clang-tidy's checks) and fails on any warning:
#   LINT_TIDY=all      every translation unit (about 15 minutes on 2 cores);
#   LINT_TIDY=changed  the sources changed by this submission (CI): the commits whose commit
#                      time lies within 4 hours of HEAD's (one submission's work), plus the
#                      .cpp beside each changed header. LINT_TIDY_BASE=<commit> names the
#                      base instead.
# clang-tidy reads build-tidy/compile_commands.json, configured here without unity batches
# (CMake lists a unity build's batches, not its sources) and not built.
#   bash scripts/lint.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then
  echo "lint: clang-format not found (scripts/install-deps.sh installs clang-format-14)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  echo "lint: reformatted ${#files[@]} files"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" > /dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -ne 0 ]; then
  printf 'lint: not formatted as .clang-format says (run: bash scripts/lint.sh --fix):\n' >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "lint: ${#files[@]} files formatted"
tidy_mode=${LINT_TIDY:-}
[ "$tidy_mode" = 1 ] && tidy_mode=all
case "$tidy_mode" in
  ""|0) exit 0 ;;
  all) mapfile -t sources < <(git ls-files '*.cpp' | grep -v '^fuzz/') ;;
  changed)
    base=${LINT_TIDY_BASE:-}
    if [ -z "$base" ]; then
      head_time=$(git log -1 --format=%ct HEAD)
      base=$(git log --format='%ct %H' HEAD | awk -v t="$head_time" '$1 >= t - 14400 { b = $2 } END { print b }')
      base=$(git rev-parse -q --verify "$base^" || git hash-object -t tree /dev/null)
    fi
    mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" HEAD -- '*.cpp' '*.hpp' | grep -v '^fuzz/' || true)
    sources=()
    for f in "${changed[@]}"; do
      case "$f" in
        *.cpp) sources+=("$f") ;;
        *.hpp) [ -f "${f%.hpp}.cpp" ] && sources+=("${f%.hpp}.cpp") ;;
      esac
    done
    mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sort -u | grep . || true)
    echo "lint: clang-tidy on ${#sources[@]} sources changed since $(git rev-parse --short "$base" 2>/dev/null || echo the start)"
    ;;
  *) echo "lint: LINT_TIDY is all, changed or unset, not '$tidy_mode'" >&2; exit 2 ;;
esac
[ ${#sources[@]} -gt 0 ] || exit 0
tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
cmake -S . -B build-tidy -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREFLECTD_UNITY_BUILD=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
out=$(mktemp)
printf '%s\n' "${sources[@]}" | xargs -P "$(nproc)" -n 2 "$tidy" -p build-tidy --quiet > "$out" 2>/dev/null || true
if grep -q "warning:" "$out"; then
  grep -A3 "warning:" "$out" >&2
  echo "lint: clang-tidy warnings above" >&2
  exit 1
fi
echo "lint: clang-tidy clean on ${#sources[@]} sources"
