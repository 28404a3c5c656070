"""Tests of check.py: what makes a run of the SDK's suite match its expected failures or not.

    python3 tests/conformance/python-suite/test_check.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import check  # noqa: E402
import sample_judge  # noqa: E402


def results(*entries, collected=None):
    lines = [json.dumps({"collected": collected or [e[0] for e in entries]})]
    lines += [json.dumps({"id": i, "outcome": o, "reason": r}) for i, o, r in entries]
    return lines


def quiet_main(argv):
    with contextlib.redirect_stdout(io.StringIO()):
        return check.main(argv)


class ParseExpected(unittest.TestCase):
    def test_entries_and_comments(self):
        expected, problems = check.parse_expected(
            ["# header", "", "t.py::A::a  # gap one", "sample:s.py # gap two"]
        )
        self.assertEqual(expected, {"t.py::A::a": "gap one", "sample:s.py": "gap two"})
        self.assertEqual(problems, [])

    def test_an_entry_needs_a_reason(self):
        _, problems = check.parse_expected(["t.py::A::a", "t.py::A::b  #  "])
        self.assertEqual(len(problems), 2)

    def test_twice_listed_and_not_one_id(self):
        _, problems = check.parse_expected(["a  # x", "a  # y", "a b  # z"])
        self.assertEqual(len(problems), 2)


class Compare(unittest.TestCase):
    def run_compare(self, expected, result_lines, samples=None):
        collected, outcomes = check.read_results(result_lines)
        return check.compare(expected, collected, outcomes, samples or {})

    def test_expected_failures_match(self):
        problems, counts, _ = self.run_compare(
            {"a": "gap"}, results(("a", "failed", "E"), ("b", "passed", ""), ("c", "skipped", "s"))
        )
        self.assertEqual(problems, [])
        self.assertEqual(counts, {"passed": 1, "failed": 1, "skipped": 1})

    def test_unlisted_failure(self):
        problems, _, _ = self.run_compare({}, results(("a", "failed", "boom")))
        self.assertEqual(len(problems), 1)
        self.assertIn("not an expected failure", problems[0])

    def test_listed_pass_must_leave_the_list(self):
        problems, _, _ = self.run_compare({"a": "gap"}, results(("a", "passed", "")))
        self.assertEqual(len(problems), 1)
        self.assertIn("take it off the list", problems[0])

    def test_listed_skip_and_listed_absent(self):
        problems, _, _ = self.run_compare(
            {"a": "gap", "gone": "gap"}, results(("a", "skipped", "why"))
        )
        self.assertEqual(len(problems), 2)

    def test_a_stopped_run_fails_what_did_not_finish(self):
        problems, counts, _ = self.run_compare(
            {}, results(("a", "passed", ""), collected=["a", "b"])
        )
        self.assertEqual(counts["failed"], 1)
        self.assertIn("did not finish", problems[0])

    def test_timing_dependent_entries_are_not_judged_but_must_run(self):
        expected, problems = check.parse_expected(["?a  # timing", "?gone  # timing"])
        self.assertEqual(problems, [])
        for outcome in ("passed", "failed"):
            with contextlib.redirect_stdout(io.StringIO()):
                problems, _, _ = self.run_compare(expected, results(("a", outcome, "")))
            self.assertEqual(len(problems), 1)
            self.assertIn("NOT RUN", problems[0])
            self.assertIn("gone", problems[0])

    def test_samples(self):
        problems, _, clean = self.run_compare(
            {"sample:bad.py": "gap", "sample:fixed.py": "gap"},
            results(("a", "passed", "")),
            {"sample:ok.py": 0, "sample:bad.py": 1, "sample:fixed.py": 0, "sample:new.py": "timeout"},
        )
        self.assertEqual(clean, 2)
        self.assertEqual(len(problems), 2)
        self.assertTrue(any("fixed.py" in p and "take it off" in p for p in problems))
        self.assertTrue(any("new.py" in p and "not an expected failure" in p for p in problems))


class SampleJudge(unittest.TestCase):
    """What a sample printed decides whether it ran clean (sample_judge.py)."""

    EXPECTED = ["Error in reading items in container 'items'.", "Error in upserting item"]

    def test_table(self):
        demo = "Error in reading items in container 'items'.\nError in upserting item with id '3'.\n"
        cases = [
            # (exit status, output, expected prefixes, status)
            (0, "all good\n", [], 0),
            (0, demo, self.EXPECTED, 0),
            # the sample's own error line for a read the service serves
            (0, demo + "Error in reading item with id '3'.\n", self.EXPECTED, "printed an error"),
            (0, "Cannot delete--item with id '3' not found.\n", [], "printed an error"),
            # a demonstrated refusal that did not happen: a read-only token that wrote
            (0, "Error in reading items in container 'items'.\n", self.EXPECTED,
             "missed an expected refusal"),
            # a listed line counts once: printed twice, the second is an error
            (0, demo + "Error in upserting item with id '4'.\n", self.EXPECTED, "printed an error"),
            (0, "\nrun_sample has caught an error. boom\n", [], "caught an error"),
            (0, "Traceback (most recent call last):\n  x\n", [], "printed a traceback"),
            (1, "", [], 1),
            (124, "", [], "timeout"),
            (137, "", [], "timeout"),
        ]
        for code, output, expected, status in cases:
            with self.subTest(output=output):
                self.assertEqual(sample_judge.judge(code, output, expected)[0], status)

    def test_expected_file_lines(self):
        expected, problems = sample_judge.parse_expected(
            ["# c", "", "a.py: Error one", "a.py: Error one", "b.py: Cannot x", "bad line"]
        )
        self.assertEqual(expected, {"a.py": ["Error one", "Error one"], "b.py": ["Cannot x"]})
        self.assertEqual(len(problems), 1)

    def test_the_repository_file_parses(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample_expected_output.txt")
        with open(path, encoding="utf-8") as f:
            expected, problems = sample_judge.parse_expected(f.readlines())
        self.assertEqual(problems, [])
        self.assertIn("access_cosmos_with_resource_token.py", expected)


class Main(unittest.TestCase):
    def test_exit_status_and_last_line(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {name: os.path.join(d, name) for name in ("r", "s", "e")}
            with open(paths["r"], "w") as f:
                f.write("\n".join(results(("a", "failed", "E"), ("b", "passed", ""))) + "\n")
            with open(paths["s"], "w") as f:
                f.write(json.dumps({"sample": "x.py", "status": 0}) + "\n")
            argv = ["--results", paths["r"], "--samples", paths["s"], "--expected", paths["e"]]
            with open(paths["e"], "w") as f:
                f.write("a  # gap\n")
            self.assertEqual(quiet_main(argv), 0)
            with open(paths["e"], "w") as f:
                f.write("")
            self.assertEqual(quiet_main(argv), 1)

    def test_nothing_reported_fails(self):
        with tempfile.TemporaryDirectory() as d:
            expected = os.path.join(d, "e")
            open(expected, "w").close()
            argv = ["--results", os.path.join(d, "none"), "--samples", os.path.join(d, "none"),
                    "--expected", expected]
            self.assertEqual(quiet_main(argv), 1)


if __name__ == "__main__":
    unittest.main()
