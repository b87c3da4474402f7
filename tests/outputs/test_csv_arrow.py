"""CSV text by pyarrow's kernels (``outputs.csv_arrow``): ``float_texts`` is ``repr`` for
every float64 (random bits, the edges of each notation, specials), ``csv_bytes`` is pandas'
``to_csv`` for random tables of the per-query column types, a per-query table goes the
pyarrow way (not a silent fallback), and without pyarrow the same bytes come from
``csv_rows``."""

from __future__ import annotations

import builtins

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pate_cli.outputs import csv_arrow
from tests.outputs.test_csv_text import _analysed, float_values, frames, pandas_text

pytest.importorskip("pyarrow")
from pate_cli.outputs.csv_arrow import (  # noqa: E402
    arrow_agrees,
    arrow_rows,
    csv_bytes,
    float_texts,
)


def reprs(values: np.ndarray) -> list:
    return [None if value != value else repr(value) for value in values.tolist()]


def edges() -> np.ndarray:
    """Each power of ten from 1e-12 to 1e17 and its neighbours a few ulps away, both
    signs, and whole numbers near 1e10 and 1e16: where one notation hands over to
    another."""
    powers = 10.0 ** np.arange(-12, 18)
    near = (powers.view(np.int64)[:, None] + np.arange(-3, 4)).ravel().view(np.float64)
    wholes = np.array([9999999999.0, 10000000001.0, 123456789012.0, 9007199254740993.0,
                       2.0**53, 2.0**60, 1e16 - 2, 0.0, -0.0])
    values = np.concatenate([near, wholes, 5e-324 * np.arange(1, 5), [np.inf, -np.inf, np.nan]])
    return np.concatenate([values, -values])


def test_float_texts_at_the_edges_of_each_notation():
    values = edges()
    assert float_texts(values).to_pylist() == reprs(values)


def test_float_texts_of_random_bits_and_magnitudes():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**64, 100_000, dtype=np.uint64, endpoint=False).view(np.float64)
    scaled = rng.standard_normal(200_000) * 10.0 ** rng.integers(-25, 25, 200_000)
    for values in (bits, scaled, np.round(scaled, 2), rng.random(50_000) * 1e-4):
        assert float_texts(values).to_pylist() == reprs(values)


@settings(max_examples=100, deadline=None)
@given(values=hnp.arrays(np.float64, st.integers(1, 200), elements=float_values))
def test_float_texts_are_repr(values):
    assert float_texts(values).to_pylist() == reprs(values)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames())
def test_csv_bytes_are_pandas_to_csv(frame):
    assert csv_bytes(frame) == pandas_text(frame).encode()
    text = arrow_rows(frame)
    assert text is None or text == pandas_text(frame).encode()


@pytest.mark.parametrize("mechanism", ["confident", "interactive"])
def test_a_per_query_table_is_formatted_by_pyarrow(mechanism):
    options = {"student": "mnist_250_student.npy"} if mechanism == "interactive" else {}
    if options:
        from tests import SAMPLES
        options = {"student": SAMPLES / options["student"]}
    frame = _analysed(mechanism, "replay", **options).to_frame()
    assert arrow_rows(frame) == pandas_text(frame).encode()


def test_without_pyarrow_the_bytes_come_from_csv_rows(monkeypatch):
    frame = pd.DataFrame({"x": [1e-5, 0.5, np.nan, 3.0], "n": [1, 2, 3, 4]})
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    assert arrow_rows(frame) is None
    assert csv_bytes(frame) == pandas_text(frame).encode()


def test_blocks_of_a_long_table(monkeypatch):
    monkeypatch.setattr(csv_arrow, "BLOCK", 7)
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.standard_normal(100) * 1e-5, "n": np.arange(100)})
    assert csv_bytes(frame) == pandas_text(frame).encode()


def test_a_pyarrow_writing_another_notation_is_not_used(monkeypatch):
    """If a pyarrow version wrote floats otherwise than the notation csv_arrow rewrites,
    its text is not used: csv_rows writes the table."""
    import pyarrow.compute as pc
    assert arrow_agrees()
    real_cast = pc.cast

    def other_notation(values, target, *args, **kwargs):  # "100.0" for 100, say
        texts = real_cast(values, target, *args, **kwargs)
        return pc.replace_substring_regex(texts, r"^(\d+)$", r"\1.0")

    monkeypatch.setattr(pc, "cast", other_notation)
    arrow_agrees.cache_clear()
    try:
        assert not arrow_agrees()
        frame = pd.DataFrame({"x": [100.0, 1e-5, np.nan], "n": [1, 2, 3]})
        assert arrow_rows(frame) is None
        assert csv_bytes(frame) == pandas_text(frame).encode()
    finally:
        monkeypatch.undo()
        arrow_agrees.cache_clear()
    assert arrow_agrees()
