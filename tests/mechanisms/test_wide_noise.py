"""Noise over wide rows (math:mechanisms): the rows of a block too wide to form whole are drawn
as needed, the very values the whole block holds, with memory bounded by the rows."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli.mechanisms import noise
from pate_cli.mechanisms.noise import NOISE_BLOCK, NoiseSource, generator


def whole_block(seed: int, stream: int, kind: str, width: int, index: int) -> np.ndarray:
    draws = generator(seed, (0, stream, index))
    if kind == "normal":
        return draws.standard_normal((NOISE_BLOCK, width))
    return draws.laplace(0.0, 1.0, (NOISE_BLOCK, width))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(["normal", "laplace"]),
       cuts=st.lists(st.integers(1, 700), min_size=1, max_size=5),
       first=st.integers(0, 1500))
def test_wide_rows_are_the_whole_blocks_values(monkeypatch, kind, cuts, first):
    # the same values on both sides of the patch: set once for every example
    monkeypatch.setattr(noise, "WHOLE_BLOCK_VALUES", 1024)  # every width 2+ is "wide"
    monkeypatch.setattr(noise, "SKIP_VALUES", 64)
    width = 3
    source = NoiseSource(5)
    start = first
    for count in cuts:  # consecutive chunks, as a run reads them
        got = source.draw(stream=2, kind=kind, start=start, count=count, width=width)
        blocks = np.concatenate([whole_block(5, 2, kind, width, b) for b in
                                 range(start // NOISE_BLOCK,
                                       (start + count - 1) // NOISE_BLOCK + 1)])
        offset = start - (start // NOISE_BLOCK) * NOISE_BLOCK
        np.testing.assert_array_equal(got, blocks[offset:offset + count])
        start += count
    # a chunk read again, out of order, is the same
    again = NoiseSource(5).draw(stream=2, kind=kind, start=first, count=cuts[0], width=width)
    np.testing.assert_array_equal(
        again, source.draw(stream=2, kind=kind, start=first, count=cuts[0], width=width))


@pytest.mark.parametrize("kind", ["normal", "laplace"])
def test_a_wide_row_never_forms_its_block(kind):
    """One row over 10^5 classes: the whole block would be 1,024 x 10^5 values (819 MB);
    the draw holds a few rows' worth."""
    width = 100_000
    tracemalloc.start()
    try:
        rows = NoiseSource(1).draw(stream=2, kind=kind, start=70, count=2, width=width)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows.shape == (2, width)
    assert peak < 40 * width * 8  # SKIP_VALUES (8 MB) and the rows, not 1,024 rows
    reference = generator(1, (0, 2, 0))
    skipped = 70 * width  # 7 x 10^6 values: the draw skips them in several pieces
    while skipped:  # the reference: every value before row 70 drawn and dropped
        part = min(skipped, 1 << 22)
        (reference.standard_normal(part) if kind == "normal"
         else reference.laplace(0.0, 1.0, part))
        skipped -= part
    expected = (reference.standard_normal((2, width)) if kind == "normal"
                else reference.laplace(0.0, 1.0, (2, width)))
    np.testing.assert_array_equal(rows, expected)
