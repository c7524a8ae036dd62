#!/usr/bin/python3
"""The speedscope export of real runs validates against speedscope's file-format schema.

Usage: validate_speedscope_schema.py LOCKSCOPE SCHEMA FIXTURE...
Records each fixture, writes `report -o x.speedscope.json` with each --weight, and validates it
with the jsonschema package (Debian: python3-jsonschema) against SCHEMA (speedscope's published
file-format-schema.json, transcribed beside this script). Then what a schema cannot say and
speedscope relies on: each sample's frame indices in range, as many weights as samples, endValue
the sum of the weights. Exits non-zero on any violation.
"""
import json
import subprocess
import sys
import tempfile

import jsonschema


def check(document, schema):
    jsonschema.validate(document, schema)
    frames = document["shared"]["frames"]
    assert document["profiles"], "no profile"
    for profile in document["profiles"]:
        assert len(profile["samples"]) == len(profile["weights"]), profile["name"]
        for sample in profile["samples"]:
            assert sample, f"{profile['name']}: an empty stack"
            assert all(0 <= i < len(frames) and i == int(i) for i in sample), profile["name"]
        assert profile["endValue"] == profile["startValue"] + sum(profile["weights"]), profile["name"]
        assert all(w > 0 for w in profile["weights"]), profile["name"]


def main() -> int:
    lockscope, schema_path, fixtures = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(schema_path) as schema_file:
        schema = json.load(schema_file)
    jsonschema.Draft7Validator.check_schema(schema)
    for fixture in fixtures:
        with tempfile.TemporaryDirectory() as work:
            record = subprocess.run([lockscope, "record", "-o", f"{work}/prof", "--", fixture],
                                    capture_output=True, text=True, timeout=60)
            if record.returncode != 0:
                print(f"{fixture}: record: exit {record.returncode}: {record.stderr.strip()}")
                return 1
            for weight in ("wait", "hold"):
                out = f"{work}/{weight}.speedscope.json"
                report = subprocess.run([lockscope, "report", f"{work}/prof", "-o", out,
                                         "--weight", weight],
                                        capture_output=True, text=True, timeout=60)
                if report.returncode != 0:
                    print(f"{fixture}: report --weight {weight}: exit {report.returncode}: "
                          f"{report.stderr.strip()}")
                    return 1
                with open(out) as report_file:
                    document = json.load(report_file)
                try:
                    check(document, schema)
                except jsonschema.ValidationError as error:
                    print(f"{fixture} --weight {weight}: violates the schema: {error.message} "
                          f"at {'/'.join(str(p) for p in error.absolute_path)}")
                    return 1
                except AssertionError as error:
                    print(f"{fixture} --weight {weight}: {error}")
                    return 1
                samples = sum(len(p["samples"]) for p in document["profiles"])
                print(f"{fixture} --weight {weight}: valid ({len(document['profiles'])} profiles, "
                      f"{samples} samples, {len(document['shared']['frames'])} frames)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
