"""``pate-analyze`` against its contract (cli:pate-analyze).

The command runs through ``pate_cli.cli.analyze.main`` (the console-script entry point,
which raises ``SystemExit`` with the real exit status) with stdout/stderr captured, and
once more as the installed script in a subprocess. Expected values come from the
hand-made vote file (known totals, pluralities) or from parsing the outputs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pate_cli.analysis.api as analyze_module
from pate_cli._version import __version__
from pate_cli.rounding import ceil_text
from tests import ROOT
from tests.conftest import Result

# 20 queries x 3 classes, every row sums to 10 teachers.
VOTES = [
    [10, 0, 0], [0, 10, 0], [0, 0, 10], [9, 1, 0], [1, 9, 0],
    [0, 1, 9], [8, 1, 1], [1, 8, 1], [1, 1, 8], [7, 2, 1],
    [2, 7, 1], [1, 2, 7], [6, 3, 1], [3, 6, 1], [5, 5, 0],
    [4, 3, 3], [3, 4, 3], [3, 3, 4], [5, 0, 5], [4, 4, 2],
]
# Plurality count and class (first class on ties) of each row, written out by hand.
PLURALITY = [10, 10, 10, 9, 9, 9, 8, 8, 8, 7, 7, 7, 6, 6, 5, 4, 4, 4, 5, 4]
PLURALITY_CLASS = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 0, 0, 1, 2, 0, 0]
PER_QUERY_COLUMNS = [
    "query", "plurality", "plurality_class", "answered", "label", "log_q", "log_pr_answered",
    "rdp_selection", "rdp_answer", "epsilon", "epsilon_cumulative", "order_cumulative",
]
HINT = " (see pate-analyze --help)"


def csv_text(rows, header=None, sep=","):
    lines = [sep.join(header)] if header else []
    lines += [sep.join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


@pytest.fixture
def votes_csv(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text(csv_text(VOTES))
    return path


@pytest.fixture
def votes_npy(tmp_path):
    path = tmp_path / "votes.npy"
    np.save(path, np.array(VOTES, dtype=np.int64))
    return path


def one_line_error(result: Result) -> str:
    """The single stderr line of a failed run (no traceback)."""
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("Error: ")
    return lines[0]


def run_json(cli, *args) -> dict:
    result = cli.analyze(*args, "--format", "json")
    assert result.code == 0, result.err
    return json.loads(result.out)


# --- summary formats ----------------------------------------------------------------------

def test_json_has_every_key_of_the_contract(cli, votes_csv):
    summary = run_json(cli, votes_csv)
    for key in ("tool", "version", "input", "mechanism", "params", "accounting", "conversion",
                "delta", "seed", "queries", "answered", "epsilon", "order",
                "epsilon_data_independent", "rdp_at_order", "label_accuracy", "budget",
                "smooth_sensitivity", "svt", "groups"):
        assert key in summary, key
    assert set(summary["input"]) >= {"path", "sha256", "queries", "classes", "teachers"}
    assert set(summary["rdp_at_order"]) >= {"selection", "answer"}


def test_json_values(cli, votes_csv):
    summary = run_json(cli, votes_csv)
    assert summary["tool"] == "pate-analyze"
    assert summary["version"] == __version__
    assert summary["input"] == {
        "path": str(votes_csv),
        "sha256": hashlib.sha256(votes_csv.read_bytes()).hexdigest(),
        "queries": 20, "classes": 3, "teachers": 10,
    }
    assert summary["read"] == {"predictions": False, "predictions_layout": None,
                               "classes": None, "columns": None, "index_col": None}
    # defaults of cli:json relative to M = 10: T = 0.8 M, sigma1 = 0.6 M, sigma2 = 0.16 M
    assert summary["mechanism"] == "confident"
    assert summary["params"].pop("screening") == "exact"  # math:screening's curve, the default
    assert summary["params"] == pytest.approx(
        {"threshold": 8.0, "sigma_threshold": 6.0, "sigma": 1.6})
    assert (summary["accounting"], summary["conversion"]) == ("replay", "classic")
    assert (summary["delta"], summary["seed"], summary["queries"]) == (1e-5, 0, 20)
    for key in ("label_accuracy", "budget", "smooth_sensitivity", "svt", "groups"):
        assert summary[key] is None, key
    assert 0 <= summary["answered"] <= 20
    assert 0 < summary["epsilon"] <= summary["epsilon_data_independent"]
    assert summary["order"] > 1


def test_answered_is_int_for_replay_and_float_for_expected(cli, votes_csv):
    replay = run_json(cli, votes_csv)
    expected = run_json(cli, votes_csv, "--accounting", "expected")
    assert type(replay["answered"]) is int
    assert type(expected["answered"]) is float
    assert 0 < expected["answered"] < 20


def test_table_is_a_few_aligned_lines_with_epsilon(cli, votes_csv):
    summary = run_json(cli, votes_csv)
    result = cli.analyze(votes_csv)
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    assert 3 <= len(lines) <= 15
    starts = {re.search(r"\S\s{2,}(\S)", line).start(1) for line in lines}
    assert len(starts) == 1, "values do not start in one column"
    epsilon_line = next(line for line in lines if line.startswith("epsilon "))
    assert ceil_text(summary['epsilon']) in epsilon_line
    answered_line = next(line for line in lines if line.startswith("answered "))
    assert f"{summary['answered']} of 20" in answered_line


def test_table_is_the_default_format(cli, votes_csv):
    assert cli.analyze(votes_csv).out == cli.analyze(votes_csv, "--format", "table").out


def test_csv_is_one_header_and_one_row(cli, votes_csv):
    summary = run_json(cli, votes_csv)
    result = cli.analyze(votes_csv, "--format", "csv")
    assert result.code == 0
    assert len(result.out.splitlines()) == 2
    frame = pd.read_csv(io.StringIO(result.out))
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["epsilon"] == pytest.approx(summary["epsilon"], rel=1e-12)
    assert row["answered"] == summary["answered"]
    assert row["tool"] == "pate-analyze"
    assert row["input.sha256"] == summary["input"]["sha256"]


def test_markdown_is_a_table(cli, votes_csv):
    summary = run_json(cli, votes_csv)
    result = cli.analyze(votes_csv, "-f", "markdown")
    assert result.code == 0
    lines = result.out.splitlines()
    assert re.fullmatch(r"\|\s*-+\s*\|\s*-+\s*\|", lines[1].replace(":", ""))
    for line in lines:
        assert line.startswith("|") and line.endswith("|")
        assert line.count("|") == 3
    epsilon_row = next(line for line in lines if re.match(r"\|\s*epsilon\s*\|", line))
    assert ceil_text(summary['epsilon']) in epsilon_row


# --- per-query table ----------------------------------------------------------------------

def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_per_query_csv(cli, votes_csv, tmp_path, accounting):
    target = tmp_path / "q.csv"
    summary = run_json(cli, votes_csv, "--accounting", accounting, "--per-query", target)
    header = target.read_text().splitlines()[0]
    assert header.split(",") == PER_QUERY_COLUMNS
    frame = pd.read_csv(target)
    assert list(frame["query"]) == list(range(20))
    assert list(frame["plurality"]) == PLURALITY
    assert list(frame["plurality_class"]) == PLURALITY_CLASS
    assert frame["epsilon_cumulative"].iloc[-1] == pytest.approx(summary["epsilon"], rel=1e-12)
    assert frame["order_cumulative"].iloc[-1] == summary["order"]
    assert frame["rdp_selection"].sum() == pytest.approx(summary["rdp_at_order"]["selection"])
    assert frame["rdp_answer"].sum() == pytest.approx(summary["rdp_at_order"]["answer"])
    assert frame["answered"].sum() == pytest.approx(summary["answered"])
    assert (frame["epsilon_cumulative"].diff().dropna() >= -1e-12).all()
    if accounting == "replay":
        assert set(frame["answered"]) <= {0, 1}
        assert frame["label"].isna().tolist() == (frame["answered"] == 0).tolist()
        labelled = frame["label"].dropna()
        assert labelled.between(0, 2).all() and (labelled == labelled.round()).all()
    else:
        # cli:pate-analyze: answered is pr_answered in expected accounting
        assert np.allclose(frame["answered"], np.exp(frame["log_pr_answered"]))


def test_per_query_jsonl(cli, votes_csv, tmp_path):
    csv_target, jsonl_target = tmp_path / "q.csv", tmp_path / "q.jsonl"
    summary = run_json(cli, votes_csv, "--per-query", jsonl_target)
    cli.analyze(votes_csv, "--per-query", csv_target)
    records = read_jsonl(jsonl_target)
    assert len(records) == 20
    for index, record in enumerate(records):
        assert list(record) == PER_QUERY_COLUMNS
        assert record["query"] == index
        assert record["plurality"] == PLURALITY[index]
        assert record["plurality_class"] == PLURALITY_CLASS[index]
        assert record["answered"] in (0, 1)
        assert (record["label"] is None) == (record["answered"] == 0)
    assert math.isclose(records[-1]["epsilon_cumulative"], summary["epsilon"], rel_tol=1e-13)
    assert math.fsum(r["rdp_answer"] for r in records) == pytest.approx(
        summary["rdp_at_order"]["answer"])
    # the same table as the CSV, label for label
    frame = pd.read_csv(csv_target)
    assert [r["label"] for r in records] == [
        None if pd.isna(v) else int(v) for v in frame["label"]]


def test_per_query_without_selection_step(cli, votes_csv, tmp_path):
    target = tmp_path / "q.jsonl"
    run_json(cli, votes_csv, "-m", "lnmax", "--per-query", target)
    records = read_jsonl(target)
    assert all(r["log_pr_answered"] == 0 for r in records)
    assert all(r["rdp_selection"] == 0 for r in records)
    assert all(r["answered"] == 1 and r["label"] in (0, 1, 2) for r in records)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None,
                    reason="pyarrow is installed")
def test_parquet_without_pyarrow(cli, votes_csv, tmp_path):
    target = tmp_path / "q.parquet"
    result = cli.analyze(votes_csv, "--per-query", target)
    assert result.code == 2
    assert one_line_error(result) == (
        f"Error: {target}: writing .parquet needs pyarrow (pip install 'pate_cli[parquet]')")
    assert result.out == ""
    assert os.listdir(tmp_path) == ["votes.csv"]


def test_per_query_unknown_extension(cli, votes_csv, tmp_path):
    target = tmp_path / "q.txt"
    result = cli.analyze(votes_csv, "--per-query", target)
    assert result.code == 2
    assert one_line_error(result) == (
        f"Error: {target}: unknown extension for the per-query table "
        "(use .csv, .json, .jsonl, .parquet)")
    assert not target.exists()


def test_queries_limits_the_analysis(cli, votes_csv, tmp_path):
    target = tmp_path / "q.csv"
    summary = run_json(cli, votes_csv, "--queries", 5, "--per-query", target)
    assert summary["queries"] == 5
    assert summary["input"]["queries"] == 20
    assert list(pd.read_csv(target)["plurality"]) == PLURALITY[:5]


# --- exit statuses ------------------------------------------------------------------------

def test_max_epsilon_below_the_result_exits_3(cli, votes_csv):
    epsilon = run_json(cli, votes_csv)["epsilon"]
    assert epsilon > 1
    result = cli.analyze(votes_csv, "--format", "json", "--max-epsilon", 1)
    assert result.code == 3
    assert json.loads(result.out)["epsilon"] == epsilon  # the output is still printed
    assert one_line_error(result) == f"Error: epsilon {ceil_text(epsilon)} exceeds --max-epsilon 1"


def test_max_epsilon_equal_to_the_result_holds(cli, votes_csv):
    """A limit equal to the epsilon holds; one ulp below does not (review R39: ``>=`` in
    place of ``>`` passed every test)."""
    epsilon = run_json(cli, votes_csv)["epsilon"]
    assert cli.analyze(votes_csv, "--max-epsilon", repr(epsilon)).code == 0
    assert cli.analyze(votes_csv, "--max-epsilon",
                       repr(math.nextafter(epsilon, 0))).code == 3


def test_max_epsilon_above_the_result_exits_0(cli, votes_csv):
    epsilon = run_json(cli, votes_csv)["epsilon"]
    result = cli.analyze(votes_csv, "--max-epsilon", math.ceil(epsilon) + 1)
    assert result.code == 0
    assert result.err == ""


BAD_OPTIONS = [
    (["--sigma", "0"], "Invalid value for '--sigma': must be positive, got 0"),
    (["--sigma", "-1"], "Invalid value for '--sigma': must be positive, got -1"),
    (["--budget", "inf"], "Invalid value for '--budget': must be a finite number, got inf"),
    (["--delta", "0"], "Invalid value for '--delta': must lie in (0, 1), got 0"),
    (["--delta", "1"], "Invalid value for '--delta': must lie in (0, 1), got 1"),
    (["--delta", "1.5"], "Invalid value for '--delta': must lie in (0, 1), got 1.5"),
    (["--orders", "0.5,2"],
     "Invalid value for '--orders': every order must be greater than 1, got 0.5"),
    (["--orders", "1"], "Invalid value for '--orders': every order must be greater than 1, got 1"),
    (["--order", "1"], "Invalid value for '--order': every order must be greater than 1, got 1"),
    (["--mechanism", "nope"],
     "Invalid value for '-m' / '--mechanism': 'nope' is not one of 'lnmax', 'gnmax', "
     "'confident', 'interactive', 'svt', 'exponential', 'confident-exponential'."),
    (["--teachers", "0"], "Invalid value for '--teachers': must be positive, got 0"),
]


def test_classes_on_dense_votes_says_what_it_reads(cli, votes_csv, tmp_path):
    """--classes with VOTES reads a long table: on a dense CSV the line names the columns
    it expected and what the file's first line holds; on an .npy it says where --classes
    applies."""
    result = cli.analyze(votes_csv, "--classes", "3")
    assert result.code == 2 and result.out == ""
    first = votes_csv.read_text().splitlines()[0]
    assert one_line_error(result) == (
        f"Error: {votes_csv}: --classes K reads a long table with columns query,class,count "
        "(in any order, with an optional output; name others with --columns "
        f"query=NAME,class=NAME,count=NAME); its first line holds numbers ({first}), not "
        "column names")
    dense = tmp_path / "votes.npy"
    np.save(dense, np.loadtxt(votes_csv, delimiter=","))
    result = cli.analyze(dense, "--classes", "3")
    assert one_line_error(result) == ("Error: --classes only applies to --predictions and to "
                                      f"long sparse tables (query,class,count){HINT}")


@pytest.mark.parametrize("options, message", BAD_OPTIONS)
def test_bad_options_exit_2(cli, votes_csv, options, message):
    result = cli.analyze(votes_csv, *options)
    assert result.code == 2
    assert result.out == ""
    assert one_line_error(result) == f"Error: {message}{HINT}"


def test_queries_larger_than_the_file(cli, votes_csv):
    result = cli.analyze(votes_csv, "--queries", 21)
    assert result.code == 2
    assert one_line_error(result) == (
        f"Error: --queries 21 is larger than the 20 queries in {votes_csv}{HINT}")


def test_neither_votes_nor_predictions(cli):
    result = cli.analyze()
    assert result.code == 2
    assert one_line_error(result) == f"Error: give exactly one of VOTES or --predictions FILE{HINT}"


def test_both_votes_and_predictions(cli, votes_csv):
    result = cli.analyze(votes_csv, "--predictions", votes_csv)
    assert result.code == 2
    assert one_line_error(result) == f"Error: give exactly one of VOTES or --predictions FILE{HINT}"


def test_budget_with_expected_accounting_holds(cli, votes_csv):
    summary = run_json(cli, votes_csv, "--budget", 5, "--accounting", "expected")
    assert summary["epsilon"] <= 5 and summary["budget"]["halted_at"] is not None


def _npy(tmp_path, name, array, **kwargs):
    path = tmp_path / name
    np.save(path, array, **kwargs)
    return path


def _text(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _bytes(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _labels(tmp_path, values):
    return ["--labels", _npy(tmp_path, "labels.npy", np.array(values))]


def _pickled_npz(tmp_path):
    path = tmp_path / "votes.npz"
    np.savez(path, votes=np.array([[1, "a"], [2, None]], dtype=object))
    return path


PICKLED = "holds a pickled object array; refusing to load it (only plain numeric arrays are read)"
INPUT_ERRORS = {
    "missing": (lambda t: t / "absent.csv", "{path}: no such file"),
    "extension": (lambda t: _text(t, "votes.txt", "1,2\n"),
                  "{path}: unknown extension '.txt' (expected .npy, .npz, .csv, .tsv, or - "
                  "for standard input)"),
    "empty": (lambda t: _bytes(t, "votes.npy", b""), "{path}: the file is empty"),
    "1-D": (lambda t: _npy(t, "votes.npy", np.array([1, 2, 3])),
            "{path}: expected a 2-D array (rows = queries), got 1-D with shape (3,)"),
    "3-D": (lambda t: _npy(t, "votes.npy", np.ones((2, 2, 2))),
            "{path}: expected a 2-D array (rows = queries), got 3-D with shape (2, 2, 2); "
            "multi-label votes (queries, labels, 2) or predictions (queries, teachers, "
            "labels) are read by pate-analyze --multilabel VARIANT"),
    "pickled npy": (lambda t: _npy(t, "votes.npy", np.array([[1, "a"], [2, None]], dtype=object),
                                   allow_pickle=True), "{path}: " + PICKLED),
    "pickled npz": (_pickled_npz, "{path}: " + PICKLED),
    "non-numeric": (lambda t: _text(t, "votes.csv", "1,9\n2,x\n"),
                    "{path}: line 2, column 2: 'x' is not a number"),
    "empty cell": (lambda t: _text(t, "votes.csv", "1,9\n,10\n"),
                   "{path}: line 2, column 1: empty"),
    "negative": (lambda t: _text(t, "votes.csv", "1,9\n11,-1\n"),
                 "{path}: query 1, class 1 is negative (-1); votes are counts"),
    "totals": (lambda t: _text(t, "votes.csv", "1,9\n2,9\n"),
               "{path}: query 1 has 11 votes but query 0 has 10 (every row must sum to the "
               "number of teachers; give --teachers M for weighted or partial votes)"),
    "one class": (lambda t: _text(t, "votes.csv", "10\n10\n"),
                  "{path}: needs at least 2 classes (columns), got 1"),
    "zero rows": (lambda t: _npy(t, "votes.npy", np.zeros((0, 3))),
                  "{path}: has no queries (0 rows)"),
}


@pytest.mark.parametrize("case", list(INPUT_ERRORS))
def test_input_file_errors_exit_2(cli, tmp_path, case):
    build, message = INPUT_ERRORS[case]
    path = build(tmp_path)
    result = cli.analyze(path, "--format", "json")
    assert result.code == 2
    assert result.out == ""
    assert one_line_error(result) == "Error: " + message.format(path=path)


@pytest.mark.parametrize("value, place", [("nan", "query 1, class 0"), ("inf", "query 1, class 0")])
def test_non_finite_votes_exit_2(cli, tmp_path, value, place):
    path = _text(tmp_path, "votes.csv", f"1,9\n{value},10\n")
    result = cli.analyze(path)
    assert result.code == 2
    assert one_line_error(result).startswith(f"Error: {path}: {place} is not finite (")


def test_label_errors_exit_2(cli, votes_csv, tmp_path):
    wrong_length = cli.analyze(votes_csv, *_labels(tmp_path, [0] * 19))
    assert wrong_length.code == 2
    assert one_line_error(wrong_length) == (
        f"Error: {tmp_path / 'labels.npy'}: has 19 labels but {votes_csv} has 20 queries")
    out_of_range = cli.analyze(votes_csv, *_labels(tmp_path, [0] * 19 + [3]))
    assert out_of_range.code == 2
    assert one_line_error(out_of_range).endswith(" at query 19 is outside 0..2")
    fractional = cli.analyze(votes_csv, *_labels(tmp_path, [0.0] * 18 + [0.5, 0.0]))
    assert fractional.code == 2
    assert "query 18" in one_line_error(fractional)


def test_predictions_errors_exit_2(cli, tmp_path):
    path = _npy(tmp_path, "predictions.npy", np.array([[0, 1, -2], [1, 1, 1]]))
    result = cli.analyze("--predictions", path)
    assert result.code == 2
    assert one_line_error(result) == (
        f"Error: {path}: query 0, teacher 2: class id -2 is below -1 "
        "(-1 marks a teacher that did not vote)")
    high = _npy(tmp_path, "high.npy", np.array([[0, 1, 1], [1, 2, 1]]))
    result = cli.analyze("--predictions", high, "--classes", 2)
    assert result.code == 2
    assert one_line_error(result) == (
        f"Error: {high}: query 1, teacher 1: class id 2 is outside 0..1")


def test_empty_stdin_exits_2(cli):
    result = cli.analyze("-", stdin=b"")
    assert result.code == 2
    assert one_line_error(result) == "Error: <stdin>: no input (the standard input is empty)"


# --- inputs -------------------------------------------------------------------------------

def test_predictions_give_the_histogram(cli, tmp_path):
    predictions = [[(i * 7 + j * 3) % 4 - 1 for j in range(10)] for i in range(20)]
    histogram = []
    for row in predictions:
        counts = [0, 0, 0]
        for cls in row:
            if cls >= 0:
                counts[cls] += 1
        histogram.append(counts)
    path = _text(tmp_path, "predictions.csv", csv_text(predictions))
    target = tmp_path / "q.csv"
    summary = run_json(cli, "--predictions", path, "--per-query", target)
    assert summary["input"]["teachers"] == 10
    assert summary["input"]["classes"] == 3
    frame = pd.read_csv(target)
    assert list(frame["plurality"]) == [max(row) for row in histogram]
    assert list(frame["plurality_class"]) == [row.index(max(row)) for row in histogram]
    wider = run_json(cli, "--predictions", path, "--classes", 5)
    assert wider["input"]["classes"] == 5


def test_npz_labels_give_label_accuracy(cli, tmp_path):
    truth = PLURALITY_CLASS[:10] + [2] * 10
    path = tmp_path / "votes.npz"
    np.savez(path, votes=np.array(VOTES), labels=np.array(truth))
    target = tmp_path / "q.jsonl"
    summary = run_json(cli, path, "-m", "gnmax", "--sigma", 3, "--per-query", target)
    output = [(r["label"], t) for r, t in zip(read_jsonl(target), truth, strict=True)
              if r["label"] is not None]
    assert len(output) == 20
    assert summary["label_accuracy"] == pytest.approx(
        sum(label == t for label, t in output) / len(output))


def test_teachers_allows_rows_with_different_totals(cli, tmp_path):
    path = _text(tmp_path, "votes.csv", "5,3,2\n1,1,1\n0,7,0\n")
    assert cli.analyze(path).code == 2
    summary = run_json(cli, path, "--teachers", 10)
    assert summary["input"]["teachers"] == 10
    assert summary["params"].pop("screening") == "exact"  # math:screening's curve, the default
    assert summary["params"] == pytest.approx(
        {"threshold": 8.0, "sigma_threshold": 6.0, "sigma": 1.6})


def test_stdin_csv_and_npy(cli, votes_csv, votes_npy):
    from_file = run_json(cli, votes_csv)
    for data in (votes_csv.read_bytes(), votes_npy.read_bytes(),
                 csv_text(VOTES, header=["a", "b", "c"]).encode()):
        result = cli.analyze("-", "--format", "json", stdin=data)
        assert result.code == 0, result.err
        summary = json.loads(result.out)
        assert summary["input"]["path"] == "<stdin>"
        assert summary["input"]["sha256"] == hashlib.sha256(data).hexdigest()
        assert (summary["input"]["queries"], summary["input"]["classes"]) == (20, 3)
        assert summary["epsilon"] == from_file["epsilon"]
        assert summary["answered"] == from_file["answered"]


def test_a_long_table_on_stdin_is_told_where_long_tables_are_read(cli):
    """Standard input holds dense votes; --classes with it says so, not only that it needs a
    long table."""
    result = cli.analyze("-", "--classes", "50", stdin=b"query,class,count\n0,1,5\n")
    assert result.code == 2
    assert "read from a file (standard input holds dense CSV or NPY votes)" in result.err


def test_every_vote_format_gives_the_same_result(cli, votes_csv, votes_npy, tmp_path):
    tsv = _text(tmp_path, "votes.tsv", csv_text(VOTES, header=["a", "b", "c"], sep="\t"))
    npz = tmp_path / "votes.npz"
    np.savez(npz, votes=np.array(VOTES))
    results = [run_json(cli, p) for p in (votes_csv, votes_npy, tsv, npz)]
    assert len({(r["epsilon"], r["answered"]) for r in results}) == 1


# --- files and reproducibility ------------------------------------------------------------

def test_failed_analysis_leaves_existing_outputs_untouched(cli, votes_csv, tmp_path):
    target, summary_file = tmp_path / "q.csv", tmp_path / "out.json"
    target.write_text("precious\n")
    summary_file.write_text("{}\n")
    before = sorted(os.listdir(tmp_path))
    result = cli.analyze(votes_csv, *_labels(tmp_path, [7] * 20), "--per-query", target,
                         "-o", summary_file)
    assert result.code == 2
    one_line_error(result)
    assert target.read_text() == "precious\n"
    assert summary_file.read_text() == "{}\n"
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["labels.npy"])


def test_failed_write_leaves_no_temporary_file(cli, votes_csv, tmp_path, monkeypatch):
    target = tmp_path / "q.csv"
    target.write_text("precious\n")

    def refuse(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    result = cli.analyze(votes_csv, "--per-query", target)
    assert result.code != 0
    assert "disk full" in one_line_error(result)
    assert target.read_text() == "precious\n"
    assert sorted(os.listdir(tmp_path)) == ["q.csv", "votes.csv"]


def test_output_file_is_written_atomically(cli, votes_csv, tmp_path, monkeypatch):
    expected = run_json(cli, votes_csv)
    renames = []
    real_replace = os.replace

    def spy(source, destination):
        renames.append((os.fspath(source), os.fspath(destination)))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", spy)
    target = tmp_path / "out.json"
    result = cli.analyze(votes_csv, "--format", "json", "-o", target)
    assert result.code == 0
    assert result.out == ""
    assert json.loads(target.read_text()) == expected
    assert len(renames) == 1
    source, destination = renames[0]
    assert os.path.abspath(destination) == str(target)
    assert os.path.dirname(source) == str(tmp_path)  # same directory: an atomic rename
    assert sorted(os.listdir(tmp_path)) == ["out.json", "votes.csv"]


def test_same_arguments_give_identical_bytes(cli, votes_csv, tmp_path):
    outputs = []
    for name in ("a", "b"):
        csv_target, jsonl_target = tmp_path / f"{name}.csv", tmp_path / f"{name}.jsonl"
        first = cli.analyze(votes_csv, "-f", "json", "--per-query", csv_target)
        second = cli.analyze(votes_csv, "-f", "json", "--per-query", jsonl_target)
        outputs.append((first.out, second.out, csv_target.read_bytes(),
                        jsonl_target.read_bytes()))
    assert outputs[0] == outputs[1]


def test_seed_changes_replay_labels_not_expected_epsilon(cli, votes_csv, tmp_path):
    labels = []
    for seed in (0, 1):
        target = tmp_path / f"q{seed}.jsonl"
        summary = run_json(cli, votes_csv, "-m", "gnmax", "--sigma", 5, "--seed", seed,
                           "--per-query", target)
        assert summary["seed"] == seed
        labels.append([r["label"] for r in read_jsonl(target)])
    assert labels[0] != labels[1]
    expected = [run_json(cli, votes_csv, "--accounting", "expected", "--seed", seed)
                for seed in (0, 7)]
    assert expected[0]["epsilon"] == expected[1]["epsilon"]
    assert expected[0]["answered"] == expected[1]["answered"]


def test_budget_summary(cli, votes_csv, tmp_path):
    free_target, target = tmp_path / "free.csv", tmp_path / "q.csv"
    free = run_json(cli, votes_csv, "--per-query", free_target)
    assert free["epsilon"] > 5
    summary = run_json(cli, votes_csv, "--budget", 5, "--per-query", target)
    budget = summary["budget"]
    assert set(budget) >= {"limit", "halted_at", "remaining", "answered"}
    assert budget["limit"] == 5
    frame, unlimited = pd.read_csv(target), pd.read_csv(free_target)
    assert budget["answered"] == summary["answered"] == frame["answered"].sum()
    # math:costs: the run halts; nothing from halted_at on is processed
    halted = budget["halted_at"]
    assert summary["epsilon"] <= 5 and budget["remaining"] == pytest.approx(5 - summary["epsilon"])
    assert len(frame) == halted == summary["queries"]
    pd.testing.assert_frame_equal(frame[["query", "answered", "label"]],
                                  unlimited[["query", "answered", "label"]].iloc[:halted],
                                  check_dtype=False)


def test_fixed_order_prints_no_grid_warning(cli, votes_csv):
    result = cli.analyze(votes_csv, "--order", 3)
    assert result.code == 0
    assert result.err == ""


# --- help and unexpected errors -----------------------------------------------------------

@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_shows_examples(cli, flag):
    result = cli.analyze(flag)
    assert result.code == 0
    assert "Usage: pate-analyze" in result.out
    assert "Examples:" in result.out
    assert "pate-analyze votes.npy" in result.out
    assert "--max-epsilon" in result.out


def test_unexpected_error_exits_1_in_one_line(cli, votes_csv, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(analyze_module, "analyze_votes", explode)
    result = cli.analyze(votes_csv)
    assert result.code == 1
    assert result.out == ""
    assert one_line_error(result) == (
        "Error: unexpected RuntimeError: kaboom second line "
        "(run with --debug for the traceback)")
    debug = cli.analyze(votes_csv, "--debug")
    assert debug.code == 1
    assert debug.err.startswith("Traceback (most recent call last):")
    assert "RuntimeError: kaboom" in debug.err
    assert "in explode" in debug.err
    assert debug.err.splitlines()[-1].startswith("Error: unexpected RuntimeError: kaboom")


# --- the installed console script ---------------------------------------------------------

def _script() -> str:
    beside = Path(sys.executable).parent / "pate-analyze"
    found = str(beside) if beside.exists() else shutil.which("pate-analyze")
    if found is None:
        pytest.skip("the pate-analyze console script is not installed")
    return found


def test_console_script(votes_csv, votes_npy, tmp_path):
    script = _script()

    def run(*args, stdin=b""):
        return subprocess.run([script, *map(str, args)], input=stdin, capture_output=True,
                              cwd=tmp_path, timeout=120, check=False)

    from_file = run(votes_csv, "-f", "json")
    assert from_file.returncode == 0, from_file.stderr
    reference = json.loads(from_file.stdout)
    assert reference["input"]["path"] == str(votes_csv)
    for data in (votes_csv.read_bytes(), votes_npy.read_bytes()):
        piped = run("-", "-f", "json", stdin=data)
        assert piped.returncode == 0, piped.stderr
        summary = json.loads(piped.stdout)
        assert summary["input"]["sha256"] == hashlib.sha256(data).hexdigest()
        assert summary["epsilon"] == reference["epsilon"]
    over = run("-", "--max-epsilon", 1, stdin=votes_csv.read_bytes())
    assert over.returncode == 3
    assert over.stderr.decode().startswith("Error: epsilon ")
    bad = run(tmp_path / "absent.csv")
    assert bad.returncode == 2
    assert bad.stderr.decode() == f"Error: {tmp_path / 'absent.csv'}: no such file\n"
    helped = run("-h")
    assert helped.returncode == 0 and b"Examples:" in helped.stdout
    dash = run(votes_csv, "-f", "json", "-o", "-")  # stdout, as '-' means for VOTES
    assert dash.returncode == 0 and json.loads(dash.stdout) == reference
    assert not (tmp_path / "-").exists()


def test_output_files_get_the_usual_permissions(cli, votes_csv, tmp_path):
    """Atomic writes go through mkstemp (mode 0600); the result must honour the umask."""
    old = os.umask(0o022)
    try:
        out = tmp_path / "summary.json"
        assert cli.analyze(votes_csv, "--format", "json", "-o", out).code == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644


MNIST_SAMPLE = str(ROOT / "sample_votes" / "mnist_250_votes.npy")


@pytest.mark.parametrize("args, method", [
    (["-n", "300"], "rdp"),
    (["-n", "300", "--accounting", "data-independent"], "pld"),
    (["-m", "svt", "--target-epsilon", "8", "--svt-cutoff", "auto"], "pure"),
])
def test_epsilon_method_names_the_accountant(cli, args, method):
    if method == "pld":
        pytest.importorskip("dp_accounting")
    done = cli.analyze(MNIST_SAMPLE, *args, "-f", "json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert summary["epsilon_method"] == method
    assert (summary["order"] is None) == (method == "pure")


def test_a_json_file_name_without_f_json_is_written_as_said_with_a_warning(cli, votes_csv,
                                                                           tmp_path):
    """``-o run.json`` keeps ``-f``'s format (the contract) and says so on one line."""
    target = tmp_path / "run.json"
    done = cli.analyze(votes_csv, "-o", target)
    assert done.code == 0 and not target.read_text().startswith("{")
    assert done.err == f"Warning: -o {target} is written as a table (give -f json for JSON)\n"
    assert cli.analyze(votes_csv, "-f", "json", "-o", target).err == ""
