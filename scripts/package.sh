#!/usr/bin/env bash
# Builds the Debian package from the build tree: configures it for /usr and
# /etc (the paths the unit names), builds reflectd and reflectctl, and runs `cpack -G DEB`,
# which writes build/reflectd_<version>-1_amd64.deb. Then lintian checks the package.
#
# With --install-test (CI; needs root or sudo): installs the package with apt-get into this
# system, runs `reflectd --version`, `reflectctl --version` and
# `reflectd --check-config --config /etc/reflectd/reflectd.yaml` from the installed files,
# checks that dpkg lists the configuration as a conffile, and purges the package again.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${REFLECTD_BUILD_DIR:-build}"
install_test=0
[ "${1:-}" = "--install-test" ] && install_test=1

cmake -S . -B "$build" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc >/dev/null
cmake --build "$build" --target reflectd reflectctl
rm -f "$build"/reflectd_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb="$(ls "$build"/reflectd_*.deb)"
echo "package: $deb"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Depends\|Installed-Size\):/  \1:/p'

# Errors fail the build; warnings and notes are printed (docs/OPERATIONS.md lists the
# ones kept and why).
if command -v lintian >/dev/null 2>&1; then
  lintian --fail-on error "$deb" || {
    echo "package: lintian found errors" >&2
    exit 1
  }
else
  echo "package: lintian is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi

if [ "$install_test" -eq 1 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends "./$deb" >/dev/null
  trap '$SUDO apt-get purge -y -qq reflectd >/dev/null' EXIT
  /usr/bin/reflectd --version
  /usr/bin/reflectctl --version
  /usr/bin/reflectd --check-config --config /etc/reflectd/reflectd.yaml
  dpkg-query --control-show reflectd conffiles | grep -qx /etc/reflectd/reflectd.yaml
  grep -q '^ExecStart=/usr/bin/reflectd --config /etc/reflectd/reflectd.yaml$' \
    /usr/lib/systemd/system/reflectd.service
  echo "package: installed, checked and purged"
fi
