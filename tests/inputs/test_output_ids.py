"""Output ids (``inputs.output_ids``): whole numbers >= 0, each output's rows consecutive."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pate_cli.errors import InputError
from pate_cli.inputs import load_votes
from pate_cli.inputs.output_ids import check_outputs


def test_the_first_row_where_an_output_comes_back_is_named():
    """Runs 0,1,2,1,0: output 1 comes back first (row 3), before output 0 (row 4)."""
    with pytest.raises(InputError, match="query 3 returns to output 1 after"):
        check_outputs(np.array([0, 1, 2, 1, 0]), "o.npy")
    with pytest.raises(InputError, match="query 5 returns to output 7 after"):
        check_outputs(np.array([7, 7, 3, 3, 9, 7]), "o.npy")
    check_outputs(np.array([5, 5, 2, 9, 9, 9, 0]), "o.npy")  # ids need not ascend


def _grouped_archive(tmp_path, output) -> str:
    """A 10 x 6 ``save_npz`` archive with an ``output`` array (as CLI.md describes)."""
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
