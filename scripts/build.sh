#!/usr/bin/env bash
# Installs the Debian packages reflectd needs (root or sudo), then configures and builds it
# into ./build. Idempotent. BUILD_DIR and BUILD_TYPE may be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
cmake --build "$build_dir"
