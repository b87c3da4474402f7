"""``analyze(outputs=...)`` (``--outputs``): the output grouping of any input feeds the
per-output figures and ``halt_at="output"`` as a sparse file's own grouping does."""

from __future__ import annotations

import dataclasses
import hashlib

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
    recorded = by_path.to_dict()
    assert recorded.pop("files") == {"outputs": {
        "path": str(tmp_path / "outs.npy"),
        "sha256": hashlib.sha256((tmp_path / "outs.npy").read_bytes()).hexdigest()}}
    from_array = by_array.to_dict()
    assert from_array.pop("files") is None  # an array is no file
    assert recorded == from_array
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


def _reference_halt(votes, ids, *, accounting, budget, mechanism):
    """The first output whose tokens, all charged in full, take the total past ``budget``,
    found output by output in Python from the per-query curves (MATH of the halt)."""
    from pate_cli.accounting.conversion import Conversion
    from pate_cli.analysis.steps import chunk_costs, mechanism_steps
    from pate_cli.inputs.rows import FirstRows
    from pate_cli.mechanisms import NoiseSource
    from pate_cli.orders import default_orders
    orders = default_orders()
    selection, answer = mechanism_steps(mechanism)
    chunk = chunk_costs(votes, FirstRows(votes.shape[0]), 0, votes.shape[0],
                        mechanism=mechanism, selection=selection, answer=answer,
                        noise=NoiseSource(0), accounting=accounting, orders=orders)
    actual = chunk.costs.block(0, votes.shape[0])
    weight = chunk.costs.weight if accounting == "expected" else np.ones(votes.shape[0])
    full = dataclasses.replace(chunk.costs, weight=weight).block(0, votes.shape[0])
    conversion = Conversion.of(orders=orders, delta=1e-5)
    carry = np.zeros(orders.size)
    starts = np.flatnonzero(np.concatenate(([True], np.diff(ids) != 0, [True])))
    for lo, hi in zip(starts[:-1], starts[1:], strict=True):
        if conversion.epsilon((carry + full[lo:hi].sum(axis=0))[None, :])[0][0] > budget:
            return int(lo)
        carry = carry + actual[lo:hi].sum(axis=0)
    return None


@pytest.mark.parametrize("accounting", ["replay", "expected"])
@pytest.mark.parametrize("budget", [3.0, 5.0, 8.0])
def test_one_walk_finds_the_output_halt_across_chunks_and_blocks(monkeypatch, accounting,
                                                                 budget):
    """The halt, the totals and the outputs' figures of one walk (``analysis.budget_run``),
    with outputs crossing chunks of 7 queries and blocks of 50: the halt where an output
    by output reference finds it (up to its rounding margin), the totals those of the run
    of the queries before it, the same for any chunk size."""
    from pate_cli.analysis import budget_run
    monkeypatch.setattr(budget_run, "BUDGET_BLOCK", 50)
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 40, size=40)
    ids = np.repeat(np.arange(lengths.size), lengths)[:VOTES.shape[0]]
    setting = dict(threshold=30, sigma_threshold=20, sigma=15, accounting=accounting)
    options = dict(setting, budget=budget, halt_at="output")
    runs = [analyze(VOTES, "confident", outputs=ids, chunk_size=size, **options)
            for size in (7, 64, None)]
    assert len({(run.budget.halted_at, run.epsilon, run.answered_total) for run in runs}) == 1
    run = runs[0]
    halted = run.budget.halted_at
    assert halted == _reference_halt(VOTES, ids, accounting=accounting, budget=budget,
                                     mechanism=run.mechanism)
    assert halted is None or 50 < halted < VOTES.shape[0]  # the budgets halt midway
    prefix = analyze(VOTES, "confident", queries=halted or VOTES.shape[0], per_query=False,
                     **setting)
    assert run.epsilon == pytest.approx(prefix.epsilon, rel=TOLERANCE)
    assert run.answered_total == pytest.approx(prefix.answered_total, rel=1e-12)
    assert run.epsilon <= budget
    frame = pd_concat(run)
    assert len(frame) == run.queries and frame["epsilon_cumulative"].iloc[-1] == run.epsilon
    whole = np.flatnonzero(np.concatenate(([True], np.diff(ids) != 0, [True])))
    assert run.outputs["completed"] == int(np.count_nonzero(whole[1:] <= run.queries))


def pd_concat(run):
    import pandas as pd
    return pd.concat(list(run.iter_frames()), ignore_index=True)


def test_a_run_with_outputs_a_halt_a_table_and_decisions_reads_each_query_twice(
        tmp_path, monkeypatch):
    """A budget halting at outputs, with a per-query table and decisions written: one walk
    finds the halt, the totals and the outputs' figures; one stream writes both files (the
    table needs the final order): every analysed row is read twice, and the chunk where the
    halting output began once more."""
    from pate_cli.analysis import steps
    from pate_cli.outputs.run_files import run_files
    from pate_cli.outputs.writing import write_outputs
    reads = np.zeros(VOTES.shape[0], dtype=np.int64)
    original = steps.rows_read_once

    def counted(votes, positions, start, stop):
        reads[np.asarray(positions[start:stop])] += 1
        return original(votes, positions, start, stop)

    monkeypatch.setattr(steps, "rows_read_once", counted)
    result = analyze(VOTES, "confident", outputs=IDS, threshold=30, sigma_threshold=20,
                     sigma=15, budget=5, halt_at="output", per_query="stream", chunk_size=16)
    halted = result.budget.halted_at
    assert 16 < halted < VOTES.shape[0] - 16
    walked = reads.copy()
    end = STARTS[np.flatnonzero(STARTS == halted)[0] + 1]  # the halting output's end:
    assert walked[:halted].min() == 1 and walked[end + 16:].max() == 0  # read to decide it
    assert np.count_nonzero(walked == 2) <= 16  # the chunk gone back to
    table, decisions = tmp_path / "q.csv", tmp_path / "d.csv"
    write_outputs(run_files(result, summary_text=lambda: "", per_query=str(table),
                            write_decisions=str(decisions)))
    assert np.array_equal(reads - walked, (np.arange(VOTES.shape[0]) < halted).astype(int))
    assert table.read_text().count("\n") == halted + 1
    assert decisions.read_text().count("\n") == halted + 2  # a comment line, the header


@pytest.mark.parametrize("queries", [31, 41, 50, 88, 239])
def test_queries_inside_an_output_analyse_the_outputs_before_it_whole(queries):
    """``-n N`` never cuts a generation: the whole outputs among the first N queries, with
    a note (a cut output's partial tokens were charged and labelled, and ``--halt-at
    output`` saw only part of it)."""
    start = int(STARTS[np.searchsorted(STARTS, queries, side="right") - 1])
    options = dict(SETTING, accounting="expected", budget=100.0, halt_at="output")
    with pytest.warns(UserWarning, match=f"-n {queries} ends inside output") as caught:
        result = analyze(VOTES, "confident", outputs=IDS, queries=queries, **options)
    assert result.queries == start and result.outputs["completed"] == np.searchsorted(
        STARTS, start)
    assert any(f"the first {start} queries" in note for note in result.warnings)
    plain = analyze(VOTES, "confident", outputs=IDS, queries=start, **options)
    assert result.epsilon == plain.epsilon and plain.warnings == ()
    assert len(caught) == 1


@pytest.mark.parametrize("queries", [30, 42, 87, 240])
def test_queries_at_an_outputs_end_are_kept_as_given(queries):
    result = analyze(VOTES, "confident", outputs=IDS, queries=queries, **SETTING)
    assert result.queries == queries and result.warnings == ()


def test_queries_inside_the_first_output_are_refused():
    with pytest.raises(OptionError, match=r"-n 29 ends inside output 0 \(queries 0 to 29\): "
                                          r"give -n 30 or more"):
        analyze(VOTES, "confident", outputs=IDS, queries=29, **SETTING)
