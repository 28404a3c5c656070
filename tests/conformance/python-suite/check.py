"""Compares a run of azure-cosmos's test suite and samples with the expected failures.

    check.py --results RESULTS.jsonl --samples SAMPLES.jsonl --expected expected_failures.txt

RESULTS.jsonl is what suite_report.py wrote; SAMPLES.jsonl has one {"sample", "status"} line a
sample run (status: its exit code, "timeout", or "caught an error" when it exited 0 after printing
the error it caught). expected_failures.txt has one entry a line, `ID  # reason`: a test's node id,
or `sample:NAME.py`; the reason is required. An entry written `?ID  # reason` is a test whose
outcome depends on timing (it may pass on a slow machine): it must run, but either outcome is
accepted and printed.

Exits 1 when a test or sample fails that is not listed, when a listed one passes (take it off the
list), is skipped or did not run, when a collected test reported nothing (the run was stopped), or
when an entry has no reason. The last line printed is always "N passed, N failed, N skipped" of the
test suite.
"""

import argparse
import json
import sys


def parse_expected(lines):
    """Entries of an expected-failures file: {id: reason}, and the problems found in it. The
    reason of a timing-dependent entry (`?ID`) starts with "?"."""
    expected, problems = {}, []
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        ident, sep, reason = line.partition("#")
        ident, reason = ident.strip(), reason.strip()
        if ident.startswith("?"):
            ident = ident[1:]
            reason = "?" + reason if reason else ""
        if not sep or not reason:
            problems.append(f"expected_failures.txt:{number}: {ident} has no reason")
        elif " " in ident:
            problems.append(f"expected_failures.txt:{number}: '{ident}' is not one id")
        elif ident in expected:
            problems.append(f"expected_failures.txt:{number}: {ident} is listed twice")
        else:
            expected[ident] = reason
    return expected, problems


def read_results(lines):
    """(collected ids, {id: (outcome, reason)}) from suite_report.py's lines."""
    collected, outcomes = [], {}
    for raw in lines:
        if not raw.strip():
            continue
        entry = json.loads(raw)
        if "collected" in entry:
            collected.extend(entry["collected"])
        else:
            outcomes[entry["id"]] = (entry["outcome"], entry.get("reason", ""))
    return collected, outcomes


def read_samples(lines):
    """{sample id: status} from the sample runner's lines."""
    samples = {}
    for raw in lines:
        if raw.strip():
            entry = json.loads(raw)
            status = entry["status"]
            if status != 0 and entry.get("detail"):
                status = f"{status}: {entry['detail']}"
            samples["sample:" + entry["sample"]] = status
    return samples


def compare(expected, collected, outcomes, samples):
    """The problems of a run against the expected failures, and its counts."""
    problems = []
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for ident in collected:
        if ident not in outcomes:
            outcomes[ident] = ("failed", "did not finish (the run was stopped)")
    for ident, (outcome, reason) in sorted(outcomes.items()):
        counts[outcome] += 1
        listed = ident in expected
        if listed and expected[ident].startswith("?"):
            print(f"timing-dependent, not judged: {ident}: {outcome}")
        elif outcome == "failed" and not listed:
            problems.append(f"FAILED (not an expected failure): {ident}\n    {reason}")
        elif outcome == "passed" and listed:
            problems.append(f"PASSED (listed as expected to fail; take it off the list): {ident}")
        elif outcome == "skipped" and listed:
            problems.append(f"SKIPPED (listed as expected to fail): {ident}: {reason}")
    sample_clean = 0
    for ident, status in sorted(samples.items()):
        listed = ident in expected
        if status == 0:
            sample_clean += 1
            if listed:
                problems.append(f"CLEAN (listed as expected to fail; take it off the list): {ident}")
        elif not listed:
            shown = f"exit status {status}" if isinstance(status, int) else status
            problems.append(f"FAILED (not an expected failure): {ident} ({shown})")
    ran = set(outcomes) | set(samples)
    for ident in sorted(expected.keys() - ran):
        problems.append(f"NOT RUN (listed as expected to fail): {ident}")
    return problems, counts, sample_clean


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", required=True)
    parser.add_argument("--samples", required=True)
    parser.add_argument("--expected", required=True)
    args = parser.parse_args(argv)
    with open(args.expected, encoding="utf-8") as f:
        expected, problems = parse_expected(f.readlines())
    try:
        with open(args.results, encoding="utf-8") as f:
            collected, outcomes = read_results(f.readlines())
    except FileNotFoundError:
        collected, outcomes = [], {}
    if not collected and not outcomes:
        problems.append("the test suite reported nothing")
    try:
        with open(args.samples, encoding="utf-8") as f:
            samples = read_samples(f.readlines())
    except FileNotFoundError:
        samples = {}
    if not samples:
        problems.append("no sample ran")
    found, counts, sample_clean = compare(expected, collected, outcomes, samples)
    problems.extend(found)
    for problem in problems:
        print(problem)
    listed_tests = sum(1 for ident in expected if not ident.startswith("sample:"))
    print(
        f"expected failures listed: {listed_tests} tests, {len(expected) - listed_tests} samples; "
        f"samples: {sample_clean} of {len(samples)} clean"
    )
    print("the run matches the expected failures" if not problems else f"{len(problems)} problems")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
