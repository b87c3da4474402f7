"""``analyze(outputs=...)`` (``--outputs``): the output grouping of any input feeds the
per-output figures and ``halt_at="output"`` as a sparse file's own grouping does."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from pate_cli import analyze
from pate_cli.errors import OptionError
from tests.synthetic import TOLERANCE, synthetic_votes

VOTES, _ = synthetic_votes(queries=240, classes=6, teachers=40, seed=11)
LENGTHS = np.array([30, 12, 45, 20, 33, 18, 40, 42])
IDS = np.repeat(np.arange(LENGTHS.size), LENGTHS)
STARTS = np.concatenate(([0], np.cumsum(LENGTHS)))
SETTING = dict(threshold=30, sigma_threshold=12, sigma=6, per_query=False)


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("budget", [1.5, 4.0, 7.0, 11.0])
def test_the_halt_of_dense_votes_is_an_outputs_first_row_within_the_budget(accounting, budget):
    options = dict(SETTING, accounting=accounting, budget=budget)
    result = analyze(VOTES, "confident", outputs=IDS, halt_at="output", **options)
    halted = result.budget.halted_at
    assert result.epsilon <= budget and result.budget.halt_at == "output"
    query_level = analyze(VOTES, "confident", **options)
    if halted is None:
        assert result.outputs["completed"] == LENGTHS.size
        return
    assert halted in STARTS[:-1] and result.queries == halted
    assert result.outputs["completed"] == int(np.flatnonzero(STARTS == halted)[0])
    assert query_level.budget.halted_at is None or halted <= query_level.budget.halted_at
    if accounting == "expected":  # through the halted output's last row: over the budget
        end = STARTS[np.flatnonzero(STARTS == halted)[0] + 1]
        through = analyze(VOTES, "confident", queries=int(end), **dict(SETTING,
                                                                          accounting=accounting))
        assert (through.epsilon_rdp or through.epsilon) > budget * (1 - 1e-9)


def test_a_path_and_an_array_give_the_same_result(tmp_path):
    np.save(tmp_path / "outs.npy", IDS)
    options = dict(SETTING, accounting="expected", budget=7.0, halt_at="output")
    by_path = analyze(VOTES, outputs=str(tmp_path / "outs.npy"), **options)
    by_array = analyze(VOTES, outputs=IDS, **options)
    assert by_path.to_dict() == by_array.to_dict()
    assert by_array.outputs["count"] == LENGTHS.size
    assert by_array.budget.halted_at in STARTS


def test_dense_outputs_equal_the_sparse_grouping(tmp_path):
    path = tmp_path / "tokens.npz"
    sp.save_npz(path, sp.csr_matrix(VOTES))
    with np.load(path) as archive:
        members = dict(archive)
    np.savez(path, **members, output=IDS)
    options = dict(SETTING, accounting="expected", budget=7.0, halt_at="output")
    sparse = analyze(str(path), **options)
    dense = analyze(VOTES, outputs=IDS, **options)
    assert dense.budget.halted_at == sparse.budget.halted_at
    assert dense.epsilon == pytest.approx(sparse.epsilon, rel=TOLERANCE)
    for key in ("count", "tokens_per_output", "completed"):
        assert dense.outputs[key] == sparse.outputs[key]
    for key, value in sparse.outputs["epsilon_per_output"].items():
        assert dense.outputs["epsilon_per_output"][key] == pytest.approx(value, rel=TOLERANCE)


def test_the_per_query_table_gains_the_output_column():
    frame = analyze(VOTES, outputs=IDS, **dict(SETTING, per_query=True)).to_frame()
    assert frame.columns[-1] == "output"
    np.testing.assert_array_equal(frame["output"], IDS)
    plain = analyze(VOTES, **dict(SETTING, per_query=True))
    assert "output" not in plain.to_frame().columns and plain.outputs is None


def test_outputs_with_query_indices_is_refused_before_reading():
    with pytest.raises(OptionError, match="--outputs does not combine with --query-indices"):
        analyze("no-such-file.npy", outputs="no-such-outputs.npy", query_indices=[0, 1])
