"""Checks a `cosmos bench --workload chaos --json` file, every run of it (one per hedging setting):
every chaos field is there, every fault of the schedule was applied, the 429 storm's requests per
operation was measured (a finite number; its size is reported, not judged), and the invariants
hold: no lost, phantom or double-applied write, no failed read, nothing left unverified by the
read-back. `--max-write-unavailable-ms N` also bounds the longest stretch without an acknowledged
write.

Usage: check_chaos_json.py PATH [--max-write-unavailable-ms N]
"""
import json
import math
import sys

FIELDS = ["acknowledged_writes", "lost_writes", "phantom_writes", "patch_double_applied",
          "ambiguous_errors", "read_errors", "write_errors", "max_write_unavailable_ms",
          "unverified", "timeline", "storm"]
STORM_FIELDS = ["requests", "operations", "requests_per_operation"]
MUST_BE_ZERO = ["lost_writes", "phantom_writes", "patch_double_applied", "read_errors",
                "unverified"]
FAULTS = ["unanswered-writes", "throttle-storm", "read-region-outage", "write-failover",
          "partition-split"]


def storm_problems(storm):
    """What is wrong with a run's `chaos.storm` (empty when it is a measured window)."""
    if not isinstance(storm, dict):
        return ["'chaos.storm' was not measured"]
    missing = [key for key in STORM_FIELDS if key not in storm]
    if missing:
        return [f"missing 'chaos.storm.{key}'" for key in missing]
    ratio = storm["requests_per_operation"]
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not math.isfinite(ratio):
        return [f"chaos.storm.requests_per_operation = {ratio!r} (must be a finite number)"]
    return []


def check(doc, max_write_unavailable_ms=None):
    """The problems found in a parsed chaos JSON document (empty when it passes)."""
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list) or not runs:
        return ["'runs' is missing or empty"]
    problems = []
    for i, run in enumerate(runs):
        chaos = run.get("chaos")
        if not isinstance(chaos, dict):
            problems.append(f"run {i}: no 'chaos' report")
            continue
        missing = [key for key in FIELDS if key not in chaos]
        problems += [f"run {i}: missing 'chaos.{key}'" for key in missing]
        if missing:
            continue
        if chaos["acknowledged_writes"] <= 0:
            problems.append(f"run {i}: no write was acknowledged")
        for key in MUST_BE_ZERO:
            if chaos[key] != 0:
                problems.append(f"run {i}: {key} = {chaos[key]} (must be 0)")
        played = {entry.get("fault"): entry for entry in chaos["timeline"]}
        for fault in FAULTS:
            entry = played.get(fault)
            if entry is None:
                problems.append(f"run {i}: fault '{fault}' was not played")
            elif entry.get("error"):
                problems.append(f"run {i}: fault '{fault}' failed: {entry['error']}")
        problems += [f"run {i}: {p}" for p in storm_problems(chaos["storm"])]
        limit = max_write_unavailable_ms
        if limit is not None and chaos["max_write_unavailable_ms"] > limit:
            problems.append(
                f"run {i}: writes were unavailable for {chaos['max_write_unavailable_ms']} ms "
                f"(at most {limit} ms allowed)")
    return problems


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--max-write-unavailable-ms"):
        print(__doc__)
        return 2
    limit = int(argv[3]) if len(argv) == 4 else None
    with open(argv[1]) as f:
        doc = json.load(f)
    problems = check(doc, limit)
    for p in problems:
        print("chaos json:", p)
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
