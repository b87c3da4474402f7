"""The README's table: epsilon on the 2018 paper's released votes with the union vs the
integral bound on q (math:gnmax and math:integral) and the classic vs improved conversion
(math:conversion).

    python scripts/q_bound_table.py [--votes DIR]

Confident-GNMax with the paper's settings (``scripts/reproduce_paper.py``: MNIST 640
queries, T=200, sigma1=150, sigma2=40, delta 1e-5; SVHN 8,500, 300, 200, 40, 1e-6; Adult
1,500, 300, 200, 40, 1e-5), expected accounting (the paper's figures). Prints a plain
Markdown table. The vote files are read from ``../shared/paper_votes`` next to the
repository (``$PATE_SHARED/paper_votes`` if set).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import pate_cli

DEFAULT_VOTES = Path(os.environ.get("PATE_SHARED")
                     or Path(__file__).resolve().parents[2] / "shared") / "paper_votes"

# (name, file, queries, T, sigma1, sigma2, delta), as scripts/reproduce_paper.py
SETTINGS = [
    ("MNIST", "mnist_250_teachers.npy", 640, 200, 150, 40, 1e-5),
    ("SVHN", "svhn_250_teachers.npy", 8500, 300, 200, 40, 1e-6),
    ("Adult", "adult_250_teachers.npy", 1500, 300, 200, 40, 1e-5),
]


def table(votes_dir: Path) -> str:
    """The Markdown table, one row per data set."""
    lines = ["| data set | queries | delta | union, classic | union, improved "
             "| integral, classic | integral, improved |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, file, queries, t, s1, s2, delta in SETTINGS:
        vote_set = pate_cli.load_votes(votes_dir / file)
        mechanism = pate_cli.ConfidentGNMax(threshold=t, sigma_threshold=s1, sigma=s2,
                                               screening="gaussian")  # the papers'
        figures = {}
        for bound in ("union", "integral"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", pate_cli.PateWarning)
                result = pate_cli.analyze(vote_set, mechanism, accounting="expected",
                                          queries=queries, delta=delta, q_bound=bound)
            summary = result.to_dict()
            figures[bound] = (summary["epsilon"], summary["epsilon_improved"])
        lines.append(f"| {name} | {queries:,} | {delta:g} | {figures['union'][0]:.3f} | "
                     f"{figures['union'][1]:.3f} | {figures['integral'][0]:.3f} | "
                     f"{figures['integral'][1]:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=Path, default=DEFAULT_VOTES,
                        help="folder with the paper's *_250_teachers.npy files")
    args = parser.parse_args(argv)
    if not args.votes.is_dir():
        print(f"Error: {args.votes} not found (set --votes or PATE_SHARED)", file=sys.stderr)
        return 2
    sys.stdout.write(table(args.votes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
