"""The per-query table streamed by a second pass (analysis.per_query_stream): the same
bytes as the table held in memory, in a bounded amount of memory."""

from __future__ import annotations

import functools
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.analysis.result import NoColumnsError
from pate_cli.outputs.files import per_query_stream_chunks
from tests.analysis.test_totals_only import runs


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), rows=st.sampled_from([1, 7, 64, 1 << 16]), chunk=st.sampled_from([1, 5, 64]),
       extension=st.sampled_from(["csv", "jsonl", "parquet"]))
def test_the_streamed_table_does_not_depend_on_its_chunks(run, rows, chunk, extension):
    """The table's pass in chunks of ``chunk`` queries (the pass's own argument) gives the
    bytes of the default pass, in whole or in pieces of ``rows``; the values themselves are
    checked against the per-row reference in tests/analysis/test_analysis.py."""
    votes, name, options = run
    result = _quiet(pate_cli.analyze, votes, name, **options)
    pass_ = result.frames
    assert isinstance(pass_, functools.partial)  # per_query_stream.per_query_frames
    chunked = _quiet(lambda: list(pass_.func(result, *pass_.args,
                                              **{**pass_.keywords, "chunk_size": chunk})))
    assert sum(map(len, chunked)) == result.queries
    assert len(chunked) == max(1, -(-result.queries // chunk))
    path = f"table.{extension}"
    expected = b"".join(per_query_stream_chunks([result.to_frame()], path, rows=rows))
    assert b"".join(per_query_stream_chunks(iter(chunked), path, rows=rows)) == expected


def test_a_budget_run_that_halts_at_once_streams_the_header_only():
    votes = np.tile([[40.0, 5.0, 5.0]], (20, 1))
    held = pate_cli.analyze(votes, "gnmax", sigma=0.5, budget=1e-3)
    streamed = pate_cli.analyze(votes, "gnmax", sigma=0.5, budget=1e-3, per_query="stream")
    assert held.budget.halted_at == 0
    for path in ("t.csv", "t.jsonl"):
        assert b"".join(per_query_stream_chunks(streamed.iter_frames(), path)) == \
            b"".join(per_query_stream_chunks([held.to_frame()], path))


def test_a_totals_only_result_has_no_frames_to_give():
    result = pate_cli.analyze(np.tile([[9.0, 1.0]], (5, 1)), "gnmax", sigma=1.0,
                              per_query=False)
    with pytest.raises(NoColumnsError):
        list(result.iter_frames())


def _peak_writing_table(cli, path, out) -> int:
    tracemalloc.start()
    try:
        assert cli.analyze(path, "--per-query", out, "--workers", "1").code == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_pate_analyze_writes_its_table_in_memory_that_does_not_grow(cli, tmp_path,
                                                                    small_stream_chunks):
    """Four times the queries, the same peak (the columns held in memory would grow by
    about 10 MB), and the file the in-memory table gives. Chunks are made small (8,192
    rows in every pass) so that both files span several, and a first call pays for
    the imports and caches before anything is measured. The answer curves kept across
    chunks are capped (at 64 MB; here 1 MB, which both sizes fill), and the chunks
    formed ahead on threads are a few (the table pass's chunks are 2,048 rows here, so
    that both sizes have more than those in flight). One thread forms the chunks: with
    more, the chunks in flight at the peak depend on timing (a few MB either way on a
    loaded machine), which is not growth."""
    rng = np.random.default_rng(0)
    peaks = []
    for queries in (2_000, 20_000, 80_000):
        votes = rng.multinomial(50, [0.7, 0.1, 0.1, 0.1], size=queries).astype(np.int16)
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, votes)
        out = tmp_path / f"q{queries}.csv"
        peaks.append(_peak_writing_table(cli, path, out))
    assert peaks[2] < peaks[1] + 4e6, peaks
    held = pate_cli.analyze(pate_cli.load_votes(path), "confident")
    assert out.read_bytes() == b"".join(per_query_stream_chunks([held.to_frame()], str(out)))


@pytest.mark.parametrize("name,accounting,conversion", [
    ("confident", "expected", "classic"), ("confident", "replay", "improved"),
    ("gnmax", "data-independent", "classic"), ("lnmax", "replay", "classic"),
    ("interactive", "expected", "improved")])
def test_the_pass_drops_dead_orders_and_looks_up_own_epsilons_with_the_same_bytes(
        monkeypatch, name, accounting, conversion):
    """A run long and costly enough that most orders can no longer give a cumulative
    epsilon (accounting.live_orders) and whose own epsilons come from its distinct
    statistic pairs (accounting.own_epsilons): the table held in memory, byte for byte."""
    from pate_cli import work_sizes
    from pate_cli.accounting.live_orders import LiveOrders
    from pate_cli.accounting.own_epsilons import OwnEpsilons
    monkeypatch.setattr(work_sizes, "TABLE_ROWS", 256)
    live, found = [], []
    running, lookup = LiveOrders.running, OwnEpsilons.lookup
    monkeypatch.setattr(LiveOrders, "running", lambda self, *args: (
        live.append(self.live.size), running(self, *args))[1])
    monkeypatch.setattr(OwnEpsilons, "lookup", lambda self, *args: (
        found.append(lookup(self, *args)), found[-1])[1])
    rng = np.random.default_rng(11)
    votes = rng.multinomial(60, [0.6, 0.2, 0.1, 0.1], size=3000).astype(np.float64)
    options = dict(accounting=accounting, conversion=conversion, sigma=6.0)
    if name == "lnmax":
        options = dict(accounting=accounting, conversion=conversion, laplace_scale=4.0)
    elif name in ("confident", "interactive"):
        options.update(threshold=30.0, sigma_threshold=10.0)
    if name == "interactive":
        options["student"] = rng.dirichlet(np.ones(4), size=3000)
    held = _quiet(pate_cli.analyze, votes, name, **options)
    streamed = _quiet(pate_cli.analyze, votes, name, per_query="stream", **options)
    for path in ("t.csv", "t.jsonl"):
        assert b"".join(per_query_stream_chunks(streamed.iter_frames(), path)) == \
            b"".join(per_query_stream_chunks([held.to_frame()], path))
    assert min(live) < len(streamed.orders) // 4, live
    assert found and all(figures is not None for figures in found)


@pytest.mark.parametrize("options", [
    dict(mechanism="confident", threshold=30.0, sigma_threshold=10.0, sigma=5.0),
    dict(mechanism="gnmax", sigma=0.5, budget=1e-3),  # halts at once: no rows
    dict(mechanism="gnmax", sigma=4.0, budget=2.0, accounting="expected"),
    dict(mechanism="lnmax", laplace_scale=5.0, query_indices=np.arange(59, -1, -2)),
])
def test_a_streamed_result_gives_the_held_table_and_decisions(options):
    """per_query="stream": to_frame() and decisions_of() put the stream together, the
    very table and decisions a run that kept its columns gives."""
    from pate_cli.analysis.per_query_stream import decisions_of

    rng = np.random.default_rng(5)
    votes = rng.multinomial(50, [0.6, 0.25, 0.15], size=60).astype(np.float64)
    options = dict(options)
    mechanism = options.pop("mechanism")
    held = pate_cli.analyze(votes, mechanism, **options)
    streamed = pate_cli.analyze(votes, mechanism, **options, per_query="stream")
    assert streamed.counts is not None  # no columns kept
    pd.testing.assert_frame_equal(streamed.to_frame(), held.to_frame())
    ours, theirs = decisions_of(streamed), decisions_of(held)
    for key in ("query", "outcome", "label"):
        np.testing.assert_array_equal(getattr(ours, key), getattr(theirs, key))
