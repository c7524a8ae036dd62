#!/usr/bin/env bash
# How long `lockscope report` takes on a profile of SITES call sites (default 20,000; issue target:
# symbolized and written in at most 1 s): the profile from lockscope_large_profile, its call sites
# real code addresses of build/bin/lockscope (DWARF, ~20,000 functions), reported in each format
# RUNS times (default 7); prints each format's median, min and max wall time.
#
# usage: bench/report/report_time.sh [BUILD_DIR] [SITES] [RUNS]
set -euo pipefail
build=${1:-build} sites=${2:-20000} runs=${3:-7}
work=$(mktemp -d /tmp/lockscope-report-time.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$build/bin/lockscope_large_profile" "$work/profile" "$build/bin/lockscope" "$sites"
echo "profile: $(du -k "$work/profile" | cut -f1) KB; lockscope report, $runs runs each:"
for output in report.txt report.json report.pb.gz report.csv report.db report.html; do
  times=()
  for ((i = 0; i < runs; i++)); do
    rm -f "$work/$output"
    start=$(date +%s%N)
    "$build/bin/lockscope" report "$work/profile" -o "$work/$output" --top 20 2>/dev/null
    times+=($(( ($(date +%s%N) - start) / 1000000 )))
  done
  sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  printf '  -o %-13s median %5d ms  (min %d, max %d; %s KB)\n' "$output" \
    "${sorted[$((runs / 2))]}" "${sorted[0]}" "${sorted[$((runs - 1))]}" \
    "$(du -k "$work/$output" | cut -f1)"
done
