#!/usr/bin/env bash
# Instructions the runtime adds to one uncontended pthread_mutex_lock + unlock pair, counted by
# callgrind (deterministic, unlike timings on a shared guest): a loop of 300,000 pairs minus one of
# 100,000, divided by 200,000, less the plain pair's own instructions (measured the same way).
# Usage: callgrind_pair.sh [BUILD]   (default: build; needs valgrind)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d /tmp/lockscope-callgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat > "$work/pair.c" <<'PROGRAM'
#include <pthread.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  const long n = argc > 1 ? atol(argv[1]) : 1000000;
  for (long i = 0; i < n; i++) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
  return 0;
}
PROGRAM
cc -O2 -o "$work/pair" "$work/pair.c" -lpthread
instructions() {  # instructions [PRELOAD] PAIRS
  local preload=$1 pairs=$2
  LD_PRELOAD=$preload LOCKSCOPE_CONFIG="dir=$work/profile" \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/pair" "$pairs" 2>&1 |
    awk '/Collected/ { print $4 }'
}
per_pair() {  # per_pair [PRELOAD]: instructions per pair
  local low high
  low=$(instructions "$1" 100000)
  high=$(instructions "$1" 300000)
  echo "scale=1; ($high - $low) / 200000" | bc
}
plain=$(per_pair "")
profiled=$(per_pair "$build/lib/liblockscope.so")
echo "plain pair: $plain instructions; under the runtime: $profiled; added: $(echo "$profiled - $plain" | bc)"
