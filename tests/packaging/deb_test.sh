#!/usr/bin/env bash
# The .deb built by CPack installs a working lockscope: it is unpacked into a scratch root (as
# `dpkg -i` would place it, without touching the machine) and `lockscope run -- true` is run from
# there. Also: its Depends come from the binaries' libraries, and it ships the man pages and the
# bash completion.
# Usage: deb_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/lockscope-deb-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/out/lockscope_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail "no lockscope_*.deb in $work/out"

contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/lockscope ./usr/lib/liblockscope.so ./usr/share/bash-completion/completions/lockscope \
            ./usr/share/man/man1/lockscope.1 ./usr/share/man/man1/lockscope-run.1 \
            ./usr/share/man/man1/lockscope-record.1 ./usr/share/man/man1/lockscope-report.1 \
            ./usr/share/man/man1/lockscope-bench.1; do
  grep -qE " $path(\.gz)?\$" <<<"$contents" || fail "the package lacks $path"
done
depends=$(dpkg-deb -f "$deb" Depends)
for library in libc6 libdw1 libfmt9 libstdc++6; do
  grep -q "$library" <<<"$depends" || fail "Depends lacks $library: $depends"
done
[ "$(dpkg-deb -f "$deb" Version)" = "$("$build/bin/lockscope" --version | awk '{ print $2 }')" ] ||
  fail "the package's version is not lockscope --version's"

dpkg-deb -x "$deb" "$work/root"
installed="$work/root/usr/bin/lockscope"
version=$("$installed" --version)
grep -qE '^lockscope [0-9]+\.[0-9]+\.[0-9]+$' <<<"$version" || fail "--version said: $version"
status=0
"$installed" run -o "$work/prof" -- true 2>"$work/report.txt" || status=$?
[ "$status" -eq 0 ] || { cat "$work/report.txt" >&2; fail "lockscope run -- true exited $status"; }
grep -q "lockscope report of" "$work/report.txt" || { cat "$work/report.txt" >&2; fail "no report"; }
grep -q "exit 0" "$work/report.txt" || fail "the report does not show true's exit 0"
# The program's status is its own, under the installed runtime too.
status=0
"$installed" run -o "$work/prof2" -- sh -c 'exit 3' 2>/dev/null || status=$?
[ "$status" -eq 3 ] || fail "lockscope run -- sh -c 'exit 3' exited $status"
echo "ok: $(basename "$deb") installs a working lockscope"
