"""Judges one sample run by what it printed, not only by its exit status.

    sample_judge.py --sample NAME.py --code EXIT_STATUS --log LOG --expected sample_expected_output.txt

prints the sample's line for samples.jsonl: {"sample": NAME.py, "status": STATUS, "detail": ...}.

The samples catch the SDK's exceptions in helpers of their own and print a line of their own
("Error in reading item with id '3'.", "Cannot delete--item ...", "run_sample has caught an
error. ..."), then exit 0. So every printed line that reads as an error counts against the sample,
unless sample_expected_output.txt lists it as a line the sample prints against the service too (a
refusal it demonstrates). A listed line that is not printed also counts: the refusal it shows did
not happen (a read-only token that wrote, say).

sample_expected_output.txt holds `NAME.py: PREFIX` lines, one per expected printed line; a line
the sample prints twice is listed twice. A printed error line matches an entry when it starts with
PREFIX (after leading spaces).
"""

import argparse
import json
import re
import sys

# Lines a sample prints when something went wrong: its own error lines, the SDK's exception text,
# a traceback.
ERROR_LINE = re.compile(
    r"(?i)(\berror\b|\bcannot\b|^traceback|exception|\bfailed\b|\bfailure\b)"
)


def parse_expected(lines):
    """{sample: [prefix, ...]} from sample_expected_output.txt's lines, and the lines it refused."""
    expected, problems = {}, []
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        sample, sep, prefix = line.partition(": ")
        if not sep or not sample.endswith(".py") or not prefix.strip():
            problems.append(f"line {number}: not `NAME.py: PREFIX`: {line!r}")
            continue
        expected.setdefault(sample.strip(), []).append(prefix.strip())
    return expected, problems


def judge(code, output, expected_prefixes):
    """(status, detail) of one run: status 0 when clean, else why not."""
    if code in (124, 137):
        return "timeout", ""
    lines = [line.strip() for line in output.splitlines()]
    if any(line.startswith("Traceback") for line in lines) and code == 0:
        return "printed a traceback", ""
    if code != 0:
        return code, ""
    remaining = list(expected_prefixes)
    unexpected = []
    for line in lines:
        if not ERROR_LINE.search(line):
            continue
        match = next((p for p in remaining if line.startswith(p)), None)
        if match is None:
            unexpected.append(line)
        else:
            remaining.remove(match)
    if any("has caught an error" in line for line in unexpected):
        return "caught an error", unexpected[0][:300]
    if unexpected:
        return "printed an error", unexpected[0][:300]
    if remaining:
        return "missed an expected refusal", remaining[0][:300]
    return 0, ""


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", required=True)
    parser.add_argument("--code", required=True, type=int)
    parser.add_argument("--log", required=True)
    parser.add_argument("--expected", required=True)
    args = parser.parse_args(argv)
    with open(args.expected, encoding="utf-8") as f:
        expected, problems = parse_expected(f.readlines())
    if problems:
        for p in problems:
            print(f"{args.expected}: {p}", file=sys.stderr)
        return 2
    with open(args.log, encoding="utf-8", errors="replace") as f:
        output = f.read()
    status, detail = judge(args.code, output, expected.get(args.sample, []))
    print(json.dumps({"sample": args.sample, "status": status, "detail": detail}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
