#!/usr/bin/env bash
# README command 1: install dependencies, build what the demo needs, install lockscope to
# $LOCKSCOPE_PREFIX (default /usr/local, so that `lockscope` is on PATH; sudo when not root), and
# profile the bundled demo workload with the installed lockscope.
# Uninstall: sudo xargs rm -f < build/install_manifest.txt
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${LOCKSCOPE_PREFIX:-/usr/local}
scripts/install-dependencies.sh
cmake --preset default >/dev/null
cmake --build --preset default --target lockscope lockscope_man lockscope_demo
sudo=""
if [ "$(id -u)" -ne 0 ] && ! { mkdir -p "$prefix" 2>/dev/null && [ -w "$prefix" ]; }; then sudo="sudo"; fi
echo "installing lockscope to $prefix (uninstall: ${sudo:+sudo }xargs rm -f < build/install_manifest.txt)"
$sudo cmake --install build --prefix "$prefix" >/dev/null
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH: add it (export PATH=\"$prefix/bin:\$PATH\")" ;;
esac
exec "$prefix/bin/lockscope" run -o build/demo.prof -- build/bin/lockscope_demo "$@"
