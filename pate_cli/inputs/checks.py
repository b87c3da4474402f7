"""One-line checks shared by the readers: dtype, shape, finite and non-negative values.
Places: query = 0-based row, class = 0-based column.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def pickled_error(name):
    return InputError(f"{name}: holds a pickled object array; refusing to load it "
                      "(only plain numeric arrays are read)")


def check_dtype(name, dtype):
    if dtype.hasobject:
        raise pickled_error(name)
    if dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {dtype} values; expected numbers")


MULTILABEL_HINT = ("; multi-label votes (queries, labels, 2) or predictions (queries, "
                   "teachers, labels) are read by pate-analyze --multilabel VARIANT")


def check_shape(name, array, *, votes: bool = False):
    """2-D with a row; ``votes``: a 3-D array is told about ``--multilabel``."""
    if array.ndim != 2:
        hint = MULTILABEL_HINT if votes and array.ndim == 3 else ""
        raise InputError(f"{name}: expected a 2-D array (rows = queries), got "
                         f"{array.ndim}-D with shape {array.shape}{hint}")
    if array.shape[0] == 0:
        raise InputError(f"{name}: has no queries (0 rows)")


def check_finite_non_negative(name, chunk, offset, why):
    """One-line errors for the first non-finite or negative entry of a chunk of rows."""
    bad = first_true(~np.isfinite(chunk))
    if bad is not None:
        raise InputError(f"{name}: query {offset + bad[0]}, class {bad[1]} is not finite "
                         f"({show_number(chunk[bad])})")
    bad = first_true(chunk < 0)
    if bad is not None:
        raise InputError(f"{name}: query {offset + bad[0]}, class {bad[1]} is negative "
                         f"({show_number(chunk[bad])}); {why}")


def show_number(value) -> str:
    """A number as a person writes it: 3, 1.5, 1e+300, nan, inf (never ``np.float64(...)``); an
    integer-typed value as it is (unsigned past 2^63 too), an integral float below 1e16 without
    its ``.0``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value))
    value = float(value)
    if np.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def first_true(mask):
    """Index tuple of the first True entry of a 2-D mask, or None."""
    flat = np.flatnonzero(mask)
    if flat.size == 0:
        return None
    return np.unravel_index(flat[0], mask.shape)
