"""The first hour of a new user: grouped help, --version, input hints, short labels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pate_cli

SECTIONS = ("Input:", "Mechanism:", "Accounting:", "Budget & CI:", "Outputs:",
            "Individualized PATE:", "Smooth sensitivity:")


@pytest.fixture
def votes(tmp_path_factory):
    rng = np.random.default_rng(7)
    return rng.multinomial(50, [0.6, 0.2, 0.1, 0.1], size=300)


def test_analyze_help_has_sections_and_fits(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = cli.analyze("-h")
    assert result.code == 0
    for title in SECTIONS:
        assert f"\n  {title}" in result.out, title
    lines = result.out.splitlines()
    assert len(lines) < 100
    assert max(map(len, lines)) <= 100
    assert "_PATE_ANALYZE_COMPLETE=bash_source pate-analyze" in result.out


@pytest.mark.parametrize("command", ["analyze", "sweep", "plot"])
def test_version(cli, command):
    result = getattr(cli, command)("--version")
    assert result.code == 0
    assert result.out == f"pate-{command} {pate_cli.__version__}\n"


@pytest.mark.parametrize("kind", ["history", "groups", "tradeoff", "selection", "partition",
                                  "tradeoff-curve"])
def test_every_plot_kind_takes_version(cli, kind):
    """Every command takes --version, pate-plot's kinds too."""
    result = cli.plot(kind, "--version")
    assert (result.code, result.out) == (0, f"pate-plot {pate_cli.__version__}\n")


@pytest.mark.parametrize("command", ["sweep", "plot"])
def test_completion_line_in_every_help(cli, command):
    result = getattr(cli, command)("-h")
    variable = f"_PATE_{command.upper()}_COMPLETE=bash_source pate-{command}"
    assert result.code == 0 and variable in result.out


def test_sweep_mechanism_is_case_insensitive(cli, votes, tmp_path):
    path = tmp_path / "v.npy"
    np.save(path, votes)
    upper = cli.sweep(path, "-m", "GNMax", "--sigma", "40", "-w", "1", "-q")
    lower = cli.sweep(path, "-m", "gnmax", "--sigma", "40", "-w", "1", "-q")
    assert upper.code == 0, upper.err
    assert upper.out == lower.out


def test_pandas_index_column_hint_and_index_col(cli, votes, tmp_path):
    indexed = tmp_path / "indexed.csv"
    pd.DataFrame(votes).to_csv(indexed)  # index and the header ",0,1,2,3"
    plain = tmp_path / "plain.npy"
    np.save(plain, votes)
    refused = cli.analyze(indexed)
    assert refused.code == 2
    assert refused.err.count("\n") == 1
    assert ("is the header pandas writes above an index column: --index-col 0 drops it"
            in refused.err)
    dropped = cli.analyze(indexed, "--index-col", "0", "-f", "json")
    reference = cli.analyze(plain, "-f", "json")
    assert dropped.code == 0, dropped.err
    assert json.loads(dropped.out)["epsilon"] == json.loads(reference.out)["epsilon"]
    # the API takes the same keyword
    assert pate_cli.analyze(str(indexed), index_col=0).epsilon == json.loads(
        reference.out)["epsilon"]


def test_index_col_outside_the_columns_and_on_npy(cli, votes, tmp_path):
    path = tmp_path / "v.csv"
    pd.DataFrame(votes).to_csv(path, index=False, header=False)
    outside = cli.analyze(path, "--index-col", "9")
    assert outside.code == 2 and "--index-col 9 is outside its 4 column(s)" in outside.err
    npy = tmp_path / "v.npy"
    np.save(npy, votes)
    binary = cli.analyze(npy, "--index-col", "0")
    assert binary.code == 2 and "--index-col applies to CSV/TSV inputs" in binary.err
    # .npy votes with a CSV labels file written with pandas' index: the hint's --index-col
    # drops that file's index (it was refused: the votes are not CSV)
    labels = tmp_path / "labels.csv"
    pd.Series(np.argmax(votes, axis=1)).to_csv(labels)
    hinted = cli.analyze(npy, "--labels", labels)
    assert hinted.code == 2 and "--index-col 0 drops it" in hinted.err
    dropped = cli.analyze(npy, "--labels", labels, "--index-col", "0", "-f", "json")
    assert dropped.code == 0, dropped.err
    plain = tmp_path / "labels.npy"
    np.save(plain, np.argmax(votes, axis=1))
    reference = cli.analyze(npy, "--labels", plain, "-f", "json")
    assert json.loads(dropped.out)["label_accuracy"] == json.loads(reference.out)[
        "label_accuracy"] is not None
    assert cli.analyze(npy, "--labels", npy, "--index-col", "0").code == 2


def test_pandas_numbered_header_hint(cli, votes, tmp_path):
    path = tmp_path / "v.csv"
    pd.DataFrame(votes).to_csv(path, index=False)  # header line 0,1,2,3
    result = cli.analyze(path)
    assert result.code == 2 and "looks like pandas' column names" in result.err


def test_labels_for_just_the_analysed_rows(cli, votes, tmp_path):
    path = tmp_path / "v.npy"
    np.save(path, votes)
    truth = votes.argmax(axis=1)
    truth[::7] = (truth[::7] + 1) % 4  # some wrong labels, so accuracy is not 1
    full, short = tmp_path / "y.npy", tmp_path / "y100.npy"
    np.save(full, truth)
    np.save(short, truth[:100])
    runs = [cli.analyze(path, "-n", "100", "--labels", labels, "-f", "json")
            for labels in (full, short)]
    assert all(run.code == 0 for run in runs), [run.err for run in runs]
    summaries = [json.loads(run.out) for run in runs]
    summaries[0].pop("inputs", None), summaries[1].pop("inputs", None)
    accuracy = [summary["label_accuracy"] for summary in summaries]
    assert accuracy[0] == accuracy[1] and 0 < accuracy[0] < 1
    wrong = cli.analyze(path, "-n", "50", "--labels", short)
    assert wrong.code == 2
    assert wrong.err == (f"Error: --labels {short}: has 100 labels but {path} has 300 "
                         "queries and --queries is 50 (give 300 labels, or 50 for the "
                         "analysed rows)\n")
    # rows picked by --query-indices need one label per row of the votes
    indices = tmp_path / "rows.txt"
    indices.write_text("5\n3\n1\n")
    picked = cli.analyze(path, "--query-indices", indices, "-n", "2", "--labels", short)
    assert picked.code == 2 and "has 100 labels" in picked.err


def test_sweep_help_has_sections(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    result = cli.sweep("-h")
    assert result.code == 0
    for title in ("Grid:", "Input:", "Accounting:", "Run:", "Outputs and selection:"):
        assert f"\n  {title}" in result.out, title
