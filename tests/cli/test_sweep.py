"""``pate-sweep`` (cli:pate-sweep): grid options, rows against pate-analyze, workers, Dask,
--best / --pareto, interruption and --resume, output formats. The grid syntax and row
selection alone are in tests/sweep, the per-point totals in tests/analysis/test_totals.py.

Expected rows come from running the analysis itself once per seed (``analyze_votes``)
and averaging in the test, from hand-made tables, or from comparing two execution paths.
"""

from __future__ import annotations

import importlib.util
import io
import itertools
import json
import math
import shlex

import numpy as np
import pandas as pd
import pytest

import pate_cli.sweep.points as sweep_module
from pate_cli.analysis import analyze_votes
from pate_cli.mechanisms import build_mechanism
from pate_cli.sweep.columns import SWEEP_COLUMNS
from pate_cli.sweep.journal import read_journal
from pate_cli.sweep.table import read_sweep_rows, table_bytes
from tests import SAMPLES
from tests.conftest import Result
from tests.synthetic import synthetic_votes

HAS_DASK = importlib.util.find_spec("distributed") is not None
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None


@pytest.fixture
def files(tmp_path):
    votes, truth = synthetic_votes()
    np.save(tmp_path / "votes.npy", votes)
    np.save(tmp_path / "labels.npy", truth)
    return tmp_path / "votes.npy", tmp_path / "labels.npy", votes, truth


def rows_of(result: Result) -> list[dict]:
    assert result.code == 0, result.err
    return pd.read_csv(io.StringIO(result.out), keep_default_na=False,
                       na_values=[""]).to_dict("records")


# --- options ------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--sigma", "20:10:5"], "--sigma"), (["-T", "a,b"], "--threshold"),
    (["--queries", "10.5"], "not a whole number"), (["--sigma", "0,10"], "sigma must be positive"),
    (["--queries", "100000"], "exceeds the 600 queries"), (["-m", "bogus"], "bogus"),
    (["--resume"], "--resume needs --out"), (["-m", "interactive"], "needs --student"),
    (["-o", "/nonexistent/dir/out.csv"], "does not exist"),
    (["-m", "svt", "--svt-scale", "1", "--svt-cutoff", "0,5"],
     "--svt-cutoff takes whole numbers of at least 1 in a sweep (fixed cut-offs; no 'auto')"),
    (["--seed", str(2**63)], "--seed: a sweep's seeds"),
    (["--seed", str(2**63 - 2), "--repeats", "3"], "are at most 2^63 - 1"),
    (["-m", "svt", "--svt-scale", "1", "--orders", "2,8"],  # a grid SVT-PATE would not use
     "--orders and --order do not apply to -m svt"),
    (["-m", "svt", "--svt-scale", "1", "--order", "8"], "do not apply to -m svt"),
])
def test_bad_options_exit_2_with_one_line(cli, files, args, message):
    result = cli.sweep(files[0], *args)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert lines[-1].startswith("Error: ") and message in lines[-1], result.err
    assert "Traceback" not in result.err


def test_standard_input_and_missing_files_are_refused(cli, files, tmp_path):
    assert cli.sweep("-", "--sigma", "10").code == 2
    result = cli.sweep(tmp_path / "nope.npy")
    assert result.code == 2 and "no such file" in result.err


# --- rows ---------------------------------------------------------------------------------

def test_rows_average_the_replays_of_pate_analyze(cli, files):
    path, labels, votes, truth = files
    rows = rows_of(cli.sweep(path, "-m", "confident", "--sigma", "6,9", "-T", "30",
                             "--sigma-threshold", "12", "--repeats", "3", "--seed", "7",
                             "--labels", labels, "-w", "1", "-q"))
    assert [row["sigma"] for row in rows] == [6.0, 9.0]
    for row in rows:
        mechanism = build_mechanism("confident", teachers=50, sigma=row["sigma"],
                                    threshold=30, sigma_threshold=12,
                                    integer_votes=True)  # whole counts, as the sweep finds
        runs = [analyze_votes(votes, mechanism, labels=truth, seed=s) for s in (7, 8, 9)]
        answered = np.array([r.answered_total for r in runs])
        epsilon = np.array([r.epsilon for r in runs])
        accuracy = np.array([r.label_accuracy for r in runs])
        assert row["answered"] == pytest.approx(answered.mean(), rel=1e-15)
        assert row["answered_std"] == pytest.approx(answered.std(ddof=1), rel=1e-12)
        assert row["epsilon"] == pytest.approx(epsilon.mean(), rel=1e-15)
        assert row["epsilon_std"] == pytest.approx(epsilon.std(ddof=1), rel=1e-12)
        assert row["label_accuracy"] == pytest.approx(accuracy.mean(), rel=1e-15)
        assert row["label_accuracy_std"] == pytest.approx(accuracy.std(ddof=1), rel=1e-12)
        assert (row["repeats"], row["seed"], row["queries"], row["teachers"]) == (3, 7, 600, 50)


@pytest.mark.parametrize("mechanism", [
    ("-m", "gnmax", "--sigma", "12"), ("-m", "lnmax", "--laplace-scale", "12"),
    ("-m", "confident", "-T", "30", "--sigma", "8"), ("-m", "exponential"),
    ("-m", "confident-exponential", "-T", "30"),
    ("-m", "confident", "-T", "30", "--sigma", "8", "--screening", "gaussian"),
    # the sweep built Confident-exponential without its threshold step's setting: the
    # continuous exact curve whatever --screening said (data-independent 3.6971 where
    # pate-analyze gives 3.6924 exact and 3.7348 gaussian)
    ("-m", "confident-exponential", "-T", "30", "--screening", "gaussian")])
def test_one_repeat_matches_pate_analyze_json_exactly(cli, files, mechanism):
    path, labels, _, _ = files
    args = (path, *mechanism, "--labels", labels, "--accounting", "expected")
    (row,) = rows_of(cli.sweep(*args, "-w", "1", "-q"))
    summary = json.loads(cli.analyze(*args, "--format", "json").out)
    assert row["epsilon"] == summary["epsilon"]
    assert row["order"] == summary["order"]
    assert row["epsilon_data_independent"] == summary["epsilon_data_independent"]
    assert row["answered"] == summary["answered"]
    assert row["label_accuracy"] == summary["label_accuracy"]
    assert (row["epsilon_std"], row["answered_std"]) == (0.0, 0.0)


@pytest.mark.parametrize("mechanism", [("-m", "gnmax", "--sigma", "12"),
                                       ("-m", "confident", "-T", "30", "--sigma", "8")])
def test_a_data_independent_row_is_pate_analyzes_exact_gaussian_figure(cli, files, mechanism):
    """Under data-independent accounting both report the Gaussian steps' exact figure
    where it is below the RDP one (epsilon_method pld), bit for bit."""
    path, labels, _, _ = files
    args = (path, *mechanism, "--labels", labels, "--accounting", "data-independent")
    (row,) = rows_of(cli.sweep(*args, "-w", "1", "-q"))
    summary = json.loads(cli.analyze(*args, "--format", "json").out)
    assert row["epsilon_method"] == summary["epsilon_method"] == "pld"
    assert row["epsilon"] == summary["epsilon"] < summary["epsilon_rdp"]
    assert row["epsilon_data_independent"] == summary["epsilon_data_independent"]


def test_rows_come_in_grid_order_with_unused_parameters_empty(cli, files):
    path, _, _, _ = files
    rows = rows_of(cli.sweep(path, "-m", "lnmax", "-m", "confident", "-m", "gnmax",
                             "--sigma", "5,10", "-T", "20,30", "--laplace-scale", "3",
                             "--queries", "100,200", "-w", "1", "-q"))
    assert list(rows[0]) == list(SWEEP_COLUMNS)
    expected = [("lnmax", None, None, 3.0, q) for q in (100, 200)]
    expected += [("confident", s, t, None, q)
                 for s, t, q in itertools.product((5.0, 10.0), (20.0, 30.0), (100, 200))]
    expected += [("gnmax", s, None, None, q) for s in (5.0, 10.0) for q in (100, 200)]

    def blank(value):
        return None if isinstance(value, float) and math.isnan(value) else value

    got = [(r["mechanism"], blank(r["sigma"]), blank(r["threshold"]),
            blank(r["laplace_scale"]), r["queries"]) for r in rows]
    assert got == expected
    confident = [r for r in rows if r["mechanism"] == "confident"]
    assert all(r["sigma_threshold"] == 30.0 for r in confident)  # default 0.6 M, M = 50
    for row in rows:
        assert all(math.isnan(row[c]) for c in ("svt_scale", "svt_cutoff", "confidence"))


STUDENT = str(SAMPLES / "mnist_250_student.npy")
DI = ("--accounting", "data-independent")
UNTAKEN = [  # (the grid and options after VOTES, the whole line after "Error: ")
    (["-m", "gnmax", "--sigma", "5", "-T", "100"], "-T/--threshold applies to -m confident, "
     "interactive, confident-exponential, not -m gnmax"),
    (["-m", "gnmax", "--sigma-threshold", "100"], "--sigma-threshold applies to -m "
     "confident, interactive, confident-exponential, not -m gnmax"),
    (["-m", "gnmax", "--laplace-scale", "3", "--sigma", "5"],
     "--laplace-scale applies to -m lnmax, not -m gnmax"),
    (["-m", "gnmax", "--eta", "0.3"],
     "--eta applies to -m exponential, confident-exponential, not -m gnmax"),
    (["-m", "gnmax", "--svt-scale", "3"], "--svt-scale applies to -m svt, not -m gnmax"),
    (["-m", "gnmax", "--svt-cutoff", "3"], "--svt-cutoff applies to -m svt, not -m gnmax"),
    (["-m", "gnmax", "--confidence", "0.5"],
     "--confidence applies to -m interactive, not -m gnmax"),
    (["-m", "gnmax", "--student", STUDENT], "--student only applies to -m interactive"),
    (["-m", "gnmax", "--screening", "gaussian"], "--screening gaussian applies to the "
     "threshold step of -m confident, interactive, confident-exponential, not -m gnmax"),
    (["-m", "lnmax", "--sigma", "40"],
     "--sigma applies to -m gnmax, confident, interactive, not -m lnmax"),
    (["-m", "lnmax", "-m", "svt", "--sigma", "40"],
     "--sigma applies to -m gnmax, confident, interactive, not -m lnmax or -m svt"),
    (["-m", "gnmax", "-m", "lnmax", "--sampling", "poisson:0.5", *DI, "--sampling-steps",
      "independent"], "--sampling-steps independent applies to -m confident (a threshold "
     "step and an answer step that each sample the voters), not -m gnmax"),
]


@pytest.mark.parametrize(("args", "line"), UNTAKEN, ids=[" ".join(c[0])[:40] for c in UNTAKEN])
def test_an_option_no_mechanism_of_the_grid_takes_is_refused(cli, args, line):
    """As pate-analyze refuses it (the same line): it was ignored (a note for a grid)."""
    result = cli.sweep(SAMPLES / "mnist_250_votes.npy", "-n", "300", *args, "-w", "1")
    assert (result.code, result.out) == (2, "")
    assert result.err == f"Error: {line} (see pate-sweep --help)\n"


def test_an_option_one_mechanism_of_the_grid_takes_passes(cli):
    result = cli.sweep(SAMPLES / "mnist_250_votes.npy", "-n", "300", "-m", "gnmax", "-m",
                       "confident", "--sigma", "40", "-T", "100", "--screening", "gaussian",
                       "--sampling", "poisson:0.5", *DI, "--sampling-steps", "independent",
                       "-w", "1", "-q")
    rows = rows_of(result)
    assert [row["mechanism"] for row in rows] == ["gnmax", "confident"]
    assert [row["screening"] for row in rows][1] == "gaussian"
    assert [row["sampling_steps"] for row in rows][1] == "independent"
    assert math.isnan(rows[0]["threshold"]) and rows[1]["threshold"] == 100


def test_several_files_with_their_own_labels(cli, files, tmp_path):
    path, labels, votes, truth = files
    np.save(tmp_path / "other.npy", votes[:300][:, ::-1])
    np.save(tmp_path / "other_labels.npy", 4 - truth[:300])
    rows = rows_of(cli.sweep(path, tmp_path / "other.npy", "-m", "gnmax", "--sigma", "8",
                             "--labels", labels, "--labels", tmp_path / "other_labels.npy",
                             "-w", "1", "-q"))
    assert [row["queries"] for row in rows] == [600, 300]
    assert [row["file"] for row in rows] == [str(path), str(tmp_path / "other.npy")]
    assert rows[1]["label_accuracy"] > 0.5
    assert cli.sweep(path, tmp_path / "other.npy", "--labels", labels, "--labels", labels,
                     "--labels", labels).code == 2


def test_svt_and_interactive_join_the_sweep(cli, files, tmp_path):
    path, labels, votes, truth = files
    student = np.full(votes.shape, 0.02)
    student[np.arange(600), truth] = 1 - 0.02 * 4
    np.save(tmp_path / "student.npy", student)
    rows = rows_of(cli.sweep(path, "-m", "svt", "-m", "interactive", "--svt-scale", "2",
                             "--svt-cutoff", "5,10", "--student", tmp_path / "student.npy",
                             "--labels", labels, "-w", "1", "-q"))
    assert [(r["mechanism"], r["svt_cutoff"]) for r in rows[:2]] == [("svt", 5), ("svt", 10)]
    assert rows[0]["epsilon"] < rows[1]["epsilon"]
    interactive = rows[2]
    assert interactive["confidence"] == 0.9 and math.isnan(interactive["svt_scale"])
    full = analyze_votes(votes, build_mechanism("interactive", teachers=50), labels=truth,
                         student=student)
    assert interactive["epsilon"] == full.epsilon


# --- execution paths ----------------------------------------------------------------------

GRID = ["-m", "confident", "-m", "gnmax", "--sigma", "6:12:3", "-T", "25,35",
        "--repeats", "2", "-q"]


def test_rows_are_identical_for_one_and_two_workers(cli, files, tmp_path):
    path, labels, _, _ = files
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", one).code == 0
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "2", "-o", two).code == 0
    assert one.read_bytes() == two.read_bytes()
    assert len(read_sweep_rows(str(one))) == 9


@pytest.mark.skipif(not HAS_DASK, reason="needs the dask extra (CI installs it)")
def test_a_dask_cluster_gives_the_same_rows(cli, files, tmp_path, dask_timeout):
    from distributed import LocalCluster

    path, labels, _, _ = files
    local, remote = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", local).code == 0
    # One worker process with two threads: the rows still cross a process boundary, and
    # the cluster starts in half the time of two processes.
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=None) as cluster:
        result = cli.sweep(path, *GRID, "--labels", labels, "--scheduler",
                           cluster.scheduler_address, "-o", remote)
    assert result.code == 0, result.err
    assert local.read_bytes() == remote.read_bytes()


def test_an_unreachable_scheduler_is_a_one_line_error(cli, files, dask_timeout):
    if not HAS_DASK:
        result = cli.sweep(files[0], "--scheduler", "tcp://127.0.0.1:9")
        assert result.code == 2 and "pate_cli[dask]" in result.err
        return
    result = cli.sweep(files[0], "--scheduler", "tcp://127.0.0.1:9")
    assert result.code == 2 and "cannot reach the Dask scheduler" in result.err


# --- interruption and resume --------------------------------------------------------------

def failing_after(count: int, error: BaseException, monkeypatch):
    """Make every point after the first ``count`` raise ``error``."""
    real = sweep_module.run_point
    calls = []

    def run_point(point, *memory):
        calls.append(point.index)
        if len(calls) > count:
            raise error
        return real(point, *memory)

    monkeypatch.setattr(sweep_module, "run_point", run_point)


def test_a_failing_task_keeps_the_finished_rows_for_resume_and_out_as_it_was(cli, files,
                                                                            tmp_path,
                                                                            monkeypatch):
    path, labels, _, _ = files
    full, out = tmp_path / "full.csv", tmp_path / "out.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", full).code == 0
    assert cli.sweep(path, "-m", "gnmax", "--sigma", "20", "-w", "1", "-o", out).code == 0
    before = out.read_bytes()  # an earlier run's table: a failed run must not replace it
    failing_after(4, RuntimeError("disk on fire"), monkeypatch)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 1
    assert (f"pate-sweep: stopped: kept 4 of 9 rows in {out}.partial ({out} left as it "
            "was; rerun with --resume to finish)") in result.err
    assert "disk on fire" in result.err
    assert out.read_bytes() == before
    assert read_journal(f"{out}.partial") == read_sweep_rows(str(full))[:4]
    monkeypatch.undo()
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out, "--resume")
    assert result.code == 0
    assert read_sweep_rows(str(out))[:9] == read_sweep_rows(str(full))
    assert not (tmp_path / "out.csv.partial").exists()


def test_a_failing_resumed_run_leaves_out_as_it_was(cli, files, tmp_path, monkeypatch):
    path, labels, _, _ = files
    full, out = tmp_path / "full.csv", tmp_path / "out.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", full).code == 0
    failing_after(3, RuntimeError("disk on fire"), monkeypatch)
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 1
    assert not out.exists()  # no table written by a run that did not finish
    monkeypatch.undo()
    failing_after(3, RuntimeError("disk on fire"), monkeypatch)  # 3 more: 6 of 9
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out, "--resume")
    assert result.code == 1 and not out.exists()
    assert (f"kept 6 of 9 rows in {out}.partial ({out} not written; rerun with --resume "
            "to finish)") in result.err
    monkeypatch.undo()
    full_rows = read_sweep_rows(str(full))
    out.write_bytes(table_bytes(full_rows[:2], path=str(out)))  # an OUT of 2 rows
    before = out.read_bytes()
    failing_after(0, KeyboardInterrupt(), monkeypatch)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out, "--resume")
    assert result.code == 130 and out.read_bytes() == before
    assert (f"interrupted: kept 6 of 9 rows in {out} and {out}.partial ({out} left as it "
            "was; rerun with --resume to finish)") in result.err
    monkeypatch.undo()
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out, "--resume")
    assert result.code == 0 and out.read_bytes() == full.read_bytes()


def test_a_stopped_run_whose_sidecar_cannot_be_written_prints_its_rows(cli, files, tmp_path,
                                                                        monkeypatch):
    path, labels, _, _ = files
    out = tmp_path / "out.csv"
    (tmp_path / "out.csv.partial").mkdir()  # cannot be opened as a file, even by root
    failing_after(2, KeyboardInterrupt(), monkeypatch)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 130 and not out.exists()
    assert len(rows_of(Result(0, result.out, ""))) == 2
    assert result.err.splitlines()[-1] == (
        f"pate-sweep: interrupted: kept 2 of 9 rows on stdout ({out} not written: "
        f"{out}.partial could not be written)")


def test_ctrl_c_keeps_the_finished_rows_and_says_how_many(cli, files, tmp_path, monkeypatch):
    path, labels, _, _ = files
    out = tmp_path / "out.jsonl"
    out.write_text("an earlier table\n")
    failing_after(2, KeyboardInterrupt(), monkeypatch)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 130
    assert "interrupted: kept 2 of 9 rows in" in result.err and "--resume" in result.err
    assert out.read_text() == "an earlier table\n"
    rows = read_journal(f"{out}.partial")
    assert [(r["mechanism"], r["sigma"], r["threshold"]) for r in rows] == [
        ("confident", 6.0, 25.0), ("confident", 6.0, 35.0)]


def test_resume_keeps_rows_of_other_grids_and_runs_only_missing_points(cli, files, tmp_path,
                                                                      monkeypatch):
    path, labels, _, _ = files
    out = tmp_path / "out.csv"
    assert cli.sweep(path, "-m", "gnmax", "--sigma", "20", "-w", "1", "-o", out, "-q").code == 0
    assert cli.sweep(path, "-m", "gnmax", "--sigma", "5,10", "-w", "1", "-o", out, "-q",
                     "--resume").code == 0
    calls = []
    real = sweep_module.run_point
    monkeypatch.setattr(sweep_module, "run_point",
                        lambda point, *memory: calls.append(point) or real(point, *memory))
    result = cli.sweep(path, "-m", "gnmax", "--sigma", "5,10,15", "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0 and f"reused 2 of 3 rows from {out}; computing 1" in result.err
    assert [dict(p.params)["sigma"] for p in calls] == [15.0]
    assert [row["sigma"] for row in read_sweep_rows(str(out))] == [5.0, 10.0, 15.0, 20.0]


def test_resume_refuses_a_file_that_is_not_a_sweep_table(cli, files, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("a,b\n1,2\n")
    result = cli.sweep(files[0], "-o", out, "--resume")
    assert result.code == 2 and "not a pate-sweep table" in result.err
    assert out.read_text() == "a,b\n1,2\n"


# --- choosing rows ------------------------------------------------------------------------

def test_best_prints_a_command_that_reproduces_the_row(cli, files, monkeypatch, tmp_path):
    path, labels, _, _ = files
    monkeypatch.chdir(tmp_path)
    result = cli.sweep("votes.npy", "-m", "gnmax", "-m", "confident", "--sigma", "6:15:3",
                       "-T", "25,35", "--labels", "labels.npy", "--best", "15", "-w", "1")
    assert result.code == 0, result.err
    (row,) = rows_of(result)
    assert row["epsilon"] <= 15
    command = row["command"]
    assert command in result.err
    words = shlex.split(command)
    assert words[0] == "pate-analyze"
    summary = json.loads(cli.analyze(*words[1:], "--format", "json").out)
    assert summary["epsilon"] == row["epsilon"]
    assert summary["label_accuracy"] == row["label_accuracy"]


def test_best_with_repeats_holds_every_replay_within_the_limit(cli, files, monkeypatch,
                                                                tmp_path):
    """With --repeats the chosen row's largest epsilon is within EPS, so its command holds
    at any of its seeds (its mean alone is not enough: one replay can be above)."""
    monkeypatch.chdir(tmp_path)
    grid = ["votes.npy", "-T", "25,30,35,40", "--sigma-threshold", "20", "--sigma", "8",
            "--repeats", "4", "-w", "1", "-q"]
    rows = rows_of(cli.sweep(*grid))
    limit = max(row["epsilon"] for row in rows if row["epsilon_max"] > row["epsilon"])
    assert any(row["epsilon"] <= limit < row["epsilon_max"] for row in rows)  # a mean within
    (row,) = rows_of(result := cli.sweep(*grid, "--best", f"{limit!r}"))
    assert row["epsilon_max"] <= limit and "the largest of its 4 replays" in result.err
    assert "by answered (means over its 4 replays): " in result.err
    # the printed command reruns the first replay: the line says so (review R42)
    assert "; the command reruns the first, seed 0)" in result.err and "--seed 0" in result.err
    table = cli.sweep(*grid, "-f", "table").out.splitlines()
    assert "epsilon_max" in table[0] and (  # which columns are means, and the max
        "answered, epsilon, epsilon_data_independent, labels_output: means over each row's "
        "replays (repeats); epsilon_max the largest replay's (what --best holds within its "
        "limit)") in table
    assert table[-1].startswith("epsilon_data_independent (replay and expected rows with a "
                                "selection step or a budget): the run's answers' figure")
    words = shlex.split(row["command"])
    for seed in range(4):
        summary = json.loads(cli.analyze(*words[1:], "--seed", str(seed), "-f", "json").out)
        assert summary["epsilon"] <= limit


def test_best_with_nothing_within_the_limit_exits_3(cli, files):
    result = cli.sweep(files[0], "-m", "gnmax", "--sigma", "5", "--best", "0.01", "-w", "1", "-q")
    assert result.code == 3 and "no configuration stays within epsilon 0.01" in result.err


def test_pareto_option_filters_the_output(cli, files):
    path, labels, _, _ = files
    everything = rows_of(cli.sweep(path, *GRID, "--labels", labels, "-w", "1"))
    frontier = rows_of(cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "--pareto"))
    assert 0 < len(frontier) < len(everything)
    best_accuracy = max(row["label_accuracy"] for row in everything)
    assert any(row["label_accuracy"] == best_accuracy for row in frontier)
    smallest = min(row["epsilon"] for row in everything)
    assert any(row["epsilon"] == smallest for row in frontier)


# --- formats ------------------------------------------------------------------------------

@pytest.mark.parametrize("extension", [
    ".csv", ".json", ".jsonl",
    pytest.param(".parquet", marks=pytest.mark.skipif(not HAS_PYARROW, reason="pyarrow")),
])
def test_tables_read_back_exactly_as_written(cli, files, tmp_path, extension):
    path, labels, _, _ = files
    out = tmp_path / f"out{extension}"
    result = cli.sweep(path, "-m", "lnmax", "-m", "confident", "--sigma", "7", "--repeats", "2",
                       "--labels", labels, "-w", "1", "-q", "-o", out)
    assert result.code == 0 and result.out == ""
    rows = read_sweep_rows(str(out))
    again = tmp_path / f"again{extension}"
    again.write_bytes(table_bytes(rows, path=str(again)))
    assert again.read_bytes() == out.read_bytes()
    assert rows[0]["sigma"] is None and rows[1]["laplace_scale"] is None
    assert isinstance(rows[1]["queries"], int) and rows[1]["seed"] == 0
    assert len(rows[0]["sha256"]) == 64 and rows[0]["version"]


def test_same_seed_gives_byte_identical_output(cli, files):
    path, labels, _, _ = files
    first = cli.sweep(path, *GRID, "--labels", labels, "-w", "1")
    second = cli.sweep(path, *GRID, "--labels", labels, "-w", "1")
    assert first.out == second.out and first.code == 0
    other = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "--seed", "1")
    assert other.out != first.out


def test_table_and_json_formats_on_stdout(cli, files):
    path = files[0]
    table = cli.sweep(path, "-m", "gnmax", "--sigma", "5,10", "-f", "table", "-w", "1", "-q")
    assert table.code == 0 and "mechanism" in table.out.splitlines()[0]
    assert "laplace_scale" not in table.out  # empty columns are left out
    assert "epsilon_max" not in table.out  # one replay a row: epsilon itself
    assert "means over" not in table.out
    assert table.out.splitlines()[-1] == (  # the replay's epsilon says what it is
        "epsilon: replay accounting, data-dependent and unsanitised: not for publication "
        "(pate-analyze prints a point's publishable bound)")
    independent = cli.sweep(path, "-m", "gnmax", "--sigma", "5,10", "-f", "table", "-w", "1",
                            "-q", "--accounting", "data-independent")
    assert "unsanitised" not in independent.out
    lines = cli.sweep(path, "-m", "gnmax", "--sigma", "5,10", "-f", "json", "-w", "1",
                      "-q").out.splitlines()
    assert [json.loads(line)["sigma"] for line in lines] == [5.0, 10.0]


def test_grid_size_is_announced_on_stderr(cli, files):
    result = cli.sweep(files[0], "-m", "gnmax", "--sigma", "5:25:5", "--repeats", "3", "-w", "1")
    assert "pate-sweep: 5 points x 3 repeats" in result.err
    one = cli.sweep(files[0], "-m", "gnmax", "--sigma", "5", "-w", "1", "-o",
                    files[0].with_name("one.csv"))
    assert "pate-sweep: 1 point x 1 repeat" in one.err and "wrote 1 row to" in one.err


def test_unknown_output_extension_leaves_nothing(cli, files, tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_module, "run_point", None)  # refused before any point runs
    result = cli.sweep(files[0], "-o", tmp_path / "out.xlsx", "-w", "1", "-q")
    assert result.code == 2 and "unknown extension" in result.err
    assert not list(tmp_path.glob("out*"))


def test_the_installed_script_runs(cli, files, tmp_path):
    import subprocess

    script = cli.script("pate-sweep")
    done = subprocess.run([script, str(files[0]), "-m", "gnmax", "--sigma", "5", "-q"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("file,mechanism,sigma")


def test_the_python_api_gives_the_command_line_rows(cli, files):
    import pate_cli

    path, labels, _, _ = files
    frame = pate_cli.run_sweep(str(path), ["gnmax", "lnmax"], sigma="5:10:5",
                               laplace_scale=[3], labels=str(labels), repeats=2,
                               queries=(100, 600))
    rows = rows_of(cli.sweep(path, "-m", "gnmax", "-m", "lnmax", "--sigma", "5,10",
                             "--laplace-scale", "3", "--labels", labels, "--repeats", "2",
                             "--queries", "100,600", "-w", "1", "-q"))
    assert list(frame.columns) == list(SWEEP_COLUMNS)
    assert frame["epsilon"].tolist() == [row["epsilon"] for row in rows]
    assert frame["label_accuracy"].tolist() == [row["label_accuracy"] for row in rows]
    with pytest.raises(TypeError, match="unknown grid parameters: sigma2"):
        pate_cli.run_sweep(str(path), sigma2=[1])


def test_forced_progress_on_a_pipe_prints_lines(cli, files):
    result = cli.sweep(files[0], "-m", "gnmax", "--sigma", "1:10:1", "--progress", "-w", "1")
    assert result.code == 0
    assert "pate-sweep: 1/10 points (10%)" in result.err
    assert "pate-sweep: 10/10 points (100%)" in result.err
    quiet = cli.sweep(files[0], "-m", "gnmax", "--sigma", "1:10:1", "-w", "1")
    assert "points (" not in quiet.err


def test_pate_plot_tradeoff_reads_a_real_sweep_table_and_its_delta(cli, files, tmp_path,
                                                                   monkeypatch):
    import pate_cli.outputs.figures as plots

    path, labels, _, _ = files
    table = tmp_path / "sweep.csv"
    assert cli.sweep(path, "-m", "gnmax", "-m", "lnmax", "--sigma", "5,10", "--laplace-scale",
                     "3,6", "--labels", labels, "--delta", "1e-6", "-w", "1", "-q",
                     "-o", table).code == 0
    seen = {}
    real = plots.tradeoff_figure

    def spy(frame, **options):
        seen.update(options, rows=len(frame))
        return real(frame, **options)

    monkeypatch.setattr(plots, "tradeoff_figure", spy)
    assert cli.plot("tradeoff", table, "-o", tmp_path / "t.png").code == 0
    assert seen["delta"] == 1e-6 and seen["rows"] == 4
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resume_after_an_interruption_that_kept_no_rows(cli, files, tmp_path, monkeypatch):
    path, labels, _, _ = files
    out = tmp_path / "out.csv"
    failing_after(0, KeyboardInterrupt(), monkeypatch)
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 130
    assert not out.exists() and (tmp_path / "out.csv.partial").read_bytes() == b""
    monkeypatch.undo()
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out, "--resume")
    assert result.code == 0 and len(read_sweep_rows(str(out))) == 9
    assert "Warning" not in result.err


def test_pate_plot_tradeoff_reads_a_json_lines_sweep_table(cli, files, tmp_path):
    path, labels, _, _ = files
    table = tmp_path / "sweep.jsonl"
    assert cli.sweep(path, "-m", "gnmax", "--sigma", "5,10", "--labels", labels, "-w", "1", "-q",
                     "-o", table).code == 0
    assert cli.plot("tradeoff", table, "-o", tmp_path / "t.png").code == 0




def test_sweep_budget_holds_in_every_accounting(cli, tmp_path):
    from tests import SAMPLES

    for accounting in ("replay", "expected", "data-independent"):
        out = tmp_path / f"{accounting}.csv"
        result = cli.sweep(SAMPLES / "mnist_250_votes.npy", "-m", "gnmax", "--sigma", "30,50",
                           "-n", 800, "--budget", 1.5, "--accounting", accounting,
                           "--workers", 1, "--out", out)
        assert result.code == 0, result.err
        import pandas as pd

        table = pd.read_csv(out)
        assert (table["epsilon"] <= 1.5).all()
        assert (table["answered"] < 800).all()


@pytest.mark.parametrize("args, message", [
    (["-n", "0,50"], "Invalid value for '-n' / '--queries': 0 is below 1"),
    (["-m", "svt", "--budget", "1"], "--budget does not apply to -m svt"),
    (["-m", "gnmax", "-m", "svt", "--budget", "1"], "--budget does not apply to -m svt"),
])
def test_refused_before_any_work_as_pate_analyze_refuses(cli, files, tmp_path, args, message):
    out = tmp_path / "rows.csv"
    result = cli.sweep(files[0], *args, "-w", "1", "-q", "--out", out)
    assert result.code == 2 and message in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not out.exists() and not (tmp_path / "rows.csv.partial").exists()
