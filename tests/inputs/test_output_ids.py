"""``--outputs FILE`` (``inputs.output_ids``): one whole-number id >= 0 per row of the votes,
each output's rows consecutive, from ``.npy``, ``.csv`` or an array; a grouping the votes hold
must be the same ids."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from pate_cli.errors import InputError
from pate_cli.inputs import load_votes
from pate_cli.inputs.output_ids import (
    attach_outputs,
    check_outputs,
    checked_ids,
    read_outputs,
)

IDS = np.repeat(np.arange(4), [3, 1, 4, 2])  # 10 rows in 4 outputs


def test_npy_csv_and_an_array_give_the_same_ids(tmp_path):
    np.save(tmp_path / "o.npy", IDS.astype(np.int32))
    (tmp_path / "o.csv").write_text("output\n" + "\n".join(map(str, IDS)) + "\n")
    (tmp_path / "bare.csv").write_text("\n".join(map(str, IDS)) + "\n")
    np.save(tmp_path / "column.npy", IDS.astype(np.float64)[:, None])
    for source in ("o.npy", "o.csv", "bare.csv", "column.npy"):
        name, ids = read_outputs(tmp_path / source, queries=10, votes_name="v.npy")
        assert name == str(tmp_path / source)
        assert ids.dtype == np.int64 and np.array_equal(ids, IDS)
    name, ids = read_outputs(list(IDS), queries=10, votes_name=None)
    assert name == "outputs" and np.array_equal(ids, IDS)


def _refusal(tmp_path, ids, *, suffix=".npy", queries=10) -> str:
    path = tmp_path / f"bad{suffix}"
    if suffix == ".npy":
        np.save(path, ids)
    else:
        path.write_text(ids)
    with pytest.raises(InputError) as refused:
        read_outputs(path, queries=queries, votes_name="v.npy")
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message[len(f"{path}: "):]


def test_each_bad_file_is_refused_in_one_line(tmp_path):
    assert _refusal(tmp_path, IDS[:9]) == ("has 9 output ids, but the votes (v.npy) have 10 "
                                           "queries (one output id per row of the votes)")
    with_nan = IDS.astype(np.float64)
    with_nan[6] = np.nan
    assert _refusal(tmp_path, with_nan) == "query 6 has output nan, not a whole-number id"
    fraction = IDS.astype(np.float64)
    fraction[2] = 0.5
    assert _refusal(tmp_path, fraction) == "query 2 has output 0.5, not a whole-number id"
    negative = IDS.copy()
    negative[4] = -1
    assert _refusal(tmp_path, negative) == "query 4 has output -1; outputs are ids >= 0"
    assert _refusal(tmp_path, np.stack([IDS, IDS], axis=1)) == (
        "expected one output id per query (a single column), got shape (10, 2)")
    assert _refusal(tmp_path, np.array([0, 0, 1, 1, 0, 2, 2, 1, 3, 3])) == (
        "query 4 returns to output 0 after another output (an output's queries must be "
        "consecutive rows)")
    assert _refusal(tmp_path, "output\n0\n0\nnan\n1\n", suffix=".csv", queries=4) == (
        "query 2 has output nan, not a whole-number id")
    assert _refusal(tmp_path, "output\n0\nzero\n1\n", suffix=".csv", queries=3) == (
        "line 3, column 1: 'zero' is not a number")
    assert _refusal(tmp_path, "output\n0\n1\n", suffix=".txt", queries=2).startswith(
        "unknown extension '.txt'")


def test_the_first_row_where_an_output_comes_back_is_named():
    """Runs 0,1,2,1,0: output 1 comes back first (row 3), before output 0 (row 4)."""
    with pytest.raises(InputError, match="query 3 returns to output 1 after"):
        check_outputs(np.array([0, 1, 2, 1, 0]), "o.npy")
    with pytest.raises(InputError, match="query 5 returns to output 7 after"):
        check_outputs(np.array([7, 7, 3, 3, 9, 7]), "o.npy")
    check_outputs(np.array([5, 5, 2, 9, 9, 9, 0]), "o.npy")  # ids need not ascend


def _grouped_archive(tmp_path, output) -> str:
    """A 10 x 6 ``save_npz`` archive with an ``output`` array (as cli:pate-analyze describes)."""
    dense = np.zeros((10, 6), dtype=np.int64)
    dense[np.arange(10), np.arange(10) % 6] = 3
    path = tmp_path / "tokens.npz"
    sp.save_npz(path, sp.csr_matrix(dense))
    with np.load(path) as archive:
        members = dict(archive)
    np.savez(path, **members, output=output)
    return str(path)


def test_a_sparse_archives_output_array_names_its_first_bad_query(tmp_path):
    ids = np.repeat(np.arange(4), [3, 1, 4, 2]).astype(np.float64)
    ids[5] = np.nan
    path = _grouped_archive(tmp_path, ids)
    with pytest.raises(InputError) as refused:
        load_votes(path)
    assert str(refused.value) == f"{path}: query 5 has output nan, not a whole-number id"


def test_a_grouping_inside_the_votes_must_be_the_same_ids(tmp_path):
    vote_set = load_votes(_grouped_archive(tmp_path, IDS))
    assert np.array_equal(vote_set.outputs, IDS)
    assert np.array_equal(attach_outputs(vote_set, IDS).outputs, IDS)  # the same: taken
    assert attach_outputs(vote_set, None) is vote_set
    renamed = IDS + 1  # the same outputs under other ids: still two groupings
    with pytest.raises(InputError) as refused:
        attach_outputs(vote_set, renamed)
    assert str(refused.value) == (
        f"outputs: --outputs gives query 0 output 1, but the votes ({vote_set.path}) hold "
        "their own grouping, with output 0 (give one grouping: drop --outputs, or the votes' "
        "own)")


def test_dense_votes_take_the_grouping_and_keep_the_rest(tmp_path):
    votes = np.tile([[3, 1], [0, 4]], (5, 1))
    np.save(tmp_path / "v.npy", votes)
    vote_set = load_votes(tmp_path / "v.npy")
    grouped = attach_outputs(vote_set, IDS)
    assert np.array_equal(grouped.outputs, IDS) and grouped.votes is vote_set.votes
    assert (grouped.teachers, grouped.path, grouped.sha256) == (
        vote_set.teachers, vote_set.path, vote_set.sha256)
    with pytest.raises(InputError, match="has 11 output ids, but the votes "):
        attach_outputs(vote_set, np.zeros(11, dtype=int))
    with pytest.raises(InputError, match="outputs: holds <U1 values; expected output ids"):
        attach_outputs(vote_set, ["a"] * 10)


@pytest.mark.parametrize("ids, shown", [
    (np.array([0, 0, 1, 2**64 - 1], dtype=np.uint64), "18446744073709551615"),
    (np.array([0.0, 0.0, 1.0, 1e30]), "1e+30")])
def test_an_output_id_past_int64_is_refused_as_given(ids, shown):
    """2^64 - 1 was shown as output -1 (an int64 wraps it)."""
    with pytest.raises(InputError, match=f"query 3 has output {re.escape(shown)}, above the "
                                         "largest id 2\\^63 - 1"):
        checked_ids("outputs", ids)
