"""Output ids: the generated sequence (output) each query belongs to (CLI.md inputs,
MATH.md s.14), from a sparse archive's ``output`` array or a long table's ``output`` column:
whole numbers >= 0, one per row of the vote file, each output's rows consecutive (a
generation is a sequence).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .checks import show_number


def checked_ids(name, ids: np.ndarray) -> np.ndarray:
    """``ids`` as int64 after a one-line error naming the first query whose output is not
    a whole number (NaN included) or is negative."""
    if ids.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(ids) | (ids != np.round(ids)))
        if bad.size:
            raise InputError(f"{name}: query {bad[0]} has output {show_number(ids[bad[0]])}, "
                             "not a whole-number id")
    ids = np.asarray(ids, dtype=np.int64)
    bad = np.flatnonzero(ids < 0)
    if bad.size:
        raise InputError(f"{name}: query {bad[0]} has output {ids[bad[0]]}; outputs are "
                         "ids >= 0")
    return ids


def check_outputs(outputs: np.ndarray, name: str | None) -> None:
    """One line naming the first row whose output came before another one (an output's
    queries must be consecutive rows: a generation is a sequence)."""
    starts = np.flatnonzero(np.concatenate(([True], np.diff(outputs) != 0)))
    ids = outputs[starts]  # one id per run of equal ids, in file order
    order = np.argsort(ids, kind="stable")  # each id's runs, in file order
    again = np.zeros(ids.size, dtype=bool)
    again[order[1:][ids[order[1:]] == ids[order[:-1]]]] = True  # a run after the id's first
    if again.any():
        row = int(starts[np.flatnonzero(again)[0]])
        raise InputError(f"{name}: query {row} returns to output {int(outputs[row])} after "
                         "another output (an output's queries must be consecutive rows)")

