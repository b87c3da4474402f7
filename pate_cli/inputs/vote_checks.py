"""The checks of a dense vote matrix: shape, at least two classes, finite non-negative counts,
every row summing to the same M (or at most ``--teachers M``), a note for averaged votes. Each
problem is one line naming file, query and class; scanned in chunks of
``work_sizes.TABLE_ROWS`` rows (bounded memory).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import InputError, PateWarning
from ..numerics import whole
from ..vote_rows import SparseVotes, VoteRows
from ..work_sizes import TABLE_ROWS
from .checks import check_finite_non_negative, check_shape
from .readers import INDEX_HINT, looks_like_index
from .rows import drop_mapped_rows

# Values of the (rows x classes) bincount of one chunk of predictions (64 MB of int64).
SCAN_ELEMENTS = 1 << 23


def check_votes(name, array, *, teachers: float | None = None, hint_index=False):
    """Check a vote matrix (module doc); with ``teachers`` (``--teachers M``) no row sums above
    M instead of every row summing to the same M."""
    check_shape(name, array, votes=True)
    if array.shape[1] < 2:
        raise InputError(f"{name}: needs at least 2 classes (columns), got {array.shape[1]}")
    reference = None
    voted = False
    rounding = _rounding(array)
    scan_rows = max(1, min(TABLE_ROWS, SCAN_ELEMENTS // max(1, array.shape[1])))
    for start in range(0, array.shape[0], scan_rows):
        stored = np.asarray(array[start : start + scan_rows])
        if voted and _plain_integer_rows(stored, reference, teachers):
            drop_mapped_rows(array, start, start + stored.shape[0])
            continue
        chunk = stored.astype(np.float64)
        del stored
        drop_mapped_rows(array, start, start + chunk.shape[0])
        check_finite_non_negative(name, chunk, start, "votes are counts")
        voted = voted or bool(np.any(chunk))
        with np.errstate(over="ignore"):  # sums past float64 are refused as counts (inf)
            totals = chunk.sum(axis=1)
        if teachers is not None:
            check_at_most(name, totals, start, float(teachers), rounding)
            continue
        if reference is None and totals[0] == 0:
            raise InputError(f"{name}: query 0 has no votes (its row sums to 0; every row "
                             "must sum to the number of teachers)")
        if reference is None:
            reference = totals[0]
        with np.errstate(invalid="ignore"):  # an infinite M: refused by its count
            off = np.flatnonzero(np.abs(totals - reference)
                                 > min(rounding, 1e-9) * max(1.0, abs(reference)))
        if off.size:
            row = start + int(off[0])
            if hint_index and _index_explains(array):
                raise InputError(f"{name}: query {row} has {totals[off[0]]:.15g} votes but "
                                 f"query 0 has {reference:.15g}: {INDEX_HINT}")
            if start == 0 and _numbered_header(array):
                raise InputError(f"{name}: query {row} has {totals[off[0]]:.15g} votes but "
                                 f"query 0 has {reference:.15g}: its first line 0,1,...,"
                                 f"{array.shape[1] - 1} looks like pandas' column names "
                                 "(write with header=False, or name the columns)")
            shown, first = _distinct(totals[off[0]], reference)
            within = ""
            if abs(totals[off[0]] - reference) <= rounding * max(1.0, abs(reference)):
                within = f", a difference within {array.dtype} rounding"
            raise InputError(f"{name}: query {row} has {shown} votes but query 0 "
                             f"has {first}{within} (every row must sum to the number of "
                             "teachers; give --teachers M for weighted or partial votes)")
    if not voted:
        raise InputError(f"{name}: every vote is 0 (every row sums to 0): no teacher voted")
    return array


def _plain_integer_rows(rows: np.ndarray, reference: float | None, teachers: float | None
                        ) -> bool:
    """Whether integer ``rows`` (at most 32 bits) have no negative vote and sum exactly to
    ``reference`` (at most ``teachers`` if given), as :func:`_check_votes` would pass, without
    a float copy (about 3x faster); other rows go through it."""
    if rows.dtype.kind not in "iu" or rows.dtype.itemsize > 4 or rows.size == 0:
        return False
    if rows.dtype.kind == "i" and rows.min() < 0:
        return False
    if rows.shape[1] > 64:
        totals = rows.sum(axis=1, dtype=np.int64)  # exact: 2^31 classes x 2^32
    else:  # column by column: about 3x faster than a sum along the rows
        totals = rows[:, 0].astype(np.int32 if rows.dtype.itemsize <= 2 else np.int64)
        for column in range(1, rows.shape[1]):  # exact: 64 x 2^16 < 2^31
            totals += rows[:, column]
    if teachers is not None:
        return bool(np.all(totals <= teachers))
    return bool(np.all(totals == reference))


# Refused above --teachers (math:individualized): every formula assumes a teacher moves one vote.
WEIGHTED_REASON = ("votes whose weights exceed 1 would be charged as if each teacher moved "
                   "one vote, under-counting the cost")


def check_at_most(name, totals: np.ndarray, start: int, teachers: float,
                   rounding: float) -> None:
    """One line for the first row summing above ``--teachers`` (beyond the file's own
    rounding: a float32 row of 250.00002 under --teachers 250 passes)."""
    above = np.flatnonzero(totals > teachers + rounding * max(1.0, teachers))
    if above.size:
        row = start + int(above[0])
        raise InputError(
            f"{name}: query {row} has {totals[above[0]]:.15g} votes, more than --teachers "
            f"{teachers:g}: {WEIGHTED_REASON}; divide the votes by the largest weight (so "
            "that no teacher moves more than one vote), or give each teacher's predictions "
            "with per-group weights (--predictions, --teacher-groups, --groups, "
            "--individualized weighting: the largest weight is then the sensitivity)")


def _rounding(array) -> float:
    """The relative error of a row sum in ``array``'s dtype: about classes x machine epsilon
    for float32/float16; 1e-9 (the row-total tolerance) for float64; 0 for integers (their
    sums are exact: a row of 3x10^9 + 1 votes is not one of 3x10^9)."""
    dtype = np.asarray(array[:0]).dtype
    if dtype.kind in "iub":
        return 0.0
    if dtype.kind == "f" and dtype.itemsize < 8:
        return max(1e-9, float(np.finfo(dtype).eps) * array.shape[1])
    return 1e-9


def _distinct(value: float, reference: float) -> tuple[str, str]:
    """Two different totals with enough significant digits to tell them apart (249.99998 not
    shown as 250 beside 250.00002)."""
    for digits in range(6, 18):
        shown, first = f"{value:.{digits}g}", f"{reference:.{digits}g}"
        if shown != first:
            return shown, first
    return repr(float(value)), repr(float(reference))


def note_averaged(name, total: float) -> None:
    """A ``PateWarning`` for rows summing to 1: probabilities averaged over the teachers
    (analysed as one teacher, whose single vote is the whole row)."""
    if abs(total - 1.0) <= 1e-6:
        warnings.warn(f"{name}: every row sums to 1, so the votes are analysed as those of "
                      "1 teacher; if they are probabilities averaged over M teachers, "
                      "multiply them by M (vote counts) or give --teachers M",
                      PateWarning, stacklevel=3)


def _index_explains(array) -> bool:
    """A first column 0..N-1 whose removal leaves rows with one common total."""
    if not looks_like_index(array) or array.shape[1] < 3:
        return False
    totals = np.asarray(array[:, 1:], dtype=np.float64).sum(axis=1)
    return bool(totals[0] > 0 and np.allclose(totals, totals[0], rtol=1e-9, atol=0))


def _numbered_header(array) -> bool:
    """Row 0 is exactly 0..K-1 and the other rows share one total (pandas' header)."""
    if array.shape[0] < 2 or not np.array_equal(np.asarray(array[0], dtype=np.float64),
                                                np.arange(array.shape[1], dtype=np.float64)):
        return False
    rows = max(2, min(TABLE_ROWS, SCAN_ELEMENTS // max(1, array.shape[1])))
    totals = np.asarray(array[1:rows], dtype=np.float64).sum(axis=1)
    return bool(np.allclose(totals, totals[0], rtol=1e-9, atol=0))


def row_total(votes, row):
    """Row ``row``'s sum (inf past float64: refused as a count, not warned about)."""
    with np.errstate(over="ignore"):
        return float(np.asarray(votes[row], dtype=np.float64).sum())


def integer_votes(votes) -> bool:
    """Whether every vote is whole (read in chunks). The threshold step's exact curve
    (math:screening) ranges over the integers 0..M only for such votes."""
    if isinstance(votes, SparseVotes):
        votes = votes.data
    elif isinstance(votes, VoteRows):
        votes = votes.counts
    if votes.dtype.kind in "iub":
        return True
    width = votes.shape[1] if votes.ndim > 1 else 1
    rows = max(1, min(TABLE_ROWS, SCAN_ELEMENTS // max(1, width)))  # as the checks scan
    for start in range(0, votes.shape[0], rows):
        chunk = np.asarray(votes[start:start + rows])
        counted = whole(chunk)
        if votes.ndim > 1:
            drop_mapped_rows(votes, start, start + chunk.shape[0])
        if not counted:
            return False
    return True
