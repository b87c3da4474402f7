"""Rows of the votes as a pass reads them: by position, by chunk, as C-ordered float64 (every
row sum adds in one order whatever the input's layout), from this process's array or a task's
own source (:class:`Span`), a memory-mapped file's pages let go once read.
"""

from __future__ import annotations

import io
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..numerics import whole
from ..vote_rows import as_float_rows, is_sparse

if TYPE_CHECKING:
    from ..decisions import Decisions

# Rows compared at a time when row numbers are checked for a range.
SPAN_CHECK = 1 << 16


class FirstRows:
    """The analysed positions ``0 .. size-1`` without their array (slices give aranges)."""

    def __init__(self, size: int):
        self.size = int(size)

    def __getitem__(self, part: slice) -> np.ndarray:
        return np.arange(*part.indices(self.size))


class FormedRows:
    """``(queries, K)`` votes whose rows are formed when read (shards, predictions), indexed
    by a row, a slice of consecutive rows or an array of row numbers (anything else forms
    them all). A subclass gives ``shape``, :meth:`_rows` (``lo .. hi-1``) and :meth:`_gather`."""

    ndim = 2
    shape: tuple[int, int]

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    def __len__(self) -> int:
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        rows = self._rows(0, self.shape[0])
        return rows if dtype is None else rows.astype(dtype, copy=False)

    def __getitem__(self, key) -> np.ndarray:
        if isinstance(key, (int, np.integer)):
            row = int(key) + (self.shape[0] if key < 0 else 0)
            if not 0 <= row < self.shape[0]:
                raise IndexError(f"row {key} is outside 0..{self.shape[0] - 1}")
            return self._rows(row, row + 1)[0]
        if isinstance(key, slice) and key.step in (None, 1):
            lo, hi, _ = key.indices(self.shape[0])
            return self._rows(lo, max(lo, hi))
        if isinstance(key, np.ndarray) and key.ndim == 1 and key.dtype.kind in "iu":
            rows = np.where(key < 0, key + self.shape[0], key)
            if rows.size and (rows.min() < 0 or rows.max() >= self.shape[0]):
                raise IndexError("row numbers outside the votes")
            return self._gather(rows)
        return np.asarray(self)[key]

    def _rows(self, lo: int, hi: int) -> np.ndarray:
        raise NotImplementedError

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def picked_rows(positions, queries: int) -> tuple[np.ndarray | None, bool]:
    """The first ``queries`` analysed rows if ``--query-indices`` picked them (else None)
    and whether they differ from the file's first rows (``QueryCounts.reordered``)."""
    if isinstance(positions, FirstRows):
        return None, False
    rows = np.asarray(positions[:queries])
    return rows, not np.array_equal(rows, np.arange(queries))


def drop_mapped_rows(array, lo: int, hi: int) -> None:
    """Drop the pages of rows ``lo .. hi-1`` of a memory-mapped array once read
    (``madvise(MADV_DONTNEED)``; touched again, they come back from the page cache), so a large
    file does not stay resident. A no-op for other arrays or systems."""
    import mmap
    if hasattr(array, "drop_rows"):  # votes in several mapped pieces (inputs.shards)
        array.drop_rows(lo, hi)
        return
    mapping = _mapping_of(array)
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if mapping is None or advice is None or hi <= lo or not array.flags.c_contiguous:
        return
    try:
        start = np.frombuffer(mapping, dtype=np.uint8).__array_interface__["data"][0]
        first = array.__array_interface__["data"][0] + lo * array.strides[0] - start
        end = first + (hi - lo) * array.strides[0]
        # edge pages included: one shared with rows still to read comes back from the page
        # cache (a minor fault); keeping them keeps a page per chunk (50 MB of a 4 GB file)
        first -= first % mmap.PAGESIZE
        end = min(len(mapping), end + (-end) % mmap.PAGESIZE)
        if end > first >= 0:
            mapping.madvise(advice, first, end - first)
    except (ValueError, OSError, TypeError):
        pass


def _mapping_of(array):
    """The ``mmap`` under ``array`` (a ``numpy.memmap``, or a view of one), or None."""
    import mmap
    seen = array
    for _ in range(32):  # views of views: the chain is short
        if seen is None:
            return None
        if isinstance(seen, mmap.mmap):
            return seen
        mapping = getattr(seen, "_mmap", None)
        if mapping is not None:
            return mapping
        seen = getattr(seen, "base", None)
    return None


def rows_of(array: np.ndarray, positions: np.ndarray, start: int, stop: int, *,
            dtype=np.float64) -> np.ndarray:
    """Rows ``positions[start:stop]`` of ``array`` as C-ordered float64 (the bytes do not
    depend on the input's layout). ``dtype=None`` keeps the array's type (rows for a worker)."""
    chosen = positions[start:stop]
    if is_sparse(array):  # sparse votes: a VoteRows chunk of padded rows (vote_rows)
        return array[slice(chosen[0], chosen[-1] + 1) if _consecutive(chosen) else chosen]
    if _consecutive(chosen):
        return np.ascontiguousarray(array[chosen[0] : chosen[-1] + 1], dtype=dtype)
    return np.asarray(array[np.sort(chosen)], dtype=dtype)[np.argsort(np.argsort(chosen))]


def rows_read_once(array, positions, start: int, stop: int) -> np.ndarray:
    """``rows_of``, then consecutive rows of a mapped file let go (:func:`drop_mapped_rows`)."""
    rows = rows_of(array, positions, start, stop)
    chosen = positions[start:stop]
    if _consecutive(chosen):
        drop_mapped_rows(array, int(chosen[0]), int(chosen[-1]) + 1)
    return rows


def _consecutive(chosen: np.ndarray) -> bool:
    """Whether ``chosen`` is a run of consecutive rows, ascending."""
    return bool(chosen.size and chosen[-1] - chosen[0] == chosen.size - 1
                and np.all(np.diff(chosen) == 1))


def rows_in(votes, rows, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """Rows ``lo .. hi-1`` of ``rows`` (a ``slice`` of ``votes`` or an index array) as
    C-ordered float64, as :func:`rows_of` gives them."""
    if isinstance(rows, slice):
        first = rows.start + lo
        last = rows.stop if hi is None else rows.start + hi
        return as_float_rows(votes[first:last])
    return rows_of(votes, rows, lo, rows.size if hi is None else hi)


def integral_maxima(votes, positions, queries: int, chunk_size: int) -> bool:
    """Whether every analysed query's plurality count is whole (each piece of a per-query
    table then writes the column as the whole table would); a pass unless integer."""
    return integer_counts(votes) or all(
        whole(rows_of(votes, positions, start, min(queries, start + chunk_size)).max(axis=1))
        for start in range(0, queries, chunk_size))


def integer_counts(votes) -> bool:
    """Whether the votes' type holds integer counts only (a sparse file's: its data's)."""
    dtype = getattr(votes, "dtype", None)
    return bool(np.issubdtype(np.asarray(votes[:0]).dtype if dtype is None else dtype,
                              np.integer))



@dataclass(frozen=True, eq=False)
class LocalRows:
    """Rows of votes this process holds (counted on its threads), let go once read."""

    votes: object

    def opened(self):
        return self.votes

    def block(self, rows, lo: int = 0, hi: int | None = None, *, votes=None) -> np.ndarray:
        out = rows_in(self.votes, rows, lo, hi)
        if isinstance(rows, slice):
            drop_mapped_rows(self.votes, rows.start + lo, rows.start + lo + out.shape[0])
        return out


@dataclass(frozen=True, eq=False)
class ShippedRows:
    """A task's rows sent with it (inputs that are not ``.npy``: CSV, stdin, an API array),
    in their own dtype (converted to float64 a chunk at a time on the worker)."""

    votes: np.ndarray

    def opened(self) -> None:
        return None

    def block(self, rows, lo: int = 0, hi: int | None = None, *, votes=None) -> np.ndarray:
        return as_float_rows(self.votes[lo:hi])


class Span(NamedTuple):
    """A span of ``size`` analysed queries ``start ..`` counted apart (small, picklable):
    file rows ``rows`` (a slice or index array) of ``source``, and its own rows of
    ``student``, ``decisions`` and ``truth``."""

    source: object
    rows: slice | np.ndarray
    start: int
    size: int
    student: np.ndarray | None
    decisions: Decisions | None
    truth: np.ndarray | None


def span_of(votes, positions, start: int, stop: int, *, source, student=None, decisions=None,
            truth=None) -> Span:
    """The span of the analysed queries ``start .. stop-1``; its rows shipped with it
    (``ShippedRows``) when ``source`` is None, its ``decisions`` padded (``Decisions.padded``)."""
    rows = (slice(start, stop) if isinstance(positions, FirstRows)
            else np.asarray(positions[start:stop]))
    if source is None:
        source = ShippedRows(rows_of(votes, positions, start, stop, dtype=None))
    return Span(source, rows, start, stop - start,
                None if student is None else rows_of(student, positions, start, stop),
                None if decisions is None else decisions.padded(start, stop),
                None if truth is None else truth[positions[start:stop]])


class AnalysedRows:
    """The first ``queries`` rows ``positions`` of ``votes``, read a slice at a time (never
    gathered whole). The last slice is held by a weak reference: a chunk's readers read it
    once, and it does not outlive its use."""

    def __init__(self, votes, positions, queries: int) -> None:
        self.votes = votes
        self.positions = positions
        self.shape = (int(queries), int(votes.vocabulary if is_sparse(votes)
                                        else votes.shape[1]))
        self.last: tuple = (None, lambda: None)

    def __getitem__(self, part: slice):
        start, stop, _ = part.indices(self.shape[0])
        rows = self.last[1]() if self.last[0] == (start, stop) else None
        if rows is None:
            rows = self.read(start, stop)
            self.last = ((start, stop), weakref.ref(rows))
        return rows

    def read(self, start: int, stop: int):
        """Rows ``start .. stop-1`` from the votes (a mapped file's pages then let go)."""
        return rows_read_once(self.votes, self.positions, start, stop)


def range_start(rows, total: int) -> int | None:
    """``start`` if ``rows`` are ``start, start + 1, ...`` within ``0 .. total - 1``."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or rows.size == 0 or rows.dtype.kind not in "iu":
        return None
    start = int(rows[0])
    if start < 0 or start + rows.size > total or int(rows[-1]) != start + rows.size - 1:
        return None
    for lo in range(0, rows.size, SPAN_CHECK):
        piece = rows[lo:lo + SPAN_CHECK]
        if not np.array_equal(piece, np.arange(start + lo, start + lo + piece.size)):
            return None
    return start


class RowWindow(NamedTuple):
    """Some rows' votes (a view of their range, or the whole array with ``indices``),
    labels and student alike, and their first row if they are a range."""

    votes: Any
    indices: np.ndarray | None
    labels: np.ndarray | None
    student: np.ndarray | None
    start: int | None


def row_window(votes, rows, labels=None, student=None, *, view: bool = True) -> RowWindow:
    """``rows`` as a view of the arrays when they are a range of an array of votes (and
    ``view``, and the student has the votes' shape), else as indices."""
    start = range_start(rows, votes.shape[0])
    if (start is None or not view or not isinstance(votes, np.ndarray)
            or (student is not None and student.shape != votes.shape)):
        return RowWindow(votes, rows, labels, student, start)
    stop = start + np.asarray(rows).size
    return RowWindow(votes[start:stop], None,
                     None if labels is None else np.asarray(labels)[start:stop],
                     None if student is None else student[start:stop], start)


class ScratchColumn:
    """``of(rows)`` (one float64 per row, e.g. SVT-PATE's distances) of the analysed rows,
    computed into an unnamed temporary file on first read, then sliced with plain reads (the
    kernel's page cache, not this process's memory). ``name``: the values in errors. A context
    manager: the file is deleted on exit."""

    def __init__(self, votes, positions, queries: int, chunk_size: int, *,
                 of: Callable[[np.ndarray], np.ndarray], name: str):
        self.votes, self.positions, self.of, self.name = votes, positions, of, name
        self.size, self.chunk_size = int(queries), int(chunk_size)
        self._file: io.BufferedRandom | None = None

    def __enter__(self) -> ScratchColumn:
        return self

    def __exit__(self, *_) -> None:
        if self._file is not None:
            self._file.close()

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, rows: slice) -> np.ndarray:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="pate-scratch-")
            for start in range(0, self.size, self.chunk_size):
                block = rows_read_once(self.votes, self.positions, start,
                                       min(self.size, start + self.chunk_size))
                self._file.write(np.asarray(self.of(block), dtype=np.float64).tobytes())
        start, stop, _ = rows.indices(self.size)
        self._file.seek(8 * start)
        piece = np.empty(stop - start)
        read = self._file.readinto(piece.data.cast("B"))
        if read != piece.nbytes:
            raise OSError(f"the temporary file of {self.name} ended after "
                          f"{start + read // 8} of {self.size} values")
        return piece
