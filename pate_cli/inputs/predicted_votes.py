"""The vote histogram of teacher predictions (``(queries, teachers)`` class ids, ``-1`` for no
vote), formed for the rows a pass reads: never held whole (memory bounded by the chunk, even
for a 128k-token vocabulary).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import PateWarning
from .rows import FormedRows, drop_mapped_rows

# Counts above which a sparse file is faster (2.6 * 10^9 took 9.5 s on 2 cores).
SPARSE_HINT = 10**9


def note_dense(name, queries: int, classes: int) -> None:
    """A ``PateWarning`` where a pass forms more than ``SPARSE_HINT`` counts."""
    if queries * classes > SPARSE_HINT:
        warnings.warn(f"{name}: {queries:,} queries x {classes:,} classes: each pass forms "
                      "every query's row of counts and draws noise for each class; a sparse "
                      "vote file (scipy.sparse.save_npz; docs/tutorials/language-models.md) "
                      "is faster over a large vocabulary", PateWarning, stacklevel=3)


class PredictedVotes(FormedRows):
    """The ``(queries, classes)`` int32 vote counts of ``predictions``, formed per slice
    (one ``bincount``), the same whichever rows a slice holds.

    Args:
      predictions: ``(queries, teachers)`` integer class ids in ``-1 .. classes - 1``
        (checked by the reader), an array or memory map.
      classes: K, the number of classes.
    """

    dtype: np.dtype = np.dtype(np.int32)

    def __init__(self, predictions: np.ndarray, classes: int):
        self.predictions = predictions
        self.shape = (int(predictions.shape[0]), int(classes))

    @property
    def row_cells(self) -> int:
        """Cells forming a row holds: its K counts and M predictions (chunks are sized by it)."""
        return self.shape[1] + int(self.predictions.shape[1])

    def _rows(self, lo: int, hi: int) -> np.ndarray:
        return self._histogram(np.asarray(self.predictions[lo:hi]), lo)

    def _gather(self, rows: np.ndarray) -> np.ndarray:
        return self._histogram(np.asarray(self.predictions[rows]), None)

    def _histogram(self, rows: np.ndarray, start: int | None) -> np.ndarray:
        """The counts of ``rows`` of predictions (the first at ``start``, None for rows picked
        by number): one ``bincount`` of ``row * K + class``."""
        classes = self.shape[1]
        rows = np.asarray(rows, dtype=np.int64)
        voted = rows >= 0
        flat = np.broadcast_to(np.arange(rows.shape[0])[:, None], rows.shape)[voted]
        counts = np.bincount(flat * classes + rows[voted], minlength=rows.shape[0] * classes)
        return counts.reshape(-1, classes).astype(np.int32)

    def drop_rows(self, lo: int, hi: int) -> None:
        """Let the pages of rows ``lo .. hi-1`` of mapped predictions go once read."""
        drop_mapped_rows(self.predictions, lo, hi)
