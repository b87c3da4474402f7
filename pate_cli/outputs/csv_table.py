"""CSV text of a table: pyarrow's CSV writer when pyarrow is installed, pandas' ``to_csv``
otherwise (``csv_rows``), the header line as pandas writes it (``csv_header``).

Numbers are the shortest text that reads back the same float64 (the tolerance rule between
algorithms: 0 in value, only the text may differ), in the writer's notation (pyarrow ``100``,
``6e-7``, ``"teacher"``, ``true``; pandas ``100.0``, ``6e-07``, ``teacher``, ``True``:
docs/reference/formats.md); a missing value is an empty field in both.
``inputs.table_pieces.read_table`` reads either back to the same values and types. Each piece
of rows is formatted on its own, so a table written in pieces of any size has the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def csv_header(frame: pd.DataFrame) -> bytes:
    """The header line as pandas writes it, whichever writer formats the rows."""
    return frame.iloc[:0].to_csv(index=False, lineterminator="\n").encode()


def csv_rows(frame: pd.DataFrame) -> bytes:
    """The rows of ``frame`` as CSV, ``\\n`` after each, no header (``b""`` for no rows):
    pyarrow's writer when pyarrow is installed, else pandas' ``to_csv``."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return pandas_rows(frame)
    if len(frame) == 0:
        return b""
    # nan -> null: empty; one chunk per column: pyarrow 26 wrote a pandas-3 string column
    # whose first chunk is empty as some 100 KB of NUL bytes
    table = pa.Table.from_pandas(frame, preserve_index=False).combine_chunks()
    buffer = pa.BufferOutputStream()
    pa_csv.write_csv(table, buffer, pa_csv.WriteOptions(include_header=False))
    return buffer.getvalue().to_pybytes()


def pandas_rows(frame: pd.DataFrame) -> bytes:
    """``csv_rows`` without pyarrow: pandas' ``to_csv`` of the rows."""
    return frame.to_csv(index=False, header=False, lineterminator="\n").encode()
