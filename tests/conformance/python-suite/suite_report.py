"""A pytest plugin that writes each test's outcome, one JSON object a line, to the file named by
`SUITE_RESULTS` as soon as the test ends, so a run stopped by its global timeout still reports what
ran. The first line lists the collected node ids ({"collected": [...]}); then one line a test:
{"id": node id, "outcome": "passed" | "failed" | "skipped", "reason": first line of the error}.
A file that cannot be collected gets a "failed" line of its own.
"""

import json
import os

_state = {}


def _first_line(report):
    if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return crash.message.strip().splitlines()[0][:300]
    text = getattr(report, "longreprtext", "") or ""
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("E ")]
    if lines:
        return lines[0][1:].strip()[:300]
    return text.strip().splitlines()[-1][:300] if text.strip() else ""


def _write(line):
    path = os.environ.get("SUITE_RESULTS")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


def pytest_collectreport(report):
    if report.failed:
        _write({"id": report.nodeid, "outcome": "failed", "reason": f"collection: {_first_line(report)}"})


def pytest_collection_finish(session):
    _write({"collected": [item.nodeid for item in session.items]})


def pytest_runtest_logreport(report):
    entry = _state.setdefault(report.nodeid, {"outcome": "passed", "reason": ""})
    if report.failed and entry["outcome"] != "failed":
        entry["outcome"] = "failed"
        entry["reason"] = f"{report.when}: {_first_line(report)}"
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
        entry["reason"] = _first_line(report)
    if report.when == "teardown":
        _write({"id": report.nodeid, **entry})
        _state.pop(report.nodeid, None)
