"""``--query-indices``: the rows to analyse, in order (a student's active choice)."""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError
from .checks import show_number
from .readers import open_input, open_text, read_matrix, read_text


def load_query_indices(path) -> np.ndarray:
    """Row numbers to analyse, in order (``.npy`` or a one-column ``.csv``/``.txt``)."""
    name = os.fspath(path)
    if name.lower().endswith(".txt"):
        name, text = open_text(path)
        array = read_text(name, text, ",")
    else:
        name, raw, _ = open_input(path)
        array, _ = read_matrix(name, raw, key="indices")
    array = np.asarray(array)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"{name}: expected one row number per line, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)) | (array < 0))
    if bad.size:
        raise InputError(f"{name}: entry {bad[0]} ({show_number(array[bad[0]])}) is not a "
                         "row number")
    return array.astype(np.int64)
