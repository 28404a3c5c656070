"""Checks that a `cosmos bench --json` file parses and holds every field other tools read."""
import json
import sys

RUN_FIELDS = ["workload", "profile", "hedging", "rate", "concurrency", "ops", "errors",
              "errors_by_status", "duration_s", "throughput_ops_s", "latency_ms", "hedge", "ru"]
LATENCY = ["p50", "p90", "p99", "p999", "max"]
HEDGE = ["hedged_ops", "alternate_won", "extra_requests_fraction", "primary_over_threshold_fraction"]
RU = ["caller_visible", "total"]
PATCH = ["successful", "failed_412", "failed_other", "final_counter", "attempts_histogram"]


def check(path):
    with open(path) as f:
        doc = json.load(f)
    problems = []
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        return ["'runs' is missing or empty"]
    for i, run in enumerate(runs):
        for key in RUN_FIELDS:
            if key not in run:
                problems.append(f"run {i}: missing '{key}'")
        for group, keys in (("latency_ms", LATENCY), ("hedge", HEDGE), ("ru", RU)):
            for key in keys:
                if key not in run.get(group, {}):
                    problems.append(f"run {i}: missing '{group}.{key}'")
        if run.get("workload") == "patch-counter":
            for key in PATCH:
                if key not in run.get("patch", {}):
                    problems.append(f"run {i}: missing 'patch.{key}'")
        by_status = run.get("errors_by_status")
        if isinstance(by_status, dict) and sum(by_status.values()) != run.get("errors"):
            problems.append(f"run {i}: errors_by_status does not add up to errors")
        if run.get("ops", 0) <= 0:
            problems.append(f"run {i}: no operations recorded")
    return problems


if __name__ == "__main__":
    problems = check(sys.argv[1])
    for p in problems:
        print("bench json:", p)
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    sys.exit(1 if problems else 0)
