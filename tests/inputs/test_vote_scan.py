"""The vote scan's integer fast path (``inputs.votes._plain_integer_rows``) decides as the
float checks do: the same pass, or the same one-line error, on files of many scan chunks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.errors import InputError
from pate_cli.inputs import vote_checks as vote_module

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32"]


def _outcome(array, teachers, *, scan_rows, fast=True):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vote_module, "TABLE_ROWS", scan_rows)
        if not fast:
            patch.setattr(vote_module, "_plain_integer_rows", lambda *args: False)
        try:
            vote_module.check_votes("v.npy", array, teachers=teachers)
        except InputError as error:
            return str(error)
    return "ok"


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from(DTYPES), rows=st.integers(1, 40), classes=st.integers(2, 70),
       scan_rows=st.integers(1, 9), teachers_given=st.booleans(),
       corruption=st.sampled_from(["none", "negative", "negative-balanced", "more",
                                   "fewer", "zero-row", "huge"]),
       where=st.floats(0, 1), seed=st.integers(0, 2**16))
def test_fast_path_decides_as_the_float_checks(dtype, rows, classes, scan_rows,
                                               teachers_given, corruption, where, seed):
    rng = np.random.default_rng(seed)
    teachers = 2 * classes + 1
    array = np.zeros((rows, classes), dtype=np.int64)
    for row in range(rows):
        array[row] = np.bincount(rng.integers(0, classes, teachers), minlength=classes)
    row, column = int(where * (rows - 1)), int(rng.integers(classes))
    if corruption == "negative":
        array[row, column] = -1
    elif corruption == "negative-balanced":  # the row still sums to the teachers
        moved = array[row, column] + 1
        array[row, column] = -1
        array[row, (column + 1) % classes] += moved
    elif corruption == "more":
        array[row, column] += 1
    elif corruption == "fewer":
        array[row] = 0
        array[row, column] = teachers - 1
    elif corruption == "zero-row":
        array[row] = 0
    elif corruption == "huge":  # beyond int16 but summing to the others' total
        array[:] = 0
        array[:, 0] = 40_000
        array[:, 1] = 30_000
    info = np.iinfo(dtype) if dtype != "float32" else None
    if info is not None and (array.min() < info.min or array.max() > info.max):
        return  # not representable in this dtype
    array = array.astype(dtype)
    given = teachers if teachers_given else None  # --teachers: no row above it
    assert (_outcome(array, given, scan_rows=scan_rows)
            == _outcome(array, given, scan_rows=scan_rows, fast=False))


def test_fast_path_is_taken_for_plain_votes(monkeypatch):
    array = np.tile(np.array([[3, 1, 0]], dtype=np.int16), (50, 1))
    monkeypatch.setattr(vote_module, "TABLE_ROWS", 4)
    taken = []
    plain = vote_module._plain_integer_rows
    monkeypatch.setattr(vote_module, "_plain_integer_rows",
                        lambda *args: taken.append(plain(*args)) or taken[-1])
    vote_module.check_votes("v.npy", array)
    assert taken == [True] * 12  # every chunk after the first: no float copy
    with pytest.raises(InputError, match="query 49 has 5 votes but query 0 has 4"):
        array[49, 2] = 1
        vote_module.check_votes("v.npy", array)
