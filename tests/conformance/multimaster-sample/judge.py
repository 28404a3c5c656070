"""Runs the Python SDK's MultiMasterOperations sample against the emulator that COSMOS_ENDPOINT,
COSMOS_KEY and COSMOS_REGIONS name (see run.sh) and checks what it printed.

The sample's Configurations.py holds its endpoint, key and regions as constants; a copy of the
sample is made in a temporary directory with those set. The checks: it exits 0 in time with no
traceback; each of its nine scenarios (insert, update and delete under manual, last writer wins
and its "UDP" container) induced conflicts at the first attempt; manual conflicts were found in
the feed and deleted; last writer wins on /regionId kept region 1's version and let the delete
win. The sample's "UDP" container names no merge procedure in its policy (it creates the
procedure but leaves the policy Custom without it), so its conflicts stay in the feed and it
prints "Found N conflicts in the udp collection", as the service would.

The last line printed is "N passed, N failed".
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def configure(sample_dir: str, endpoint: str, key: str, regions: str) -> None:
    path = os.path.join(sample_dir, "Configurations.py")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for placeholder, value in (
        ('"ENDPOINT"', endpoint),
        ('"MASTER_KEY"', key),
        ('"REGIONS"', ";".join(r.strip() for r in regions.split(","))),
    ):
        if placeholder not in text:
            raise SystemExit(f"{path} no longer holds {placeholder}")
        text = text.replace(placeholder, repr(value), 1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def checks(code, output: str):
    """(name, passed) for each check of one run's exit status and output."""
    lines = output.splitlines()

    def count(text: str) -> int:
        return sum(1 for line in lines if text in line)

    return [
        ("exits 0 in time", code == 0),
        ("no traceback", "Traceback" not in output),
        ("all nine scenarios induced conflicts", count(" conflicts, verifying conflict resolution") == 9),
        ("no scenario had to retry", count("to induce conflicts") == 0),
        ("manual: the losers were found and deleted from the feed", count("Deleting manual conflict") == 2),
        # Which region's write arrives first is a race; the first one wins, seen by both clients.
        ("manual: one write won, one lost", count("won the conflict @") == 4 and count("lost conflict @") == 4),
        ("last writer wins: region 1's version won", count("Winner document from region 1 found") == 4),
        ("delete conflicts: the delete won", count("Delete conflict won") == 4),
        ("UDP: the conflicts stayed in the feed", count("conflicts in the udp collection") == 6),
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample", required=True, help="the MultiMasterOperations directory")
    parser.add_argument("--timeout", type=float, default=120)
    args = parser.parse_args()
    endpoint = os.environ["COSMOS_ENDPOINT"]
    key = os.environ["COSMOS_KEY"]
    regions = os.environ["COSMOS_REGIONS"]
    with tempfile.TemporaryDirectory() as tmp:
        sample_dir = os.path.join(tmp, "MultiMasterOperations")
        shutil.copytree(args.sample, sample_dir)
        configure(sample_dir, endpoint, key, regions)
        try:
            run = subprocess.run(
                [sys.executable, "Program.py"],
                cwd=sample_dir,
                capture_output=True,
                text=True,
                timeout=args.timeout,
            )
            code, output = run.returncode, run.stdout + run.stderr
        except subprocess.TimeoutExpired as e:
            code = None
            output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    results = checks(code, output)
    failed = [name for name, ok in results if not ok]
    for name, ok in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    if failed:
        print("the sample's output:")
        print(output)
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
