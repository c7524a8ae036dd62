#!/usr/bin/env bash
# What trace mode (record --trace) costs on this machine, against plain runs and summary mode,
# alternating runs so that drift and neighbours hit every configuration alike; prints medians.
#   event: lockscope_overhead_bench's uncontended pairs (CPU ns per pair); a pair is two events, so
#          the trace's cost per event is (trace - summary) / 2, and (trace - plain) / 2 all told
#   heavy: lockscope_lock_heavy (wall seconds), the issue's lock-heavy fixture; ratios to plain
#   threads: 10,000 short-lived threads, 4 at a time (wall seconds): a trace file per thread
# Usage: trace_cost.sh [-n RUNS] [-b BUILD_DIR] [event|heavy|threads]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=7
build="$here/../../build"
while getopts "n:b:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    b) build=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
parts=${*:-event heavy}
build=$(cd "$build" && pwd)
lockscope="$build/bin/lockscope"
work=$(mktemp -d /tmp/lockscope-trace-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
configs=(plain summary trace)

run() {
  local config=$1
  shift
  rm -rf "$work/prof"
  case $config in
    plain) "$@" ;;
    summary) "$lockscope" record -o "$work/prof" -- "$@" 2>/dev/null ;;
    # Room for every event of the run: a full file would stop writing, and cost less.
    trace) "$lockscope" record --trace --trace-size 1G -o "$work/prof" -- "$@" 2>/dev/null ;;
  esac
}

median() { sort -g | awk '{ v[++n] = $1 } END { print (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }'; }
# medians FILE: "plain summary trace" medians of FILE's "config value" lines
medians() {
  local config
  for config in "${configs[@]}"; do awk -v c="$config" '$1 == c { print $2 }' "$1" | median; done | xargs
}

event() {
  echo "== uncontended pairs (2 events each): CPU ns per pair, median of $runs alternating runs"
  for ((i = 0; i < runs; ++i)); do
    for config in "${configs[@]}"; do
      run "$config" "$build/bin/lockscope_overhead_bench" --benchmark_filter=^pthread_mutex_pair$ \
        --benchmark_min_time=0.2 --benchmark_format=csv 2>/dev/null |
        awk -F, -v c="$config" '$1 ~ /^"/ { print c, $4; exit }'
    done
  done >"$work/event"
  local plain summary trace
  read -r plain summary trace < <(medians "$work/event")
  awk -v p="$plain" -v s="$summary" -v t="$trace" 'BEGIN {
    printf "plain %.1f ns, summary %.1f ns, trace %.1f ns a pair\n", p, s, t
    printf "trace per event: %.1f ns more than summary, %.1f ns more than plain\n", (t - s) / 2, (t - p) / 2
  }'
}

# whole NAME LABEL CMD...: wall seconds of CMD in every configuration, alternating; medians, ratios.
whole() {
  local name=$1 label=$2
  shift 2
  echo "== $label: wall seconds, median of $runs alternating runs"
  local TIMEFORMAT='%R'
  for ((i = 0; i < runs; ++i)); do
    for config in "${configs[@]}"; do
      echo "$config $({ time run "$config" "$@" >/dev/null 2>&1; } 2>&1)"
    done
  done >"$work/$name"
  local plain summary trace
  read -r plain summary trace < <(medians "$work/$name")
  awk -v p="$plain" -v s="$summary" -v t="$trace" 'BEGIN {
    printf "plain %.3f s, summary %.3f s (%.2fx), trace %.3f s (%.2fx)\n", p, s, s / p, t, t / p
  }'
}

heavy() { whole heavy "lock-heavy fixture" "$build/bin/lockscope_lock_heavy"; }
threads() {
  whole threads "10,000 short-lived threads, 4 at a time" \
    "$build/tests/integration/fixtures/fixture_many_threads" 10000 4
}

for part in $parts; do "$part"; done
