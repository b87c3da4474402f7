"""Multi-label votes (``--multilabel``): per-label vote counts ``(queries, labels, 2)``
(negative, positive) or each teacher's 0/1 labels ``(queries, teachers, labels)``, and
0/1 true labels ``(queries, labels)``. One-line errors name the file and the place."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError, OptionError
from .checks import show_number
from .readers import digest_of, open_input, read_matrix


@dataclass(frozen=True)
class MultilabelVotes:
    """Validated multi-label votes: ``counts`` ``(queries, labels, 2)`` (float64), and
    ``predictions`` ``(queries, teachers, labels)`` (uint8) when read from predictions
    (the counts are then their per-label sums). ``labels`` are true 0/1 labels
    ``(queries, labels)`` or None."""

    counts: np.ndarray
    teachers: int | float
    path: str | None
    sha256: str | None
    predictions: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def queries(self) -> int:
        return int(self.counts.shape[0])

    @property
    def label_count(self) -> int:
        return int(self.counts.shape[1])


def _read(path, key: str) -> tuple[str, np.ndarray, str | None]:
    if isinstance(path, np.ndarray):
        return key, path, None
    name, raw, digest = open_input(path)
    array, _ = read_matrix(name, raw, key=key)
    return name, np.asarray(array), digest_of(digest)


def load_multilabel_counts(path) -> MultilabelVotes:
    """``(queries, labels, 2)`` counts: finite, non-negative, every pair summing to M."""
    name, array, digest = _read(path, "votes")
    if array.ndim != 3 or array.shape[2] != 2 or 0 in array.shape:
        raise InputError(f"{name}: --multilabel votes must have shape (queries, labels, 2) "
                         f"(negative and positive counts per label), got {array.shape}")
    counts = array.astype(np.float64)
    bad = np.argwhere(~np.isfinite(counts) | (counts < 0))
    if bad.size:
        query, label, side = bad[0]
        raise InputError(f"{name}: query {query}, label {label}: count "
                         f"{show_number(counts[query, label, side])} is not a non-negative "
                         "number")
    totals = counts.sum(axis=2)
    bad = np.argwhere(totals != totals[0, 0])
    if bad.size:
        query, label = bad[0]
        raise InputError(f"{name}: query {query}, label {label}: counts sum to "
                         f"{show_number(totals[query, label])}, query 0 label 0 to "
                         f"{show_number(totals[0, 0])} (every label has the same teachers)")
    if totals[0, 0] <= 0:
        raise InputError(f"{name}: no teacher voted (every count is 0)")
    teachers = float(totals[0, 0])
    return MultilabelVotes(counts, int(teachers) if teachers.is_integer() else teachers,
                           name, digest)


def load_multilabel_predictions(path) -> MultilabelVotes:
    """``(queries, teachers, labels)`` 0/1 predictions; the counts are their sums."""
    name, array, digest = _read(path, "predictions")
    if array.ndim != 3 or 0 in array.shape:
        raise InputError(f"{name}: --multilabel predictions must have shape (queries, "
                         f"teachers, labels) with 0/1 entries, got {array.shape}")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {array.dtype} values; expected 0/1 labels")
    bad = np.argwhere((array != 0) & (array != 1))
    if bad.size:
        query, teacher, label = bad[0]
        raise InputError(f"{name}: query {query}, teacher {teacher}, label {label}: "
                         f"{show_number(array[query, teacher, label])} is not 0 or 1")
    predictions = array.astype(np.uint8)
    positive = predictions.sum(axis=1, dtype=np.int64).astype(np.float64)
    counts = np.stack([predictions.shape[1] - positive, positive], axis=2)
    return MultilabelVotes(counts, int(predictions.shape[1]), name, digest,
                           predictions=predictions)


def attach_multilabel_labels(votes: MultilabelVotes, labels) -> MultilabelVotes:
    """True labels: a ``(queries, labels)`` 0/1 array or file (``--labels``)."""
    name, array, _ = _read(labels, "labels")
    if array.ndim == 1 and votes.label_count == 1:
        array = array[:, None]
    want = (votes.queries, votes.label_count)
    if array.shape != want:
        raise InputError(f"{name}: multi-label true labels must have shape {want} (0/1 per "
                         f"query and label), got {array.shape}")
    bad = np.argwhere((array != 0) & (array != 1))
    if bad.size:
        query, label = bad[0]
        raise InputError(f"{name}: query {query}, label {label}: "
                         f"{show_number(array[query, label])} is not 0 or 1")
    return replace(votes, labels=array.astype(np.int64))


def first_queries(votes: MultilabelVotes, queries: int | None) -> MultilabelVotes:
    """The first ``queries`` queries (``--queries``; None: all)."""
    if queries is None:
        return votes
    if queries > votes.queries:
        raise OptionError(f"--queries {queries} is larger than the {votes.queries} "
                          f"queries in {votes.path}")
    return replace(votes, **{name: getattr(votes, name)[:queries] for name in
                             ("counts", "predictions", "labels")
                             if getattr(votes, name) is not None})
