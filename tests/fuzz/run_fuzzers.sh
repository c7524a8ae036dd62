#!/usr/bin/env bash
# The fuzz targets (tests/fuzz), each for a bounded time, seeded with profiles of real recordings
# of the test fixtures (plain, with stacks, blame and lock order, traced, forked). Builds the fuzz
# preset first when it is not built (scripts/test.sh builds it before the test suite runs).
# A finding fails the test and is kept under build-fuzz/findings/, with the command that replays it.
#
# usage: run_fuzzers.sh SOURCE_DIR BUILD_DIR [SECONDS_PER_TARGET]
set -euo pipefail
source_dir=$1 build_dir=$2 seconds=${3:-20}
fuzz_dir=$source_dir/build-fuzz
if [ ! -x "$fuzz_dir/bin/fuzz_reports" ] || [ ! -x "$fuzz_dir/bin/fuzz_readers" ]; then
  (cd "$source_dir" && cmake --preset fuzz >/dev/null && cmake --build --preset fuzz) ||
    { echo "run_fuzzers: the fuzz preset did not build (clang and libclang-rt-14-dev?)"; exit 1; }
fi
work=$(mktemp -d /tmp/lockscope-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
fixtures=$build_dir/tests/integration/fixtures
lockscope=$build_dir/bin/lockscope
record() {  # NAME LOCKSCOPE_OPTIONS... -- FIXTURE ARGS...
  local name=$1; shift
  "$lockscope" record -o "$work/rec/$name" "$@" >/dev/null 2>&1 ||
    { echo "run_fuzzers: recording $name failed"; exit 1; }
}
record wrapped --stacks all -- "$fixtures/fixture_wrapped_locks" 20
record order -- "$fixtures/fixture_lock_order" inversion
record rwlock --hold-sample 1 -- "$fixtures/fixture_rwlock_sides" 3 20
record traced --trace --hold-sample 1 -- "$fixtures/fixture_handoffs" 50
record condvar --trace -- "$fixtures/fixture_condvar_wakeups" 5
record forked -- "$fixtures/fixture_fork_exec"
python3 "$source_dir/tests/fuzz/make_seed.py" "$work/seeds" "$work"/rec/*
mkdir -p "$fuzz_dir/findings"
status=0
for target in fuzz_readers fuzz_reports; do
  mkdir -p "$work/corpus-$target"
  log=$work/$target.log
  if "$fuzz_dir/bin/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$fuzz_dir/findings/$target-" \
       "$work/corpus-$target" "$work/seeds" >"$log" 2>&1; then
    echo "$target: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs" \
         "in ${seconds} s, $(grep -E '^stat::peak_rss_mb' "$log" | awk '{print $2}') MB peak: no finding"
  else
    status=1
    grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written|runtime error" "$log" | head -30
    echo "$target: FINDING (replay: $fuzz_dir/bin/$target FILE, with FILE from the line above)"
  fi
done
exit $status
