#!/usr/bin/env bash
# An independent check of lockscope's counts: bpftrace counts the calls to each entry point the
# runtime exports (uprobes on build/lib/liblockscope.so, every process that maps it) while
# `lockscope record` runs CMD, and the profile's counts by operation are set beside them. A call
# the runtime passed through unrecorded (a signal handler's lock while the thread was inside the
# runtime's own book-keeping, a call before the runtime was ready) is counted in the profile as
# reentrant or bootstrap; those are shown too. Exits 1 when a count differs by more than they
# explain. Needs bpftrace and root (uprobes; apt-get install bpftrace).
# Usage: scripts/uprobe_counts.sh [-b BUILD_DIR] -- CMD [ARGS...]
# (CMD's own output goes to /dev/null; a server needs its load from elsewhere and a signal to end.)
set -euo pipefail
build=build
while getopts "b:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || { sed -n 2,10p "$0" >&2; exit 2; }
command -v bpftrace >/dev/null || { echo "uprobe_counts.sh: bpftrace is not installed" >&2; exit 2; }
runtime=$(cd "$build/lib" && pwd)/liblockscope.so
cli=$(cd "$build/bin" && pwd)/lockscope
work=$(mktemp -d /tmp/lockscope-uprobes.XXXXXX)
trap 'kill -INT "$tracer" 2>/dev/null || true; rm -rf "$work"' EXIT

# A probe on each exported entry point that acquires, releases, waits or signals.
entry_points=$(nm -D --defined-only "$runtime" | awk '{ print $3 }' |
  grep -E '^(pthread_(mutex|rwlock|spin|cond|barrier)_|sem_)' | grep -vE '_(init|destroy)$|^sem_open$')
{
  sed "s|.*|uprobe:$runtime:&|; \$!s|\$|,|" <<<"$entry_points"
  echo '{ @[probe] = count(); }'
} >"$work/counts.bt"
bpftrace "$work/counts.bt" >"$work/counts" 2>"$work/bpftrace.err" &
tracer=$!
for _ in $(seq 100); do  # until the probes are attached
  grep -q '^Attaching' "$work/counts" 2>/dev/null && break
  sleep 0.1
done
sleep 0.5
status=0
"$cli" record -o "$work/profile" -- "$@" >/dev/null || status=$?
sleep 0.5
kill -INT "$tracer"
wait "$tracer" || true
[ -d "$work/profile" ] || { echo "uprobe_counts.sh: no profile was written (exit $status)" >&2; exit 1; }
"$cli" report -f json -o "$work/profile.json" "$work/profile"
python3 - "$work/counts" "$work/profile.json" <<'EOF'
import collections, json, re, sys

calls = collections.Counter()
for line in open(sys.argv[1]):
    match = re.match(r"@\[uprobe:.*:(\w+)\]: (\d+)", line)
    if match:
        calls[match.group(1)] += int(match.group(2))
profile = json.load(open(sys.argv[2]))
operations = collections.Counter()
passed_through = 0
for process in profile["processes"]:
    for lock in process["locks"]:
        for site in lock["sites"]:
            operations[site["operation"]] += site["count"]
    passed_through += process["counters"]["reentrant_calls"] + process["counters"]["bootstrap_calls"]
# Entry points -> the operations their calls are counted as (a condition wait's re-acquire of its
# mutex and its wake-up are parts of the wait, not calls of their own).
groups = [
    (["pthread_mutex_lock"], ["lock"]),
    (["pthread_mutex_trylock"], ["trylock"]),
    (["pthread_mutex_timedlock"], ["timedlock"]),
    (["pthread_mutex_clocklock"], ["clocklock"]),
    (["pthread_mutex_unlock", "pthread_spin_unlock"], ["unlock"]),
    (["pthread_rwlock_rdlock"], ["rdlock"]),
    (["pthread_rwlock_tryrdlock"], ["tryrdlock"]),
    (["pthread_rwlock_timedrdlock"], ["timedrdlock"]),
    (["pthread_rwlock_clockrdlock"], ["clockrdlock"]),
    (["pthread_rwlock_wrlock"], ["wrlock"]),
    (["pthread_rwlock_trywrlock"], ["trywrlock"]),
    (["pthread_rwlock_timedwrlock"], ["timedwrlock"]),
    (["pthread_rwlock_clockwrlock"], ["clockwrlock"]),
    (["pthread_rwlock_unlock"], ["rdunlock", "wrunlock"]),
    (["pthread_cond_wait"], ["wait"]),
    (["pthread_cond_timedwait"], ["timedwait"]),
    (["pthread_cond_clockwait"], ["clockwait"]),
    (["pthread_cond_signal"], ["signal"]),
    (["pthread_cond_broadcast"], ["broadcast"]),
    (["pthread_spin_lock"], ["spin_lock"]),
    (["pthread_spin_trylock"], ["spin_trylock"]),
    (["sem_wait"], ["sem_wait"]),
    (["sem_trywait"], ["sem_trywait"]),
    (["sem_timedwait"], ["sem_timedwait"]),
    (["sem_clockwait"], ["sem_clockwait"]),
    (["sem_post"], ["sem_post"]),
    (["pthread_barrier_wait"], ["barrier_wait"]),
]
print(f"{'ENTRY POINT':<44} {'UPROBE CALLS':>12} {'PROFILE':>12} {'DIFF':>8}")
difference = 0
for entries, names in groups:
    probed = sum(calls[e] for e in entries)
    counted = sum(operations[n] for n in names)
    if probed or counted:
        print(f"{' + '.join(entries):<44} {probed:>12,} {counted:>12,} {counted - probed:>8,}")
        difference += abs(counted - probed)
print(f"calls the runtime passed through (reentrant + bootstrap): {passed_through:,}")
if difference > passed_through:
    print(f"uprobe_counts.sh: the counts differ by {difference:,}", file=sys.stderr)
    sys.exit(1)
print("counts agree" if difference == 0 else "counts agree but for calls passed through")
EOF
