#!/usr/bin/env bash
# Every tracked C++ source and header (*.cpp, *.h) is as clang-format (.clang-format) formats it.
# C fixtures are checked on the lines the newest commit changed only: their "// @marker" comments
# name the line a call returns to, and a reflowed call would move them.
# Usage: scripts/check-format.sh [BASE] (BASE of the changed-lines check; default HEAD~1).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git ls-files -z '*.cpp' '*.h' | xargs -0 clang-format --dry-run -Werror; then
  echo "check-format: the C++ files above are not as clang-format formats them"
  echo "(fix with: git ls-files '*.cpp' '*.h' | xargs clang-format -i)"
  exit 1
fi
base=${1:-HEAD~1}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "check-format: every C++ file is formatted; no $base to compare C files with (a shallow clone?)"
  exit 0
fi
diff=$(git clang-format --diff --extensions c "$base" HEAD 2>&1 || true)
case "$diff" in
  ""|*"did not modify any files"*|*"no modified files to format"*)
    echo "check-format: every C++ file, and the C lines changed since $base, are formatted" ;;
  *)
    printf '%s\n' "$diff"
    echo "check-format: C lines changed since $base are not as clang-format formats them (see above;"
    echo "fix with: git clang-format --extensions c $base)"
    exit 1 ;;
esac
