"""``--query-indices`` and ``--queries``: the rows to analyse, in order (a student's
active choice), read and checked against the votes."""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError, OptionError
from .checks import show_number
from .readers import open_input, open_text, read_matrix, read_text
from .rows import FirstRows


def load_query_indices(path) -> np.ndarray:
    """Row numbers to analyse, in order (``.npy`` or a one-column ``.csv``/``.txt``)."""
    name = os.fspath(path)
    if name.lower().endswith(".txt"):
        name, text = open_text(path)
        array = read_text(name, text, ",")
    else:
        name, raw, _ = open_input(path)
        array, _ = read_matrix(name, raw, key="indices")
    return row_numbers(name, array)


def row_numbers(name: str, array) -> np.ndarray:
    """``array`` (a 1-D or one-column table of whole numbers: an array, list, range, or a
    pandas Series, Index or one-column DataFrame) as int64 row numbers; ``InputError``."""
    if hasattr(array, "to_numpy"):  # pandas: its values, not its index
        array = array.to_numpy()
    array = np.asarray(array)
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {array.dtype} values, not row numbers")
    if array.dtype == bool:
        raise InputError(f"{name}: holds true/false values (a mask), not row numbers")
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"{name}: expected one row number per line, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)) | (array < 0))
    if bad.size:
        raise InputError(f"{name}: entry {bad[0]} ({show_number(array[bad[0]])}) is not a "
                         "row number")
    big = np.flatnonzero(array >= 2**62)  # no file has such rows; int64 would wrap them
    if big.size:
        raise InputError(f"{name}: query index {show_number(array[big[0]])} (entry {big[0]}) "
                         "is not a row of any votes file")
    return array.astype(np.int64)


def read_query_indices(query_indices, vote_set, queries: int | None) -> np.ndarray | None:
    """``analyze(query_indices=...)``: None, an array, or a file (:func:`load_query_indices`);
    ``OptionError`` if ``--queries`` asks for more rows than they (or the votes) hold."""
    indices = query_indices
    if isinstance(indices, (str, os.PathLike)):
        indices = load_query_indices(indices)
    elif indices is not None:
        indices = row_numbers("the query indices", indices)
    available, where = (
        (vote_set.queries, vote_set.name) if indices is None
        else (indices.size, os.fspath(query_indices)
              if isinstance(query_indices, (str, os.PathLike)) else "the query indices"))
    if queries is not None and queries > available:
        raise OptionError(f"--queries {queries} is larger than the {available} queries in {where}")
    if indices is not None:  # rows outside the votes, or listed twice: named by their file
        try:
            analysed_positions(vote_set.queries, indices, None)
        except ValueError as error:
            raise InputError(f"{where}: {error}") from None
    return indices


def checked_queries(queries) -> int | None:
    """``--queries N`` as an int or None (``True``, ``10.5``, ``"10"`` refused; ``10.0`` is 10)."""
    if queries is None:
        return None
    whole = (isinstance(queries, (int, np.integer))
             or (isinstance(queries, (float, np.floating)) and float(queries).is_integer()))
    if isinstance(queries, (bool, np.bool_)) or not whole:
        raise OptionError(f"queries must be a whole number of queries (the first N rows), "
                          f"got {queries!r}")
    return int(queries)


def first_bad_rows(rows: np.ndarray, total: int) -> tuple[int | None, int | None]:
    """The first entry of the row numbers ``rows`` outside ``0 .. total - 1``, and the
    first entry that repeats an earlier one (None where there is none)."""
    outside = np.flatnonzero((rows < 0) | (rows >= total))
    _, first = np.unique(rows, return_index=True)
    repeated = (None if first.size == rows.size
                else int(np.setdiff1d(np.arange(rows.size), first)[0]))
    return (int(outside[0]) if outside.size else None), repeated


def analysed_positions(total: int, query_indices: np.ndarray | None,
                       queries: int | None, *, lazy: bool = False) -> np.ndarray:
    """File rows analysed, in order: ``query_indices`` (or all rows), first ``queries``
    (``lazy``: all rows from the first as :class:`FirstRows`). ``ValueError``."""
    available = total
    if query_indices is not None:
        query_indices = np.asarray(query_indices)
        if query_indices.ndim != 1 or query_indices.size == 0:
            raise ValueError("query indices must be a non-empty list of row numbers")
        if query_indices.dtype.kind not in "iu":  # (a boolean mask is not row numbers)
            raise ValueError(f"query indices must be integer row numbers, got "
                             f"{query_indices.dtype} values")
        outside, repeated = first_bad_rows(query_indices, total)
        if outside is not None:
            raise ValueError(f"query index {int(query_indices[outside])} (entry {outside}) is "
                             f"outside 0..{total - 1}")
        if repeated is not None:
            raise ValueError(f"query index {int(query_indices[repeated])} is listed twice "
                             f"(entry {repeated})")
        available = query_indices.size
    queries = checked_queries(queries)
    if queries is None:
        queries = available
    elif queries < 1 or queries > available:
        raise ValueError(f"--queries {queries} is outside 1..{available} "
                         "(the number of queries available)")
    if query_indices is None:
        return FirstRows(queries) if lazy else np.arange(queries)  # type: ignore[return-value]
    return query_indices[:queries].astype(np.int64)
