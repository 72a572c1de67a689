#!/usr/bin/env bash
# CTest entry point for the MCP end-to-end test (client.mjs beside this file).
# Usage: run.sh REFLECTD_BIN REFLECTCTL_BIN     (reflectctl mcp on stdio, client.mjs)
#        run.sh --http REFLECTD_BIN            (the daemon's /mcp, http_client.mjs)
# Exit 77 means "skipped" (CTest: SKIP_RETURN_CODE 77): without Node the test
# cannot run, which says nothing about reflectd itself.
set -euo pipefail

http=0
if [[ "${1:-}" == "--http" ]]; then
  http=1
  shift
fi
if [[ $# -ne $((2 - http)) ]]; then
  echo "usage: $0 REFLECTD_BIN REFLECTCTL_BIN | $0 --http REFLECTD_BIN" >&2
  exit 2
fi

if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: node is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# node_modules/ is not committed: install the locked SDK on first use. npm ci
# installs exactly package-lock.json, so every machine tests the same SDK.
if [[ ! -d "$here/node_modules/@modelcontextprotocol/sdk" ]]; then
  echo "installing the MCP SDK: npm ci --prefix $here" >&2
  if ! npm ci --prefix "$here" --no-audit --no-fund >&2; then
    echo "FAIL: 'npm ci --prefix $here' failed; the MCP SDK is needed to run this test" >&2
    exit 1
  fi
fi

if [[ $http -eq 1 ]]; then
  exec node "$here/http_client.mjs" "$1"
fi
exec node "$here/client.mjs" "$1" "$2"
