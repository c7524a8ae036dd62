#!/usr/bin/env bash
# memcached's own CPU per request, plain and under each given runtime, in alternating rounds:
# memcached -t 4 on 127.0.0.1 with the runtime preloaded directly (LD_PRELOAD, as `record` does),
# `memcaslap -x REQUESTS` (2 threads, 16 connections) against it, and memcached's user and system
# time read from /proc before and after. Steadier on a shared guest than throughput, which also
# depends on the load generator's share of the CPUs. Prints medians per configuration.
# Usage: memcached_cpu.sh [-n ROUNDS] [-x REQUESTS] plain|BUILD[|CONFIG]...
#   (BUILD: a build directory with lib/liblockscope.so; CONFIG: LOCKSCOPE_CONFIG keys, e.g.
#   "build|stack_depth=0")
set -euo pipefail
rounds=5
requests=150000
while getopts "n:x:" opt; do
  case $opt in
    n) rounds=$OPTARG ;;
    x) requests=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n 2,9p "$0" >&2; exit 2; }
command -v memcached >/dev/null && command -v memcaslap >/dev/null ||
  { echo "memcached or memcaslap is not installed (apt-get install memcached libmemcached-tools)" >&2; exit 2; }
work=$(mktemp -d /tmp/lockscope-mccpu.XXXXXX)
trap 'rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)

# one SPEC: prints "SPEC user_ns_per_request sys_ns_per_request tps"
one() {
  local spec=$1 build=${1%%|*} config= port=$((20000 + RANDOM % 20000)) pid
  [[ $spec == *"|"* ]] && config=${spec#*|}
  local command=(memcached -t 4 -p "$port" -U 0 -l 127.0.0.1)
  [ "$(id -u)" -eq 0 ] && command+=(-u root)
  rm -rf "$work/prof" && mkdir -p "$work/prof"
  if [ "$build" = plain ]; then "${command[@]}" &
  else LD_PRELOAD="$(cd "$build" && pwd)/lib/liblockscope.so" \
         LOCKSCOPE_CONFIG="${config:+$config,}dir=$work/prof" "${command[@]}" & fi
  pid=$!
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
  local u0 s0 u1 s1 out
  read -r u0 s0 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
  out=$(memcaslap -s "127.0.0.1:$port" -x "$requests" -T 2 -c 16 2>&1)
  read -r u1 s1 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null || true
  echo "${spec// /_} $(((u1 - u0) * 1000000000 / ticks / requests)) $(((s1 - s0) * 1000000000 / ticks / requests)) \
$(echo "$out" | awk '/^Run time/ { for (i = 1; i <= NF; ++i) if ($i == "TPS:") print $(i + 1) }')"
}

echo "== memcached -t 4, memcaslap -x $requests (2 threads, 16 connections): CPU per request, medians of $rounds rounds"
# Within a round the order rotates (the run just after plain was measurably slower on this guest).
specs=("$@")
for ((r = 0; r < rounds; ++r)); do
  for ((k = 0; k < ${#specs[@]}; ++k)); do one "${specs[$(((k + r) % ${#specs[@]}))]}"; done
done | python3 -c '
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    name, *values = line.split()
    runs[name].append([float(v) for v in values])
for name in dict.fromkeys(spec.replace(" ", "_") for spec in sys.argv[1:]):
    rows = runs[name]
    user, system, tps = (statistics.median(column) for column in zip(*rows))
    print(f"{name:40} user {user / 1000:5.2f} us  sys {system / 1000:5.2f} us per request  {tps:8.0f} TPS")
' "$@"
