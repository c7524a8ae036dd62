#!/usr/bin/env bash
# README command 2: install dependencies, build, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default -j2 "$@"
