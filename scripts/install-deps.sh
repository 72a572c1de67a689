#!/usr/bin/env bash
# Installs reflectd's build and test dependencies from Debian 12 packages.
# Idempotent; needs root (or sudo) and the Debian archive.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  cppzmq-dev libzmq3-dev libsqlite3-dev libsqlitecpp-dev sqlite3
  libboost-dev libyaml-cpp-dev libspdlog-dev catch2 libsystemd-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libhowardhinnant-date-dev libssl-dev
  libutf8proc-dev libstemmer-dev libigraph-dev libgoogle-perftools-dev libabsl-dev
  systemd
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14 clang-tidy-14
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
