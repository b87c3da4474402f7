"""Old against new in one run (issue 27: "every bench row within 10% of today's").

``python benchmarks/compare_revisions.py --old REV`` takes the package as it was at git
revision ``REV`` (``git archive``, into a temporary folder) and the package of this
checkout, and runs each case of ``run_benchmarks.py`` (package cases; ``--cases`` to
choose) and of ``totals_memory.py`` (``--totals``: 10^6 x 10 totals and per-query, 10^5 x
1,000 totals) with each, alternating old and new, ``--rounds`` times (the order flips
every round, so that a machine getting busier or quieter favours neither). Each run is a
fresh process whose ``PYTHONPATH`` puts one package first; the harness is this
checkout's for both. Printed: per case the median wall and CPU seconds and peak memory of
each, and new / old; "within 10%" when the new median wall time is at most 1.1x the old
one. A measurement, not a test. The summaries of both runs are compared where the case
prints one (``totals_memory.py``'s sha256): a difference is shown, as the tolerance rule
allows the last bits to move between algorithms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_benchmarks  # noqa: E402
import totals_memory  # noqa: E402

PACKAGE_CASES = ["glyph-expected", "glyph-replay", "glyph-integral", "large-expected",
                 "large-replay", "svt-large", "interactive-glyph", "individualized-glyph"]
TOTALS_CASES = [("votes_1000000x10.npy", 10**6, 10, "expected", "totals"),
                ("votes_1000000x10.npy", 10**6, 10, "replay", "totals"),
                ("votes_1000000x10.npy", 10**6, 10, "expected", "per-query"),
                ("votes_100000x1000.npy", 10**5, 1000, "expected", "totals")]


def package_tree(revision: str, folder: str) -> str:
    """The repository at ``revision`` unpacked into ``folder`` (its package importable)."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, check=True,
                          capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", revision, "pate_cli"], cwd=root, check=True,
                             capture_output=True).stdout
    os.makedirs(folder, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def run_with(tree: str, command: list[str]) -> dict:
    """``command`` (a child of one of the harnesses) with ``tree``'s package first."""
    environment = {**os.environ, "PYTHONPATH": tree}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="git revision to compare with")
    parser.add_argument("--cases", nargs="*", default=PACKAGE_CASES,
                        choices=sorted(run_benchmarks.CASES), metavar="NAME")
    parser.add_argument("--totals", action="store_true",
                        help="add totals_memory.py's 10^6 x 10 and 10^5 x 1,000 rows")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", help="keep the generated files here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pate_ab_") as scratch:
        old = package_tree(args.old, os.path.join(scratch, "old"))
        new = os.path.dirname(HERE)
        data = args.data_dir or os.path.join(scratch, "data")
        os.makedirs(data, exist_ok=True)
        specs = run_benchmarks.datasets(False)
        for key in {run_benchmarks.CASES[case][0] for case in args.cases} - {None}:
            path = os.path.join(data, specs[key].filename)
            if not os.path.exists(path):
                run_benchmarks.synthesize(path, specs[key])
        commands = {case: [sys.executable, os.path.join(HERE, "run_benchmarks.py"), "--case",
                           case, "--data", data] for case in args.cases}
        if args.totals:
            for name, queries, classes, accounting, mode in TOTALS_CASES:
                path = os.path.join(data, name)
                if not os.path.exists(path):
                    totals_memory.synthesize(path, queries, classes)
                commands[f"{name[:-4]} {accounting} {mode}"] = [
                    sys.executable, os.path.join(HERE, "totals_memory.py"), "--child", path,
                    accounting, mode, "None"]
        measured: dict[str, dict[str, list[dict]]] = {case: {"old": [], "new": []}
                                                      for case in commands}
        for number in range(args.rounds):
            order = [("old", old), ("new", new)]
            if number % 2:
                order.reverse()
            for case, command in commands.items():
                for label, tree in order:
                    measured[case][label].append(run_with(tree, command))
                print(f"round {number + 1}: {case} done", file=sys.stderr, flush=True)
    print("| case | old wall s | new wall s | new / old | old CPU s | new CPU s | "
          "old MB | new MB | summary | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, runs in measured.items():
        def median(label, key, alternative=None, runs=runs):
            values = [run.get(key, run.get(alternative)) for run in runs[label]]
            values = [value for value in values if value is not None]
            return statistics.median(values) if values else float("nan")
        old_wall, new_wall = median("old", "wall", "seconds"), median("new", "wall", "seconds")
        digests = {run.get("summary_sha256") for label in runs for run in runs[label]}
        same = "-" if digests == {None} else "same" if len(digests) == 1 else "moved"
        ratio = new_wall / old_wall
        print(f"| {case} | {old_wall:.3f} | {new_wall:.3f} | {ratio:.2f} | "
              f"{median('old', 'cpu'):.2f} | {median('new', 'cpu'):.2f} | "
              f"{median('old', 'peak_mb'):.0f} | {median('new', 'peak_mb'):.0f} | {same} | "
              f"{'within 10%' if ratio <= 1.1 else 'NOT within 10%'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
