"""Pandas' CSV text of a table, formatted a column at a time (``csv_rows``).

``DataFrame.to_csv`` turns each float into text through numpy's ``astype(str)`` and hands
the rows to ``csv.writer``: about 1.3 us a float, nearly all of the time spent writing a
large per-query table. ``csv_rows`` returns the same text, byte for byte, for the column
types of the per-query table, each column formatted once and the rows joined at the end:

- ``float64``: ``repr`` over ``tolist()``, the shortest text that reads back the same
  float, as numpy's ``str`` writes it (``1.0``, ``1e-05``, ``1e+16``, ``-0.0``, ``inf``,
  ``5e-324``); nan, pandas' missing value, is an empty field;
- integers and bools (numpy's, or pandas' nullable ``Int64``/``boolean`` with ``<NA>`` as
  an empty field): ``repr`` (``-3``, ``True``, ``False``);
- text (``str`` columns, or object columns holding only ``str`` and missing values):
  each distinct value through a ``csv.writer`` with pandas' settings, which quotes a value
  holding a comma, a quote or a line break (numbers never need quoting).

A column whose first ``PROBE`` rows mostly repeat (an order, a 0/1 column, a cost paid by
every query) is formatted once per distinct value (``pandas.factorize`` of the float's
bits, so that ``-0.0`` stays apart from ``0.0``). A one-column table writes an empty
field as ``""``, as ``csv.writer`` does for an otherwise empty line. Any other column type
(float32, nullable floats, categories, dates, objects that are not all text) and a table
without columns fall back to pandas' ``to_csv`` of the whole table.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

PROBE = 4096  # rows looked at to decide whether a column is formatted per distinct value
BLOCK = 1 << 16  # rows formatted at a time (as many as a chunk of per_query_chunks)


def csv_rows(frame: pd.DataFrame) -> str:
    """``frame.to_csv(index=False, header=False, lineterminator="\\n")``, the same text:
    one line per row, ``\\n`` after each (``""`` for no rows). Formatted ``BLOCK`` rows
    at a time: the fields held besides the text are those of one block."""
    if len(frame.columns) == 0 or len(frame) == 0:
        return pandas_rows(frame)
    if len(frame) > BLOCK:
        return "".join(map(csv_rows, (frame.iloc[start:start + BLOCK]
                                      for start in range(0, len(frame), BLOCK))))
    columns = []
    for number in range(len(frame.columns)):
        cells = _cells(frame.iloc[:, number])
        if cells is None:
            return pandas_rows(frame)
        columns.append(cells)
    if len(columns) == 1:  # csv.writer quotes a line's only field when it is empty
        cells = np.empty(len(frame), dtype=object)
        cells[:] = columns[0]
        cells[cells == ""] = _field("", alone=True)
        columns[0] = cells.tolist()
    return _joined(columns, len(frame))


def pandas_rows(frame: pd.DataFrame) -> str:
    """The text ``csv_rows`` reproduces, from pandas itself (the fallback)."""
    return frame.to_csv(index=False, header=False, lineterminator="\n")


def _cells(column: pd.Series) -> list[str] | None:
    """The fields of ``column`` as pandas writes them, or None for a type not handled."""
    kind, values, missing = column_values(column)
    if kind == "text":
        return text_fields(column)
    return None if kind is None else _numbers(values, missing)


def column_values(column: pd.Series) -> tuple[str | None, np.ndarray | None,
                                               np.ndarray | None]:
    """What a CSV formatter needs of ``column``: ``("number", values, missing)`` for
    numpy float64, integers and bools and pandas' nullable integers and bools (``values``
    a numpy array, missing entries 0; ``missing`` a mask, or None: a float64 column's
    nan is found by the formatter); ``("text", None, None)`` for ``str`` or object
    columns (``text_fields`` decides); ``(None, None, None)`` for any other type."""
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in "biu" or dtype == np.float64:
            return "number", column.to_numpy(), None
        return ("text", None, None) if dtype.kind == "O" else (None, None, None)
    numeric = getattr(dtype, "numpy_dtype", None)  # nullable Int64, boolean, arrow ints
    if isinstance(numeric, np.dtype) and numeric.kind in "biu" and dtype.kind in "biu":
        return ("number", column.to_numpy(dtype=numeric, na_value=numeric.type(0)),
                column.isna().to_numpy(dtype=bool))
    if isinstance(dtype, pd.StringDtype):  # pandas 3's "str", "string"
        return "text", None, None
    return None, None, None


def _numbers(values: np.ndarray, missing: np.ndarray | None) -> list[str]:
    """``repr`` of each value (empty where ``missing`` or nan): once per distinct value
    when the first ``PROBE`` values are at most half distinct, else once per value."""
    if values.dtype == np.float64:
        missing = np.isnan(values) if missing is None else missing | np.isnan(values)
    repeated = distinct_values(values)
    if repeated is not None:
        codes, distinct = repeated
        texts = np.empty(len(distinct), dtype=object)
        texts[:] = list(map(repr, distinct.tolist()))
        cells = texts[codes]
    elif missing is not None and missing.any():
        cells = np.empty(len(values), dtype=object)
        cells[:] = list(map(repr, values.tolist()))
    else:
        return list(map(repr, values.tolist()))
    if missing is not None:
        cells[missing] = ""
    return cells.tolist()


def distinct_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(codes, distinct)`` with ``distinct[codes] == values`` (floats told apart by
    their bits, so ``-0.0`` stays apart from ``0.0``) when the first ``PROBE`` values are
    at most half distinct (a column then formatted once per distinct value: an order, a
    0/1 column, a shared cost); None otherwise."""
    import pandas as pd

    key = values.view(np.int64) if values.dtype == np.float64 else values
    if 2 * len(pd.unique(key[:PROBE])) > min(len(key), PROBE):
        return None
    codes, distinct = pd.factorize(key)
    return codes, np.asarray(distinct).view(values.dtype)


def text_fields(column: pd.Series) -> list[str] | None:
    """The fields of a text column (missing values empty), each distinct value quoted by
    ``csv.writer`` as needed; None when a value is not a ``str``."""
    import pandas as pd

    values = column.to_numpy(dtype=object, copy=True)
    values[column.isna().to_numpy(dtype=bool)] = ""
    if pd.api.types.infer_dtype(values, skipna=False) != "string":
        return None
    texts = values.tolist()
    table = {value: _field(value) for value in set(texts)}
    if all(field is value for value, field in table.items()):
        return texts
    return list(map(table.__getitem__, texts))


def _field(value: str, *, alone: bool = False) -> str:
    """``value`` as one field of a line that pandas' ``csv.writer`` writes (the only field
    of the line when ``alone``); ``value`` itself when no quoting is needed."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", delimiter=",", quoting=csv.QUOTE_MINIMAL,
                        doublequote=True, escapechar=None, quotechar='"')
    writer.writerow([value] if alone else [value, ""])
    field = buffer.getvalue()[:-1 if alone else -2]
    return value if field == value else field


def _joined(columns: list[list[str]], rows: int) -> str:
    """The lines of ``columns`` (lists of fields), each ended by ``\\n``: one ``join`` of
    the fields interleaved with the separators (faster than joining row by row)."""
    step = 2 * len(columns)
    pieces = [","] * (step * rows)
    pieces[step - 1::step] = ["\n"] * rows
    for number, cells in enumerate(columns):
        pieces[2 * number::step] = cells
    return "".join(pieces)
