"""Vote totals too large to count exactly (M above 2^53), and a large M that is fine."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pate_cli.inputs import load_votes
from pate_cli.inputs.votes import votes_from_array


def _votes(scale: int) -> np.ndarray:
    rows = np.array([[150, 60, 40], [90, 90, 70], [250, 0, 0]], dtype=np.int64)
    return rows * scale


@pytest.mark.parametrize("form", ["npy", "sparse", "array"])
def test_votes_summing_above_2_to_the_53_are_refused(tmp_path, form):
    votes = _votes(10**15)  # rows of 2.5e17 votes
    if form == "array":
        with pytest.raises(ValueError, match=r"query 0 has 2\.5e\+17 votes, more than 2\^53"):
            votes_from_array(votes)
        return
    path = tmp_path / ("v.npy" if form == "npy" else "v.npz")
    if form == "npy":
        np.save(path, votes)
    else:
        sp.save_npz(path, sp.csr_matrix(votes))
    with pytest.raises(ValueError, match=r"v\.np[yz]: query 0 has 2\.5e\+17 votes, more "
                                         r"than 2\^53 \(9\.0e15\): counts that large"):
        load_votes(str(path))


def test_teachers_above_2_to_the_53_are_refused(cli, tmp_path):
    np.save(tmp_path / "v.npy", _votes(1))
    ran = cli.analyze(tmp_path / "v.npy", "--teachers", "1e300")
    assert ran.code == 2 and ran.err == (
        "Error: --teachers 1e+300 is more than 2^53 (9.0e15) teachers: counts that large "
        "are not exact in float64\n")


def test_a_million_teachers_is_analysed(cli, tmp_path):
    """M 10^6 with the default parameters: the exact threshold curve is bounded without a
    pair per count (it took 43 s)."""
    np.save(tmp_path / "v.npy", _votes(4000))
    ran = cli.analyze(tmp_path / "v.npy", "-f", "json")
    assert ran.code == 0 and '"teachers": 1000000' in ran.out


@pytest.mark.parametrize("member", ["indices", "indptr", "shape"])
def test_a_sparse_archive_with_fractional_ids_is_refused(tmp_path, member):
    """Review H6: class ids saved as floats (1745.5) were truncated without a word, and a
    shape of 50.5 classes read as 50: ids must be integers, as save_npz writes them."""
    matrix = sp.csr_matrix(_votes(1))
    members = {"format": np.array(b"csr"), "shape": np.array(matrix.shape),
               "data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr}
    members[member] = members[member].astype(np.float64) + (member == "indices") * 0.5
    path = tmp_path / "v.npz"
    np.savez(path, **members)
    with pytest.raises(ValueError, match=r"v\.npz: its .* are float64; expected integers"):
        load_votes(str(path))
    members[member] = members[member].astype(np.int64)  # the same, whole: read
    np.savez(path, **members)
    assert load_votes(str(path)).queries == 3


def test_a_sparse_archive_missing_its_data_says_so(tmp_path):
    """Review H6: an archive with save_npz's format and shape but its counts renamed was
    read as dense votes ("holds |S3 values; expected numbers"): it is a sparse archive
    without 'data'."""
    matrix = sp.csr_matrix(_votes(1))
    path = tmp_path / "v.npz"
    np.savez(path, format=np.array(b"csr"), shape=np.array(matrix.shape), values=matrix.data,
             indices=matrix.indices, indptr=matrix.indptr)
    with pytest.raises(ValueError, match=r"v\.npz: not a valid sparse matrix file \('data "
                                         r"is not a file in the archive'\)"):
        load_votes(str(path))
