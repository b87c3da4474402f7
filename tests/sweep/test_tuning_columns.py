"""pate-sweep --tuning (math:tuning): epsilon_tuned and epsilon_all_points per vote file."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from pate_cli.accounting.conversion import rdp_to_epsilon
from pate_cli.accounting.tuning import parse_tuning, tuned_rdp
from pate_cli.analysis import analyze_votes
from pate_cli.mechanisms import build_mechanism
from pate_cli.orders import default_orders
from pate_cli.sweep import run_sweep
from pate_cli.sweep.columns import SWEEP_COLUMNS
from tests import ROOT
from tests.synthetic import synthetic_votes

MNIST = str(ROOT / "sample_votes" / "mnist_250_votes.npy")


@pytest.fixture
def two_files(tmp_path):
    first, _ = synthetic_votes()
    second = first[::-1][:300].copy()
    np.save(tmp_path / "a.npy", first)
    np.save(tmp_path / "b.npy", second)
    return str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), first, second


def _curves(votes, grid, queries=None, accounting="replay", seeds=(0,)):
    """Each point's total RDP curve, from the analysis itself (max over seeds)."""
    curves = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, params in grid:
            mechanism = build_mechanism(name, teachers=float(votes[0].sum()), **params,
                                        integer_votes=True)  # whole counts, as the sweep finds
            runs = [analyze_votes(votes, mechanism, accounting=accounting, seed=seed,
                                  queries=queries).rdp_total for seed in seeds]
            curves.append(np.max(runs, axis=0))
    return np.array(curves)


def _expected(curves, law, delta=1e-5, conversion="classic"):
    orders = default_orders()
    bound = curves.max(axis=0)
    tuned = tuned_rdp(bound, orders=orders, distribution=parse_tuning(law))
    return (float(rdp_to_epsilon(tuned, orders=orders, delta=delta, conversion=conversion)[0]),
            float(rdp_to_epsilon(curves.sum(axis=0), orders=orders, delta=delta,
                                 conversion=conversion)[0]))


def test_columns_per_file_against_the_points_curves(cli, two_files):
    a, b, first, second = two_files
    done = cli.sweep(a, b, "-m", "gnmax", "-m", "confident", "--sigma", "20,40", "-w", "1",
                     "--tuning", "geometric:20", "-r", "2", "-q")
    assert done.code == 0, done.err
    table = pd.read_csv(io.StringIO(done.out))
    assert list(table.columns) == [*SWEEP_COLUMNS, "tuning", "epsilon_tuned",
                                   "epsilon_all_points"]
    grid = [("gnmax", {"sigma": 20.0}), ("gnmax", {"sigma": 40.0}),
            ("confident", {"sigma": 20.0}), ("confident", {"sigma": 40.0})]
    for path, votes in ((a, first), (b, second)):
        rows = table[table.file == path]
        assert len(rows) == 4 and (rows.tuning == "geometric:20").all()
        assert rows.epsilon_tuned.nunique() == 1 and rows.epsilon_all_points.nunique() == 1
        tuned, composed = _expected(_curves(votes, grid, seeds=(0, 1)), "geometric:20")
        assert rows.epsilon_tuned.iloc[0] == pytest.approx(tuned, rel=1e-12)
        assert rows.epsilon_all_points.iloc[0] == pytest.approx(composed, rel=1e-12)
        # The search costs more than any one point.
        assert (rows.epsilon_tuned >= rows.epsilon).all()
    assert table[table.file == a].epsilon_tuned.iloc[0] != \
        table[table.file == b].epsilon_tuned.iloc[0]
    assert "choosing among the grid's points costs" not in done.err  # -q


def test_best_row_carries_the_search_cost(cli):
    done = cli.sweep(MNIST, "-m", "gnmax", "--sigma", "20:100:20", "-n", "640", "-w", "1",
                     "--tuning", "poisson:20", "--best", "3", "--accounting",
                     "data-independent", "-f", "json")
    assert done.code == 0, done.err
    import json

    row = json.loads(done.out)
    grid = [("gnmax", {"sigma": float(s)}) for s in (20, 40, 60, 80, 100)]
    votes = np.load(MNIST)
    tuned, composed = _expected(_curves(votes, grid, queries=640,
                                        accounting="data-independent"), "poisson:20")
    assert row["epsilon_tuned"] == pytest.approx(tuned, rel=1e-12)
    assert row["epsilon_all_points"] == pytest.approx(composed, rel=1e-12)
    assert row["epsilon"] <= 3 and row["tuning"] == "poisson:20" and "command" in row
    assert "as a random search (--tuning poisson:20)" in done.err
    above = "above 3: the chosen row's epsilon does not cover the choice"
    assert (above in done.err) == (row["epsilon_tuned"] > 3)


def test_a_search_cost_above_the_best_limit_is_a_warning(cli):
    """--best 3 with --tuning: the chosen row is within 3, the search that chose it not."""
    done = cli.sweep(MNIST, "-m", "gnmax", "--sigma", "20:100:20", "-n", "640", "-w", "1",
                     "--tuning", "poisson:20", "--best", "3", "--accounting", "data-independent")
    assert done.code == 0
    assert "Warning: choosing among the grid's points costs epsilon" in done.err
    assert "above 3: the chosen row's epsilon does not cover the choice" in done.err


def test_a_data_dependent_search_cost_says_so(cli):
    done = cli.sweep(MNIST, "-m", "gnmax", "--sigma", "40,80", "-n", "640", "-w", "1",
                     "--tuning", "poisson:5", "--accounting", "replay")
    assert done.code == 0
    assert ("running every point (data-dependent, unsanitised: not for publication: the rows' "
            "replay curves; --accounting data-independent gives the publishable cost)"
            in done.err)
    independent = cli.sweep(MNIST, "-m", "gnmax", "--sigma", "40,80", "-n", "640", "-w", "1",
                            "--tuning", "poisson:5", "--accounting", "data-independent")
    assert "data-dependent" not in independent.err


def test_without_tuning_the_schema_is_unchanged(cli, two_files):
    a, *_ = two_files
    done = cli.sweep(a, "-m", "gnmax", "--sigma", "20", "-w", "1", "-q")
    assert list(pd.read_csv(io.StringIO(done.out)).columns) == list(SWEEP_COLUMNS)


@pytest.mark.parametrize("args, message", [
    (["-m", "svt", "--tuning", "poisson:3"], "does not combine with -m svt"),
    (["--tuning", "poisson:3", "--resume", "--out", "t.csv"], "does not combine with --resume"),
    (["--tuning", "poisson:0"], "must be a number >= 1"),
    (["--tuning", "binomial:3"], "unknown distribution 'binomial'"),
])
def test_refused(cli, two_files, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    a, *_ = two_files
    done = cli.sweep(a, "-w", "1", *args)
    assert done.code == 2 and message in done.err
    assert len(done.err.strip().splitlines()) == 1


def test_run_sweep_api(two_files):
    a, _, first, _ = two_files
    frame = run_sweep(a, ["gnmax"], sigma=[20, 40], tuning="logarithmic:5")
    assert list(frame.columns[-3:]) == ["tuning", "epsilon_tuned", "epsilon_all_points"]
    tuned, composed = _expected(_curves(first, [("gnmax", {"sigma": 20.0}),
                                                ("gnmax", {"sigma": 40.0})]),
                                "logarithmic:5")
    assert frame.epsilon_tuned.tolist() == pytest.approx([tuned, tuned], rel=1e-12)
    assert frame.epsilon_all_points.tolist() == pytest.approx([composed] * 2, rel=1e-12)
    plain = run_sweep(a, ["gnmax"], sigma=[20, 40])
    assert "epsilon_tuned" not in plain.columns
