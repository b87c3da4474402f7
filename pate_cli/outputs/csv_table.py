"""CSV text of a table: pyarrow's CSV writer when pyarrow is installed, pandas' ``to_csv``
otherwise (``csv_rows``), the header line as pandas writes it (``csv_header``).

Numbers are the shortest text that reads back the same float64 (the tolerance rule
between algorithms: 0 in value, only the text may differ), in the notation of the writer
that formed them:

==========================  ==========================  ==========================
value                       pyarrow writes              pandas writes
==========================  ==========================  ==========================
100.0, -0.0                 ``100``, ``-0``             ``100.0``, ``-0.0``
1e-05, 6e-07                ``0.00001``, ``6e-7``       ``1e-05``, ``6e-07``
3.3e10, 1e16                ``3.3e+10``, ``1e+16``      ``33000000000.0``, ``1e+16``
nan (a missing value)       an empty field              an empty field
True (a bool column)        ``true``                    ``True``
text ``teacher``            ``"teacher"``               ``teacher``
==========================  ==========================  ==========================

Both agree on ``inf``, ``5e-324``, ``0.1`` and integers; pandas quotes only text holding
a comma, a quote or a line break. ``inputs.table_pieces.read_table`` reads either back to the
same values and types. Each piece of rows is formatted on its own, so a table written in
pieces of any size has the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def csv_header(frame: pd.DataFrame) -> bytes:
    """The header line (the column names) as pandas writes it, whichever writer formats
    the rows."""
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
