#!/usr/bin/env bash
# Checks that every C++ file is formatted as .clang-format says (fails listing the files that
# are not; `bash scripts/lint.sh --fix` reformats them). With LINT_TIDY=1 it also runs
# clang-tidy (.clang-tidy) over every translation unit of ./build (configure it first; about
# 15 minutes on 2 cores) and fails on any warning.
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
if [ "${LINT_TIDY:-0}" = "1" ]; then
  tidy=$(command -v clang-tidy-14 || command -v clang-tidy)
  [ -f build/compile_commands.json ] || { echo "lint: configure ./build first" >&2; exit 2; }
  out=$(mktemp)
  git ls-files '*.cpp' | grep -v '^fuzz/' | xargs -P "$(nproc)" -n 4 "$tidy" -p build --quiet > "$out" 2>/dev/null || true
  if grep -q "warning:" "$out"; then
    grep -A3 "warning:" "$out" >&2
    echo "lint: clang-tidy warnings above" >&2
    exit 1
  fi
  echo "lint: clang-tidy clean"
fi
