"""Vote rows in one form (math:sparse), over which every kernel is written once: a
:class:`VoteRows` chunk is a ``(rows, width)`` float64 count matrix plus ``zeros``, the further
classes with no vote (the zero block). Dense votes: column ``j`` is class ``j``, ``zeros`` 0
(float64 not copied). Sparse votes over ``K`` classes: stored counts packed left, padded to the
file's width (never chunk-dependent), ``classes`` their ids ascending, -1 in padding; formulas
count padding as zero-vote classes beside the block's ``K - width``, a replay masks it and
draws the ``K - stored`` others as one block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class VoteRows:
    """A chunk of vote rows: ``counts`` ``(rows, width)`` float64, 0 in padding; ``zeros``
    (a float may exceed int64, ``2**70``); sparse only: ``classes`` ``(rows, width)`` int64
    ids, ``-1`` in padding, and ``stored`` ``(rows,)`` entries."""

    counts: np.ndarray
    zeros: float = 0
    classes: np.ndarray | None = None
    stored: np.ndarray | None = None

    def __post_init__(self):
        if not (math.isfinite(self.zeros) and self.zeros >= 0):
            raise ValueError(f"zero-vote classes must be finite and non-negative, got "
                             f"{self.zeros!r}")

    @property
    def width(self) -> int:
        return int(self.counts.shape[1])

    @property
    def vocabulary(self):
        """K: the matrix's classes and the zero block's."""
        return self.width + self.zeros

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.counts.shape[0]), int(self.vocabulary))

    @property
    def ndim(self) -> int:
        return 2

    @property
    def cap(self) -> float:
        """``log(1 - 1/K)``: no bound on q exceeds it (math:gnmax)."""
        return math.log(1.0 - 1.0 / self.vocabulary)

    @property
    def block_draws(self) -> int:
        """Draws a replay takes per row beyond the matrix's: two for sparse rows' zero block
        (its maximum and the uniform choice in it), none for dense rows."""
        return 0 if self.classes is None else 2

    @property
    def padding(self) -> np.ndarray | None:
        """``(rows, width)`` True where a cell holds no stored count (None: dense rows)."""
        return None if self.classes is None else self.classes < 0

    @property
    def zero_classes(self) -> np.ndarray:
        """``(rows,)`` float64: each row's zero-vote classes (``K - stored``, padding included)."""
        stored = self.width if self.stored is None else self.stored
        return np.broadcast_to(np.asarray(self.vocabulary - stored, dtype=np.float64),
                               (len(self),))

    def top(self) -> np.ndarray:
        """Column of each row's plurality: the first largest count (stored ids ascend and
        padding, at 0, follows them: ties go to the lowest class id)."""
        return np.argmax(self.counts, axis=1)

    def plurality_class(self) -> np.ndarray:
        """Each row's plurality class id, ties to the lowest class index."""
        return self.class_of(self.top())

    def class_of(self, columns: np.ndarray) -> np.ndarray:
        """The class id of each row's cell in column ``columns[row]``."""
        return columns if self.classes is None else self.classes[np.arange(len(self)), columns]

    def missing_class(self, rank: np.ndarray) -> np.ndarray:
        """The ``rank``-th (0-based) zero-vote class id of each row outside its stored
        counts: with the stored ids ascending ``s_0 < s_1 < ...``, ``rank + #{i: s_i - i <=
        rank}`` (dense rows: the block's classes follow the matrix's)."""
        if self.classes is None:
            return self.width + rank
        shift = self.classes - np.arange(self.width)[None, :]
        return rank + ((shift <= rank[:, None]) & (self.classes >= 0)).sum(axis=1)

    def max(self, axis: int = 1) -> np.ndarray:
        """The plurality count of each row (counts are >= 0; padding is 0)."""
        if axis != 1:
            raise ValueError("vote rows reduce over classes only (axis=1)")
        return self.counts.max(axis=1)

    def dense(self) -> np.ndarray:
        """The rows as a dense ``(rows, K)`` float64 array (small vocabularies, tests)."""
        if self.classes is None:
            return np.concatenate((self.counts, np.zeros((len(self), int(self.zeros)))), axis=1)
        out = np.zeros(self.shape)
        rows, cols = np.nonzero(self.classes >= 0)
        out[rows, self.classes[rows, cols]] = self.counts[rows, cols]
        return out

    def __len__(self) -> int:
        return int(self.counts.shape[0])

    def __getitem__(self, chosen) -> VoteRows:
        """Rows ``chosen`` (a slice or an index array) of this chunk."""
        return VoteRows(self.counts[chosen], self.zeros,
                        None if self.classes is None else self.classes[chosen],
                        None if self.stored is None else self.stored[chosen])


def vote_rows(votes) -> VoteRows:
    """``votes`` in the row form: a :class:`VoteRows` as it is, a dense ``(queries, K)`` array
    (K >= 2) of finite, non-negative counts as float64 (a view if float64); else ``ValueError``."""
    if isinstance(votes, VoteRows):
        return votes
    counts = np.asarray(votes, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise ValueError(f"votes must have shape (queries, classes>=2), got {counts.shape}")
    if counts.size and not (counts.min() >= 0 and counts.max() < np.inf):  # NaN fails too
        raise ValueError("votes must be finite, non-negative counts")
    return VoteRows(counts)


@dataclass(frozen=True)
class SparseVotes:
    """A sparse vote file in CSR form: row ``i``'s classes ``indices[indptr[i]:indptr[i+1]]``
    (ascending), counts ``data[...]``; ``width``: the most entries of a row (at least 1);
    ``release`` (optional) lets mapped rows' pages go once read (:meth:`drop_rows`)."""

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

    def rows(self, chosen) -> VoteRows:
        """Rows ``chosen`` (a slice or an integer array) as a sparse :class:`VoteRows`."""
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

    def _consecutive(self, start: int, stop: int) -> VoteRows:
        bounds = np.asarray(self.indptr[start : stop + 1], dtype=np.int64)
        return self._packed(bounds[:-1], np.diff(bounds))

    def _packed(self, starts: np.ndarray, stored: np.ndarray) -> VoteRows:
        rows = starts.size
        width = self.width
        column = np.arange(width)
        used = column[None, :] < stored[:, None]
        source = (starts[:, None] + column[None, :])[used]
        counts = np.zeros((rows, width))
        classes = np.full((rows, width), -1, dtype=np.int64)
        counts[used] = self.data[source]
        classes[used] = self.indices[source]
        return VoteRows(counts, self.vocabulary - width, classes, stored)

    def __getitem__(self, chosen) -> VoteRows:
        return self.rows(chosen)


def row_width(votes) -> int:
    """Cells a chunk holds per row (chunk sizes budget rows x this): dense classes, sparse
    stored width, or a source's ``row_cells``."""
    if isinstance(votes, (SparseVotes, VoteRows)):
        return int(votes.width)
    if hasattr(votes, "row_cells"):
        return int(votes.row_cells)
    return int(votes.shape[1]) if votes.ndim == 2 else 1


def plurality_classes(rows) -> np.ndarray:
    """Each row's plurality class, ties to the lowest class index (any votes)."""
    return vote_rows(rows).plurality_class()


def as_float_rows(rows):
    """Rows as C-ordered float64 (dense), or a :class:`VoteRows` chunk as it is."""
    if isinstance(rows, VoteRows):
        return rows
    return np.ascontiguousarray(rows, dtype=np.float64)


def is_sparse(votes) -> bool:
    """Whether ``votes`` is sparse (a file or a chunk with class ids)."""
    return isinstance(votes, SparseVotes) or (isinstance(votes, VoteRows)
                                              and votes.classes is not None)
