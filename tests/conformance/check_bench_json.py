"""Checks that a `cosmos bench --json` file parses and holds every field other tools read."""
import json
import sys

RUN_FIELDS = ["workload", "profile", "hedging", "rate", "concurrency", "ops", "errors",
              "errors_by_status", "duration_s", "throughput_ops_s", "latency_ms", "hedge", "ru"]
LATENCY = ["p50", "p90", "p99", "p999", "max"]
HEDGE = ["hedged_ops", "alternate_won", "extra_requests_fraction", "primary_over_threshold_fraction"]
RU = ["caller_visible", "total"]
PATCH = ["successful", "failed_412", "failed_other", "final_counter", "attempts_histogram"]
TOP = ["tool", "started_at", "command_line", "runs"]


def check(path):
    with open(path) as f:
        doc = json.load(f)
    problems = []
    for key in TOP:
        if key not in doc:
            problems.append(f"missing '{key}'")
    tool = doc.get("tool", {})
    if tool.get("name") != "cosmos" or not tool.get("version"):
        problems.append(f"'tool' does not name cosmos and its version: {tool}")
    line = doc.get("command_line")
    if not isinstance(line, list) or "bench" not in line:
        problems.append(f"'command_line' is not the bench command line: {line}")
    elif any(a.startswith("--key=") and a != "--key=<redacted>" for a in line) or any(
            a == "--key" and i + 1 < len(line) and line[i + 1] != "<redacted>" for i, a in enumerate(line)):
        problems.append("'command_line' shows the account key")
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
        spectrum = run.get("latency_percentiles_ms")
        if not isinstance(spectrum, list):
            problems.append(f"run {i}: missing 'latency_percentiles_ms'")
        elif run.get("bulk") is None:
            points = [(p.get("percentile"), p.get("ms")) for p in spectrum]
            if not points or points[-1][0] != 100:
                problems.append(f"run {i}: the percentile spectrum does not end at 100")
            elif any(a[0] >= b[0] or a[1] > b[1] for a, b in zip(points, points[1:])):
                problems.append(f"run {i}: the percentile spectrum is not increasing")
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
