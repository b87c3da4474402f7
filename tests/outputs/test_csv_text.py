"""CSV text formatted a column at a time (``outputs.csv_text.csv_rows``): byte for byte
pandas' ``to_csv(index=False, header=False, lineterminator="\\n")``, for random tables of
the per-query table's column types (floats over the whole float64 range, missing values,
repeated values formatted once, text needing quotes), for a table of one column, across
blocks, for the types left to pandas, and for real per-query tables written whole, in
chunks and streamed."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pate_cli
from pate_cli.outputs import csv_text
from pate_cli.outputs.csv_text import csv_rows
from pate_cli.outputs.files import per_query_bytes, per_query_chunks, per_query_stream_chunks
from tests import SAMPLES


def pandas_text(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, header=False, lineterminator="\n")


SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-05, 0.0001, 9.999999999999999e-05, 1e15, 1e16, 1e+22,
           9999999999999998.0, 0.1, 1 / 3, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
           np.nan, np.inf, -np.inf]
float_values = st.one_of(
    st.floats(width=64, allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.integers(-(2**60), 2**60).map(float),                       # integer-valued floats
    st.integers(0, 2**64 - 1).map(lambda bits: float(np.uint64(bits).view(np.float64))),
    st.sampled_from(SPECIAL),
)
TEXT = ["teacher", "student", "abstain", "", "a,b", 'qu"ote', "line\nbreak", "cr\rlf", " x",
        "é"]


@st.composite
def columns(draw, rows: int):
    """One column of ``rows`` values of a per-query type; either free values or a few
    values repeated (the path that formats each distinct value once)."""
    kind = draw(st.sampled_from(["float64", "int64", "bool", "int8", "uint8", "Int64",
                                 "boolean", "str", "object"]))
    pool = draw(st.integers(1, 4)) if draw(st.booleans()) else None

    def values(strategy):
        if pool is not None:
            strategy = st.sampled_from(draw(st.lists(strategy, min_size=pool, max_size=pool)))
        return draw(st.lists(strategy, min_size=rows, max_size=rows))

    if kind == "float64":
        return np.asarray(values(float_values), dtype=np.float64)
    if kind == "int64":
        return np.asarray(values(st.integers(-(2**63), 2**63 - 1)), dtype=np.int64)
    if kind == "bool":
        return np.asarray(values(st.booleans()), dtype=bool)
    if kind in ("int8", "uint8"):
        info = np.iinfo(kind)
        return np.asarray(values(st.integers(int(info.min), int(info.max))), dtype=kind)
    if kind == "Int64":
        return pd.array(values(st.none() | st.integers(-(2**63), 2**63 - 1)), dtype="Int64")
    if kind == "boolean":
        return pd.array(values(st.none() | st.booleans()), dtype="boolean")
    text = values(st.none() | st.sampled_from(TEXT) | st.text(max_size=5))
    if kind == "object":
        return np.asarray(text + [None], dtype=object)[:rows]  # object, not str dtype
    return pd.array(text, dtype="str")


@st.composite
def frames(draw):
    rows = draw(st.integers(0, 40))
    width = draw(st.integers(1, 6))
    return pd.DataFrame({f"c{number}": draw(columns(rows)) for number in range(width)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames())
def test_the_text_is_pandas_to_csv(frame):
    assert csv_rows(frame) == pandas_text(frame)


@settings(max_examples=100, deadline=None)
@given(values=hnp.arrays(np.float64, st.integers(0, 300), elements=float_values))
def test_floats_over_the_whole_range_one_or_two_columns(values):
    alone = pd.DataFrame({"x": values})
    assert csv_rows(alone) == pandas_text(alone)  # a lone nan is written ""
    pair = pd.DataFrame({"x": values, "y": values[::-1]})
    assert csv_rows(pair) == pandas_text(pair)


def test_random_float_bits_and_blocks(monkeypatch):
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**64, 200_000, dtype=np.uint64, endpoint=False)
    frame = pd.DataFrame({"x": bits.view(np.float64), "n": bits.view(np.int64),
                          "r": np.round(rng.standard_normal(bits.size), 1)})
    assert csv_rows(frame) == pandas_text(frame)
    monkeypatch.setattr(csv_text, "BLOCK", 7)
    monkeypatch.setattr(csv_text, "PROBE", 3)
    assert csv_rows(frame.iloc[:1000]) == pandas_text(frame.iloc[:1000])


def test_empty_tables():
    empty = pd.DataFrame({"a": np.zeros(0), "b": np.zeros(0, np.int64)})
    assert csv_rows(empty) == pandas_text(empty) == ""
    assert csv_rows(pd.DataFrame()) == pandas_text(pd.DataFrame()) == ""
    no_columns = pd.DataFrame(index=range(3))
    assert csv_rows(no_columns) == pandas_text(no_columns)


@pytest.mark.parametrize("column", [
    np.linspace(0, 1, 5, dtype=np.float32),
    pd.array([0.5, None, 1.0, 2.0, 3.0], dtype="Float64"),
    pd.Categorical(["a", "b", "a", "c,d", "a"]),
    pd.date_range("2024-01-01", periods=5),
    np.asarray([1, "a", 2.5, None, (1, 2)], dtype=object),
    np.asarray([1.5, 2.0, 3.0, 4.0, 5.0], dtype=object),
])
def test_other_types_are_left_to_pandas(column):
    frame = pd.DataFrame({"x": np.arange(5.0), "other": column})
    assert csv_text._cells(frame["other"]) is None
    assert csv_rows(frame) == pandas_text(frame)


def _analysed(mechanism, accounting, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(SAMPLES / "mnist_250_votes.npy", mechanism, queries=3000,
                                accounting=accounting,
                                labels=SAMPLES / "mnist_250_labels.npy", **options)


@pytest.mark.parametrize("mechanism", ["confident", "lnmax", "svt", "interactive"])
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_real_per_query_tables(mechanism, accounting):
    options = ({"student": SAMPLES / "mnist_250_student.npy"}
               if mechanism == "interactive" else {})
    frame = _analysed(mechanism, accounting, **options).to_frame()
    whole = frame.to_csv(index=False, lineterminator="\n").encode()
    assert csv_rows(frame) == pandas_text(frame)
    assert per_query_bytes(frame, "x.csv") == whole
    assert b"".join(per_query_chunks(frame, "x.csv", rows=333)) == whole
    streamed = _analysed(mechanism, accounting, per_query="stream", **options)
    assert b"".join(per_query_stream_chunks(streamed.iter_frames(), "x.csv", rows=500)) \
        == whole
