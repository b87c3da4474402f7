"""Regenerate the figures the README shows (``make figures``), from the shipped sample votes.

Uses the Python API and matplotlib's object API only (no pyplot state).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from matplotlib.figure import Figure

import pate_cli

ROOT = Path(__file__).resolve().parents[1]


def history_figure(votes_path: Path, labels_path: Path) -> Figure:
    """Cumulative epsilon against query index for three aggregators on one vote file."""
    vote_set = pate_cli.load_votes(votes_path, labels=labels_path)
    runs = [
        ("Confident-GNMax, replay", dict(mechanism="confident", accounting="replay")),
        ("Confident-GNMax, expected", dict(mechanism="confident", accounting="expected")),
        ("Confident-GNMax, data-independent",
         dict(mechanism="confident", accounting="data-independent")),
        ("GNMax (sigma 40), replay", dict(mechanism="gnmax", accounting="replay")),
        ("LNMax (lambda 20), replay", dict(mechanism="lnmax", accounting="replay")),
    ]
    figure = Figure(figsize=(7.5, 4.2), dpi=110)
    axes = figure.add_subplot()
    for label, options in runs:
        result = pate_cli.analyze(vote_set, options.pop("mechanism"), queries=2000, **options)
        axes.plot(result.epsilon_cumulative, label=label, linewidth=1.6)
    axes.set_xlabel("query index (first 2,000 MNIST sample queries)")
    axes.set_ylabel("cumulative epsilon at delta = 1e-5")
    axes.set_title("What each label costs: MNIST sample votes, 250 teachers")
    axes.grid(alpha=0.3)
    axes.legend(frameon=False, fontsize=8)
    figure.text(0.01, 0.01, "Confident: T=200, sigma1=150, sigma2=40; default 298-order grid, "
                "classic conversion, seed 0", fontsize=7, color="0.35")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    return figure


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    figure = history_figure(ROOT / "sample_votes" / "mnist_250_votes.npy",
                            ROOT / "sample_votes" / "mnist_250_labels.npy")
    target = args.out / "mnist_cost_history.png"
    figure.savefig(target, metadata={"Software": None})
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
