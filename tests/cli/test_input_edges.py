"""Inputs a reader once took silently for something else (review R18): a header read from
a stream, the headers pandas writes, line breaks pandas does not split at, digit-group
underscores, integer totals, declared sizes past the limits; each gives the file's own
numbers or one line and exit 2."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "sample_votes")
GNMAX = ("-m", "gnmax", "--sigma", "40", "-f", "json")


@pytest.fixture
def votes(tmp_path):
    path = tmp_path / "v.npy"
    np.save(path, np.load(os.path.join(SAMPLES, "mnist_250_votes.npy"))[:300].astype(np.int64))
    return path


def _epsilon(result) -> float:
    assert result.code == 0, result.err
    return json.loads(result.out)["epsilon"]


def test_an_rdp_table_on_standard_input_is_read_by_its_header(cli, votes, tmp_path):
    """The columns of a header rdp,order were taken by position from a stream (epsilon
    4.77 where the file gives 15.0)."""
    table = tmp_path / "c.csv"
    table.write_text("rdp,order\n" + "".join(f"{3.0 * a!r},{float(a)!r}\n"
                                             for a in range(2, 201)))
    from_file = _epsilon(cli.analyze(votes, *GNMAX, "--add-rdp", table))
    assert _epsilon(cli.analyze(votes, *GNMAX, "--add-rdp", "-",
                                stdin=table.read_bytes())) == from_file
    refused = cli.analyze(votes, *GNMAX, "--add-rdp", "-", stdin=b"foo,bar\n2,1\n")
    assert refused.code == 2 and "columns foo,bar: expected order,rdp" in refused.err


def test_a_dp_event_on_standard_input(cli, votes, tmp_path):
    pytest.importorskip("dp_accounting")
    event = tmp_path / "e.json"
    event.write_text(json.dumps({"class_name": "GaussianDpEvent", "noise_multiplier": 2.0}))
    assert _epsilon(cli.analyze(votes, *GNMAX, "--add-rdp", "-", stdin=event.read_bytes())) \
        == _epsilon(cli.analyze(votes, *GNMAX, "--add-rdp", event))


@pytest.mark.parametrize("extra", [(), ("--teachers", "250")])
def test_the_numbered_header_pandas_writes_is_refused(cli, votes, tmp_path, extra):
    """0,1,...,9 above the rows was read as a query (with --teachers, or where M is
    K(K-1)/2)."""
    path = tmp_path / "v.csv"
    pd.DataFrame(np.load(votes)).to_csv(path, index=False)
    refused = cli.analyze(path, *GNMAX, *extra)
    assert refused.code == 2 and "0,1,...,9 looks like pandas' column names" in refused.err


@pytest.mark.parametrize("index", [False, True])
def test_predictions_written_by_pandas_are_refused(cli, tmp_path, index):
    predictions = np.load(os.path.join(SAMPLES, "mnist_250_predictions.npy"))[:100]
    path = tmp_path / "p.csv"
    pd.DataFrame(predictions).to_csv(path, index=index)
    refused = cli.analyze("--predictions", path, *GNMAX)
    assert refused.code == 2 and "pandas" in refused.err and refused.err.count("\n") == 1
    if index:
        np.save(tmp_path / "p.npy", predictions)
        assert _epsilon(cli.analyze("--predictions", path, "--index-col", "0", *GNMAX)) == \
            _epsilon(cli.analyze("--predictions", tmp_path / "p.npy", *GNMAX))


@pytest.mark.parametrize("lead", ["\f", "\x1c", "\u2028", "\n", "\n\n"])
def test_a_line_break_pandas_does_not_split_at_loses_no_row(cli, votes, tmp_path, lead):
    """str.splitlines() split at a leading form feed, and the first row went as a header:
    now every row is read, or the cell is named (pandas reads no number in it)."""
    text = tmp_path / "v.csv"
    np.savetxt(text, np.load(votes), fmt="%d", delimiter=",")
    odd = tmp_path / "odd.csv"
    odd.write_text(lead + text.read_text())
    result = cli.analyze(odd, *GNMAX)
    if result.code == 2:
        assert f"line 1, column 1: {(lead + '0')!r} is not a number" in result.err
        assert lead not in ("\f", "\n", "\n\n")
    else:
        assert _epsilon(result) == _epsilon(cli.analyze(votes, *GNMAX))


def test_a_blank_line_before_a_header(cli, tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("\nc0,c1\n250,0\n249,1\n")
    result = cli.analyze(path, *GNMAX)
    assert result.code == 0, result.err
    assert json.loads(result.out)["queries"] == 2


def test_a_sparse_shape_past_2_53_classes_is_refused(cli, votes, tmp_path):
    matrix = sp.csr_matrix(np.load(votes))
    path = tmp_path / "k.npz"
    np.savez(path, data=matrix.data, indices=matrix.indices.astype(np.int64),
             indptr=matrix.indptr, format=np.array(b"csr"),
             shape=np.array([matrix.shape[0], 2**63], dtype=np.uint64))
    refused = cli.analyze(path, *GNMAX, "--per-query", tmp_path / "q.csv")
    assert refused.code == 2 and "more than 2^53" in refused.err
    assert not (tmp_path / "q.csv").exists()


def test_a_sparse_output_member_of_two_columns_is_refused(cli, votes, tmp_path):
    matrix = sp.csr_matrix(np.load(votes))
    path = tmp_path / "o.npz"
    np.savez(path, data=matrix.data, indices=matrix.indices, indptr=matrix.indptr,
             format=np.array(b"csr"), shape=np.array(matrix.shape),
             output=np.repeat(np.arange(30), 10).reshape(-1, 2))
    refused = cli.analyze(path, *GNMAX)
    assert refused.code == 2 and "expected one output id per query" in refused.err


def test_underscored_numbers_are_no_numbers(cli, tmp_path):
    """float() reads 1_0 as 10: a group's budget 1_0 ran with budget 10."""
    groups = tmp_path / "g.csv"
    groups.write_text("group,budget,share\nhigh,1_0,0.34\naverage,2.0,0.432\nlow,3.0,0.228\n")
    refused = cli.analyze("--predictions", os.path.join(SAMPLES, "mnist_250_predictions.npy"),
                          "--individualized", "upsampling", "--groups", groups,
                          "--teacher-groups", os.path.join(SAMPLES,
                                                           "mnist_250_teacher_groups.csv"),
                          *GNMAX)
    assert refused.code == 2 and "budget '1_0' is not a number" in refused.err


def test_integer_rows_sum_exactly_to_one_total(cli, tmp_path):
    """A relative 1e-9 let a row of 3e9 + 1 votes pass beside rows of 3e9."""
    path = tmp_path / "big.npy"
    np.save(path, np.array([[3_000_000_000 - 100, 100], [3_000_000_000 - 2, 3]], np.int64))
    refused = cli.analyze(path, *GNMAX)
    assert refused.code == 2 and "query 1 has 3000000001 votes" in refused.err


@pytest.mark.parametrize("indices, shown", [
    (np.array([3, 2**63 + 1], np.uint64), "9223372036854775809"),
    (np.array([3.0, 1e20]), "1e+20")])
def test_query_indices_past_any_file_are_named_as_given(cli, votes, tmp_path, indices, shown):
    path = tmp_path / "q.npy"
    np.save(path, indices)
    refused = cli.analyze(votes, *GNMAX, "--query-indices", path)
    assert refused.code == 2 and refused.err.count("\n") == 1, refused.err
    assert f"query index {shown} (entry 1)" in refused.err


def test_a_decisions_archive_naming_its_mechanism_in_bytes(cli, votes, tmp_path):
    confident = ("-m", "confident", "-T", "200", "--sigma-threshold", "150", "--sigma", "40")
    written = tmp_path / "d.npz"
    assert cli.analyze(votes, *confident, "--write-decisions", written).code == 0
    members = dict(np.load(written))
    members["mechanism"] = np.array(b"confident")
    np.savez(tmp_path / "b.npz", **members)
    result = cli.analyze(votes, *confident, "--decisions", tmp_path / "b.npz")
    assert result.code == 0, result.err
    members["mechanism"] = np.array(b"gnmax")
    np.savez(tmp_path / "g.npz", **members)
    refused = cli.analyze(votes, *confident, "--decisions", tmp_path / "g.npz")
    assert refused.code == 2 and "decisions made by -m gnmax" in refused.err


def test_a_long_table_through_standard_input_is_named(cli, votes):
    """Read as dense votes, its rows were 'query 1 has 5 votes but query 0 has 257'."""
    array = np.load(votes)
    rows, cols = np.nonzero(array)
    text = pd.DataFrame({"query": rows, "class": cols, "count": array[rows, cols]}).to_csv(
        index=False)
    refused = cli.analyze("-", *GNMAX, stdin=text.encode())
    assert refused.code == 2 and "a long table (query,class,count) is read from a .csv" \
        in refused.err
