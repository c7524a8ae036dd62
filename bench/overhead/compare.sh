#!/usr/bin/env bash
# The runtime's overhead on this machine, plain vs under `lockscope record`, alternating runs so
# that drift and neighbours hit every configuration alike; prints medians and ratios.
#   micro: lockscope_overhead_bench (CPU ns per uncontended pair; added = median - plain median)
#   heavy: lockscope_lock_heavy     (wall time, whole program)
#   git:   git repack -a -f -d on a generated repository (make_git_repo.sh)
#   sysbench: sysbench mutex, 2 threads over 4,096 mutexes (wall time, whole program)
#   threads: 10,000 short-lived threads, 4 at a time (wall time, and peak memory of the process)
#   memcached: memcached -t 4 on 127.0.0.1 under memcaslap (2 threads, 16 connections, 3 s, or
#          MEMCACHED_SECONDS): the throughput (TPS) plain and under lockscope record, alternating;
#          median ratio
#   write: the profile write of memcached -t 4 after 2 s of memcaslap (runtime preloaded directly,
#          log_writes=1: the runtime says how long each write took)
#   scale: 10^6 distinct locks and 10^5 threads over one process's life, once each: time, and the
#          profile's own counts (count_profile.py) against what the program did
# Each profiled configuration runs at --hold-sample 32 (the default) and 1 (every hold timed).
# Usage: compare.sh [-n RUNS] [-b BUILD_DIR] [-c GIT_COMMITS] [micro|heavy|git|sysbench|threads|memcached|write|scale]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=10
build="$here/../../build"
commits=3000
while getopts "n:b:c:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    b) build=$OPTARG ;;
    c) commits=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
parts=${*:-micro heavy git}
build=$(cd "$build" && pwd)
lockscope="$build/bin/lockscope"
work=$(mktemp -d /tmp/lockscope-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
configs=(plain hold32 hold1)

# run CONFIG CMD...: the command plain or under lockscope record (fresh profile directory).
run() {
  local config=$1
  shift
  rm -rf "$work/prof"
  case $config in
    plain) "$@" ;;
    hold32) "$lockscope" record --hold-sample 32 -o "$work/prof" -- "$@" 2>/dev/null ;;
    hold1) "$lockscope" record --hold-sample 1 -o "$work/prof" -- "$@" 2>/dev/null ;;
  esac
}

# Reads "key value" lines; prints "key median min max" per key.
medians() {
  sort -k1,1 -k2,2g | awk '
    function flush() { if (n) printf "%s %s %s %s\n", key, (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2), v[1], v[n] }
    $1 != key { flush(); key = $1; n = 0 }
    { v[++n] = $2 }
    END { flush() }'
}

micro() {
  echo "== uncontended pairs: lockscope_overhead_bench, CPU ns per iteration, median of $runs alternating runs"
  for ((i = 0; i < runs; ++i)); do
    for config in "${configs[@]}"; do
      run "$config" "$build/bin/lockscope_overhead_bench" --benchmark_min_time=0.2 \
        --benchmark_format=csv 2>/dev/null |
        awk -F, -v c="$config" '$1 ~ /^"/ { gsub(/"/, "", $1); print c ":" $1, $4 }'
    done
  done | medians >"$work/micro"
  awk '
    { split($1, k, ":"); t[k[1], k[2]] = $2; if (k[1] == "plain") order[++n] = k[2] }
    END {
      printf "%-28s %8s %8s %8s %8s %8s\n", "benchmark", "plain", "hold32", "+ns", "hold1", "+ns"
      for (i = 1; i <= n; ++i) {
        b = order[i]
        printf "%-28s %8.1f %8.1f %+8.1f %8.1f %+8.1f\n", b, t["plain", b], t["hold32", b],
               t["hold32", b] - t["plain", b], t["hold1", b], t["hold1", b] - t["plain", b]
      }
    }' "$work/micro"
}

# whole LABEL CMD...: wall time of CMD in every configuration, alternating.
whole() {
  local label=$1
  shift
  # Wall time, and CPU time (user + sys of every process, lockscope's CLI included), which
  # neighbours on a shared machine disturb less.
  local TIMEFORMAT='%R %U %S' wall user sys
  for ((i = 0; i < runs; ++i)); do
    for config in "${configs[@]}"; do
      read -r wall user sys < <({ time run "$config" "$@" >/dev/null 2>&1; } 2>&1)
      echo "$config $i $wall $(echo "$user + $sys" | bc)"
    done
  done >"$work/times"
  echo "== $label: wall seconds, median of $runs alternating runs"
  summarize 3
  echo "== $label: CPU seconds (user+sys), median of $runs alternating runs"
  summarize 4
}

# summarize COLUMN: medians, spread and ratios of one column of $work/times.
summarize() {
  awk -v column="$1" '
    { us[$1, $2] = $column; if ($2 + 1 > rounds) rounds = $2 + 1 }
    END {
      for (i = 0; i < rounds; ++i) {
        print "plain", us["plain", i]
        print "hold32", us["hold32", i]
        print "hold1", us["hold1", i]
        print "ratio32", us["hold32", i] / us["plain", i]
        print "ratio1", us["hold1", i] / us["plain", i]
      }
    }' "$work/times" | medians | awk '
    { m[$1] = $2; lo[$1] = $3; hi[$1] = $4 }
    END {
      printf "%-8s %9s %9s %9s\n", "", "plain", "hold32", "hold1"
      printf "%-8s %9.3f %9.3f %9.3f\n", "median s", m["plain"], m["hold32"], m["hold1"]
      printf "%-8s %9s %9s %9s\n", "min…max", sprintf("%.2f…%.2f", lo["plain"], hi["plain"]),
             sprintf("%.2f…%.2f", lo["hold32"], hi["hold32"]), sprintf("%.2f…%.2f", lo["hold1"], hi["hold1"])
      printf "%-8s %9s %8.3fx %8.3fx   (median of per-round ratios)\n", "ratio", "", m["ratio32"], m["ratio1"]
      printf "%-8s %9s %8.3fx %8.3fx   (ratio of medians)\n", "", "", m["hold32"] / m["plain"], m["hold1"] / m["plain"]
    }'
}

scale_fixture() { echo "$build/tests/integration/fixtures/fixture_scale"; }

# peak LABEL CMD...: peak resident memory (KB) of CMD plain and with the runtime preloaded
# directly (the CLI's own memory left out), alternating; medians.
peak() {
  local label=$1
  shift
  for ((i = 0; i < runs; ++i)); do
    echo "plain $(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)"
    rm -rf "$work/prof" && mkdir -p "$work/prof"
    echo "profiled $(LD_PRELOAD="$build/lib/liblockscope.so" LOCKSCOPE_CONFIG="dir=$work/prof" \
      /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)"
  done | medians | awk -v label="$label" '
    { m[$1] = $2 }
    END { printf "== %s: peak RSS, median of runs\nplain %d KB, profiled %d KB, extra %.1f MB\n",
          label, m["plain"], m["profiled"], (m["profiled"] - m["plain"]) / 1024 }'
}

# once LABEL CMD...: one profiled run, its time and the profile's own counts.
once() {
  local label=$1
  shift
  rm -rf "$work/prof"
  local TIMEFORMAT='%R'
  echo "== $label"
  echo "plain:    $({ time "$@" >/dev/null; } 2>&1) s"
  echo "profiled: $({ time "$lockscope" record -o "$work/prof" -- "$@" >/dev/null 2>&1; } 2>&1) s"
  python3 "$here/count_profile.py" "$work/prof"
}

# memcached_tps CONFIG: one memcached run (plain or recorded), loaded for 3 s (MEMCACHED_SECONDS);
# prints its TPS.
memcached_tps() {
  local port=$((20000 + RANDOM % 20000)) server
  local command=(memcached -t 4 -p "$port" -U 0 -l 127.0.0.1)
  [ "$(id -u)" -eq 0 ] && command+=(-u root)
  rm -rf "$work/prof"
  if [ "$1" = plain ]; then "${command[@]}" & else "$lockscope" record -o "$work/prof" -- "${command[@]}" 2>/dev/null & fi
  server=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
  memcaslap -s "127.0.0.1:$port" -t "${MEMCACHED_SECONDS:-3}s" -T 2 -c 16 2>&1 | awk '/^Run time/ { for (i = 1; i <= NF; ++i) if ($i == "TPS:") print $(i + 1) }'
  kill -TERM "$server"
  wait "$server" 2>/dev/null || true
}

write_part() {
  command -v memcached >/dev/null && command -v memcaslap >/dev/null || return
  echo "== profile write of memcached -t 4 after 2 s of memcaslap ($runs runs)"
  for ((i = 0; i < runs; ++i)); do
    local port=$((20000 + RANDOM % 20000)) server
    rm -rf "$work/prof" && mkdir -p "$work/prof"
    local command=(memcached -t 4 -p "$port" -U 0 -l 127.0.0.1)
    [ "$(id -u)" -eq 0 ] && command+=(-u root)
    LD_PRELOAD="$build/lib/liblockscope.so" LOCKSCOPE_CONFIG="log_writes=1,dir=$work/prof" \
      "${command[@]}" 2>&1 | grep "written in" &
    sleep 0.5
    memcaslap -s "127.0.0.1:$port" -t 2s -T 2 -c 16 >/dev/null 2>&1
    pkill -TERM -f "memcached -t 4 -p $port" || true
    wait
  done
}

memcached_part() {
  command -v memcached >/dev/null && command -v memcaslap >/dev/null ||
    { echo "memcached or memcaslap is not installed (apt-get install memcached libmemcached-tools)"; return; }
  for ((i = 0; i < runs; ++i)); do
    local plain profiled
    plain=$(memcached_tps plain)
    profiled=$(memcached_tps record)
    echo "plain $plain"
    echo "profiled $profiled"
    echo "ratio $(echo "$profiled / $plain" | bc -l)"
  done | medians | awk -v runs="$runs" -v seconds="${MEMCACHED_SECONDS:-3}" '
    { m[$1] = $2; lo[$1] = $3; hi[$1] = $4 }
    END {
      printf "== memcached -t 4 under memcaslap (2 threads, 16 connections, %s s), median of %d alternating runs\n", seconds, runs
      printf "plain %.0f TPS (%.0f…%.0f), recorded %.0f TPS (%.0f…%.0f): %.1f %% of plain (median of per-round ratios)\n",
             m["plain"], lo["plain"], hi["plain"], m["profiled"], lo["profiled"], hi["profiled"], 100 * m["ratio"]
    }'
}

for part in $parts; do
  case $part in
    micro) micro ;;
    heavy) whole "lock-heavy fixture: lockscope_lock_heavy" "$build/bin/lockscope_lock_heavy" ;;
    git)
      "$here/make_git_repo.sh" "$work/repo" "$commits"
      git -C "$work/repo" repack -a -f -d -q  # warm the page cache and settle the pack layout
      whole "git repack -a -f -d ($commits commits)" git -C "$work/repo" repack -a -f -d -q ;;
    sysbench)
      command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)"; continue; }
      whole "sysbench mutex: 2 threads, 4,096 mutexes" sysbench mutex --threads=2 --mutex-num=4096 run ;;
    threads)
      whole "10,000 short-lived threads (4 at a time)" "$(scale_fixture)" threads 10000
      peak "10,000 short-lived threads" "$(scale_fixture)" threads 10000 ;;
    memcached) memcached_part ;;
    write) write_part ;;
    scale)
      once "10^6 distinct mutexes, each taken once by 2 threads" "$(scale_fixture)" locks 1000000
      once "10^5 short-lived threads, each locking once" "$(scale_fixture)" threads 100000 ;;
    *) echo "compare.sh: unknown part '$part' (micro, heavy, git, sysbench, threads, memcached, write, scale)" >&2; exit 2 ;;
  esac
  echo
done
