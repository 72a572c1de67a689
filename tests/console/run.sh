#!/usr/bin/env bash
# CTest entry point for the web console's browser test (console_test.mjs beside this file).
# Usage: run.sh REFLECTD_BIN CONSOLE_DIR DATA_DIR SCREENSHOT_DIR
# Exit 77 ("skipped" for CTest) without Node.js, Debian's Chromium or the console's files:
# then the test cannot run, which says nothing about reflectd.
set -euo pipefail
if [[ $# -ne 4 ]]; then
  echo "usage: $0 REFLECTD_BIN CONSOLE_DIR DATA_DIR SCREENSHOT_DIR" >&2
  exit 2
fi
for need in node /usr/bin/chromium; do
  if ! command -v "$need" >/dev/null 2>&1; then
    echo "SKIP: $need is not installed (scripts/install-deps.sh installs it)"
    exit 77
  fi
done
if [[ ! -f "$2/index.html" ]]; then
  echo "SKIP: no console in $2 (npm ci --prefix console, then configure again)"
  exit 77
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# node_modules/ is not committed: npm ci installs exactly package-lock.json's playwright-core.
if [[ ! -d "$here/node_modules/playwright-core" ]]; then
  npm ci --prefix "$here" --no-audit --no-fund >&2
fi
exec node "$here/console_test.mjs" "$@"
