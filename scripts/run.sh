#!/usr/bin/env bash
# README command 1: set up, build, and run reflectd in the foreground on config/reflectd.yaml
# (the embedded defaults). Stop it with Ctrl-C (SIGINT): it commits, answers and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec "${BUILD_DIR:-build}/daemon/reflectd" --config config/reflectd.yaml
