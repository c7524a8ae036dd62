#!/usr/bin/env bash
# `cmake --install` (the README's first command installs this way) to a scratch prefix gives a
# lockscope that finds its runtime, its man pages and its completion there; removing the files the
# install manifest lists (the README's uninstall line) leaves nothing of it.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/lockscope-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install failed"; }
for path in bin/lockscope lib/liblockscope.so share/man/man1/lockscope-report.1 \
            share/bash-completion/completions/lockscope share/doc/lockscope/third_party/d3/LICENSE \
            share/doc/lockscope/third_party/d3-flame-graph/LICENSE; do
  [ -f "$work/prefix/$path" ] || fail "not installed: $path"
done
PATH="$work/prefix/bin:$PATH" lockscope run -o "$work/prof" -- true 2>"$work/report.txt" ||
  { cat "$work/report.txt" >&2; fail "the installed lockscope run -- true failed"; }
grep -q "lockscope report of" "$work/report.txt" || fail "no report from the installed lockscope"
grep -q "^\.TH LOCKSCOPE-REPORT" "$work/prefix/share/man/man1/lockscope-report.1" ||
  fail "lockscope-report.1 is not a man page"
# The uninstall the README gives.
xargs rm -f <"$build/install_manifest.txt"
left=$(find "$work/prefix" -type f | wc -l)
[ "$left" -eq 0 ] || fail "uninstall left $left files: $(find "$work/prefix" -type f)"
echo "ok: installed, ran, uninstalled"
