"""Memory bounded by the chunk, for any votes (issue 27): a run over votes that never
repeat (soft, averaged votes) holds no more at 4x the queries. Traced with tracemalloc
(numpy's buffers are traced; the votes are a memory-mapped file, not traced), one worker
thread, small windows and limits so that the bound shows at a test's size."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.format import open_memmap

import pate_cli
from pate_cli import work_sizes
from pate_cli.accounting import grouped
from pate_cli.analysis import per_query_stream
from pate_cli.inputs import vote_checks
from tests.memory import traced_peak

ORDERS = [1.5, 2.0, 4.0, 8.0, 16.0, 32.0]
OPTIONS = dict(threshold=200.0, sigma_threshold=150.0, sigma=40.0, teachers=250.0,
               orders=ORDERS, chunk_size=1024, workers=1)


def soft_votes(path, queries: int, classes: int = 10, seed: int = 27) -> str:
    """Averaged teacher probabilities x 250 (float32): every row distinct."""
    rng = np.random.default_rng(seed)
    out = open_memmap(path, mode="w+", dtype=np.float32, shape=(queries, classes))
    top = rng.integers(0, classes, queries)
    agree = rng.beta(6.0, 1.5, queries)
    rest = rng.dirichlet(np.ones(classes), queries) * (1 - agree)[:, None]
    rest[np.arange(queries), top] += agree
    out[:] = (rest * 250).astype(np.float32)
    out.flush()
    del out
    return str(path)


def small_chunks(monkeypatch):
    """Every chunk (the loader's scan, the table's pass) at most 1,024 rows, and the
    table pass's bounded store of curves 1 MB (64 MB in use)."""
    monkeypatch.setattr(vote_checks, "TABLE_ROWS", 1 << 10)
    monkeypatch.setattr(work_sizes, "TABLE_ROWS", 1 << 10)
    monkeypatch.setattr(per_query_stream, "CURVE_CACHE_BYTES", 1 << 20)


@pytest.fixture
def small_bounds(monkeypatch):
    small_chunks(monkeypatch)
    monkeypatch.setattr(grouped, "TOTALS_WINDOW", 1 << 9)
    monkeypatch.setattr(grouped, "TABLE_LIMIT", 1 << 11)


def _totals(path, **extra):
    return lambda: pate_cli.analyze(path, "confident", per_query=False,
                                    accounting="expected", **OPTIONS, **extra)


def _stream(path):
    def run():
        result = pate_cli.analyze(path, "confident", per_query="stream",
                                  accounting="expected", **OPTIONS)
        for _ in result.iter_frames():
            pass
    return run


@pytest.mark.parametrize("case", ["totals", "replay", "budget", "stream"])
def test_memory_does_not_grow_with_distinct_queries(tmp_path, small_bounds, case):
    small = soft_votes(tmp_path / "small.npy", 1 << 14)
    large = soft_votes(tmp_path / "large.npy", 1 << 16)
    make = {"totals": _totals, "stream": _stream,
            "replay": lambda p: lambda: pate_cli.analyze(
                p, "confident", per_query=False, accounting="replay", **OPTIONS),
            "budget": lambda p: _totals(p, budget=1e9)}[case]
    make(small)()  # imports and first-use caches out of the measurement
    grown = traced_peak(make(large)) - traced_peak(make(small))
    # unbounded, the distinct pairs of 3 x 2^14 more queries (32 bytes each, and the
    # merges' work arrays) would add several MB
    assert grown < 600_000, f"{case}: {grown} bytes more at 4x the queries"


def test_the_check_can_fail(tmp_path, monkeypatch):
    """With the table unbounded, the same measurement sees the growth."""
    small_chunks(monkeypatch)
    monkeypatch.setattr(grouped, "TOTALS_WINDOW", 1 << 9)
    monkeypatch.setattr(grouped, "TABLE_LIMIT", 1 << 40)
    monkeypatch.setattr(grouped, "MERGE_GAIN", 0.0)
    small = soft_votes(tmp_path / "small.npy", 1 << 14)
    large = soft_votes(tmp_path / "large.npy", 1 << 16)
    _totals(small)()
    assert traced_peak(_totals(large)) - traced_peak(_totals(small)) > 1_500_000


def _decisions(path):
    """``pate-analyze --write-decisions d.csv``: written a piece at a time."""
    from pate_cli.cli.analyze import main

    def run():
        with pytest.raises(SystemExit) as done:
            main([path, "--accounting", "expected", "--teachers", "250", "--workers", "1",
                  "--orders", ",".join(str(order) for order in ORDERS),
                  "--write-decisions", path + ".decisions.csv", "-o", path + ".txt"])
        assert done.value.code == 0
    return run


def test_written_decisions_do_not_grow_with_distinct_queries(tmp_path, small_bounds):
    small = soft_votes(tmp_path / "small.npy", 1 << 14)
    large = soft_votes(tmp_path / "large.npy", 1 << 16)
    _decisions(small)()
    grown = traced_peak(_decisions(large)) - traced_peak(_decisions(small))
    assert grown < 600_000, f"{grown} bytes more at 4x the queries"
    assert (tmp_path / "large.npy.decisions.csv").read_text().count("\n") == (1 << 16) + 2


def test_the_table_pass_lets_the_file_pages_go(tmp_path, monkeypatch):
    """The second pass reads a memory-mapped file once and lets each chunk's pages go
    (else the whole file stays resident: 400 MB of a 10^7 x 10 float32 file)."""
    from pate_cli.inputs import rows

    monkeypatch.setattr(work_sizes, "TABLE_ROWS", 1 << 10)
    dropped: list[tuple[int, int]] = []
    real = rows.drop_mapped_rows

    def spy(array, lo, hi):
        assert isinstance(array, np.memmap)
        dropped.append((lo, hi))
        real(array, lo, hi)

    monkeypatch.setattr(rows, "drop_mapped_rows", spy)
    path = soft_votes(tmp_path / "votes.npy", 5000)
    result = pate_cli.analyze(path, "confident", per_query="stream", accounting="expected",
                              **OPTIONS)
    dropped.clear()  # the totals' pass lets its pages go too; here, the table's pass
    assert sum(len(frame) for frame in result.iter_frames()) == 5000
    assert sorted(dropped) == [(lo, min(lo + 1024, 5000)) for lo in range(0, 5000, 1024)]


@pytest.mark.parametrize("accounting", ["expected", "replay"])
def test_a_run_summed_in_several_tables_is_the_same_in_every_mode(tmp_path, monkeypatch,
                                                                  accounting):
    """Tables summed apart (small windows and limit): the totals-only run, the run that
    keeps its columns and the streamed table agree byte for byte, whatever the chunk
    size; and the totals stay within 1e-12 of one table's."""
    import pandas as pd

    path = soft_votes(tmp_path / "votes.npy", 6000)
    options = dict(OPTIONS, accounting=accounting)
    one_table = pate_cli.analyze(path, "confident", per_query=False, **options)
    monkeypatch.setattr(grouped, "TOTALS_WINDOW", 1 << 9)
    monkeypatch.setattr(grouped, "TABLE_LIMIT", 700)
    totals = pate_cli.analyze(path, "confident", per_query=False, **options)
    other_chunks = pate_cli.analyze(path, "confident", per_query=False,
                                    **dict(options, chunk_size=333, workers=2))
    kept = pate_cli.analyze(path, "confident", per_query=True, **options)
    streamed = pate_cli.analyze(path, "confident", per_query="stream", **options)
    assert streamed.distinct_pairs is None  # summed apart: no whole table to look up
    assert totals.to_dict() == other_chunks.to_dict() == kept.to_dict() == streamed.to_dict()
    pd.testing.assert_frame_equal(pd.concat(list(streamed.iter_frames()), ignore_index=True),
                                  kept.to_frame())
    np.testing.assert_allclose(totals.rdp_total, one_table.rdp_total, rtol=1e-12, atol=0)
    assert abs(totals.epsilon - one_table.epsilon) <= 1e-12 * one_table.epsilon
