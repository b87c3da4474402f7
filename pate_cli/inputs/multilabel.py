"""Multi-label votes (``--multilabel``): per-label vote counts ``(queries, labels, 2)``
(negative, positive) or each teacher's 0/1 labels ``(queries, teachers, labels)``, and 0/1
true labels ``(queries, labels)``, read a chunk of queries at a time (a ``.npy`` stays
memory-mapped, pages let go once read). One-line errors name the file and the place."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError, OptionError
from ..work_sizes import READ_VALUES
from .checks import show_number
from .readers import digest_of, given_matrix
from .rows import drop_mapped_rows


@dataclass(frozen=True)
class MultilabelVotes:
    """Checked multi-label votes: ``array`` the file's counts ``(queries, labels, 2)``, or its
    0/1 predictions ``(queries, teachers, labels)`` when ``predicted`` (counts: their per-label
    sums); ``labels``: true 0/1 ``(queries, labels)`` or None. Arrays as read (``.npy`` mapped)."""

    array: np.ndarray
    teachers: int | float
    path: str | None
    sha256: str | None
    predicted: bool = False
    labels: np.ndarray | None = None

    @property
    def queries(self) -> int:
        return int(self.array.shape[0])

    @property
    def label_count(self) -> int:
        return int(self.array.shape[2 if self.predicted else 1])

    def pieces(self, rows: int | None = None):
        """``(lo, hi)``: consecutive queries, ``rows`` at a time (default ~``READ_VALUES``)."""
        rows = rows or max(1, READ_VALUES // int(np.prod(self.array.shape[1:])))
        return ((lo, min(self.queries, lo + rows)) for lo in range(0, self.queries, rows))

    def rows(self, lo: int, hi: int, dtype=np.uint8) -> np.ndarray:
        """Queries ``lo .. hi-1`` as ``dtype`` (a copy; a mapped file's pages let go)."""
        out = np.array(self.array[lo:hi], dtype=dtype)
        drop_mapped_rows(self.array, lo, hi)
        return out

    def flat(self):
        """The ``(queries * labels, 2)`` rows of a binary run (row ``query * labels +
        label``): a view of the counts, or :class:`FlatCounts` of the predictions."""
        return FlatCounts(self.array) if self.predicted else self.array.reshape(-1, 2)

    def head(self, queries: int | None) -> MultilabelVotes:
        """The first ``queries`` queries (``--queries``; None: all)."""
        if queries is None:
            return self
        if queries > self.queries:
            raise OptionError(f"--queries {queries} is larger than the {self.queries} "
                              f"queries in {self.path}")
        return replace(self, array=self.array[:queries],
                       labels=None if self.labels is None else self.labels[:queries])


class FlatCounts:
    """The per-label counts of 0/1 predictions ``(queries, teachers, labels)`` as the
    ``(queries * labels, 2)`` rows of a binary run, formed a slice of rows at a time."""

    ndim = 2

    def __init__(self, predictions: np.ndarray):
        self.predictions = predictions
        queries, self.teachers, self.labels = predictions.shape
        self.shape = (queries * self.labels, 2)

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, _ = rows.indices(self.shape[0])
        first, stop = start // self.labels, max(start, stop)
        positive = np.asarray(self.predictions[first:-(-stop // self.labels)]).sum(
            axis=1, dtype=np.int64).reshape(-1)[start - first * self.labels:]
        return np.stack([self.teachers - positive[:stop - start], positive[:stop - start]], 1)

    def drop_rows(self, lo: int, hi: int) -> None:
        drop_mapped_rows(self.predictions, lo // self.labels, hi // self.labels)


def _read(path, key: str) -> tuple[str, np.ndarray, str | None]:
    name, array, _, digest = given_matrix(path, name=f"the {key} array", key=key)
    return name, array, digest_of(digest)


def load_multilabel_counts(path) -> MultilabelVotes:
    """``(queries, labels, 2)`` counts: finite, non-negative, every pair summing to M
    (checked a chunk at a time; of two kinds of error, a bad count is named first)."""
    name, array, digest = _read(path, "votes")
    if array.ndim != 3 or array.shape[2] != 2 or 0 in array.shape:
        raise InputError(f"{name}: --multilabel votes must have shape (queries, labels, 2) "
                         f"(negative and positive counts per label), got {array.shape}")
    votes, first, unequal = MultilabelVotes(array, 0, name, digest), None, None
    for lo, hi in votes.pieces():
        counts = votes.rows(lo, hi, np.float64)
        bad = np.argwhere(~np.isfinite(counts) | (counts < 0))
        if bad.size:
            query, label, side = bad[0]
            raise InputError(f"{name}: query {lo + query}, label {label}: count "
                             f"{show_number(counts[query, label, side])} is not a "
                             "non-negative number")
        totals = counts.sum(axis=2)
        first = totals[0, 0] if first is None else first
        bad = np.argwhere(totals != first)
        if bad.size and unequal is None:
            query, label = bad[0]
            unequal = (f"{name}: query {lo + query}, label {label}: counts sum to "
                       f"{show_number(totals[query, label])}, query 0 label 0 to "
                       f"{show_number(first)} (every label has the same teachers)")
    if unequal is not None:
        raise InputError(unequal)
    if first <= 0:
        raise InputError(f"{name}: no teacher voted (every count is 0)")
    teachers = float(first)
    return replace(votes, teachers=int(teachers) if teachers.is_integer() else teachers)


def load_multilabel_predictions(path) -> MultilabelVotes:
    """``(queries, teachers, labels)`` 0/1 predictions; the counts are their sums."""
    name, array, digest = _read(path, "predictions")
    if array.ndim != 3 or 0 in array.shape:
        raise InputError(f"{name}: --multilabel predictions must have shape (queries, "
                         f"teachers, labels) with 0/1 entries, got {array.shape}")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {array.dtype} values; expected 0/1 labels")
    _zero_one(name, array, ("query", "teacher", "label"))
    return MultilabelVotes(array, int(array.shape[1]), name, digest, predicted=True)


def attach_multilabel_labels(votes: MultilabelVotes, labels) -> MultilabelVotes:
    """True labels: a ``(queries, labels)`` 0/1 array or file (``--labels``)."""
    name, array, _ = _read(labels, "labels")
    if array.ndim == 1 and votes.label_count == 1:
        array = array[:, None]
    want = (votes.queries, votes.label_count)
    if array.shape != want:
        raise InputError(f"{name}: multi-label true labels must have shape {want} (0/1 per "
                         f"query and label), got {array.shape}")
    _zero_one(name, array, ("query", "label"))
    return replace(votes, labels=array)


def _zero_one(name, array: np.ndarray, axes: tuple[str, ...]) -> None:
    """The first value of ``array`` other than 0 or 1 as an ``InputError`` naming its place
    (``axes``: the names of its dimensions), read a chunk of rows at a time."""
    rows = max(1, READ_VALUES // int(np.prod(array.shape[1:])))
    for lo in range(0, array.shape[0], rows):
        part = np.asarray(array[lo:lo + rows])
        bad = np.argwhere((part != 0) & (part != 1))
        drop_mapped_rows(array, lo, lo + part.shape[0])
        if bad.size:
            place = ", ".join(f"{axis} {index + (lo if axis == 'query' else 0)}"
                              for axis, index in zip(axes, bad[0], strict=True))
            raise InputError(f"{name}: {place}: {show_number(part[tuple(bad[0])])} is not "
                             "0 or 1")
