"""CSV tables through one formatter (``outputs.csv_table``): pyarrow's CSV writer, or pandas'
``to_csv`` without pyarrow. The tolerance rule: every number reads back to the same float64
(0 in value, to the bit: ``-0.0`` keeps its sign), only the text may differ. Tested on random
tables of the per-query column types (floats over the whole range and the notations' edges:
1e-5, 6e-7, 100.0, -0.0, inf, nan, 5e-324, 1e+16, 3.3e10), each notation pinned on hand-made
rows, and real per-query tables written with and without pyarrow (its import taken away),
whole, in chunks and streamed, read back by ``inputs.tables.read_table`` to the same values
and column types."""

from __future__ import annotations

import io
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.inputs.table_pieces import read_table
from pate_cli.inputs.tables import PER_QUERY
from pate_cli.outputs.csv_table import csv_header, csv_rows, pandas_rows
from pate_cli.outputs.files import per_query_bytes, per_query_stream_chunks
from tests import SAMPLES

pytest.importorskip("pyarrow")

BRIEF = [1e-5, 6e-7, 100.0, -0.0, np.inf, np.nan, 5e-324, 1e16, 3.3e10]
SPECIAL = [*BRIEF, 0.0, 1.0, -1.0, 1e-4, 9.999999999999999e-05, 1e15, 1e22, -np.inf,
           9999999999999998.0, 9007199254740993.0, 2.0**53, 2.0**60, 123456789012.5, 0.1,
           1 / 3, 2.2250738585072014e-308, 1.7976931348623157e308, 33654947559.646854]
float_values = st.one_of(
    st.floats(width=64, allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.integers(-(2**60), 2**60).map(float),  # whole floats: pyarrow writes them as "100"
    st.integers(0, 2**64 - 1).map(lambda bits: float(np.uint64(bits).view(np.float64))),
    st.sampled_from(SPECIAL),
)
TEXT = ["teacher", "student", "abstain", "a,b", 'qu"ote', "line\nbreak", " x", "é"]


def without_pyarrow(monkeypatch) -> None:
    """``import pyarrow`` raises ImportError from here on (the ``parquet`` extra absent)."""
    for name in ("pyarrow", "pyarrow.csv"):
        monkeypatch.setitem(sys.modules, name, None)


def bits(values) -> np.ndarray:
    """Float64 values as their bits (nan as one pattern), so that -0.0 != 0.0."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), np.nan, values).view(np.int64)


@st.composite
def tables(draw):
    """A table of the per-query types: float64 columns, int64, nullable Int64, text."""
    rows = draw(st.integers(1, 40))
    frame = {"query": np.arange(rows)}
    for number in range(draw(st.integers(1, 4))):
        frame[f"x{number}"] = np.asarray(draw(st.lists(float_values, min_size=rows,
                                                       max_size=rows)), dtype=np.float64)
    frame["n"] = np.asarray(draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=rows,
                                          max_size=rows)), dtype=np.int64)
    frame["label"] = pd.array(draw(st.lists(st.none() | st.integers(0, 9), min_size=rows,
                                            max_size=rows)), dtype="Int64")
    frame["outcome"] = pd.array(draw(st.lists(st.sampled_from(TEXT), min_size=rows,
                                              max_size=rows)), dtype="str")
    return pd.DataFrame(frame)


def read_back(text: bytes, frame: pd.DataFrame) -> pd.DataFrame:
    floats = {column: np.float64 for column in frame.columns if column.startswith("x")}
    return pd.read_csv(io.BytesIO(text), keep_default_na=False, na_values=[""],
                       dtype={**floats, "outcome": str, "label": "Int64"})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=tables())
def test_both_notations_read_back_the_same_floats(frame):
    arrow, pandas = csv_rows(frame), pandas_rows(frame)
    assert arrow.count(b"\n") >= len(frame)
    for text in (arrow, pandas):
        back = read_back(csv_header(frame) + text, frame)
        for column in frame.columns:
            if column.startswith("x"):
                assert np.array_equal(bits(back[column]), bits(frame[column])), column
            else:
                assert back[column].tolist() == frame[column].tolist(), column


def test_each_notation_on_hand_made_rows(monkeypatch):
    frame = pd.DataFrame({"x": BRIEF, "n": np.arange(9),
                          "label": pd.array([1, None] * 4 + [2], dtype="Int64"),
                          "outcome": ["teacher", "a,b"] * 4 + ["student"]})
    arrow = csv_rows(frame).decode().splitlines()
    assert [line.split(",")[0] for line in arrow] == [
        "0.00001", "6e-7", "100", "-0", "inf", "", "5e-324", "1e+16", "3.3e+10"]
    assert arrow[:2] == ['0.00001,0,1,"teacher"', '6e-7,1,,"a,b"']
    without_pyarrow(monkeypatch)
    pandas = csv_rows(frame).decode().splitlines()
    assert [line.split(",")[0] for line in pandas] == [
        "1e-05", "6e-07", "100.0", "-0.0", "inf", "", "5e-324", "1e+16", "33000000000.0"]
    assert pandas[:2] == ["1e-05,0,1,teacher", '6e-07,1,,"a,b"']
    assert csv_header(frame) == b"x,n,label,outcome\n"
    assert csv_rows(frame.iloc[:0]) == b""


def _analysed(mechanism, accounting, per_query=True, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(SAMPLES / "mnist_250_votes.npy", mechanism, queries=3000,
                                accounting=accounting, per_query=per_query,
                                labels=SAMPLES / "mnist_250_labels.npy", **options)


def _written(tmp_path, name: str, data: bytes) -> pd.DataFrame:
    path = tmp_path / name
    path.write_bytes(data)
    return read_table(path, expected=PER_QUERY)


@pytest.mark.parametrize("mechanism", ["confident", "lnmax", "svt", "interactive"])
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_real_per_query_tables_with_and_without_pyarrow(tmp_path, monkeypatch, mechanism,
                                                        accounting):
    options = ({"student": SAMPLES / "mnist_250_student.npy"}
               if mechanism == "interactive" else {})
    frame = _analysed(mechanism, accounting, **options).to_frame()
    arrow = per_query_bytes(frame, "x.csv")
    assert b"".join(per_query_stream_chunks([frame], "x.csv", rows=333)) == arrow
    streamed = _analysed(mechanism, accounting, per_query="stream", **options)
    assert b"".join(per_query_stream_chunks(streamed.iter_frames(), "x.csv", rows=500)) \
        == arrow
    with monkeypatch.context() as patched:
        without_pyarrow(patched)
        pandas = per_query_bytes(frame, "x.csv")
        assert b"".join(per_query_stream_chunks([frame], "x.csv", rows=333)) == pandas
    assert pandas == frame.to_csv(index=False, lineterminator="\n").encode()
    one, two = _written(tmp_path, "a.csv", arrow), _written(tmp_path, "p.csv", pandas)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    for column in frame.columns:
        if frame[column].dtype == np.float64:
            assert one[column].dtype == np.float64, column
            assert np.array_equal(bits(one[column]), bits(frame[column])), column
        elif column == "outcome":
            assert one[column].tolist() == frame[column].tolist()
        else:  # integers (label: float64 with nan where no label, as pandas reads it)
            assert np.array_equal(one[column].to_numpy(dtype=np.float64, na_value=np.nan),
                                  frame[column].to_numpy(dtype=np.float64, na_value=np.nan),
                                  equal_nan=True), column


def test_whole_floats_stay_floats_and_negative_zero_keeps_its_sign(tmp_path, monkeypatch):
    """A float column whose every value is whole (``order_cumulative`` 73.0, ``answered``
    1.0 under expected accounting) is written ``73`` by pyarrow and read as float64."""
    frame = pd.DataFrame({"query": [0, 1], "answered": [1.0, 0.0], "log_q": [-0.0, -1.5],
                          "epsilon_cumulative": [0.5, 1.0], "order_cumulative": [73.0, 100.0],
                          "label": pd.array([3, None], dtype="Int64")})
    text = per_query_bytes(frame, "x.csv")
    assert b"\n0,1,-0,0.5,73,3\n" in b"\n" + text
    back = _written(tmp_path, "q.csv", text)
    assert back["order_cumulative"].dtype == back["answered"].dtype == np.float64
    assert np.signbit(back["log_q"].iloc[0]) and back["query"].dtype == np.int64
    without_pyarrow(monkeypatch)
    pd.testing.assert_frame_equal(_written(tmp_path, "p.csv", per_query_bytes(frame, "x.csv")),
                                  back, check_exact=True)


def test_text_in_a_float_column_is_read_as_it_is(tmp_path):
    """A table that is not ours (text where a float belongs) still reads; the caller's
    column check names the cell."""
    from pate_cli.errors import InputError
    from pate_cli.inputs.tables import numeric_column
    frame = _written(tmp_path, "q.csv", b"query,epsilon_cumulative\n0,0.5\n1,x\n")
    assert frame["epsilon_cumulative"].tolist() == ["0.5", "x"]
    with pytest.raises(InputError, match="row 1: column 'epsilon_cumulative' has 'x'"):
        numeric_column(frame, "q.csv", "epsilon_cumulative")


def test_rows_after_an_empty_piece_are_written_whole():
    """A frame concatenated from an empty piece and another holds pyarrow string arrays
    whose first chunk is empty; pyarrow 26's CSV writer wrote such a column as some
    100 KB of NUL bytes (a streamed rounds table whose frame ended on a piece's edge).
    Its rows are those of the frame alone, and a stream cut there is the whole table's."""
    one = pd.DataFrame({"query": [7], "outcome": np.asarray(["teacher"]), "x": [0.5]})
    joined = pd.concat([one.iloc[1:], one], ignore_index=True)
    assert csv_rows(joined) == csv_rows(one) == b'7,"teacher",0.5\n'
    frames = [pd.concat([one] * 50, ignore_index=True), one]
    whole = pd.concat(frames, ignore_index=True)
    for path in ("t.csv", "t.jsonl", "t.parquet"):
        assert b"".join(per_query_stream_chunks(iter(frames), path, rows=50)) == \
            b"".join(per_query_stream_chunks([whole], path, rows=50)), path
