#!/usr/bin/env bash
# README command 1: install dependencies, build, and profile the bundled demo workload.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-dependencies.sh
cmake --preset default >/dev/null
cmake --build --preset default
exec build/bin/lockscope run -o build/demo.prof -- build/bin/lockscope_demo "$@"
