#!/usr/bin/env bash
# Installs Microsoft's SARIF validator, the npm package @microsoft/sarif-multitool (its Linux
# binary comes in @microsoft/sarif-multitool-linux), pinned, into a directory of its own, once,
# with npm as scripts/update-web-vendor.sh uses it; prints the path of the binary. The test suite
# runs it (validate_sarif_report.py) and scripts/install-dependencies.sh --test runs it ahead.
# Usage: install_sarif_multitool.sh [DIR]
#   DIR: where to install; default $LOCKSCOPE_TOOLS_DIR, else ~/.cache/lockscope/tools.
# Exits non-zero, saying why on stderr, when npm is missing or the registry refuses the package.
set -euo pipefail
version=5.7.0
root=${1:-${LOCKSCOPE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lockscope/tools}}
target=$root/sarif-multitool-$version
binary=$target/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
command -v npm >/dev/null || {
  echo "install_sarif_multitool: npm is needed (apt-get install npm)" >&2
  exit 1
}
mkdir -p "$root"
work=$(mktemp -d "$root/.install-XXXXXX")
trap 'rm -rf "$work"' EXIT
# --ignore-scripts: the package's only script makes the binary executable, done below.
echo '{"name": "lockscope-test-tools", "private": true}' >"$work/package.json"
if ! (cd "$work" && npm install --no-audit --no-fund --ignore-scripts --save-exact \
        "@microsoft/sarif-multitool@$version" "@microsoft/sarif-multitool-linux@$version" \
        >npm.log 2>&1); then
  echo "install_sarif_multitool: npm install @microsoft/sarif-multitool@$version failed:" >&2
  tail -5 "$work/npm.log" >&2 || true
  exit 1
fi
chmod u+x "$work/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
rm -rf "$target"
mv "$work" "$target"
trap - EXIT
echo "$binary"
