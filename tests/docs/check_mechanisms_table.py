#!/usr/bin/env python3
"""The runtime's mechanisms table names files and tests that exist.

docs/runtime.md opens with "## Mechanisms at a glance": one row per mechanism of src/runtime/,
with the file that owns it (column 4) and the tests that guard it (column 5, or "none"). A table
that names a file since renamed or a test since removed tells the next reader something false, so
each `path` in column 4 must be a file of the source tree, and each `Suite.Name` in column 5 a
GoogleTest test defined under tests/ (TEST, TEST_F, TEST_P or TYPED_TEST(Suite, Name)).

Prints one line per problem, `docs/runtime.md:LINE: ...`, and exits 1 if there is any.
Usage: check_mechanisms_table.py SOURCE_DIR
"""
import glob
import os
import re
import sys

DOC = os.path.join("docs", "runtime.md")
HEADING = "## Mechanisms at a glance"
MIN_ROWS = 17  # the mechanisms issue 41 counted; the table may only grow
CODE_SPAN = re.compile(r"`([^`]+)`")
TEST_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")
TEST_DEFINITION = re.compile(
    r"\b(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)")


def defined_tests(source_dir):
    names = set()
    for path in glob.glob(os.path.join(source_dir, "tests", "**", "*.cpp"), recursive=True):
        with open(path, encoding="utf-8", errors="replace") as f:
            names.update(f"{m.group(1)}.{m.group(2)}" for m in TEST_DEFINITION.finditer(f.read()))
    return names


def table_rows(lines):
    """(line number, cells) of the table under HEADING, the header and separator rows left out."""
    start = next((i for i, line in enumerate(lines) if line.strip() == HEADING), None)
    if start is None:
        return None
    rows = []
    for number, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows.append((number, cells))
    return rows[2:]  # header, separator


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source_dir = sys.argv[1]
    with open(os.path.join(source_dir, DOC), encoding="utf-8") as f:
        lines = f.read().splitlines()
    rows = table_rows(lines)
    if rows is None:
        print(f"{DOC}: no '{HEADING}' heading")
        return 1
    tests = defined_tests(source_dir)
    problems = []
    if len(rows) < MIN_ROWS:
        problems.append(f"{DOC}: the mechanisms table has {len(rows)} rows, fewer than {MIN_ROWS}")
    for number, cells in rows:
        where = f"{DOC}:{number}"
        if len(cells) != 5:
            problems.append(f"{where}: {len(cells)} columns, not 5")
            continue
        owners = CODE_SPAN.findall(cells[3])
        if not owners:
            problems.append(f"{where}: no owning file named")
        for owner in owners:
            if not os.path.isfile(os.path.join(source_dir, owner)):
                problems.append(f"{where}: owning file {owner} does not exist")
        guards = CODE_SPAN.findall(cells[4])
        if not guards and cells[4] != "none":
            problems.append(f"{where}: names no test and does not say none")
        for guard in guards:
            if not TEST_NAME.match(guard):
                problems.append(f"{where}: '{guard}' is not a Suite.Name test name")
            elif guard not in tests:
                problems.append(f"{where}: no test {guard} is defined under tests/")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
