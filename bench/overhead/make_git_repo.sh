#!/usr/bin/env bash
# Creates a deterministic git repository for the `git repack -a -f -d` comparison: COMMITS commits
# (default 3000) over 64 text files of ~4 KB that change a few lines at a time, so repack has real
# delta searching to do (pack-objects runs it on threads that share pthread mutexes).
# Same arguments -> same objects, byte for byte (fixed authors, dates, contents).
# Usage: make_git_repo.sh DIR [COMMITS]
set -euo pipefail
dir=${1:?usage: make_git_repo.sh DIR [COMMITS]}
commits=${2:-3000}
rm -rf "$dir"
git init -q -b main "$dir"
# One fast-import stream: every commit rewrites two files in full (inline data), changing a few
# lines of each. awk keeps the 64 files in memory; LC_ALL=C makes length() count bytes.
LC_ALL=C awk -v commits="$commits" '
  function blob(f,   s, l) {
    s = ""
    for (l = 0; l < 96; ++l) s = s line[f, l] "\n"
    return s
  }
  BEGIN {
    files = 64
    for (f = 0; f < files; ++f)
      for (l = 0; l < 96; ++l) line[f, l] = sprintf("file %02d line %02d: initial text of this line", f, l)
    for (c = 1; c <= commits; ++c) {
      printf "commit refs/heads/main\n"
      printf "committer Lock Scope <bench@lockscope.invalid> %d +0000\n", 1700000000 + c * 60
      msg = sprintf("commit %d", c)
      printf "data %d\n%s\n", length(msg), msg
      if (c == 1) {
        for (f = 0; f < files; ++f) {
          b = blob(f)
          printf "M 100644 inline src/file%02d.txt\ndata %d\n%s\n", f, length(b), b
        }
        continue
      }
      for (k = 0; k < 2; ++k) {
        f = (c * 7 + k * 29) % files
        for (j = 0; j < 3; ++j) {
          l = (c * 13 + j * 31 + k) % 96
          line[f, l] = sprintf("file %02d line %02d: changed in commit %d (%d)", f, l, c, (c * 2654435761) % 1000003)
        }
        b = blob(f)
        printf "M 100644 inline src/file%02d.txt\ndata %d\n%s\n", f, length(b), b
      }
    }
  }' | git -C "$dir" fast-import --quiet
git -C "$dir" reset -q --hard main
