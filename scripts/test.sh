#!/usr/bin/env bash
# README command 2: install dependencies, build, and run the whole test suite.
# LOCKSCOPE_WERROR=ON (as .ci/run sets it) turns every compiler warning into an error.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh --test
cmake --preset default -DLOCKSCOPE_WERROR="${LOCKSCOPE_WERROR:-OFF}" >/dev/null
cmake --build --preset default
# The fuzz targets of tests/fuzz, built with clang (the suite runs them for a bounded time).
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
ctest --preset default -j2 "$@"
