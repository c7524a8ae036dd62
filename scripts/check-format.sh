#!/usr/bin/env bash
# The lines the newest commit changed (C and C++ sources) are as clang-format (.clang-format)
# formats them; older code is left as it is. Usage: scripts/check-format.sh [BASE] (default HEAD~1).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD~1}
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "check-format: no $base to compare with (a shallow clone?): skipped"
  exit 0
fi
diff=$(git clang-format --diff --extensions c,cc,cpp,h "$base" HEAD 2>&1 || true)
case "$diff" in
  ""|*"did not modify any files"*|*"no modified files to format"*)
    echo "check-format: the lines changed since $base are formatted" ;;
  *)
    printf '%s\n' "$diff"
    echo "check-format: lines changed since $base are not as clang-format formats them (see above;"
    echo "fix with: git clang-format $base)"
    exit 1 ;;
esac
