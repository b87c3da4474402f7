"""Reproduce the 2018 PATE paper's privacy figures from the vote files its authors released.

Papernot et al., "Scalable Private Learning with PATE" (ICLR 2018): Confident-GNMax on
MNIST, SVHN and Adult with 250 teachers. Table 1: per data set, the expected-accounting
analysis (the paper's deterministic figures) and seeded replays (realised runs, like the
table's), next to the numbers the paper prints. Table 2: the smooth-sensitivity release of
the data-dependent epsilon (Appendix B): order, beta, sigma_ss, epsilon with the release's
cost +/- the release noise's std.

    python scripts/reproduce_paper.py [--votes DIR] [--replays 5] [--format table|json]

The vote files are not shipped with the package; by default they are read from
``../shared/paper_votes`` next to the repository (``$PATE_SHARED/paper_votes`` if set).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

import pate_cli
from pate_cli.analysis import sanitize_analysis
from pate_cli.errors import InputError
from pate_cli.rounding import ceil_text

DEFAULT_VOTES = Path(os.environ.get("PATE_SHARED")
                     or Path(__file__).resolve().parents[2] / "shared") / "paper_votes"

# (name, file, queries, T, sigma1, sigma2, delta, paper's answered, paper's epsilon)
SETTINGS = [
    ("MNIST", "mnist_250_teachers.npy", 640, 200, 150, 40, 1e-5, 286, 1.97),
    ("SVHN", "svhn_250_teachers.npy", 8500, 300, 200, 40, 1e-6, 3098, 4.96),
    ("Adult", "adult_250_teachers.npy", 1500, 300, 200, 40, 1e-5, 524, 1.90),
]


def reproduce(votes_dir: Path, replays: int) -> list[dict]:
    """One row per data set: expected analysis, replay mean/std, and the paper's figures."""
    rows = []
    for name, file, queries, t, s1, s2, delta, paper_answered, paper_eps in SETTINGS:
        vote_set = pate_cli.load_votes(votes_dir / file)
        mechanism = pate_cli.ConfidentGNMax(threshold=t, sigma_threshold=s1, sigma=s2,
                                               screening="gaussian")  # the papers'
        expected = pate_cli.analyze(vote_set, mechanism, accounting="expected",
                                    queries=queries, delta=delta)
        runs = [pate_cli.analyze(vote_set, mechanism, accounting="replay", queries=queries,
                                 delta=delta, seed=seed) for seed in range(replays)]
        release = sanitize_analysis(expected, vote_set.votes)
        answered = np.array([run.answered_total for run in runs])
        epsilon = np.array([run.epsilon for run in runs])
        rows.append({
            "dataset": name, "queries": queries, "threshold": t, "sigma_threshold": s1,
            "sigma": s2, "delta": delta,
            "expected_answered": expected.answered_total, "expected_epsilon": expected.epsilon,
            "expected_order": expected.order,
            "epsilon_data_independent": expected.epsilon_data_independent,
            "replay_answered_mean": float(answered.mean()),
            "replay_answered_std": float(answered.std()),
            "replay_epsilon_mean": float(epsilon.mean()),
            "replay_epsilon_std": float(epsilon.std()),
            "replays": replays,
            "paper_answered": paper_answered, "paper_epsilon": paper_eps,
            "ss_order": release.order, "ss_beta": release.beta,
            "ss_sigma": release.sigma_ss, "smooth_sensitivity": release.smooth_sensitivity,
            "epsilon_after": release.epsilon_after, "noise_std": release.noise_std,
        })
    return rows


def render_table(rows: list[dict]) -> str:
    header = (f"{'data set':8} {'queries':>7} {'T':>4} {'s1':>4} {'s2':>3} {'delta':>6} | "
              f"{'E[answered]':>11} {'eps d-d':>7} {'order':>5} {'avg d-i':>7} | "
              f"{'replay answered':>16} {'replay eps':>12} | {'paper':>12}")
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['dataset']:8} {r['queries']:>7} {r['threshold']:>4} {r['sigma_threshold']:>4} "
            f"{r['sigma']:>3} {r['delta']:>6.0e} | {r['expected_answered']:>11.1f} "
            f"{ceil_text(r['expected_epsilon'], 3):>7} {r['expected_order']:>5g} "
            f"{ceil_text(r['epsilon_data_independent'], 2):>7} | "
            f"{r['replay_answered_mean']:>9.1f} ±{r['replay_answered_std']:>5.1f} "
            f"{ceil_text(r['replay_epsilon_mean'], 3):>6} ±{r['replay_epsilon_std']:.3f} | "
            f"{r['paper_answered']:>5} / {r['paper_epsilon']:.2f}")
    lines.append("")
    lines.append("Table 2 (smooth-sensitivity release of the expected data-dependent epsilon)")
    header2 = (f"{'data set':8} {'queries':>7} {'E[answered]':>11} {'avg d-i':>7} "
               f"{'eps d-d':>7} {'order':>5} {'beta':>7} {'sigma_ss':>8} {'SS':>8} "
               f"{'with release':>15}")
    lines += [header2, "-" * len(header2)]
    for r in rows:
        lines.append(
            f"{r['dataset']:8} {r['queries']:>7} {r['expected_answered']:>11.1f} "
            f"{ceil_text(r['epsilon_data_independent'], 2):>7} "
            f"{ceil_text(r['expected_epsilon'], 3):>7} "
            f"{r['ss_order']:>5g} {r['ss_beta']:>7.4f} {r['ss_sigma']:>8.3f} "
            f"{r['smooth_sensitivity']:>8.5f} {ceil_text(r['epsilon_after'], 3):>7} ± "
            f"{r['noise_std']:.3f}")
    lines.append("")
    lines.append("expected: the paper's deterministic analysis (E[answered] = sum of pr_answered);"
                 " replay: seeds 0.."
                 f"{rows[0]['replays'] - 1} (mean ± std); paper: Table 1 (answered / epsilon),"
                 " from realised runs. eps d-d: the expected data-dependent epsilon, unsanitised"
                 " (Table 2 gives its release). avg d-i: the data-independent epsilon at the"
                 " expected answered count, an average, not a bound (pate-analyze --accounting"
                 " expected gives the bound for any run). Epsilons are rounded up.")
    return "\n".join(lines) + "\n"


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs at least 1 replay, got {value}")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=Path, default=DEFAULT_VOTES,
                        help="directory holding the released *_250_teachers.npy files")
    parser.add_argument("--replays", type=_at_least_one, default=5,
                        help="seeded replays per data set (at least 1)")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    args = parser.parse_args(argv)
    if not args.votes.is_dir():
        print(f"Error: {args.votes}: no such directory (the paper's vote files are not "
              "shipped; pass --votes DIR)", file=sys.stderr)
        return 2
    try:
        rows = reproduce(args.votes, args.replays)
    except InputError as error:  # a missing or unreadable vote file: one line
        print(f"Error: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        print(render_table(rows), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
