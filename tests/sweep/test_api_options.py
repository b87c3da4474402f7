"""``pate_cli.run_sweep`` takes every option ``pate-sweep`` takes (the Python API does what
the command does): each option of the command is a parameter (``COMMAND_ONLY`` lists those
about the command's own output), and each gives the command's rows and refusals."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pandas as pd
import pytest

import pate_cli
from pate_cli.cli.sweep import command
from pate_cli.errors import OptionError, OverBudget
from pate_cli.sweep.api import COMMAND_ONLY
from pate_cli.sweep.columns import GRID_PARAMETERS
from tests.synthetic import synthetic_votes

# pate-sweep's parameter names that run_sweep spells otherwise
RENAMED = {"votes": "files", "student": "students"}


@pytest.fixture
def files(tmp_path):
    votes, truth = synthetic_votes(queries=300)
    np.save(tmp_path / "votes.npy", votes)
    np.save(tmp_path / "labels.npy", truth)
    pd.DataFrame(votes).to_csv(tmp_path / "indexed.csv")  # pandas' index as column 0
    return tmp_path / "votes.npy", tmp_path / "labels.npy", tmp_path / "indexed.csv"


def cli_frame(cli, *args) -> pd.DataFrame:
    result = cli.sweep(*args, "-w", "1", "-q", "--no-progress")
    assert result.code == 0, result.err
    return pd.read_csv(io.StringIO(result.out), keep_default_na=False, na_values=[""])


def same_rows(frame: pd.DataFrame, expected: pd.DataFrame) -> None:
    for column in ("mechanism", "sigma", "epsilon", "answered", "order", "label_accuracy",
                   "sampling", "vote_change"):
        left, right = frame[column].tolist(), expected[column].tolist()
        assert [None if pd.isna(v) else v for v in left] == \
               [None if pd.isna(v) else v for v in right], column


def test_every_option_of_the_command_is_a_parameter():
    """Every option of pate-sweep is a keyword of run_sweep: a field of its SweepSpec."""
    from pate_cli.sweep.api import SweepSpec
    parameters = {item.name for item in dataclasses.fields(SweepSpec)}
    options = [option for option in command.params if option.expose_value]  # not --help
    assert len(options) > 30
    for option in options:
        name = RENAMED.get(option.name, option.name)
        if name in COMMAND_ONLY:
            continue
        assert name in parameters or name in (*GRID_PARAMETERS, "queries"), option.name
    assert "mechanisms" in parameters


def test_sampling_and_vote_change(cli, files):
    votes, labels, _ = files
    frame = pate_cli.run_sweep(str(votes), ["gnmax", "confident"], sigma=[20, 40],
                               accounting="data-independent", sampling="poisson:0.1",
                               vote_change="add", labels=str(labels))
    same_rows(frame, cli_frame(cli, votes, "-m", "gnmax", "-m", "confident", "--sigma",
                               "20,40", "--accounting", "data-independent", "--sampling",
                               "poisson:0.1", "--vote-change", "add", "--labels", labels))
    assert set(frame["sampling"]) == {"poisson:0.1"} and set(frame["vote_change"]) == {"add"}


def test_sampling_refusals_are_the_commands(cli, files):
    votes = str(files[0])
    with pytest.raises(OptionError, match="--sampling needs --accounting data-independent"):
        pate_cli.run_sweep(votes, ["gnmax"], sigma=[20], sampling="poisson:0.1")
    with pytest.raises(OptionError, match="--vote-change applies to sampled voters"):
        pate_cli.run_sweep(votes, ["gnmax"], sigma=[20], vote_change="add")


def test_an_option_no_mechanism_of_the_grid_takes_is_refused(files):
    votes = str(files[0])
    with pytest.raises(OptionError, match=r"^-T/--threshold applies to -m confident, "
                       r"interactive, confident-exponential, not -m gnmax$"):
        pate_cli.run_sweep(votes, ["gnmax"], sigma=[40], threshold=[100])
    with pytest.raises(OptionError, match=r"^--confidence applies to -m interactive, not "
                       r"-m gnmax or -m lnmax$"):
        pate_cli.run_sweep(votes, ["gnmax", "lnmax"], confidence=0.5)


def test_index_col_order_and_screening(cli, files):
    votes, _, indexed = files
    frame = pate_cli.run_sweep(str(indexed), ["confident"], sigma=[30], index_col=0,
                               order=8, screening="gaussian")
    same_rows(frame, cli_frame(cli, indexed, "--sigma", "30", "--index-col", "0",
                               "--order", "8", "--screening", "gaussian"))
    assert frame["order"].tolist() == [8.0]
    plain = pate_cli.run_sweep(str(votes), ["confident"], sigma=[30], order=8,
                               screening="gaussian")
    assert frame["epsilon"].tolist() == plain["epsilon"].tolist()


def test_pareto_and_best(cli, files):
    votes, labels, _ = files
    grid = dict(sigma="10:50:10", labels=str(labels), accounting="data-independent")
    args = (votes, "-m", "gnmax", "--sigma", "10:50:10", "--labels", labels,
            "--accounting", "data-independent")
    same_rows(pate_cli.run_sweep(str(votes), ["gnmax"], pareto=True, **grid),
              cli_frame(cli, *args, "--pareto"))
    best = pate_cli.run_sweep(str(votes), ["gnmax"], best=30.0, **grid)
    expected = cli_frame(cli, *args, "--best", "30")
    same_rows(best, expected)
    assert best["command"].tolist() == expected["command"].tolist()
    assert len(best) == 1 and best["command"][0].startswith("pate-analyze ")
    with pytest.raises(OverBudget, match="no configuration stays within epsilon 0.001"):
        pate_cli.run_sweep(str(votes), ["gnmax"], best=0.001, **grid)


def test_best_reruns_a_sampled_row_with_its_sampling(cli, files):
    votes = files[0]
    best = pate_cli.run_sweep(str(votes), ["gnmax"], sigma=[20, 40], best=1000.0,
                              accounting="data-independent", sampling="poisson:0.1")
    assert "--sampling poisson:0.1 --vote-change move" in best["command"][0]


def test_workers_and_max_points(files):
    votes = str(files[0])
    here = pate_cli.run_sweep(votes, ["gnmax", "lnmax"], sigma=[20, 40], laplace_scale=[5])
    pooled = pate_cli.run_sweep(votes, ["gnmax", "lnmax"], sigma=[20, 40], laplace_scale=[5],
                                workers=2)
    pd.testing.assert_frame_equal(here, pooled)
    with pytest.raises(OptionError, match="the grid has 3 points, more than --max-points 2"):
        pate_cli.run_sweep(votes, ["gnmax"], sigma=[10, 20, 30], max_points=2)


def test_run_sweep_says_it_reads_files_by_path():
    """An array was taken as a list of 500 file names ('--labels was given 10 times for
    500 vote files') or failed in os.fspath."""
    import numpy as np

    import pate_cli
    with pytest.raises(TypeError, match="run_sweep reads vote files by path"):
        pate_cli.run_sweep(np.ones((500, 3)), ["gnmax"], sigma=[30], workers=1)


@pytest.mark.parametrize("args, message", [
    (dict(mechanisms=["gnmax"], sigma=[]), "--sigma: the grid has no values"),
    (dict(mechanisms=["lnmax"], laplace_scale=()), "--laplace-scale: the grid has no values"),
])
def test_an_empty_grid_or_no_file_is_refused(files, args, message):
    """An empty axis made no point and failed inside the planner (IndexError); no file
    gave an empty table: both are refused before any work."""
    with pytest.raises(OptionError, match=message):
        pate_cli.run_sweep(files[0], **args)
    with pytest.raises(OptionError, match="give at least one vote file"):
        pate_cli.run_sweep([], ["gnmax"], sigma=[40])


def test_labels_per_analysed_query_with_a_single_queries(cli, files, tmp_path):
    """With one ``-n N``, ``--labels`` may hold a label per analysed query, as pate-analyze
    takes it; the rows equal those scored with every query's label, with ``--workers 2``
    too (the workers read the short file as the sweep did). With several ``-n``, every
    query's label is needed (a short file would score no row of the larger N)."""
    votes, labels, _ = files
    short = tmp_path / "short.npy"
    np.save(short, np.load(labels)[:120])
    grid = ("-m", "gnmax", "--sigma", "20,40", "-n", "120")
    expected = cli_frame(cli, str(votes), *grid, "--labels", str(labels), "-f", "csv")
    assert expected["label_accuracy"].notna().all()
    same_rows(cli_frame(cli, str(votes), *grid, "--labels", str(short), "-f", "csv"), expected)
    two = cli.sweep(str(votes), *grid, "--labels", str(short), "-f", "csv", "-w", "2", "-q",
                    "--no-progress")
    assert two.code == 0, two.err
    same_rows(pd.read_csv(io.StringIO(two.out), keep_default_na=False, na_values=[""]),
              expected)
    refused = cli.sweep(str(votes), "-m", "gnmax", "--sigma", "20", "-n", "120,150",
                        "--labels", str(short), "-q", "--no-progress")
    assert refused.code == 2
    assert "has 120 labels but" in refused.err


def test_the_api_reads_orders_and_checks_values_as_the_command(cli, files):
    """``orders="32"`` ran the orders 3 and 2 (the text read character by character) and a
    grid text failed; whole-number grids truncated 2.5 to 2; ``best`` and ``delta`` went
    unchecked into obscure errors (review R32). Each now as pate-sweep reads or refuses it."""
    votes, _, _ = files
    grid = dict(sigma=[40], queries=[200])
    for text in ("32", "2:10:2,20"):
        row = pate_cli.run_sweep(str(votes), ["gnmax"], orders=text, **grid).iloc[0]
        command = cli_frame(cli, str(votes), "-m", "gnmax", "--sigma", "40", "-n", "200",
                            "--orders", text, "-f", "csv").iloc[0]
        assert (row["epsilon"], row["order"]) == (command["epsilon"], command["order"])
    assert pate_cli.run_sweep(str(votes), ["gnmax"], orders="32", **grid).iloc[0]["order"] == 32
    refusals = [(dict(queries=[2.5]), "--queries: 2.5 is not a whole number"),
                (dict(best=0), "--best must be a positive number, got 0"),
                (dict(best="2"), "--best must be a positive number, got '2'"),
                (dict(delta=[1e-5, 1e-6]), "--delta must be one number in (0, 1)"),
                (dict(order=1), "--order: every order must be greater than 1")]
    for options, line in refusals:
        with pytest.raises(OptionError) as refused:
            pate_cli.run_sweep(str(votes), ["gnmax"], **{**grid, **options})
        assert str(refused.value).startswith(line), str(refused.value)
