#!/usr/bin/env bash
# The bash completion offers what lockscope's --help lists: commands, each command's options,
# --sort keys, formats, --unwind modes, bench scenarios; file names after `--`.
# Usage: completion_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
source_dir=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
# shellcheck source=/dev/null
source "$source_dir/packaging/lockscope.bash-completion"
failures=0

# expect WORD... :: EXPECTED...: completing the last WORD offers every EXPECTED, and only words
# that begin with it.
expect() {
  local words=() expected=() seen=0
  while [ "$1" != "::" ]; do words+=("$1"); shift; done
  shift
  expected=("$@")
  COMP_WORDS=("${LOCKSCOPE_CLI:-$build/bin/lockscope}" "${words[@]}")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _lockscope
  local offered=" ${COMPREPLY[*]} " want cur=${COMP_WORDS[COMP_CWORD]}
  for want in "${expected[@]}"; do
    if [[ $offered != *" $want "* ]]; then
      echo "FAIL: lockscope ${words[*]}<TAB> does not offer '$want' (offered:${offered})" >&2
      failures=$((failures + 1))
    fi
  done
  for want in "${COMPREPLY[@]}"; do
    if [[ $want != "$cur"* ]]; then
      echo "FAIL: lockscope ${words[*]}<TAB> offers '$want', which does not begin with '$cur'" >&2
      failures=$((failures + 1))
    fi
  done
  seen=${#COMPREPLY[@]}
  [ "$seen" -gt 0 ] || { echo "FAIL: lockscope ${words[*]}<TAB> offers nothing" >&2; failures=$((failures + 1)); }
}

expect "" :: run record report bench
expect re :: record report
expect --v :: --version
expect run --st :: --stack-depth --stacks
expect run --unwind "" :: fp dwarf auto
expect run --stacks a :: all
expect report --sort wait :: wait wait-max wait-p99
expect report --sort "" :: lock acquired contended handoffs le-1us gt-1ms hold-max
expect report -f "" :: text json collapsed speedscope pprof csv sqlite chrome html
expect report --format sp :: speedscope
expect record --trace- :: --trace-size --trace-full
expect bench c :: condvar c2c
expect bench mutex --th :: --threads
cd "$source_dir" && expect run -o x -- READ :: README.md
echo "$failures failures"
[ "$failures" -eq 0 ]
