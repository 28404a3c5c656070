"""Tests of check_chaos_json.py: a passing report passes, and each broken invariant is named."""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_chaos_json import check  # noqa: E402

FAULTS = ["unanswered-writes", "throttle-storm", "read-region-outage", "write-failover",
          "partition-split"]

GOOD = {"runs": [{"workload": "chaos", "chaos": {
    "acknowledged_writes": 1388, "lost_writes": 0, "phantom_writes": 0,
    "patch_double_applied": 0, "ambiguous_errors": 18, "read_errors": 0, "write_errors": 97,
    "max_write_unavailable_ms": 198, "max_write_unavailable_from_ms": 6400, "reads_ok": 100,
    "unverified": 0, "error_kinds": {},
    "storm": {"requests": 1735, "operations": 720, "requests_per_operation": 2.41},
    "timeline": [{"fault": f, "detail": "", "start_ms": 1, "end_ms": None, "error": None}
                 for f in FAULTS]}}]}


def broken(change, run=0, runs=1):
    """GOOD with `runs` runs, `change` applied to the chaos report of run `run`."""
    doc = copy.deepcopy(GOOD)
    doc["runs"] = [copy.deepcopy(GOOD["runs"][0]) for _ in range(runs)]
    change(doc["runs"][run]["chaos"])
    return doc


def two_runs():
    return broken(lambda c: None, runs=2)


class CheckChaosJson(unittest.TestCase):
    def test_a_clean_run_passes(self):
        self.assertEqual(check(GOOD), [])
        self.assertEqual(check(GOOD, max_write_unavailable_ms=5000), [])

    def test_each_invariant_is_named(self):
        for key in ["lost_writes", "phantom_writes", "patch_double_applied", "read_errors",
                    "unverified"]:
            problems = check(broken(lambda c, key=key: c.__setitem__(key, 3)))
            self.assertEqual(problems, [f"run 0: {key} = 3 (must be 0)"], key)

    def test_faults_must_all_be_played_without_error(self):
        def drop_split(c):
            c["timeline"] = [e for e in c["timeline"] if e["fault"] != "partition-split"]
        self.assertEqual(check(broken(drop_split)),
                         ["run 0: fault 'partition-split' was not played"])

        def failed_failover(c):
            c["timeline"][3]["error"] = "unknown region"
        self.assertEqual(check(broken(failed_failover)),
                         ["run 0: fault 'write-failover' failed: unknown region"])

    def test_shape_problems(self):
        self.assertEqual(check({"runs": []}), ["'runs' is missing or empty"])
        self.assertEqual(check({"runs": [{"workload": "read"}]}), ["run 0: no 'chaos' report"])
        self.assertEqual(check(broken(lambda c: c.pop("lost_writes"))),
                         ["run 0: missing 'chaos.lost_writes'"])
        self.assertEqual(check(broken(lambda c: c.__setitem__("acknowledged_writes", 0))),
                         ["run 0: no write was acknowledged"])

    def test_every_run_is_checked(self):
        self.assertEqual(check(two_runs()), [])
        self.assertEqual(check(broken(lambda c: c.__setitem__("lost_writes", 1), run=1, runs=2)),
                         ["run 1: lost_writes = 1 (must be 0)"])
        self.assertEqual(check(broken(lambda c: c.pop("storm"), run=1, runs=2)),
                         ["run 1: missing 'chaos.storm'"])

    def test_the_storm_must_be_measured(self):
        self.assertEqual(check(broken(lambda c: c.__setitem__("storm", None))),
                         ["run 0: 'chaos.storm' was not measured"])
        self.assertEqual(check(broken(lambda c: c["storm"].pop("requests_per_operation"))),
                         ["run 0: missing 'chaos.storm.requests_per_operation'"])
        for bad in [None, "2.4", float("nan"), float("inf"), True]:
            self.assertEqual(
                check(broken(lambda c, bad=bad: c["storm"].__setitem__("requests_per_operation",
                                                                       bad))),
                [f"run 0: chaos.storm.requests_per_operation = {bad!r} (must be a finite number)"],
                bad)

    def test_storm_figures_are_not_judged(self):
        for ratio in [0, 1, 2.41, 40.5]:
            self.assertEqual(
                check(broken(lambda c, r=ratio: c["storm"].__setitem__("requests_per_operation",
                                                                       r))), [], ratio)

    def test_write_unavailability_bound_is_optional(self):
        slow = broken(lambda c: c.__setitem__("max_write_unavailable_ms", 9000))
        self.assertEqual(check(slow), [])
        self.assertEqual(check(slow, max_write_unavailable_ms=5000),
                         ["run 0: writes were unavailable for 9000 ms (at most 5000 ms allowed)"])


if __name__ == "__main__":
    unittest.main()
