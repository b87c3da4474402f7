"""Regenerate the figures of the docs (``make figures``) with ``pate-analyze`` and ``pate-plot``.

From the shipped sample votes (``sample_votes/``) always, and from the 2018 paper's
released votes when ``../shared/paper_votes`` exists (``--paper-votes DIR`` to point
elsewhere). Per-query tables, JSON summaries and sweep tables go to a temporary directory;
the figures to ``docs/figures/`` (``--out``). Every step is a command line, run in-process
through the same entry points as the console scripts and printed as it runs, so the docs
(docs/commands/pate-plot.md) show exactly what made each figure.

    python scripts/make_figures.py [--out docs/figures] [--paper-votes DIR] [--no-paper]

"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np

from pate_cli.cli.analyze import analyze as analyze_command
from pate_cli.cli.errors import run_command
from pate_cli.cli.plot import plot as plot_command
from pate_cli.cli.sweep import command as sweep_command

ROOT = Path(__file__).resolve().parents[1]
PAPER_VOTES = Path(os.environ.get("PATE_SHARED") or ROOT.parent / "shared") / "paper_votes"


def run(*args: str) -> None:
    """Run ``pate-analyze``, ``pate-sweep`` or ``pate-plot`` in-process; stop on failure."""
    print("$ " + " ".join(shlex.quote(str(a)) for a in args), flush=True)
    command = {"pate-analyze": analyze_command, "pate-plot": plot_command,
               "pate-sweep": sweep_command}[args[0]]
    status = run_command(command, [str(a) for a in args[1:]], prog_name=args[0])
    if status != 0:
        raise SystemExit(f"{args[0]} failed with exit status {status}")


def sample_figures(out: Path, work: Path) -> None:
    """The figures of docs/commands/pate-plot.md, from the MNIST sample."""
    votes = "sample_votes/mnist_250_votes.npy"
    labels = "sample_votes/mnist_250_labels.npy"
    w = work

    # Cost history of five runs (2018 Figure 1 middle), with a budget line.
    runs = [("confident_replay", "Confident-GNMax, replay", ["--accounting", "replay"]),
            ("confident_expected", "Confident-GNMax, expected", ["--accounting", "expected"]),
            ("confident_data-independent", "Confident-GNMax, data-independent",
             ["--accounting", "data-independent"]),
            ("gnmax", "GNMax, replay", ["-m", "gnmax", "--sigma", "40"]),
            ("lnmax", "LNMax, replay", ["-m", "lnmax", "--laplace-scale", "20"])]
    for name, _, extra in runs:
        run("pate-analyze", votes, "-n", "2000", *extra,
            "--per-query", w / f"{name}.csv", "-f", "json", "-o", w / f"{name}.json")
    history = ["pate-plot", "history", *(w / f"{name}.csv" for name, *_ in runs)]
    for name, label, _ in runs:
        history += ["--label", label, "--summary", w / f"{name}.json"]
    history += ["--budget", "3", "--height", "4.6", "-o", out / "mnist_cost_history.png"]
    run(*history)

    # Individualized PATE: per-group histories (Boenisch et al. Figure 1).
    run("pate-analyze", "--predictions", "sample_votes/mnist_250_predictions.npy",
        "--individualized", "weighting", "--groups", "sample_votes/mnist_250_groups.csv",
        "--teacher-groups", "sample_votes/mnist_250_teacher_groups.csv",
        "--per-query", w / "groups.csv", "-f", "json", "-o", w / "groups.json")
    run("pate-plot", "groups", w / "groups.csv", "--summary", w / "groups.json",
        "-n", "2000", "-o", out / "mnist_groups.png")

    # Selection (2018 Figure 5 left): moderate and aggressive thresholds.
    run("pate-plot", "selection", votes, "--params", "175,75", "--params", "250,75",
        "--sigma", "40", "-o", out / "mnist_selection.png")

    # Partition (2018 Figure 5 right): LNMax answers everything, Confident selects.
    run("pate-analyze", votes, "-m", "lnmax", "--laplace-scale", "20", "-n", "5000",
        "--per-query", w / "lnmax_all.csv", "-f", "json", "-o", w / "lnmax_all.json")
    run("pate-analyze", votes, "--per-query", w / "confident_all.csv", "-f", "json",
        "-o", w / "confident_all.json")
    run("pate-plot", "partition", w / "lnmax_all.csv", w / "confident_all.csv",
        "--summary", w / "lnmax_all.json", "--summary", w / "confident_all.json",
        "-o", out / "mnist_partition.png")

    # Trade-off (2018 Figure 4): pate-sweep over noise scales, and over ensemble sizes.
    run("pate-sweep", votes, "-m", "lnmax", "-m", "gnmax", "--laplace-scale",
        "10,20,30,40,60,80", "--sigma", "10,20,30,40,60,80", "--labels", labels,
        "-n", "1000", "--repeats", "3", "-w", "1", "-q", "-o", w / "sweep.csv")
    run("pate-plot", "tradeoff", w / "sweep.csv", "-o", out / "mnist_tradeoff.png")

    predictions = np.load(ROOT / "sample_votes" / "mnist_250_predictions.npy")
    tables = []
    for teachers in (50, 100, 250):
        histogram = w / f"mnist_first_{teachers}_teachers.npy"
        np.save(histogram, histogram_of(predictions[:, :teachers], classes=10))
        sigmas = ",".join(f"{f * teachers:g}" for f in (0.08, 0.12, 0.16, 0.24, 0.32))
        tables.append(w / f"sweep_{teachers}.csv")
        run("pate-sweep", histogram, "-m", "gnmax", "--sigma", sigmas, "--labels", labels,
            "-n", "1000", "--repeats", "3", "-w", "1", "-q", "-o", tables[-1])
    run("pate-plot", "tradeoff", *tables, "--by", "teachers", "--logx",
        "--legend", "outside", "-o", out / "mnist_tradeoff_teachers.png")

    # The f-DP trade-off curve of a guarantee (attack risk): a data-dependent run and a
    # data-independent mu-GDP one.
    run("pate-analyze", votes, "-f", "json", "-o", w / "confident.json")
    run("pate-analyze", votes, "-m", "gnmax", "--sigma", "40", "--accounting",
        "data-independent", "-f", "json", "-o", w / "gnmax.json")
    run("pate-plot", "tradeoff-curve", w / "confident.json", w / "gnmax.json",
        "--label", "Confident-GNMax, replay", "--label", "GNMax, data-independent", "--log",
        "--legend", "outside", "--height", "5.4", "-o", out / "mnist_tradeoff_curve.png")


def paper_figures(out: Path, work: Path, votes_dir: Path) -> None:
    """Figure 5 of the 2018 paper on its released MNIST and SVHN votes (no labels)."""
    mnist = votes_dir / "mnist_250_teachers.npy"
    svhn = votes_dir / "svhn_250_teachers.npy"
    w = work
    if svhn.exists():
        run("pate-plot", "selection", svhn, "--params", "300,200", "--params", "250,75",
            "--sigma", "40", "--delta", "1e-6", "-n", "8500",
            "-o", out / "paper_svhn_selection.png")
        run("pate-analyze", svhn, "-n", "8500", "-T", "300", "--sigma-threshold", "200",
            "--sigma", "40", "--delta", "1e-6", "--per-query", w / "svhn_confident.csv",
            "-f", "json", "-o", w / "svhn_confident.json")
        run("pate-analyze", svhn, "-n", "3100", "-m", "lnmax", "--laplace-scale", "20",
            "--delta", "1e-6", "--per-query", w / "svhn_lnmax.csv", "-f", "json",
            "-o", w / "svhn_lnmax.json")
        run("pate-plot", "partition", w / "svhn_lnmax.csv", w / "svhn_confident.csv",
            "--summary", w / "svhn_lnmax.json", "--summary", w / "svhn_confident.json",
            "-o", out / "paper_svhn_partition.png")
    if mnist.exists():
        run("pate-analyze", mnist, "-n", "640", "--accounting", "expected", "-T", "200",
            "--sigma-threshold", "150", "--sigma", "40", "--per-query",
            w / "mnist_paper.csv", "-f", "json", "-o", w / "mnist_paper.json")
        run("pate-analyze", mnist, "-n", "1000", "-m", "lnmax", "--laplace-scale", "20",
            "--accounting", "expected", "--per-query", w / "mnist_paper_lnmax.csv",
            "-f", "json", "-o", w / "mnist_paper_lnmax.json")
        run("pate-plot", "history", w / "mnist_paper_lnmax.csv", w / "mnist_paper.csv",
            "--summary", w / "mnist_paper_lnmax.json", "--summary", w / "mnist_paper.json",
            "--x", "answered", "--budget", "2", "-o", out / "paper_mnist_history.png")


def histogram_of(predictions: np.ndarray, *, classes: int) -> np.ndarray:
    """(queries x teachers) class ids -> (queries x classes) vote counts, vectorised."""
    queries = predictions.shape[0]
    flat = (np.arange(queries)[:, None] * classes + predictions).ravel()
    return np.bincount(flat, minlength=queries * classes).reshape(queries, classes)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    parser.add_argument("--paper-votes", type=Path, default=PAPER_VOTES)
    parser.add_argument("--no-paper", action="store_true",
                        help="Only the sample-vote figures.")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    os.chdir(ROOT)  # the commands name the sample votes relative to the repository
    with tempfile.TemporaryDirectory(prefix="pate-figures-") as work:
        sample_figures(args.out, Path(work))
        if not args.no_paper and args.paper_votes.is_dir():
            paper_figures(args.out, Path(work), args.paper_votes.resolve())
        elif not args.no_paper:
            print(f"{args.paper_votes} not found: skipping the paper-vote figures",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
