#!/usr/bin/env bash
# Symbols for stripped binaries through debuginfod, end to end: a fixture built with -g is served
# by Debian's debuginfod on 127.0.0.1, and the report of its stripped copy gets file:line from it.
# Without DEBUGINFOD_URLS, the footer names the build-id and the setting to use.
# Usage: debuginfod_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
lockscope="$build/bin/lockscope"
work=$(mktemp -d /tmp/lockscope-debuginfod-test.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v debuginfod >/dev/null || fail "debuginfod is not installed (scripts/install-dependencies.sh --test installs it)"

mkdir -p "$work/debug" "$work/bin"
cc -g -O0 -pthread -Wl,--build-id -o "$work/debug/counter_threads" \
   "$source_dir/tests/integration/fixtures/counter_threads.c"
strip -o "$work/bin/counter_threads" "$work/debug/counter_threads"
build_id=$(readelf -n "$work/bin/counter_threads" | awk '/Build ID:/ { print $3 }')
[ -n "$build_id" ] || fail "the fixture has no build-id"
lock_line=$(grep -n '@counter-lock' "$source_dir/tests/integration/fixtures/counter_threads.c" | cut -d: -f1)

"$lockscope" record -o "$work/prof" -- "$work/bin/counter_threads" 2 1000 >/dev/null 2>&1 ||
  fail "lockscope record of the stripped fixture failed"

# 1. No debuginfod: no file:line, and the footer says exactly what to do.
env -u DEBUGINFOD_URLS DEBUGINFOD_CACHE_PATH="$work/cache0" "$lockscope" report "$work/prof" \
  >"$work/plain.txt" 2>&1 || fail "report without debuginfod failed"
grep -q "counter_threads.c:$lock_line" "$work/plain.txt" && fail "file:line without debug info?"
grep -q "build-id $build_id" "$work/plain.txt" || { cat "$work/plain.txt" >&2; fail "the footer does not name the build-id"; }
grep -q "DEBUGINFOD_URLS=https://debuginfod.debian.net" "$work/plain.txt" ||
  fail "the footer does not give the DEBUGINFOD_URLS setting"

# 2. A local debuginfod serving the -g build.
port=$((20000 + RANDOM % 20000))
debuginfod -F "$work/debug" -p "$port" -d "$work/index.sqlite" -t 1 -g 0 >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$build_id/debuginfo"; then break; fi
  sleep 0.2
done
curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$build_id/debuginfo" ||
  { cat "$work/server.log" >&2; fail "debuginfod did not serve build-id $build_id"; }
DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$work/cache" \
  "$lockscope" report "$work/prof" >"$work/served.txt" 2>&1 || fail "report with debuginfod failed"
grep -q "count_up .*counter_threads.c:$lock_line" "$work/served.txt" ||
  { cat "$work/served.txt" >&2; fail "no 'count_up ...counter_threads.c:$lock_line' from debuginfod"; }
grep "without file:line" "$work/served.txt" >"$work/served-notes.txt" || true
grep -q counter_threads "$work/served-notes.txt" && fail "the footer still says the fixture has no debug info"
# 3. On a terminal (script(1) gives the report one), the download shows its progress on stderr.
if command -v script >/dev/null; then
  script -qec "env DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$work/cache-tty \
    $lockscope report $work/prof >$work/tty-report.txt" "$work/tty.txt" >/dev/null 2>&1 ||
    fail "report on a terminal failed"
  grep -q "Downloading" "$work/tty.txt" ||
    { cat "$work/tty.txt" >&2; fail "no download progress on the terminal"; }
  grep -q "Downloading" "$work/tty-report.txt" && fail "progress went into the report on stdout"
  grep -q "counter_threads.c:$lock_line" "$work/tty-report.txt" || fail "the terminal's report lacks file:line"
fi
echo "ok: file:line of the stripped fixture came from debuginfod (build-id $build_id)"
