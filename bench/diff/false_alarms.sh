#!/usr/bin/env bash
# How often `lockscope diff` calls a change where there is none: the same program recorded twice
# with --repeat N (base, then new, as a CI job records them), diffed; TRIALS times per program.
# Prints, per trial, the figures compared, those called significant, and the gate's exit status.
# Usage: bench/diff/false_alarms.sh [TRIALS] [RUNS]   (from a build in build/)
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-5}
runs=${2:-10}
lockscope=build/bin/lockscope
fixtures=build/tests/integration/fixtures
programs=("build/bin/lockscope_demo"
          "$fixtures/fixture_diff_knobs 2 40 200 200 0"
          "$fixtures/fixture_counter_threads 4 20000")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
record_set() {  # DIR PROGRAM...
  local dir=$1; shift
  if "$lockscope" record --help | grep -q -- --repeat; then
    "$lockscope" record --repeat "$runs" -o "$dir" -- "$@" >/dev/null 2>&1
  else
    for run in $(seq 1 "$runs"); do "$lockscope" record -o "$dir/$run" -- "$@" >/dev/null 2>&1; done
  fi
}
printf '%-40s %5s %8s %11s %4s\n' program trial figures significant gate
for program in "${programs[@]}"; do
  for trial in $(seq 1 "$trials"); do
    rm -rf "$work/base" "$work/new"
    # shellcheck disable=SC2086
    record_set "$work/base" $program
    # shellcheck disable=SC2086
    record_set "$work/new" $program
    status=0
    "$lockscope" diff "$work/base" "$work/new" --sites -f json -o "$work/diff.json" || status=$?
    read -r figures significant < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = s = 0
for e in d["matched"]:
    for m in e["metrics"].values():
        if m["direction"] == "no value": continue
        f += 1
        s += m["direction"] in ("higher", "lower")
print(f, s)' "$work/diff.json")
    printf '%-40s %5s %8s %11s %4s\n' "$(basename "${program%% *}")" "$trial" "$figures" \
      "$significant" "$status"
  done
done
