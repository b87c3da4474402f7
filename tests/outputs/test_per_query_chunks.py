"""Per-query tables written a chunk of rows at a time (issue 14 item 2, the writing part).

JSON lines are formatted column by column (``outputs.files.json_lines``); the bytes must
equal ``json.dumps`` of each row's dict as before (the reference below is the former
writer), for any column types, missing and non-finite values and any chunk size. CSV in
chunks equals the whole table's text (``test_csv_table`` reads it back); parquet in row
groups reads back the same table.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pate_cli
from pate_cli.outputs.files import json_lines, per_query_bytes, per_query_stream_chunks

SAMPLES = Path(__file__).resolve().parents[2] / "sample_votes"


def reference_json_lines(frame: pd.DataFrame) -> str:
    """The former writer: a dict per row through ``json.dumps``."""
    def plain(value):
        if isinstance(value, np.generic):
            value = value.item()
            if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                value = int(value)
        return None if isinstance(value, float) and not math.isfinite(value) else value
    records = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return "".join(json.dumps({k: plain(v) for k, v in r.items()}, allow_nan=False) + "\n"
                   for r in records)


floats = hnp.arrays(np.float64, st.integers(0, 40),
                    elements=st.floats(allow_nan=True, allow_infinity=True, width=64))


@settings(max_examples=60, deadline=None)
@given(values=floats, seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 50))
def test_json_lines_equal_json_dumps_of_each_row(values, seed, rows):
    rng = np.random.default_rng(seed)
    n = values.size
    label = pd.array(rng.integers(-5, 10, n), dtype="Int64")
    label[rng.random(n) < 0.3] = pd.NA
    frame = pd.DataFrame({
        "query": np.arange(n), "value": values, "label": label,
        "flag": rng.random(n) < 0.5, "small": rng.integers(0, 9, n).astype(np.uint8),
        "f32": rng.standard_normal(n).astype(np.float32),
        "outcome": np.asarray(["teacher", "student", "abstain", 'qu"ote é'])[
            rng.integers(0, 4, n)],
    })
    expected = reference_json_lines(frame)
    assert json_lines(frame) == expected
    assert b"".join(per_query_stream_chunks([frame], "q.jsonl", rows=rows)) == expected.encode()
    csv = per_query_bytes(frame, "q.csv")
    assert b"".join(per_query_stream_chunks([frame], "q.csv", rows=rows)) == csv


@pytest.mark.parametrize("mechanism", ["confident", "lnmax", "svt"])
@pytest.mark.parametrize("accounting", ["replay", "expected"])
def test_real_per_query_tables_are_unchanged(mechanism, accounting):
    frame = pate_cli.analyze(SAMPLES / "mnist_250_votes.npy", mechanism, queries=2000,
                             accounting=accounting,
                             labels=SAMPLES / "mnist_250_labels.npy").to_frame()
    assert per_query_bytes(frame, "x.jsonl") == reference_json_lines(frame).encode()
    assert b"".join(per_query_stream_chunks([frame], "x.jsonl", rows=333)) == \
        reference_json_lines(frame).encode()


def test_parquet_row_groups_read_back_the_same_table():
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    frame = pd.DataFrame({"query": np.arange(1000), "epsilon": np.linspace(0, 1, 1000)})
    data = b"".join(per_query_stream_chunks([frame], "q.parquet", rows=300))
    table = pq.ParquetFile(io.BytesIO(data))
    assert table.num_row_groups == 4
    assert table.read().to_pandas().equals(frame)


def test_unknown_extension_is_refused_before_any_bytes():
    with pytest.raises(ValueError, match="unknown extension"):
        per_query_stream_chunks([pd.DataFrame({"a": [1]})], "q.txt")


def test_pieces_are_written_as_they_come_and_an_interrupted_write_leaves_nothing(tmp_path):
    from pate_cli.outputs.writing import write_outputs
    frame = pd.DataFrame({"query": np.arange(5000), "epsilon": np.linspace(0, 1, 5000)})
    out, summary = tmp_path / "q.jsonl", tmp_path / "s.json"
    write_outputs({str(out): per_query_stream_chunks([frame], str(out), rows=700),
                   str(summary): b"{}\n"})
    assert out.read_bytes() == reference_json_lines(frame).encode()

    def interrupted():
        yield b"partial\n"
        raise KeyboardInterrupt

    out.write_bytes(b"old\n")
    with pytest.raises(KeyboardInterrupt):
        write_outputs({str(summary): b"new\n", str(out): interrupted()})
    assert out.read_bytes() == b"old\n" and summary.read_bytes() == b"{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.jsonl", "s.json"]


def test_a_function_is_called_once_the_streams_are_written_and_a_failure_leaves_nothing(
        tmp_path):
    """A summary given as a function (what the table's pass completes) is formed after
    every stream is spent, whatever the files' order; if it fails, nothing is written."""
    from pate_cli.outputs.writing import write_outputs
    spent: list[str] = []

    def stream(name):
        yield b"a\n"
        yield b"b\n"
        spent.append(name)

    out, other, summary = tmp_path / "q.csv", tmp_path / "d.csv", tmp_path / "s.json"
    write_outputs({str(summary): lambda: f"{sorted(spent)}".encode(),
                   str(out): stream("q"), str(other): stream("d")})
    assert summary.read_text() == "['d', 'q']" and out.read_bytes() == b"a\nb\n"

    def failing():
        raise ValueError("no release")

    with pytest.raises(ValueError, match="no release"):
        write_outputs({str(out): stream("q2"), str(summary): failing})
    assert out.read_bytes() == b"a\nb\n" and summary.read_text() == "['d', 'q']"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "q.csv", "s.json"]


def test_a_parquet_table_without_pyarrow_is_refused_before_any_piece(monkeypatch):
    import builtins
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(ValueError, match="needs pyarrow"):
        per_query_stream_chunks([pd.DataFrame({"a": [1]})], "q.parquet")


@pytest.mark.parametrize("name", ["q.csv", "q.jsonl"])
def test_a_stream_that_fails_while_a_piece_is_formatted_leaves_nothing(tmp_path, name):
    """Streamed pieces are formatted on a background thread while the next frame is
    computed: a failure in the frames (or a stop) still leaves the old file as it was,
    and the error is the frames' own."""
    from pate_cli.outputs.files import per_query_stream_chunks
    from pate_cli.outputs.writing import write_outputs
    frame = pd.DataFrame({"query": np.arange(3000), "epsilon": np.linspace(0, 1, 3000)})

    def frames():
        yield frame
        yield frame.assign(query=frame["query"] + 3000)
        raise ValueError("query 6000: the decisions end here")

    out = tmp_path / name
    out.write_bytes(b"old\n")
    with pytest.raises(ValueError, match="decisions end here"):
        write_outputs({str(out): per_query_stream_chunks(frames(), str(out), rows=1000)})
    assert out.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == [name]
    whole = pd.concat([frame, frame.assign(query=frame["query"] + 3000)], ignore_index=True)
    streamed = b"".join(per_query_stream_chunks(iter([frame, whole.iloc[3000:]]), str(out),
                                                rows=1000))
    assert streamed == b"".join(per_query_stream_chunks([whole], str(out), rows=1000))
