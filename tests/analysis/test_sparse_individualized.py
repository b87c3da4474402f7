"""--individualized upsampling on sparse (token) votes: the dense rows' numbers, groups
included; the variants that need each teacher's prediction are refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from tests import ROOT
from tests.analysis.test_sparse_votes import _numbers
from tests.synthetic import TOLERANCE

TOKENS = ROOT / "sample_votes/tokens_stdlib.npz"
GROUPS = ROOT / "sample_votes/mnist_250_groups.csv"
ROWS = 300


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The real token sample's first rows, as a CSR archive and as a dense .npy."""
    folder = tmp_path_factory.mktemp("sparse_individualized")
    rows = sp.load_npz(TOKENS).tocsr()[:ROWS]
    sp.save_npz(folder / "sparse.npz", rows)
    np.save(folder / "dense.npy", rows.toarray())
    return folder


@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_upsampled_groups_on_sparse_votes_equal_the_dense_rows(cli, files, tmp_path, accounting):
    args = ["-T", "70", "--sigma-threshold", "30", "--sigma", "15", "--accounting", accounting,
            "--individualized", "upsampling", "--groups", str(GROUPS), "-f", "json"]
    found = {}
    for name in ("dense.npy", "sparse.npz"):
        table = tmp_path / f"{name}.csv"
        result = cli.analyze(files / name, *args, "--per-query", table)
        assert result.code == 0, result.err
        found[name] = dict(_numbers(json.loads(result.out))), pd.read_csv(table)
    (dense, dense_table), (sparse, sparse_table) = found["dense.npy"], found["sparse.npz"]
    assert sum(key.startswith(".groups") and key.endswith(".epsilon") for key in dense) == 3
    assert sparse.keys() == dense.keys()
    for key, value in dense.items():
        if isinstance(value, float):
            assert sparse[key] == pytest.approx(value, rel=TOLERANCE, abs=1e-300), key
        else:
            assert sparse[key] == value, key
    assert list(sparse_table.columns) == list(dense_table.columns)
    for column in dense_table.columns:
        if column == "label":  # the sparse replay draws its own noise stream (README)
            continue
        expected = dense_table[column]
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(sparse_table[column], expected, rtol=TOLERANCE,
                                       atol=1e-300)
        else:
            assert sparse_table[column].tolist() == expected.tolist(), column


@pytest.mark.parametrize("variant", ["weighting", "vanishing"])
def test_variants_that_need_predictions_are_refused_on_sparse_votes(cli, variant):
    result = cli.analyze(TOKENS, "--individualized", variant, "--groups", GROUPS)
    assert result.code == 2
    assert result.err.startswith(f"Error: --individualized {variant} needs --predictions "
                                 "FILE and --teacher-groups FILE")  # each teacher's vote
