#!/usr/bin/env bash
# Fetches the pinned JavaScript libraries of the html report from the npm registry (npm into a
# temporary directory) and copies their minified dist files and licenses into third_party/web/,
# which the build embeds into the binary (src/report/CMakeLists.txt). The build itself never needs
# node, npm or the network: run this only to change a version, then commit what it changed.
# Usage: scripts/update-web-vendor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# The versions the page is written and tested against (d3-flame-graph 5 wants d3 7's modules on
# the global `d3`, which d3's own bundle provides). They are named again in the page's notice
# (src/report/html/report.html; a unit test compares) and in third_party/web/README.md.
d3_version=7.9.2
flame_graph_version=5.0.0
command -v npm >/dev/null || { echo "update-web-vendor: npm is needed (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm init -y >/dev/null &&
   npm install --no-audit --no-fund --ignore-scripts --save-exact \
     "d3@$d3_version" "d3-flame-graph@$flame_graph_version" >/dev/null)
modules=$work/node_modules
out=third_party/web
rm -rf "$out/d3" "$out/d3-flame-graph"
mkdir -p "$out/d3" "$out/d3-flame-graph"
cp "$modules/d3/dist/d3.min.js" "$modules/d3/LICENSE" "$out/d3/"
# (the UMD file carries its own stylesheet, d3-flamegraph.css, and adds it to the page's head)
cp "$modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js" "$modules/d3-flame-graph/LICENSE" \
   "$out/d3-flame-graph/"
for package in d3 d3-flame-graph; do
  version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$modules/$package/package.json" | head -1)
  echo "$version" > "$out/$package/VERSION"
done
ls -l "$out"/d3 "$out"/d3-flame-graph
