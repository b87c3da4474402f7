"""SVT-PATE's totals, streamed table and cut-off search in memory that does not grow with
the number of queries (issue 27 item 1): 10x the queries, the same peak. Traced with
tracemalloc (numpy's buffers are traced; the votes are a memory-mapped file, not traced),
with small chunks so that both sizes span many."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.lib.format import open_memmap

import pate_cli
from tests.memory import traced_peak


def strong_votes(path, queries: int, seed: int = 27) -> str:
    """250 teachers split between a random top class and one other: margins of 0 to 250,
    so that a run answers some queries, meets unstable ones and halts."""
    rng = np.random.default_rng(seed)
    out = open_memmap(path, mode="w+", dtype=np.int32, shape=(queries, 10))
    rows = np.arange(queries)
    top = rng.integers(0, 10, queries)
    agree = rng.integers(125, 251, queries)
    out[rows, top] = agree
    out[rows, (top + 1) % 10] = 250 - agree
    out.flush()
    del out
    return str(path)


@pytest.fixture
def small_svt_chunks(monkeypatch, small_stream_chunks):
    from pate_cli.accounting import svt_tuning
    from pate_cli.inputs import vote_checks
    monkeypatch.setattr(svt_tuning, "DISTANCE_ROWS", 2048)
    monkeypatch.setattr(vote_checks, "TABLE_ROWS", 2048)  # the loader's scan


RUNS = {
    # answers some, meets its cut-off: the counts only
    "totals": dict(svt_scale=0.5, svt_cutoff=2000, per_query=False),
    # answers none: the few-answers note bisects over the distances
    "few": dict(svt_scale=200.0, svt_cutoff=50, per_query=False),
    # a replay per candidate cut-off over the distances
    "auto": dict(target_epsilon=400.0, svt_cutoff="auto", per_query=False),
    "stream": dict(svt_scale=0.5, svt_cutoff=2000, per_query="stream"),
}


def _run(path, options):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = pate_cli.analyze(path, "svt", **options)
        for _ in result.iter_frames() if options["per_query"] == "stream" else ():
            pass
    return run


@pytest.mark.parametrize("case", list(RUNS))
def test_svt_memory_does_not_grow_with_the_queries(tmp_path, small_svt_chunks, case):
    small = strong_votes(tmp_path / "small.npy", 2 * 10**4)
    large = strong_votes(tmp_path / "large.npy", 2 * 10**5)
    _run(small, RUNS[case])()  # imports and first-use caches out of the measurement
    grown = traced_peak(_run(large, RUNS[case])) - traced_peak(_run(small, RUNS[case]))
    # the per-query columns of 1.8 x 10^5 more queries would add some 20 MB
    assert grown < 1_000_000, f"{case}: {grown} bytes more at 10x the queries"
