"""``epsilon_any_run``: a sweep row's bound whatever a run answers (an aggregator with a
selection step answers a count the votes decide), equal to pate-analyze's, and what
``--best`` holds under data-independent accounting."""

from __future__ import annotations

import json

import pytest

from pate_cli.sweep.columns import SWEEP_COLUMNS
from pate_cli.sweep.table import read_sweep_rows
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
GRID = ("-m", "confident", "-m", "gnmax", "--sigma", "40,80", "-n", "1000", "-w", "1", "-q")


@pytest.mark.parametrize("accounting", ["data-independent", "replay"])
def test_the_column_equals_pate_analyzes_bound(cli, tmp_path, accounting):
    out = tmp_path / "sweep.csv"
    assert cli.sweep(VOTES, *GRID, "--accounting", accounting, "-o", out).code == 0
    assert list(read_sweep_rows(str(out))[0]) == list(SWEEP_COLUMNS)
    for row in read_sweep_rows(str(out)):
        summary = json.loads(cli.analyze(VOTES, "-m", row["mechanism"], "--sigma",
                                         f"{row['sigma']:g}", "-n", "1000", "--accounting",
                                         accounting, "-f", "json").out)
        if row["mechanism"] == "gnmax":  # every query answered already
            assert row["epsilon_any_run"] is None
            continue
        bound = min(summary["epsilon_data_independent_worst"],
                    summary["epsilon_data_independent_worst_pld"])
        assert row["epsilon_any_run"] == bound > summary["epsilon_data_independent"]


def test_best_holds_the_bound_for_any_run(cli, tmp_path):
    """Confident at sigma 80 over 1,000 queries: its replay's 560 answers give 1.8534, but
    every query answered gives 2.4333; a limit of 2 holds no row, 3 holds it."""
    args = (VOTES, "-m", "confident", "--sigma", "40,80", "-n", "1000", "--accounting",
            "data-independent", "-w", "1", "-q")
    none = cli.sweep(*args, "--best", "2")
    assert none.code == 3, none.err
    chosen = cli.sweep(*args, "--best", "3")
    assert chosen.code == 0, chosen.err
    assert ("560 at epsilon 2.4333 (the bound for any run, every query answered)"
            in chosen.err)


def test_resume_computes_again_a_selecting_row_without_the_column(cli, tmp_path):
    out = tmp_path / "sweep.csv"
    assert cli.sweep(VOTES, *GRID, "--accounting", "data-independent", "-o", out).code == 0
    fresh = out.read_bytes()
    lines = out.read_text().splitlines()
    older = [line.rsplit(",", 1)[0] + "," for line in lines]  # the column emptied
    out.write_text("\n".join([lines[0], *older[1:]]) + "\n")
    done = cli.sweep(VOTES, *GRID[:-1], "--accounting", "data-independent", "-o", out,
                     "--resume", "--no-progress")
    assert done.code == 0, done.err
    assert "reused 2 of 4 rows" in done.err  # the GNMax rows; the Confident ones again
    assert out.read_bytes() == fresh


def test_the_tradeoff_plot_draws_the_bound_and_one_curve_per_accounting(cli, tmp_path):
    import pandas as pd

    from pate_cli.outputs.figure_style import Style
    from pate_cli.outputs.figures import tradeoff_curves
    from pate_cli.outputs.plot_files import plot_tradeoff

    independent, replay = tmp_path / "di.csv", tmp_path / "replay.csv"
    assert cli.sweep(VOTES, *GRID, "--accounting", "data-independent", "-o",
                     independent).code == 0
    assert cli.sweep(VOTES, "-m", "gnmax", "--sigma", "40,80", "-n", "1000", "-w", "1", "-q",
                     "-o", replay).code == 0
    figure = plot_tradeoff([str(independent), str(replay)], by="mechanism", y="answered",
                           annotate=False, logx=False, style=Style(), delta=None)
    drawn = sorted(float(x) for line in figure.axes[0].lines for x in line.get_xdata())
    rows = read_sweep_rows(str(independent)) + read_sweep_rows(str(replay))
    published = [row["epsilon_any_run"] if row["mechanism"] == "confident" else row["epsilon"]
                 for row in rows]  # Confident's bound for any run, not its replay's count's
    assert drawn == sorted(published)
    frame = pd.DataFrame(rows).assign(answered=lambda f: f["answered"].astype(float))
    assert [label for label, _ in tradeoff_curves(frame, y="answered")] == [
        "Confident-GNMax, data-independent", "GNMax, data-independent", "GNMax, replay"]


def test_the_table_says_a_selection_steps_epsilon_is_not_a_bound(cli):
    """Under data-independent accounting a Confident row's ``epsilon`` counts its replay's
    answers: the table's line says so and names epsilon_any_run; a GNMax-only grid (every
    query answered) has no such line."""
    note = "not a bound (the votes decide that count); epsilon_any_run is the bound for any run"
    confident = cli.sweep(VOTES, *GRID, "--accounting", "data-independent", "-f", "table")
    assert confident.code == 0 and note in confident.out
    plain = cli.sweep(VOTES, "-m", "gnmax", "--sigma", "40,80", "-n", "1000", "-w", "1", "-q",
                      "--accounting", "data-independent", "-f", "table")
    assert plain.code == 0 and note not in plain.out


def test_pareto_notes_a_choice_its_figures_do_not_cover(cli):
    pareto = cli.sweep(VOTES, *GRID[:-1], "--accounting", "data-independent", "--pareto")
    assert pareto.code == 0 and "choosing a row on it is not covered" in pareto.err
    searched = cli.sweep(VOTES, *GRID[:-1], "--accounting", "data-independent", "--pareto",
                         "--tuning", "poisson:5")
    assert "choosing a row on it is not covered" not in searched.err
