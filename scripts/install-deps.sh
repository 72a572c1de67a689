#!/usr/bin/env bash
# Installs reflectd's build and test dependencies from Debian 12 packages.
# Idempotent; needs root (or sudo) and the Debian archive.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  cppzmq-dev libzmq3-dev libsqlite3-dev libsqlitecpp-dev sqlite3
  libboost-dev libyaml-cpp-dev libspdlog-dev catch2 libsystemd-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libhowardhinnant-date-dev libssl-dev
  libutf8proc-dev libstemmer-dev libigraph-dev libgoogle-perftools-dev libabsl-dev wordnet-base
  libnats-dev nats-server
  systemd lintian
  curl python3 python3-prometheus-client
  clang-14 libclang-rt-14-dev llvm-14 lld clang-format-14 clang-tidy-14
  chromium
)
# Node.js and npm run the MCP end-to-end test (tests/mcp: the official MCP TypeScript SDK as
# the client); a machine that already has a node keeps it.
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The console's libraries and the browser and OpenAPI tests' packages, at the versions their
# package-lock.json files pin, from the npm registry.
root="$(cd "$(dirname "$0")/.." && pwd)"
for dir in console tests/console tests/http; do
  if [ ! -d "$root/$dir/node_modules" ]; then
    npm ci --prefix "$root/$dir" --no-audit --no-fund --loglevel=error
  fi
done
# The MCP SDK at the version tests/mcp/package-lock.json pins, from the npm registry.
mcp_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/mcp"
if [ ! -d "$mcp_dir/node_modules/@modelcontextprotocol/sdk" ]; then
  npm ci --prefix "$mcp_dir" --no-audit --no-fund --loglevel=error
fi
