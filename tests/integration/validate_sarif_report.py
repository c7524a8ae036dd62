#!/usr/bin/python3
"""The SARIF report of real runs is valid SARIF 2.1.0, as Microsoft's validator and the schema say.

Usage: validate_sarif_report.py LOCKSCOPE INSTALLER FIXTURE[,ARG...]...
Installs (once) @microsoft/sarif-multitool with INSTALLER (install_sarif_multitool.sh), runs
`lockscope run -f sarif` on each fixture (with its arguments, after commas) and checks the log:
  - `Sarif.Multitool validate` reports no error and no warning (it exits 0 whatever it finds, so
    its own output log is read), and its run says it completed;
  - it validates against the SARIF 2.1.0 JSON schema the package ships (python3-jsonschema): the
    multitool passes some schema violations silently (a result `level` of "bogus");
  - every result's rule is one of tool.driver.rules, its level one of SARIF's, and a located
    result points at a source line (uri and startLine >= 1).
First it checks that the validator can fail: a copy of a log with a result's message removed
must be reported.
Exits 0 when all hold, 1 when one does not, 77 (ctest's SKIP_RETURN_CODE) with the reason when
the validator cannot be installed (no npm, the registry refused it).
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

SKIP = 77
LEVELS = {"none", "note", "warning", "error"}
# The validator's best-practice warnings lockscope does not follow, each with why.
ALLOWED_WARNINGS = {
    "SARIF2005": "tool.driver.informationUri: lockscope has no web page to point it at",
}


def multitool_findings(multitool, log_path, work):
    """The validator's results (rule id, level, message) on `log_path`."""
    out = os.path.join(work, "validation.sarif")
    run = subprocess.run([multitool, "validate", log_path, "-o", out, "--log", "ForceOverwrite"],
                         capture_output=True, text=True, timeout=300, cwd=work)
    if run.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"Sarif.Multitool validate exited {run.returncode}: "
                           f"{run.stdout.strip()} {run.stderr.strip()}")
    with open(out) as f:
        validation = json.load(f)
    validation_run = validation["runs"][0]
    if not all(i.get("executionSuccessful") for i in validation_run.get("invocations", [{}])):
        raise RuntimeError(f"Sarif.Multitool validate did not complete: {run.stdout.strip()}")
    return [(r.get("ruleId"), r.get("level", "warning"), r["message"].get("text", ""))
            for r in validation_run.get("results", [])]


def own_checks(log):
    """What the schema cannot say: ruleIds of the driver's rules, located results at lines."""
    problems = []
    run = log["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for i, result in enumerate(run["results"]):
        if result["ruleId"] not in rules:
            problems.append(f"result {i}: rule {result['ruleId']} not in tool.driver.rules")
        elif result.get("ruleIndex") != rules.index(result["ruleId"]):
            problems.append(f"result {i}: ruleIndex {result.get('ruleIndex')} is not its rule's")
        if result["level"] not in LEVELS:
            problems.append(f"result {i}: level {result['level']}")
        for location in result.get("locations", []) + result.get("relatedLocations", []):
            physical = location["physicalLocation"]
            if not physical["artifactLocation"]["uri"] or physical["region"]["startLine"] < 1:
                problems.append(f"result {i}: location {physical}")
    return problems


def main() -> int:
    lockscope, installer, fixtures = sys.argv[1], sys.argv[2], sys.argv[3:]
    install = subprocess.run([installer], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        print("SKIPPED: Microsoft's SARIF validator (npm @microsoft/sarif-multitool-linux) could "
              f"not be installed: {install.stderr.strip()}")
        return SKIP
    multitool = install.stdout.strip().splitlines()[-1]
    schema_path = os.path.join(os.path.dirname(multitool), "sarif-2.1.0.json")
    with open(schema_path) as f:
        schema = json.load(f)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for rule, why in ALLOWED_WARNINGS.items():
        print(f"allowed: Sarif.Multitool's {rule}: {why}")
    checked_control = False
    for fixture_and_args in fixtures:
        command = fixture_and_args.split(",")
        name = os.path.basename(command[0]) + (" " + " ".join(command[1:]) if command[1:] else "")
        with tempfile.TemporaryDirectory() as work:
            log_path = os.path.join(work, "report.sarif")
            run = subprocess.run([lockscope, "run", "-o", f"{work}/prof", "-f", "sarif",
                                  "--report", log_path, "--"] + command,
                                 capture_output=True, text=True, timeout=120)
            if run.returncode != 0:
                print(f"{name}: exit {run.returncode}: {run.stderr.strip()}")
                return 1
            with open(log_path) as f:
                log = json.load(f)
            if not checked_control:
                # The validator must see a broken log: else the checks below could not fail.
                broken = copy.deepcopy(log)
                del broken["runs"][0]["results"][0]["message"]
                broken_path = os.path.join(work, "broken.sarif")
                with open(broken_path, "w") as f:
                    json.dump(broken, f)
                if not any(level == "error" for _, level, _ in
                           multitool_findings(multitool, broken_path, work)):
                    print("Sarif.Multitool validate did not report a result without a message")
                    return 1
                if validator.is_valid(broken):
                    print("the SARIF schema did not reject a result without a message")
                    return 1
                checked_control = True
            problems = [f"Sarif.Multitool {rule} ({level}): {text}"
                        for rule, level, text in multitool_findings(multitool, log_path, work)
                        if level == "error" or (level == "warning" and
                                                rule not in ALLOWED_WARNINGS)]
            problems += [f"schema: {error.message} at "
                         f"{'/'.join(str(p) for p in error.absolute_path)}"
                         for error in validator.iter_errors(log)]
            problems += own_checks(log)
            if problems:
                print(f"{name}: the SARIF log is not valid:\n  " + "\n  ".join(problems))
                return 1
            results = log["runs"][0]["results"]
            located = sum(1 for r in results if r.get("locations"))
            rules = sorted({r["ruleId"] for r in results})
            print(f"{name}: valid ({len(results)} results, {located} at source lines: "
                  f"{', '.join(rules)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
