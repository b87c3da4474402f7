"""Sparse vote histograms: token votes over a vocabulary (math:sparse).

A query's histogram over ``K`` classes is held by its stored (non-zero) counts; every other
class has count 0. :class:`SparseVotes` is a whole file in compressed-sparse-row form
(arrays that may be memory maps); indexing it by rows gives a :class:`SparseRows` chunk.

A chunk holds its rows' stored counts packed to the left of a ``(rows, width)`` matrix,
``width`` being the file's largest number of stored counts in a row (one width for the whole
file, so that every chunk has the same shape per row and a row's numbers never depend on
which rows share its chunk). The unused cells are padding, marked by class ``-1``: formulas
mask them and count the row's ``K - stored`` zero-vote classes as one block of identical
competitors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SparseRows:
    """A chunk of sparse vote rows (module docstring).

    ``counts``: ``(rows, width)`` float64 stored counts, 0 in padding; ``classes``:
    ``(rows, width)`` int64 class ids ascending within a row, ``-1`` in padding; ``stored``:
    ``(rows,)`` number of stored entries; ``vocabulary``: K.
    """

    counts: np.ndarray
    classes: np.ndarray
    stored: np.ndarray
    vocabulary: int

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.counts.shape[0]), int(self.vocabulary))

    @property
    def ndim(self) -> int:
        return 2

    @property
    def padding(self) -> np.ndarray:
        """``(rows, width)`` True where a cell holds no stored count."""
        return self.classes < 0

    @property
    def zero_classes(self) -> np.ndarray:
        """``(rows,)`` the number of zero-vote classes of each row (K - stored), float64."""
        return (self.vocabulary - self.stored).astype(np.float64)

    def max(self, axis: int = 1) -> np.ndarray:
        """The plurality count of each row (stored counts are >= 0; padding is 0)."""
        if axis != 1:
            raise ValueError("sparse rows reduce over classes only (axis=1)")
        return self.counts.max(axis=1)

    def top(self) -> np.ndarray:
        """Position (column of ``counts``) of each row's plurality: the lowest class id
        among tied stored maxima (class ids ascend within a row)."""
        return np.argmax(np.where(self.padding, -np.inf, self.counts), axis=1)

    def plurality_class(self) -> np.ndarray:
        """Each row's plurality class id, ties to the lowest class index (math:sparse)."""
        return self.classes[np.arange(self.counts.shape[0]), self.top()]

    def dense(self) -> np.ndarray:
        """The rows as a dense ``(rows, K)`` float64 array (small vocabularies, tests)."""
        out = np.zeros(self.shape)
        rows, cols = np.nonzero(~self.padding)
        out[rows, self.classes[rows, cols]] = self.counts[rows, cols]
        return out

    def __len__(self) -> int:
        return int(self.counts.shape[0])

    def __getitem__(self, chosen) -> SparseRows:
        """Rows ``chosen`` (a slice or an index array) of this chunk."""
        return SparseRows(self.counts[chosen], self.classes[chosen], self.stored[chosen],
                          self.vocabulary)


@dataclass(frozen=True)
class SparseVotes:
    """A sparse vote file in CSR form: row ``i``'s stored classes are
    ``indices[indptr[i]:indptr[i+1]]`` (ascending) with counts ``data[...]``.

    ``width`` is the largest number of stored entries in a row (at least 1). ``release``
    (optional) lets the pages of rows ``lo .. hi-1`` of memory-mapped arrays go once a
    pass has read them (``inputs.rows.drop_mapped_rows`` calls :meth:`drop_rows`).
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    vocabulary: int
    width: int
    release: Callable[[SparseVotes, int, int], None] | None = None

    def drop_rows(self, lo: int, hi: int) -> None:
        if self.release is not None and hi > lo:
            self.release(self, lo, hi)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.indptr.shape[0]) - 1, int(self.vocabulary))

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self):
        return self.data.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def rows(self, chosen) -> SparseRows:
        """Rows ``chosen`` (a slice or an integer array) as a :class:`SparseRows` chunk."""
        if isinstance(chosen, slice):
            start, stop, step = chosen.indices(self.shape[0])
            if step != 1:
                chosen = np.arange(start, stop, step)
            else:
                return self._consecutive(start, stop)
        chosen = np.asarray(chosen, dtype=np.int64).reshape(-1)
        starts = np.asarray(self.indptr[chosen], dtype=np.int64)
        stored = np.asarray(self.indptr[chosen + 1], dtype=np.int64) - starts
        return self._packed(starts, stored)

    def _consecutive(self, start: int, stop: int) -> SparseRows:
        bounds = np.asarray(self.indptr[start : stop + 1], dtype=np.int64)
        return self._packed(bounds[:-1], np.diff(bounds))

    def _packed(self, starts: np.ndarray, stored: np.ndarray) -> SparseRows:
        rows = starts.size
        width = self.width
        column = np.arange(width)
        used = column[None, :] < stored[:, None]
        source = (starts[:, None] + column[None, :])[used]
        counts = np.zeros((rows, width))
        classes = np.full((rows, width), -1, dtype=np.int64)
        counts[used] = self.data[source]
        classes[used] = self.indices[source]
        return SparseRows(counts, classes, stored, self.vocabulary)

    def __getitem__(self, chosen) -> SparseRows:
        return self.rows(chosen)


def row_width(votes) -> int:
    """Cells a chunk holds per row: the classes of a dense array, the stored width of
    sparse votes (chunk sizes are budgets of rows x this)."""
    if isinstance(votes, (SparseVotes, SparseRows)):
        return int(votes.width if isinstance(votes, SparseVotes) else votes.counts.shape[1])
    return int(votes.shape[1]) if votes.ndim == 2 else 1


def plurality_classes(rows) -> np.ndarray:
    """Each row's plurality class, ties to the lowest class index (dense or sparse)."""
    if isinstance(rows, SparseRows):
        return rows.plurality_class()
    return np.argmax(rows, axis=1)


def as_float_rows(rows):
    """Rows as C-ordered float64 (dense), or the ``SparseRows`` chunk as it is."""
    if isinstance(rows, SparseRows):
        return rows
    return np.ascontiguousarray(rows, dtype=np.float64)


def is_sparse(votes) -> bool:
    """Whether ``votes`` is sparse (a file or a chunk)."""
    return isinstance(votes, (SparseVotes, SparseRows))
