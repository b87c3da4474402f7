"""Warnings reach the user as one ``Warning:`` line each, never as Python's warning text,
and the Python API issues them as ``PateWarning`` (issue: layered package, item 5)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import pate_cli

ROOT = Path(__file__).resolve().parents[2]
MNIST = "sample_votes/mnist_250_votes.npy"


def run(command: str, *args: str) -> subprocess.CompletedProcess:
    """A console script in a fresh interpreter, so real stderr (warnings included) is seen."""
    code = f"from pate_cli.cli.{command} import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)


def no_python_warning_text(stderr: str) -> None:
    for line in stderr.splitlines():
        assert not line.startswith(" "), f"raw warning source line: {line!r}"
        assert ".py:" not in line, f"raw Python warning: {line!r}"


def test_analyze_prints_each_note_once_as_a_warning_line():
    done = run("analyze", MNIST, "-n", "300", "-m", "gnmax", "--sigma", "5000")
    assert done.returncode == 0
    no_python_warning_text(done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith("Warning: ")]
    assert lines == ["Warning: the best order 500 is the last of the grid; a wider --orders "
                     "grid may give a smaller epsilon"]


def test_sweep_prints_each_kind_once_with_the_points_it_concerns():
    done = run("sweep", MNIST, "-m", "gnmax", "--sigma", "40,5000,8000", "-n", "300",
               "--workers", "2", "--no-progress")
    assert done.returncode == 0, done.stderr
    no_python_warning_text(done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.startswith("Warning: ")]
    assert lines == ["Warning: the best order 500 is the last of the grid; a wider --orders "
                     "grid may give a smaller epsilon (2 of 3 points)"]


def test_the_api_issues_notes_as_pate_warnings_and_keeps_them_on_the_result():
    votes = np.load(ROOT / MNIST)[:200]
    with pytest.warns(pate_cli.OrderGridWarning, match="last of the grid"):
        result = pate_cli.analyze(votes, "gnmax", sigma=5000)
    assert result.warnings and "last of the grid" in result.warnings[0]
    # The core analysis only records notes; it never warns by itself.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        core = pate_cli.analyze_votes(votes, pate_cli.GNMax(sigma=5000))
    assert core.warnings == result.warnings


def test_extreme_parameters_meet_no_floating_point_warning():
    # (max votes - T) / sigma1 overflows to -inf: never answered, which is exact
    done = run("analyze", MNIST, "-n", "300", "--sigma", "1e-9", "--sigma-threshold", "1e-9",
               "-T", "1e300")
    assert done.returncode == 0, done.stderr
    assert "answered          0 of 300 queries" in done.stdout
    assert "threshold=1e+300" in done.stdout  # not 301 digits
    assert "floating-point" not in done.stderr and "encountered" not in done.stderr


def test_a_numpy_floating_point_warning_is_one_line_that_says_what_it_means(capsys):
    from pate_cli.cli.errors import reported_warnings

    with reported_warnings(), np.errstate(over="warn"):
        np.array([1e300]) * np.array([1e300])
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["Warning: a computation met a floating-point limit (overflow "
                     "encountered in multiply): the parameters or votes are extreme; check "
                     "the figures (inf, nan or 0) before using them"]


def test_a_resource_warning_of_the_garbage_collector_is_not_the_runs_warning(capsys):
    """A socket someone else left open, freed during a command, says nothing about it."""
    import warnings

    from pate_cli.cli.errors import reported_warnings

    with reported_warnings():
        warnings.warn("unclosed <socket.socket fd=24>", ResourceWarning, stacklevel=1)
        warnings.warn("an order at the edge of the grid", UserWarning, stacklevel=1)
    assert capsys.readouterr().err == "Warning: an order at the edge of the grid\n"


def test_a_warning_naming_a_path_with_a_newline_stays_one_line(cli, tmp_path):
    """``-o $'x\\ny.json'`` split the ``Warning:`` line in two (review R32)."""
    output = tmp_path / "x\ny.json"
    result = cli.analyze(MNIST, "-n", "50", "-o", str(output))
    assert result.code == 0, result.err
    assert result.err.count("\n") == 1 and result.err.startswith("Warning: -o ")
    assert "x y.json is written as a table" in result.err


@pytest.mark.parametrize("command", ["analyze", "calibrate", "audit"])
def test_an_output_path_ending_in_a_slash_is_no_file(cli, tmp_path, command):
    """``-o results/`` wrote a regular file named ``results`` (review R32); ``-o ""`` said
    ``: cannot write: Is a directory``."""
    options = {"analyze": ["-n", "50"],
               "calibrate": ["-m", "gnmax", "--target-epsilon", "2", "-n", "50"],
               "audit": ["-m", "gnmax", "--sigma", "40", "--draws", "1000"]}[command]
    folder = tmp_path / "results"
    result = getattr(cli, command)(MNIST, *options, "-o", f"{folder}/")
    assert result.code == 2
    assert result.err.startswith(f"Error: {folder}/: cannot write: no such directory")
    assert not folder.exists()
    empty = getattr(cli, command)(MNIST, *options, "-o", "")
    assert empty.code == 2 and "an empty output path" in empty.err


@pytest.mark.parametrize("command", ["analyze", "calibrate", "audit"])
@pytest.mark.parametrize("suffix", [".json", ".CSV", ".parquet"])
def test_a_data_file_name_for_a_table_summary_is_warned_of(cli, tmp_path, command, suffix):
    """``-o run.csv`` (or .json, .parquet) without ``-f json`` is written as the text table the
    contract says, with one ``Warning:`` line; pate-calibrate and pate-audit said nothing and
    pate-analyze only for .json (review R37). ``-f json`` or a text name: no warning."""
    options = {"analyze": ["-n", "50"],
               "calibrate": ["-m", "gnmax", "--target-epsilon", "2", "-n", "50"],
               "audit": ["-m", "gnmax", "--sigma", "40", "--draws", "1000"]}[command]
    run = getattr(cli, command)
    target = tmp_path / f"run{suffix}"
    result = run(MNIST, *options, "-o", target)
    assert result.code == 0, result.err
    assert result.err == f"Warning: -o {target} is written as a table (give -f json for JSON)\n"
    assert not target.read_text().startswith("{")
    assert run(MNIST, *options, "-f", "json", "-o", target).err == ""
    assert run(MNIST, *options, "-o", tmp_path / "run.txt").err == ""
