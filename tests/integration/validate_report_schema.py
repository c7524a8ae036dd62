#!/usr/bin/python3
"""The JSON report of real runs validates against docs/lockscope-report.schema.json.

Usage: validate_report_schema.py LOCKSCOPE SCHEMA FIXTURE...
Runs `lockscope run -f json` on each fixture (together they use every primitive) and validates the
report with the jsonschema package (Debian: python3-jsonschema); then the report of the same profile
with waits attributed past wrappers (`--caller-depth 1 --skip-frames ...`, the optional keys).
Exits non-zero on any violation.
"""
import json
import subprocess
import sys
import tempfile

import jsonschema


def main() -> int:
    lockscope, schema_path, fixtures = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(schema_path) as schema_file:
        schema = json.load(schema_file)
    for fixture in fixtures:
        with tempfile.TemporaryDirectory() as work:
            report = f"{work}/report.json"
            run = subprocess.run([lockscope, "run", "-o", f"{work}/prof", "-f", "json",
                                  "--report", report, "--", fixture],
                                 capture_output=True, text=True, timeout=60)
            if run.returncode != 0:
                print(f"{fixture}: exit {run.returncode}: {run.stderr.strip()}")
                return 1
            with open(report) as report_file:
                document = json.load(report_file)
            attributed = subprocess.run([lockscope, "report", f"{work}/prof", "-f", "json",
                                         "--caller-depth", "1", "--skip-frames", "^with_"],
                                        capture_output=True, text=True, timeout=60)
            if attributed.returncode != 0:
                print(f"{fixture}: report --caller-depth: exit {attributed.returncode}: "
                      f"{attributed.stderr.strip()}")
                return 1
            for name, checked in (("report", document),
                                  ("attributed report", json.loads(attributed.stdout))):
                try:
                    jsonschema.validate(checked, schema)
                except jsonschema.ValidationError as error:
                    print(f"{fixture}: the {name} violates the schema: {error.message} "
                          f"at {'/'.join(str(p) for p in error.absolute_path)}")
                    return 1
            kinds = sorted({lock["kind"] for p in document["processes"] for lock in p["locks"]})
            print(f"{fixture}: valid ({', '.join(kinds)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
