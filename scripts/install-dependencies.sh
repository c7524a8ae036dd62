#!/usr/bin/env bash
# Installs lockscope's build dependencies on Debian 12 (only what is missing); with --test, also
# what only the test suite needs.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libdw-dev libcli11-dev libfmt-dev nlohmann-json3-dev
          libzstd-dev zlib1g-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev
          help2man  # the man pages, from --help
          libprotobuf-dev protobuf-compiler golang-github-google-pprof-dev)  # pprof: profile.proto
if [ "${1:-}" = "--test" ]; then
  # llvm: the symbolizer oracle; python3-jsonschema: the JSON and speedscope schema checks;
  # golang-go: the pprof tests read the export with `go tool pprof`; libjemalloc2 and memcached:
  # real programs run by real_programs_test.cpp; dpkg-dev: the .deb's Depends (dpkg-shlibdeps),
  # built by the packaging tests; debuginfod and curl: a local debuginfod server for the
  # stripped-binary test; sqlite3: the CLI the SQLite report tests query with; chromium: the
  # headless browser the html report tests open their pages in; git, binutils: fixtures and tests;
  # clang and libclang-rt-14-dev: the libFuzzer targets of tests/fuzz.
  packages+=(llvm binutils git python3 python3-jsonschema golang-go libjemalloc2 memcached
             dpkg-dev debuginfod curl sqlite3 chromium clang libclang-rt-14-dev)
fi
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
