#!/usr/bin/env bash
# MiniDebugInfo: a program stripped of everything but a .gnu_debugdata section (an xz-compressed
# symbol table, as Fedora ships its binaries; the recipe of gdb's manual) still gets its function
# names in the report, static functions included, where a plainly stripped copy gets module+offset.
# Usage: minidebuginfo_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
lockscope="$build/bin/lockscope"
work=$(mktemp -d /tmp/lockscope-minidebuginfo-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"

cc -g -O0 -pthread -o full "$source_dir/tests/integration/fixtures/counter_threads.c"
# The function symbols that .dynsym lacks, kept in a symbol-only debug file, xz'd into the binary.
nm -D full --format=posix --defined-only | awk '{ print $1 }' | sort >dynsyms
nm full --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >funcsyms
comm -13 dynsyms funcsyms >keep_symbols
grep -qx count_up keep_symbols || fail "count_up is not among the symbols to keep"
objcopy --only-keep-debug full debug
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep_symbols debug mini
xz -q mini
strip --strip-all -R .comment -o plain full
cp plain mini_program
objcopy --add-section .gnu_debugdata=mini.xz mini_program
# (readelf's output is kept first: `grep -q` closing the pipe early fails it under pipefail.)
sections=$(readelf -S -W mini_program)
grep -q gnu_debugdata <<<"$sections" || fail "no .gnu_debugdata in the copy"
grep -qE '\.symtab|\.debug_info' <<<"$sections" && fail "the copy kept a symbol table"

for program in plain mini_program; do
  "$lockscope" record -o "prof-$program" -- "./$program" 2 1000 >/dev/null 2>&1 ||
    fail "lockscope record of $program failed"
  env -u DEBUGINFOD_URLS "$lockscope" report "prof-$program" >"$program.txt" 2>&1 ||
    fail "report of $program failed"
done
grep -q "count_up" plain.txt && fail "the plainly stripped copy has function names?"
grep -q "count_up" mini_program.txt ||
  { cat mini_program.txt >&2; fail "no count_up from .gnu_debugdata"; }
echo "ok: count_up named from .gnu_debugdata"
