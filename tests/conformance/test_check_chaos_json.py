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
    "timeline": [{"fault": f, "detail": "", "start_ms": 1, "end_ms": None, "error": None}
                 for f in FAULTS]}}]}


def broken(change):
    doc = copy.deepcopy(GOOD)
    change(doc["runs"][0]["chaos"])
    return doc


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

    def test_write_unavailability_bound_is_optional(self):
        slow = broken(lambda c: c.__setitem__("max_write_unavailable_ms", 9000))
        self.assertEqual(check(slow), [])
        self.assertEqual(check(slow, max_write_unavailable_ms=5000),
                         ["run 0: writes were unavailable for 9000 ms (at most 5000 ms allowed)"])


if __name__ == "__main__":
    unittest.main()
