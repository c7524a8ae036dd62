#!/usr/bin/env python3
"""The include graph of src/ keeps DESIGN.md's arrows, and has no circle.

Three checks, on the quoted includes (`#include "runtime/x.h"`) of every .h, .cpp and .c under
src/ (system and generated headers, `<...>` or not found in the tree, are left out):

  folders  Each folder includes only the folders below it (DESIGN.md, "The data path, one
           direction only"): common <- runtime; common <- analysis <- report <- cli; the CLI may
           also include bench/ (the lab), and never runtime/ (it reaches the runtime only through
           the on-disk format of common/).
  files    No header includes itself back through other headers (a file-level cycle, which
           #pragma once turns into declarations missing depending on which header came first).
  units    A unit is a header and the .cpp of the same name (runtime/recorder.h and recorder.cpp).
           Unit A depends on unit B when any file of A includes B's header. A circle of units (A's
           header includes B's while B's .cpp includes A's) is code that cannot be read or tested
           one unit at a time; issue 41 asks for none. Each circle is printed as its units, and for
           each step one include that makes it.

Usage: check_includes.py SOURCE_DIR [--check folders,files,units]
Prints one line per problem and exits 1 if any check asked for (all three by default) finds one.
"""
import argparse
import os
import re
import sys
from collections import defaultdict

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SOURCE_SUFFIXES = (".h", ".cpp", ".c")
# Folder -> the folders its files may include (itself always).
ALLOWED = {
    "common": set(),
    "runtime": {"common"},
    "analysis": {"common"},
    "report": {"common", "analysis"},
    "cli": {"common", "analysis", "report", "bench"},
}
ROOTS = ("src", ".")  # includes are written relative to src/ ("runtime/x.h") or to the tree ("bench/x.h")


def read_graph(source_dir):
    """{file: [(line, included file)]} for the files under src/, paths relative to source_dir."""
    files = []
    for root, _, names in os.walk(os.path.join(source_dir, "src")):
        files += [os.path.relpath(os.path.join(root, n), source_dir) for n in names
                  if n.endswith(SOURCE_SUFFIXES)]
    graph = {}
    for path in sorted(files):
        with open(os.path.join(source_dir, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        edges = []
        for match in INCLUDE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            name = match.group(1)
            candidates = [os.path.normpath(os.path.join(os.path.dirname(path), name))]
            candidates += [os.path.normpath(os.path.join(root, name)) for root in ROOTS]
            target = next((c for c in candidates if os.path.isfile(os.path.join(source_dir, c))), None)
            if target is not None:
                edges.append((line, target))
        graph[path] = edges
    return graph


def folder_of(path):
    parts = path.split(os.sep)
    return parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0]


def check_folders(graph):
    problems = []
    for path, edges in graph.items():
        folder = folder_of(path)
        allowed = ALLOWED.get(folder)
        if allowed is None:
            problems.append(f"{path}: folder {folder} has no place in the layering (DESIGN.md)")
            continue
        for line, target in edges:
            other = folder_of(target)
            if other != folder and other not in allowed:
                problems.append(f"{path}:{line}: {folder}/ includes {target}, of {other}/ (upward)")
    return problems


def strongly_connected(nodes, successors):
    """Tarjan's algorithm, iterative: the components of more than one node, or with a self-loop."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(successors.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in successors.get(node, ()):
                    components.append(sorted(component))
    return components


def check_files(graph):
    successors = {path: {target for _, target in edges} for path, edges in graph.items()}
    return [f"include cycle among files: {' -> '.join(c)}"
            for c in strongly_connected(sorted(graph), successors)]


def unit_of(path):
    return os.path.splitext(path)[0]


def check_units(graph):
    successors = defaultdict(set)
    witness = {}  # (unit, unit) -> "file:line includes target"
    for path, edges in graph.items():
        for line, target in edges:
            a, b = unit_of(path), unit_of(target)
            if a != b:
                successors[a].add(b)
                witness.setdefault((a, b), f"{path}:{line} includes {target}")
    units = sorted({unit_of(p) for p in graph})
    problems = []
    for component in strongly_connected(units, successors):
        members = set(component)
        problems.append(f"circle of {len(component)} units: {', '.join(component)}")
        for a in component:
            for b in sorted(successors[a] & members):
                problems.append(f"  {witness[(a, b)]}")
    return problems


CHECKS = {"folders": check_folders, "files": check_files, "units": check_units}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir")
    parser.add_argument("--check", default=",".join(CHECKS),
                        help="comma-separated: " + ", ".join(CHECKS))
    args = parser.parse_args()
    graph = read_graph(args.source_dir)
    failed = False
    for name in args.check.split(","):
        if name not in CHECKS:
            print(f"check_includes: error: no check '{name}' (one of {', '.join(CHECKS)})")
            return 2
        problems = CHECKS[name](graph)
        for problem in problems:
            print(f"{name}: {problem}")
        failed |= bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
