"""``csv_text.csv_rows``'s bytes, formatted by pyarrow's compute kernels (``arrow_rows``).

Formatting floats is nearly all of the time spent writing a per-query CSV table, and
Python's ``repr`` takes about 0.6 us a float. pyarrow's cast of a float64 array to strings
writes the same shortest round-trip digits in C++ (about 0.1 us a float) but in its own
notation; ``float_texts`` rewrites that notation into ``repr``'s, with array kernels:

==========================  ======================  =========================
``abs(x)``                  pyarrow writes          ``repr`` writes
==========================  ======================  =========================
1e-6 .. 1e-4                ``0.0000328556``        ``3.28556e-05``
1e-9 .. 1e-6                ``6.46e-7``             ``6.46e-07``
whole numbers below 1e10    ``100``, ``-0``         ``100.0``, ``-0.0``
1e10 .. 1e16                ``3.36e+10``            ``33654947559.646854``
==========================  ======================  =========================

and agrees everywhere else (``inf``, ``5e-324``, ``1e+16``); values in the 1e10 .. 1e16
row, rare in a privacy table, go through ``repr`` itself. nan is a missing value, an
empty field, as pandas writes it. Integers are written as they are, bools as ``True`` and
``False``, nullable integers and bools with ``<NA>`` empty, text through ``csv_text``'s
quoting; a column whose first values mostly repeat is formatted once per distinct value.
Then pyarrow's CSV writer lays out the rows (nothing to quote in numbers), or, with a
text column, one kernel joins each row's fields by ``,`` and ends it with ``\\n``. Tests
compare the text with pandas' ``to_csv`` (and ``repr``) on random tables.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from .csv_text import BLOCK, column_values, csv_rows, distinct_values, text_fields

if TYPE_CHECKING:
    import pandas as pd


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """``csv_rows(frame).encode()``, the same bytes: formatted by pyarrow's kernels when
    it is installed (``arrow_rows``, several times faster on floats), else by
    ``csv_rows``; ``BLOCK`` rows at a time."""
    if len(frame) > BLOCK:
        return b"".join(map(csv_bytes, (frame.iloc[start:start + BLOCK]
                                        for start in range(0, len(frame), BLOCK))))
    text = arrow_rows(frame)
    return csv_rows(frame).encode() if text is None else text


def arrow_rows(frame: pd.DataFrame) -> bytes | None:
    """``csv_rows(frame).encode()``, the same bytes, or None: without pyarrow, for a
    table of fewer than two columns or no rows, or with a column type ``csv_rows``
    formats otherwise (anything but numpy floats, integers and bools, pandas' nullable
    integers and bools, and text)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return None
    if len(frame.columns) < 2 or len(frame) == 0 or not arrow_agrees():
        return None
    import pyarrow.csv as pa_csv

    fields, text = [], False
    for number in range(len(frame.columns)):
        column = frame.iloc[:, number]
        kind, values, missing = column_values(column)
        field = (None if kind is None else _text_texts(column) if kind == "text"
                 else _number_fields(values, missing))
        if field is None:
            return None
        fields.append(field)
        text = text or kind == "text"
    if not text:  # numbers only: pyarrow's CSV writer joins the fields, nothing to quote
        buffer = pa.BufferOutputStream()
        pa_csv.write_csv(pa.table(fields, names=[str(n) for n in range(len(fields))]),
                         buffer, pa_csv.WriteOptions(include_header=False,
                                                     quoting_style="none"))
        return buffer.getvalue().to_pybytes()
    # text fields come quoted as csv.writer quotes them: joined as they are
    lines = pc.binary_join_element_wise(*fields, ",", null_handling="replace",
                                        null_replacement="")
    lines = pc.binary_join_element_wise(lines, pa.scalar(""), "\n")
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int32)
    start, stop = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return lines.buffers()[2][start:stop].to_pybytes()


# Values at the edges of each notation (see above), for ``arrow_agrees``.
PROBE_VALUES = (0.0, -0.0, 1.0, 100.0, -2.5, 0.1, 1 / 3, 1e-4, 9.999999999999999e-05, 1e-5,
                -3.28556e-05, 4.5e-06, 1e-06, 6.46e-07, 1e-09, 1.5e-10, 9999999999.5, 1.5e10,
                123456789012.5, 1e15, 9007199254740993.0, 1e16, 1e22, 5e-324,
                1.7976931348623157e308, math.inf, -math.inf)


@functools.cache
def arrow_agrees() -> bool:
    """Whether this pyarrow's text of ``PROBE_VALUES`` is ``repr``'s after
    ``float_texts``' rewriting (checked once per process): a pyarrow whose notation
    differs from the one described above is not used."""
    try:
        texts = float_texts(np.array(PROBE_VALUES)).to_pylist()
    except Exception:  # a kernel this pyarrow lacks, or its own error
        return False
    return texts == [repr(value) for value in PROBE_VALUES]


def _text_texts(column: pd.Series):
    """A text column's fields (quoted by ``csv_text.text_fields``) as a pyarrow string
    array, or None if a value is not a ``str``."""
    import pyarrow as pa

    texts = text_fields(column)
    return None if texts is None else pa.array(texts, pa.string())


def _number_fields(values: np.ndarray, missing: np.ndarray | None):
    """A number column's fields (``csv_text.column_values``) as a pyarrow string array,
    null (an empty field) where ``missing`` or nan; a mostly repeated column is formatted
    once per distinct value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    repeated = distinct_values(values)
    if repeated is None:
        fields = _number_texts(values)
    else:
        codes, distinct = repeated
        fields = _number_texts(distinct).take(pa.array(codes))
    if missing is not None and missing.any():
        fields = pc.if_else(pa.array(missing), pa.scalar(None, pa.string()), fields)
    return fields


def _number_texts(values: np.ndarray):
    """Float64, integer or bool values as text (``float_texts``; integers as they are;
    ``True``/``False``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if values.dtype == np.float64:
        return float_texts(values)
    if values.dtype.kind == "b":
        return pc.if_else(pa.array(values), "True", "False")
    return pc.cast(pa.array(values), pa.string())


def float_texts(values: np.ndarray):
    """``repr`` of each float64 as a pyarrow string array, nan as null (see above)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = np.ascontiguousarray(values, dtype=np.float64)
    missing = np.isnan(values)
    texts = pc.cast(pa.array(values, mask=missing if missing.any() else None), pa.string())
    size = np.abs(values)
    finite = np.isfinite(values)
    small = (size > 0.0) & (size < 1.0001e-4)
    if small.any():
        texts = pc.replace_with_mask(texts, pa.array(small), _small_texts(values[small]))
    with np.errstate(invalid="ignore"):  # floor of nan and inf
        whole = finite & (values == np.floor(values)) & (size < 1e10)
    if whole.any():
        mask = pa.array(whole)
        texts = pc.replace_with_mask(texts, mask, _joined(texts.filter(mask), ".0"))
    large = finite & (size >= 9.9999e9) & (size < 1.00001e16)
    if large.any():
        texts = pc.replace_with_mask(texts, pa.array(large), pa.array(
            list(map(repr, values[large].tolist())), pa.string()))
    return texts


def _small_texts(values: np.ndarray):
    """``repr`` of values with ``0 < |x| < ~1e-4``: pyarrow's digits of ``|x|`` moved
    into scientific notation with a two-digit exponent, the sign put back."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = pc.cast(pa.array(np.abs(values)), pa.string())
    sixth = pc.starts_with(texts, "0.00000")  # 1e-6 .. 1e-5, written 0.00000ddd
    fifth = pc.and_(pc.starts_with(texts, "0.0000"), pc.invert(sixth))  # 0.0000ddd
    for mask, zeros, exponent in ((sixth, 7, "e-06"), (fifth, 6, "e-05")):
        if not pc.any(mask).as_py():
            continue
        digits = pc.utf8_slice_codeunits(texts.filter(mask), zeros)  # "328556"
        pointed = pc.utf8_rtrim(pc.utf8_replace_slice(digits, 1, 1, "."), ".")  # "3.28556"
        texts = pc.replace_with_mask(texts, mask, _joined(pointed, exponent))
    # 1e-9 .. 1e-6: pyarrow writes a one-digit exponent ("e-7"), repr two ("e-07")
    at = pc.find_substring(texts, "e-")
    short = pc.and_(pc.greater_equal(at, 0),
                    pc.equal(pc.subtract(pc.utf8_length(texts), at), 3))
    if pc.any(short).as_py():
        texts = pc.replace_with_mask(texts, short,
                                     pc.replace_substring(texts.filter(short), "e-", "e-0"))
    return pc.if_else(pa.array(values < 0), _joined("-", texts), texts)


def _joined(*parts):
    """Element-wise concatenation of string arrays and scalars."""
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(*parts, "")
