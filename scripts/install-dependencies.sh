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
  # clang and libclang-rt-14-dev: the libFuzzer targets of tests/fuzz; clang-format: the format
  # check of .ci/run; npm: Microsoft's SARIF validator (installed below) for the sarif report's test.
  packages+=(llvm binutils git python3 python3-jsonschema golang-go libjemalloc2 memcached
             dpkg-dev debuginfod curl sqlite3 chromium clang libclang-rt-14-dev clang-format)
  # Debian's npm only where no npm is on PATH: a machine with NodeSource's nodejs has its own npm,
  # and Debian's npm package conflicts with that nodejs ("held broken packages").
  command -v npm >/dev/null || packages+=(npm)
fi
# With --test, once the packages are in: the SARIF validator, from the npm registry, into the
# directory the test looks in (tests/integration/install_sarif_multitool.sh says where).
install_test_tools() {
  [ "${1:-}" = "--test" ] || return 0
  "$(dirname "$0")/../tests/integration/install_sarif_multitool.sh" >/dev/null ||
    echo "install-dependencies: no SARIF validator: the sarif report's test will be skipped" >&2
}
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  install_test_tools "${1:-}"
  exit 0
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
install_test_tools "${1:-}"
