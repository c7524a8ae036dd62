#!/usr/bin/env bash
# Installs lockscope's build and test dependencies on Debian 12 (only what is missing).
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libdw-dev libcli11-dev libfmt-dev nlohmann-json3-dev
          libzstd-dev zlib1g-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
          llvm binutils git python3 python3-jsonschema
          sqlite3  # the CLI that sqlite_report_test.cpp reads the SQLite report with
          libjemalloc2 memcached)  # the last two: real programs run by real_programs_test.cpp
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
