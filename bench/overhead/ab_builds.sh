#!/usr/bin/env bash
# Two runtimes against each other and plain, in alternating rounds, so that an hour's noise hits all
# three alike; prints medians of the per-round figures. The order within a round rotates (plain A B,
# A B plain, B plain A, ...): on the reference guest the run just after plain was measurably slower
# (sysbench mutex, one runtime as A and as B: 1.272x as A, 1.215x as B over 21 rounds).
#   micro:     lockscope_overhead_bench's uncontended pthread_mutex pair, runtime preloaded
#              directly (CPU ns added to plain)
#   heavy:     lockscope_lock_heavy under `lockscope record` (wall ratio to plain)
#   memcached: memcached -t 4 on 127.0.0.1 under memcaslap, 3 s per run (MEMCACHED_SECONDS: other
#              lengths; throughput, % of plain)
#   sysbench:  sysbench mutex, 2 threads over 4,096 mutexes, runtime preloaded directly (its CPU,
#              user + system, as a ratio to plain: the runtime's page faults are system time)
#   record-sysbench, record-git: the same sysbench, and git repack -a -f -d of a generated
#              3,000-commit repository, under each build's `lockscope record` (CPU of the whole
#              command, the CLI's own included, as a ratio to plain)
#   threads:   10,000 short-lived threads, 4 at a time (fixture_scale threads 10000), runtime
#              preloaded directly: what a thread's registration and exit cost (wall and CPU as
#              ratios to plain, medians and min…max)
# Usage: ab_builds.sh [-n ROUNDS] BUILD_A BUILD_B micro|heavy|memcached|sysbench|record-sysbench|record-git|threads...
# (a BUILD is a build directory with bin/lockscope and lib/liblockscope.so; micro, heavy and
# threads take their benchmark binaries from BUILD_B)
set -euo pipefail
rounds=9
while getopts "n:" opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] || { sed -n 2,10p "$0" >&2; exit 2; }
a=$(cd "$1" && pwd)
b=$(cd "$2" && pwd)
shift 2
work=$(mktemp -d /tmp/lockscope-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT

# median_of COLUMN: the median of that column of stdin.
median_of() { sort -g -k"$1","$1" | awk -v c="$1" '{ v[NR] = $c } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# spread_of COLUMN: "min…max" of that column of stdin.
spread_of() { sort -g -k"$1","$1" | awk -v c="$1" '{ v[NR] = $c } END { printf "%.3f…%.3f", v[1], v[NR] }'; }

pair_ns() {  # pair_ns [RUNTIME]: CPU ns of one uncontended pair
  local bench="$b/bin/lockscope_overhead_bench" filter='pthread_mutex_pair$'
  if [ -z "${1:-}" ]; then "$bench" --benchmark_filter="$filter" --benchmark_min_time=0.2 2>/dev/null
  else LD_PRELOAD="$1/lib/liblockscope.so" LOCKSCOPE_CONFIG="dir=$work/p" "$bench" \
         --benchmark_filter="$filter" --benchmark_min_time=0.2 2>/dev/null; fi | awk '/pair/ { print $4 }'
}

seconds() {  # seconds CMD...: wall seconds of CMD
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

heavy_s() {  # heavy_s [BUILD]
  rm -rf "$work/p"
  if [ -z "${1:-}" ]; then seconds "$b/bin/lockscope_lock_heavy"
  else seconds "$1/bin/lockscope" record -o "$work/p" -- "$b/bin/lockscope_lock_heavy"; fi
}

cpu_s() {  # cpu_s [BUILD] CMD...: user + system CPU seconds of CMD, the runtime of BUILD preloaded
  local lib=$1 TIMEFORMAT='%3U %3S'
  shift
  if [ -z "$lib" ]; then { time "$@" >/dev/null 2>&1; } 2>&1
  else { time LD_PRELOAD="$lib/lib/liblockscope.so" LOCKSCOPE_CONFIG="dir=$work/p" "$@" >/dev/null 2>&1; } 2>&1
  fi | awk '{ print $1 + $2 }'
}

record_cpu_s() {  # record_cpu_s [BUILD] CMD...: user + system CPU seconds of CMD under BUILD's lockscope record
  local build=$1 TIMEFORMAT='%3U %3S'
  shift
  rm -rf "$work/p"
  if [ -z "$build" ]; then { time "$@" >/dev/null 2>&1; } 2>&1
  else { time "$build/bin/lockscope" record -o "$work/p" -- "$@" >/dev/null 2>&1; } 2>&1
  fi | awk '{ print $1 + $2 }'
}

# record_part LABEL CMD...: record_cpu_s in rotating rounds; the median ratios.
record_part() {
  local label=$1
  shift
  record_cmd=("$@")
  record_one() { record_cpu_s "${1:-}" "${record_cmd[@]}"; }
  for ((i = 0; i < rounds; ++i)); do in_turn record_one "$i"; done |
    awk '{ print $2 / $1, $3 / $1, 1000 * ($2 - $1), 1000 * ($3 - $1) }' >"$work/rows"
  echo "== $label under lockscope record: CPU ratio to plain (the CLI's own included), and CPU ms added, median of $rounds rounds"
  echo "A $(median_of 1 <"$work/rows")x +$(median_of 3 <"$work/rows") ms   B $(median_of 2 <"$work/rows")x +$(median_of 4 <"$work/rows") ms"
}

# in_turn FUNCTION ROUND: FUNCTION for plain, A and B, run in an order that rotates with ROUND,
# printed in that order ("plain A B").
in_turn() {
  local function=$1 round=$2 k j
  local -a builds=("" "$a" "$b") results=()
  for ((k = 0; k < 3; ++k)); do
    j=$(((k + round) % 3))
    results[j]=$("$function" ${builds[j]:+"${builds[j]}"})
  done
  echo "${results[0]} ${results[1]} ${results[2]}"
}

threads_run() {  # threads_run [BUILD]: "WALL,CPU" seconds of 10,000 short-lived threads
  local lib=${1:-} TIMEFORMAT='%3R %3U %3S'
  local command=("$b/tests/integration/fixtures/fixture_scale" threads 10000)
  rm -rf "$work/p" && mkdir -p "$work/p"
  if [ -z "$lib" ]; then { time "${command[@]}" >/dev/null 2>&1; } 2>&1
  else { time LD_PRELOAD="$lib/lib/liblockscope.so" LOCKSCOPE_CONFIG="dir=$work/p" "${command[@]}" >/dev/null 2>&1; } 2>&1
  fi | awk '{ print $1 "," $2 + $3 }'
}

tps() {  # tps [BUILD]: memcached's throughput under memcaslap, plain or recorded
  local port=$((20000 + RANDOM % 20000)) command server
  command=(memcached -t 4 -p "$port" -U 0 -l 127.0.0.1)
  [ "$(id -u)" -eq 0 ] && command+=(-u root)
  rm -rf "$work/p"
  if [ -z "${1:-}" ]; then "${command[@]}" & else "$1/bin/lockscope" record -o "$work/p" -- "${command[@]}" 2>/dev/null & fi
  server=$!
  sleep 0.5
  memcaslap -s "127.0.0.1:$port" -t "${MEMCACHED_SECONDS:-3}s" -T 2 -c 16 2>&1 | awk '/^Run time/ { for (i = 1; i <= NF; ++i) if ($i == "TPS:") print $(i + 1) }'
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

for part in "$@"; do
  case $part in
    micro)
      for ((i = 0; i < rounds; ++i)); do in_turn pair_ns "$i"; done |
        awk '{ print $2 - $1, $3 - $1 }' >"$work/rows"
      echo "== uncontended pthread_mutex pair, CPU ns added to plain, median of $rounds rounds"
      echo "A $(median_of 1 <"$work/rows") ns   B $(median_of 2 <"$work/rows") ns" ;;
    heavy)
      for ((i = 0; i < rounds; ++i)); do in_turn heavy_s "$i"; done |
        awk '{ print $2 / $1, $3 / $1 }' >"$work/rows"
      echo "== lock-heavy fixture under lockscope record, wall ratio to plain, median of $rounds rounds"
      echo "A $(median_of 1 <"$work/rows")x   B $(median_of 2 <"$work/rows")x" ;;
    memcached)
      command -v memcached >/dev/null && command -v memcaslap >/dev/null ||
        { echo "memcached or memcaslap is not installed (apt-get install memcached libmemcached-tools)"; continue; }
      for ((i = 0; i < rounds; ++i)); do in_turn tps "$i"; done |
        awk '{ print 100 * $2 / $1, 100 * $3 / $1 }' >"$work/rows"
      echo "== memcached -t 4 under memcaslap (2 threads, 16 connections, ${MEMCACHED_SECONDS:-3} s), % of plain, median of $rounds rounds"
      echo "A $(median_of 1 <"$work/rows") %   B $(median_of 2 <"$work/rows") %" ;;
    sysbench)
      command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)"; continue; }
      mkdir -p "$work/p"
      bench=(sysbench mutex --threads=2 --mutex-num=4096 run)
      sysbench_cpu() { cpu_s "${1:-}" "${bench[@]}"; }
      for ((i = 0; i < rounds; ++i)); do in_turn sysbench_cpu "$i"; done | awk '{ print $2 / $1, $3 / $1, 1000 * ($2 - $1), 1000 * ($3 - $1) }' >"$work/rows"
      echo "== sysbench mutex, 2 threads, 4,096 mutexes, runtime preloaded: CPU ratio to plain, and CPU ms added, median of $rounds rounds"
      echo "A $(median_of 1 <"$work/rows")x +$(median_of 3 <"$work/rows") ms   B $(median_of 2 <"$work/rows")x +$(median_of 4 <"$work/rows") ms" ;;
    record-sysbench)
      command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)"; continue; }
      record_part "sysbench mutex, 2 threads, 4,096 mutexes" sysbench mutex --threads=2 --mutex-num=4096 run ;;
    record-git)
      "$(dirname "$0")/make_git_repo.sh" "$work/repo" 3000 >/dev/null 2>&1
      git -C "$work/repo" repack -a -f -d -q  # warm the page cache and settle the pack layout
      record_part "git repack -a -f -d (3,000 commits)" git -C "$work/repo" repack -a -f -d -q ;;
    threads)
      for ((i = 0; i < rounds; ++i)); do in_turn threads_run "$i"; done | tr ',' ' ' |
        awk '{ print $3 / $1, $5 / $1, $4 / $2, $6 / $2, $1, $3, $5, $2, $4, $6 }' >"$work/rows"
      echo "== 10,000 short-lived threads (4 at a time), runtime preloaded: ratio to plain, median (min…max) of $rounds rounds"
      echo "wall: A $(median_of 1 <"$work/rows")x ($(spread_of 1 <"$work/rows"))   B $(median_of 2 <"$work/rows")x ($(spread_of 2 <"$work/rows"))"
      echo "CPU:  A $(median_of 3 <"$work/rows")x ($(spread_of 3 <"$work/rows"))   B $(median_of 4 <"$work/rows")x ($(spread_of 4 <"$work/rows"))"
      echo "wall s: plain $(median_of 5 <"$work/rows") ($(spread_of 5 <"$work/rows"))   A $(median_of 6 <"$work/rows") ($(spread_of 6 <"$work/rows"))   B $(median_of 7 <"$work/rows") ($(spread_of 7 <"$work/rows"))"
      echo "CPU s:  plain $(median_of 8 <"$work/rows") ($(spread_of 8 <"$work/rows"))   A $(median_of 9 <"$work/rows") ($(spread_of 9 <"$work/rows"))   B $(median_of 10 <"$work/rows") ($(spread_of 10 <"$work/rows"))" ;;
    *) echo "ab_builds.sh: unknown part '$part' (micro, heavy, memcached, sysbench, record-sysbench, record-git, threads)" >&2; exit 2 ;;
  esac
done
