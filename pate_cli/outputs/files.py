"""Per-query tables as bytes (CSV, JSON lines, parquet), whole or streamed in pieces."""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from ..work_sizes import TABLE_ROWS
from .csv_table import csv_header, csv_rows
from .summary_json import plain_number
from .writing import on_a_thread

if TYPE_CHECKING:
    import pandas as pd

PER_QUERY_EXTENSIONS = (".csv", ".json", ".jsonl", ".parquet")


def per_query_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """Serialise the per-query table for ``path``'s extension (CSV, JSON lines, parquet)."""
    return b"".join(per_query_stream_chunks([frame], path))


def per_query_stream_chunks(frames, path: str, *, rows: int | None = None) -> Iterator[bytes]:
    """The bytes, in pieces, of the table ``frames`` yields (the same however it is split),
    holding ``rows`` rows (default ``TABLE_ROWS``) at a time; CSV or JSON lines formatted
    on a background thread. The extension (and pyarrow) is checked before any frame."""
    import pandas as pd
    rows = TABLE_ROWS if rows is None else rows
    extension = os.path.splitext(path)[1].lower()
    if extension not in PER_QUERY_EXTENSIONS:
        raise ValueError(f"{path}: unknown extension for the per-query table "
                         f"(use {', '.join(PER_QUERY_EXTENSIONS)})")
    if extension == ".parquet":
        require_pyarrow(path)

    def regrouped() -> Iterator[pd.DataFrame]:
        """The frames recut into pieces of exactly ``rows`` rows (the last shorter)."""
        held: list[pd.DataFrame] = []
        size, cut = 0, False
        for frame in frames:
            held.append(frame)
            size += len(frame)
            while size >= rows:
                joined = pd.concat(held, ignore_index=True) if len(held) > 1 else held[0]
                yield joined.iloc[:rows].reset_index(drop=True)
                rest = joined.iloc[rows:].reset_index(drop=True)
                # an empty rest is not held (an empty chunk: csv_table.csv_rows)
                held, size, cut = [rest] if len(rest) else [], len(rest), True
        if size or not cut:  # the rest, or an empty table (its header)
            yield (pd.concat(held, ignore_index=True) if len(held) > 1
                   else held[0] if held else pd.DataFrame())

    def pieces() -> Iterator[bytes]:
        first = True
        writer, sink = None, io.BytesIO()
        for part in regrouped():
            if extension == ".parquet":
                import pyarrow as pa
                import pyarrow.parquet as pq
                table = pa.Table.from_pandas(part, preserve_index=False)
                if writer is None:
                    writer = pq.ParquetWriter(sink, table.schema)
                writer.write_table(table, row_group_size=rows)
                yield sink.getvalue()
                sink.seek(0)
                sink.truncate()
                continue
            if extension == ".csv" and first:
                yield csv_header(part)
            first = False
            if len(part):
                yield part  # formatted by as_bytes, below
        if writer is not None:
            writer.close()
            yield sink.getvalue()

    def as_bytes(piece) -> bytes:
        """A piece of the file: the CSV header as it is, a frame formatted."""
        if isinstance(piece, bytes):
            return piece
        return csv_rows(piece) if extension == ".csv" else json_lines(piece).encode()

    if extension == ".parquet":
        return pieces()
    # the text of one piece formed while the next frame is computed
    return on_a_thread(as_bytes, pieces(), name="pate-text")


def json_lines(frame: pd.DataFrame) -> str:
    """One JSON object per row (``json.dumps`` of the row's dict: ``", "`` and ``": "``
    separators, floats as ``repr``, missing and non-finite values ``null``), formatted a
    column at a time."""
    if len(frame) == 0:
        return ""
    if len(frame.columns) == 0:
        return "{}\n" * len(frame)
    line = np.full(len(frame), "", dtype=object)
    for number, column in enumerate(frame.columns):
        key = ("{" if number == 0 else ", ") + json.dumps(str(column)) + ": "
        line += key
        line += _json_cells(frame[column])
    return "}\n".join(line.tolist()) + "}\n"


def _json_cells(column: pd.Series) -> np.ndarray:
    """Each value of ``column`` as JSON text (an object array of ``str``), as ``json.dumps``
    writes the value ``DataFrame.astype(object)`` gives, mapped over the column."""
    missing = column.isna().to_numpy()
    kind = column.dtype.kind
    text = np.empty(len(column), dtype=object)
    if kind == "b":
        text[:] = np.where(column.to_numpy(dtype=bool, na_value=False), "true", "false")
    elif kind in "iu":
        values = column.to_numpy(dtype=np.int64 if kind == "i" else np.uint64, na_value=0)
        text[:] = list(map(str, values.tolist()))
    elif kind == "f":
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = missing | ~np.isfinite(values)
        text[:] = list(map(repr, values.tolist()))
    else:
        import pandas as pd

        values = column.to_numpy(dtype=object)
        if pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
            # text (outcome names): json.dumps of each distinct value only
            distinct, where = np.unique(np.where(missing, "", values).astype(str),
                                        return_inverse=True)
            encoded = np.empty(distinct.size, dtype=object)
            encoded[:] = [json.dumps(value) for value in distinct.tolist()]
            text = encoded[where]
        else:  # mixed Python objects (no per-query column is): one value at a time
            text[:] = [json.dumps(_plain(value), allow_nan=False) for value in values]
    text[missing] = "null"
    return text


def _plain(value):
    """A cell as ``json.dumps`` wants it (numpy scalars to Python numbers, as
    ``plain_number``; non-finite floats to ``None``)."""
    value = plain_number(value) if isinstance(value, np.generic) else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


def require_pyarrow(path: str) -> None:
    """A one-line error naming ``path`` when pyarrow (the ``parquet`` extra) is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError(f"{path}: writing .parquet needs pyarrow "
                         "(pip install 'pate_cli[parquet]')") from None


def parquet_bytes(frame: pd.DataFrame, path: str) -> bytes:
    """``frame`` as parquet bytes (no index), for writing to ``path``."""
    require_pyarrow(path)
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()
