"""Vote histograms, teacher predictions, true labels and student probabilities.

Every problem is a one-line ``InputError`` naming the file, the place (query = 0-based row,
class = 0-based column; text also the 1-based line and column) and what is wrong.
Memory-mapped files are scanned in chunks (bounded memory).

Size: one concept, a vote input of any kind read into a ``VoteSet`` (with labels, students).
"""

from __future__ import annotations

import os
import warnings
import weakref
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError, OptionError, PateWarning
from ..numerics import real_number
from ..work_sizes import TABLE_ROWS
from .checks import (
    check_dtype,
    check_finite_non_negative,
    check_shape,
    first_true,
    show_number,
)
from .long_table import column_map, not_a_long_table
from .npy_files import NPY_MAGIC, ZIP_MAGIC
from .predicted_votes import PredictedVotes, note_dense
from .readers import (
    VOTE_EXTENSIONS,
    c_order,
    check_file,
    digest_of,
    drop_column,
    file_sha256,
    given_matrix,
    looks_like_index,
    open_input,
    read_matrix,
)
from .rows import drop_mapped_rows
from .shards import is_shard_set, open_shards
from .sparse import read_sparse, row_totals, sparse_from_matrix, sparse_kind
from .vote_checks import (
    SCAN_ELEMENTS,
    check_at_most,
    check_votes,
    note_averaged,
    row_total,
)

__all__ = ["VOTE_EXTENSIONS", "VoteSet", "attach_labels", "load_predictions", "load_student",
           "load_votes", "votes_from_array"]

# The most classes a predictions file may declare (a pass forms rows of K counts).
MAX_CLASSES = 1_000_000
# The largest ``--classes``: zero-vote class counts stay exact in float64 and int64.
LARGEST_VOCABULARY = 2**53
# The largest number of teachers M: vote counts and their sums stay exact in float64.
LARGEST_TEACHERS = 2**53
# Rows of predictions that, all summing to one total, are taken for vote counts (a warning).
COUNT_LIKE_ROWS = 10


@dataclass(frozen=True)
class VoteSet:
    """A validated vote histogram and where it came from.

    ``votes``: ``(queries, classes)``, an array (maybe a read-only memory map) or rows formed
    when read (sparse votes, shards, predictions); ``teachers``: M (the common row total,
    ``--teachers``, or the prediction columns). A set not from a loader is checked when a
    run reads it (``validated``).
    """

    votes: np.ndarray
    teachers: float
    path: str | None  # None for an array given to the API
    sha256: str | None
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None  # (queries, teachers) class ids, -1 = no vote
    outputs: np.ndarray | None = None  # (queries,) output (sequence) id of each query

    @property
    def queries(self) -> int:
        return int(self.votes.shape[0])

    @property
    def name(self) -> str:
        """The file's name in messages (``the vote array`` for an array given to the API)."""
        return self.path or "the vote array"

    @property
    def classes(self) -> int:
        return int(self.votes.shape[1])


def load_votes(path, *, teachers: float | None = None, labels=None,
               index_col: int | None = None, queries: int | None = None,
               classes: int | None = None, columns=None) -> VoteSet:
    """Read and validate a vote histogram.

    Checks: 2-D numeric, at least 2 classes and 1 query, finite, non-negative, and (unless
    ``teachers`` is given) every row summing to the same M.

    Args:
      path: ``.npy``, ``.npz``, ``.csv``, ``.tsv`` or ``-``; a directory or glob of ``.npy``
        shards (``inputs.shards``); a sparse file (``inputs.sparse``: a ``save_npz``
        archive, or a long ``query,class,count`` table) gives ``SparseVotes``.
      teachers: M, for weighted or shifted votes whose rows need not sum to one M.
      labels: an optional path or array of true labels (a ``.npz`` may carry its own
        ``labels`` array, used when this is not given).
      index_col: drop that column of CSV/TSV text (``--index-col``).
      queries: ``--queries``: ``labels`` may hold one label per analysed query instead of
        one per row (see ``attach_labels``).
      classes: a long table's vocabulary size.
      columns: a long table's column names, ``"query=position,class=token,count=n"`` or a
        mapping (``inputs.long_table``); the columns may come in any order.

    Returns:
      The :class:`VoteSet` read, with its sha256.

    Raises:
      InputError: a file that cannot be read or breaks a check, in one line naming the file
        and the place; ``classes`` or ``columns`` for votes that are not a long table.
      OptionError: ``classes`` not a whole number from 2 to 2^53, ``queries`` not >= 1.
    """
    columns = column_map(columns)
    if classes is not None and not (real_number(classes, whole=True)
                                    and 1 < classes <= LARGEST_VOCABULARY):
        raise OptionError(f"--classes must be a whole number from 2 to 2^53, got {classes!r}")
    if queries is not None and not (real_number(queries, whole=True) and queries >= 1):
        raise OptionError(f"--queries must be a whole number >= 1, got {queries!r}")
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise InputError(f"votes: load_votes reads a path (or '-'), got "
                         f"{type(path).__name__} (pate_cli.analyze also takes an array)")
    kind = sparse_kind(path, columns)
    if kind is not None:
        return _load_sparse(path, kind, teachers=teachers, labels=labels, queries=queries,
                            classes=classes, columns=columns)
    if classes is not None or columns.given:
        raise not_a_long_table(path, classes=classes, columns=columns)
    if is_shard_set(path):  # a directory or glob of .npy pieces (inputs.shards)
        name, array, digest = open_shards(path, read_shard)
        packed_labels, text = None, False
    else:
        name, raw, digest = open_input(path, background=True)  # hashed while validated
        text = _is_text(name, raw)
        array, packed_labels = read_matrix(name, raw, key="votes",
                                           index_col=index_col if text else None)
    if index_col is not None and not text and not (
            isinstance(labels, (str, os.PathLike)) and str(labels) != "-"
            and _is_text(str(labels), labels)):  # stdin's kind shows only once read
        raise InputError(f"{name}: --index-col applies to CSV/TSV inputs (the votes or the "
                         "--labels file), not .npy/.npz")
    checked_teachers(teachers)
    votes = check_votes(name, array, teachers=teachers, hint_index=index_col is None)
    digest = digest_of(digest)
    if teachers is None:
        teachers = row_total(votes, 0)
        note_averaged(name, teachers)
    vote_set = _checked(VoteSet(votes=votes, teachers=teacher_count(name, teachers),
                                path=name, sha256=digest))
    if labels is not None:
        vote_set = attach_labels(vote_set, labels, queries=queries, index_col=index_col)
    elif packed_labels is not None:
        vote_set = attach_labels(vote_set, packed_labels, name=f"{name} (array 'labels')")
    return vote_set


def _load_sparse(path, kind, *, teachers, labels, queries, classes, columns) -> VoteSet:
    """A ``VoteSet`` of a sparse vote file (see ``sparse_vote_set``)."""
    name = check_file(path)
    digest = file_sha256(name)
    checked_teachers(teachers)
    votes, outputs = read_sparse(name, kind, classes=classes, columns=columns)
    vote_set = sparse_vote_set(name, votes, teachers, outputs=outputs, sha256=digest)
    if labels is not None:
        vote_set = attach_labels(vote_set, labels, queries=queries)
    return vote_set


def sparse_vote_set(name: str, votes, teachers, *, outputs=None,
                    sha256: str | None = None) -> VoteSet:
    """A ``VoteSet`` of sparse votes (``sha256`` None for the API's matrix): rows share one
    total unless ``teachers`` (checked by the caller) is given."""
    totals = row_totals(votes)  # no votes: refused in the dense checks' words
    if teachers is None and totals[0] == 0:
        raise InputError(f"{name}: query 0 has no votes (its counts sum to 0; every "
                         "query's votes sum to the number of teachers M)")
    if not np.any(totals):
        raise InputError(f"{name}: every vote is 0 (every query's counts sum to 0): no "
                         "teacher voted")
    if teachers is None:
        reference = float(totals[0])
        tolerance = 1e-9 * max(1.0, abs(reference))
        bad = np.flatnonzero(np.abs(totals - reference) > tolerance)
        if bad.size:
            raise InputError(f"{name}: query {bad[0]} sums to {show_number(totals[bad[0]])} but "
                             f"query 0 sums to {show_number(reference)} (every query's votes "
                             "sum to the number of teachers M; give --teachers M for weighted "
                             "or averaged votes)")
        teachers = reference
    else:
        check_at_most(name, totals, 0, teachers, 1e-9)
    return _checked(VoteSet(votes=votes, teachers=teacher_count(name, teachers),
                            path=None if sha256 is None else name,
                            sha256=sha256, outputs=outputs))  # type: ignore[arg-type]


# Checked votes by id: (weak reference, M). Not a ``VoteSet`` field: ``replace`` would carry it
# to other votes, and a hand-built set could claim it.
_CHECKED: dict[int, tuple[weakref.ref, float]] = {}


def _checked(vote_set: VoteSet, teachers: float | None = None) -> VoteSet:
    """Note ``vote_set``'s votes as checked to have no row above ``teachers`` (default its M);
    votes that cannot be weakly referenced are checked each time."""
    votes = vote_set.votes
    limit = float(vote_set.teachers if teachers is None else teachers)
    key = id(votes)
    try:
        reference = weakref.ref(votes, lambda _, key=key: _CHECKED.pop(key, None))
    except TypeError:
        return vote_set
    _CHECKED[key] = (reference, limit)
    return vote_set


def _checked_at(votes) -> float | None:
    """The M ``votes`` were checked at, or None."""
    entry = _CHECKED.get(id(votes))
    return entry[1] if entry is not None and entry[0]() is votes else None


def validated(vote_set: VoteSet, teachers: float | None = None) -> VoteSet:
    """``vote_set`` with its votes checked as a file's are, unless already checked at M.

    Finite, non-negative, no row above M (charged as if each teacher moved one vote, it would
    under-count the cost).

    Returns:
      The set with ``teachers`` (the run's M, default the set's) as its M.

    Raises:
      InputError: M not a positive number up to 2^53; a row summing above M (votes or
        voters); votes a file could not hold.
    """
    checked_teachers(vote_set.teachers)
    checked_teachers(teachers)
    limit = float(vote_set.teachers if teachers is None else teachers)
    votes, name = vote_set.votes, vote_set.name
    known = _checked_at(votes)
    if known is None or limit < known:
        predictions = vote_set.predictions
        if isinstance(votes, PredictedVotes) and votes.predictions is predictions:
            scan = max(1, min(TABLE_ROWS, SCAN_ELEMENTS // max(1, predictions.shape[1])))
            for start in range(0, predictions.shape[0], scan):  # voters: ids other than -1
                part = np.asarray(predictions[start : start + scan])
                check_at_most(name, (part >= 0).sum(axis=1), start, limit, 1e-9)
        elif hasattr(votes, "indptr"):  # sparse votes: their stored counts and row sums
            data = np.asarray(votes.data, dtype=np.float64)
            if not np.all(np.isfinite(data) & (data >= 0)):
                raise InputError(f"{name}: a stored count is negative or not finite (votes "
                                 "are counts)")
            check_at_most(name, row_totals(votes), 0, limit, 1e-9)
        else:
            check_votes(name, votes, teachers=limit)
        _checked(vote_set, limit)
    if teachers is None:
        return vote_set
    return replace(vote_set, teachers=teacher_count(name, teachers))


def checked_teachers(teachers) -> None:
    """``--teachers``: None or a positive number at most ``LARGEST_TEACHERS``."""
    if teachers is not None and not real_number(teachers, positive=True):
        raise InputError(f"--teachers must be a positive number, got {teachers!r}")
    if teachers is not None and float(teachers) > LARGEST_TEACHERS:
        raise InputError(f"--teachers {teachers!r} is more than 2^53 (9.0e15) teachers: "
                         "counts that large are not exact in float64")


def teacher_count(name: str, teachers: float) -> int | float:
    """M as a VoteSet holds it (an int when whole), refused above ``LARGEST_TEACHERS``."""
    if float(teachers) > LARGEST_TEACHERS:
        raise InputError(f"{name}: query 0 has {float(teachers):.15g} votes, more than 2^53 "
                         "(9.0e15): counts that large are not exact in float64 (are the "
                         "votes scaled? give counts of teachers' votes)")
    return int(teachers) if float(teachers).is_integer() else float(teachers)


def votes_from_array(votes, *, teachers: float | None = None, name: str = "votes") -> VoteSet:
    """A ``VoteSet`` from an API array, DataFrame or list of rows, checked as a vote file is
    (``name`` stands for the file's name)."""
    if hasattr(votes, "to_numpy") and not isinstance(votes, np.ndarray):
        votes = votes.to_numpy()  # a DataFrame: its values, not its index
    try:
        array = np.asarray(votes)
    except (ValueError, TypeError):  # ragged lists
        raise InputError(f"{name}: not a (queries x classes) table of numbers (rows of "
                         "different lengths?)") from None
    if array.dtype.kind in "OUSV":
        try:
            array = array.astype(np.float64)
        except (ValueError, TypeError):
            raise InputError(f"{name}: holds {array.dtype} values that are not numbers; "
                             "expected a (queries x classes) table of vote counts") from None
    check_dtype(name, array.dtype)
    checked_teachers(teachers)
    array = c_order(array)
    check_votes(name, array, teachers=teachers)
    if teachers is None:
        teachers = row_total(array, 0)
        note_averaged(name, teachers)
    return _checked(VoteSet(votes=array, teachers=teacher_count(name, teachers), path=None,
                            sha256=None))


PREDICTION_LAYOUTS = ("queries-first", "teachers-first")


def load_predictions(path, *, classes: int | None = None, labels=None,
                     index_col: int | None = None, queries: int | None = None,
                     layout: str = "queries-first", teachers: float | None = None) -> VoteSet:
    """Turn a ``(queries, teachers)`` matrix of predicted class ids into a histogram.

    The histogram is never held whole (``PredictedVotes`` forms each chunk's rows).

    Args:
      path: a ``.npy``/``.csv``/``.npz`` (key ``predictions``) file or an array; ``-1``: the
        teacher did not vote.
      classes: K (default: the largest id + 1).
      labels: true labels (a path or an array), attached as ``load_votes`` attaches them.
      index_col: a text file's index column.
      queries: the queries analysed (labels may give one per analysed query).
      layout: ``"teachers-first"`` (``--predictions-layout``, cli:formats) for the transpose,
        as PromptPATE and the 2017 PATE code save it (read as a view).
      teachers: M, checked: no query has more voters.

    Returns:
      The ``VoteSet`` (``predictions`` kept for the variants that need each teacher's vote).

    Raises:
      InputError: a class id that is not whole, below -1 or out of range, no vote at all, a
        bad layout or file.
    """
    if layout not in PREDICTION_LAYOUTS:
        raise InputError(f"--predictions-layout must be one of {', '.join(PREDICTION_LAYOUTS)}, "
                         f"got {layout!r}")
    name, array, packed_labels, digest = given_matrix(
        path, name="the predictions array", key="predictions", index_col=index_col)
    check_shape(name, array, votes=True)
    if layout == "teachers-first":  # (teachers, queries[, labels]) -> queries first
        array = array.swapaxes(0, 1)
    # whole class ids and their range, by chunk (a mapped file's pages let go)
    top = low = -1  # -1: no vote
    scan = max(1, min(TABLE_ROWS, SCAN_ELEMENTS // max(1, array.shape[1])))
    for start in range(0, array.shape[0] if array.size else 0, scan):
        part = np.asarray(array[start : start + scan])
        if part.dtype.kind == "f":
            bad = first_true(~np.isfinite(part) | (part != np.round(part)))
            if bad is not None:
                raise InputError(f"{name}: query {start + bad[0]}, teacher {bad[1]}: "
                                 f"{show_number(part[bad])} is not a class id")
        top, low = max(top, int(part.max())), min(low, int(part.min()))
        if start == 0:
            _note_counts(name, part)
        if teachers is not None:  # the voters of each row: its class ids other than -1
            check_at_most(name, (part >= 0).sum(axis=1), start, float(teachers), 1e-9)
        drop_mapped_rows(array, start, start + part.shape[0])
    if low < -1:
        row, col = first_true(array < -1)
        raise InputError(f"{name}: query {row}, teacher {col}: class id {int(array[row, col])} "
                         "is below -1 (-1 marks a teacher that did not vote)")
    if classes is not None and classes > MAX_CLASSES:
        raise InputError(f"--classes must be at most {MAX_CLASSES:,}, got {classes:,}")
    if classes is None and top >= MAX_CLASSES:
        row, col = first_true(array >= MAX_CLASSES)
        raise InputError(f"{name}: query {row}, teacher {col}: class id {int(array[row, col]):,} "
                         f"is too large (class ids go up to {MAX_CLASSES - 1:,})")
    if classes is None:
        classes = max(top + 1, 2)
    if classes < 2:
        raise InputError(f"--classes must be at least 2, got {classes}")
    if top >= classes:
        row, col = first_true(array >= classes)
        raise InputError(f"{name}: query {row}, teacher {col}: class id {int(array[row, col])} "
                         f"is outside 0..{classes - 1}")
    if top < 0:
        raise InputError(f"{name}: no teacher voted on any query (every class id is -1)")
    note_dense(name, array.shape[0] if queries is None else min(queries, array.shape[0]),
               classes)
    vote_set = VoteSet(votes=PredictedVotes(array, classes),  # type: ignore[arg-type]
                       teachers=int(array.shape[1]), path=None if digest is None else name,
                       sha256=digest, predictions=array)
    _checked(vote_set)
    if labels is not None:
        vote_set = attach_labels(vote_set, labels, queries=queries, index_col=index_col)
    elif packed_labels is not None:
        vote_set = attach_labels(vote_set, packed_labels, name=f"{name} (array 'labels')")
    return vote_set


def _note_counts(name: str, rows: np.ndarray) -> None:
    """A ``PateWarning`` where the first rows of predictions look like vote counts: at least
    ``COUNT_LIKE_ROWS`` rows, not all the same, each summing to the same positive total (as
    each query's counts sum to the teachers)."""
    sums = rows.sum(axis=1)
    if (rows.shape[0] >= COUNT_LIKE_ROWS and sums[0] > 0 and (sums == sums[0]).all()
            and not (rows == rows[0]).all()):
        warnings.warn(f"{name}: each of its first {rows.shape[0]:,} rows sums to "
                      f"{show_number(sums[0])}, as rows of vote counts do; vote counts are "
                      "the VOTES argument, not --predictions (teachers' class ids)",
                      PateWarning, stacklevel=3)


def read_shard(name: str) -> np.ndarray:
    """One ``.npy`` piece of a shard set, memory-mapped and checked as a vote file is."""
    if os.path.getsize(name) == 0:
        raise InputError(f"{name}: the file is empty")
    array, _ = read_matrix(name, name, key="votes")
    return array


def attach_labels(vote_set: VoteSet, labels, *, name: str = "labels",
                  queries: int | None = None, index_col: int | None = None) -> VoteSet:
    """Validate true labels (a path or an array) against ``vote_set`` and attach them.

    One label per row, or with ``queries`` one per analysed row (never padded, so an
    unlabelled row cannot be scored); ``--query-indices`` needs the full count. ``index_col``
    drops that column of a multi-column CSV/TSV file. ``name`` names an array in messages.
    """
    if isinstance(labels, (str, os.PathLike)):
        name, raw, _ = open_input(labels)
        array, _ = read_matrix(name, raw, key="labels", indexed=index_col is not None)
        if (index_col is not None and array.ndim == 2 and array.shape[1] > 1
                and _is_text(name, raw)):
            array = drop_column(f"--labels {name}", array, index_col)
    else:
        array = np.asarray(labels)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        hint = (" (its first column looks like a pandas index: --index-col 0 drops it from "
                "each CSV/TSV input)" if index_col is None and looks_like_index(array)
                else "")
        raise InputError(f"{name}: expected one label per query (a single column), "
                         f"got shape {array.shape}{hint}")
    analysed = None if queries is None else min(queries, vote_set.queries)
    if array.shape[0] != vote_set.queries and array.shape[0] != analysed:
        if analysed is None:
            raise InputError(f"{name}: has {array.shape[0]} labels but {vote_set.name} has "
                             f"{vote_set.queries} queries")
        raise InputError(f"--labels {name}: has {array.shape[0]} labels but {vote_set.name} "
                         f"has {vote_set.queries} queries and --queries is {queries} (give "
                         f"{vote_set.queries} labels, or {analysed} for the analysed rows)")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name}: labels must be integer class ids")
    values = np.asarray(array)
    for start in range(0, values.shape[0], TABLE_ROWS):  # no temporary of every label
        part = values[start:start + TABLE_ROWS]
        if part.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(part) | (part != np.round(part)))
            if bad.size:
                raise InputError(f"{name}: label {show_number(part[bad[0]])} at query "
                                 f"{start + bad[0]} is not an integer class id")
        bad = np.flatnonzero((part < 0) | (part >= vote_set.classes))
        if bad.size:
            raise InputError(f"{name}: label {show_number(part[bad[0]])} at query "
                             f"{start + bad[0]} is outside 0..{vote_set.classes - 1}")
        drop_mapped_rows(values, start, start + part.shape[0])
    # int64 labels as they are (a memory map stays mapped, not copied)
    return replace(vote_set, labels=values if values.dtype == np.int64
                   else values.astype(np.int64))


def _is_text(name: str, source) -> bool:
    """Whether an opened input (``open_input``'s source) holds CSV/TSV text."""
    if isinstance(source, bytes):
        return not source.startswith((NPY_MAGIC, ZIP_MAGIC))
    return os.path.splitext(name)[1].lower() not in (".npy", ".npz")  # as read_matrix


def load_student(path, *, queries: int, classes: int) -> np.ndarray:
    """Student probabilities for Interactive-GNMax.

    Args:
      path: ``.npy``, ``.csv``, ``.npz`` (key ``student``) or an array.
      queries: the votes' queries.
      classes: the votes' classes.

    Returns:
      The ``(queries, classes)`` float64 array.

    Raises:
      InputError: another shape, a negative or non-finite value, or a row not summing to 1
        within 1e-6.
    """
    name, array, _, _ = given_matrix(path, name="the student array", key="student")
    check_shape(name, array)
    if array.shape != (queries, classes):
        raise InputError(f"{name}: has shape {array.shape[0]} x {array.shape[1]} but the votes "
                         f"are {queries} queries x {classes} classes")
    values = np.asarray(array, dtype=np.float64)
    check_finite_non_negative(name, values, 0, "student rows are probabilities")
    totals = values.sum(axis=1)
    off = np.flatnonzero(np.abs(totals - 1.0) > 1e-6)
    if off.size:
        raise InputError(f"{name}: query {off[0]} sums to {totals[off[0]]:.9g}, not 1 "
                         "(student rows must be probability vectors)")
    return values


@dataclass(frozen=True)
class ReadSpec:
    """:func:`read_votes`'s keywords, as :func:`load_votes` and :func:`load_predictions` take
    them (``predictions``: a file read instead of votes)."""

    predictions: Any = None
    classes: int | None = None
    labels: Any = None
    teachers: float | None = None
    index_col: int | None = None
    queries: int | None = None
    predictions_layout: str = "queries-first"
    columns: Any = None


def read_votes(votes=None, **options: Any) -> VoteSet:
    """A ``VoteSet`` from exactly one of votes or a predictions file (else ``OptionError``).

    Args:
        votes: a path, an array (DataFrame, list of rows) or a ``VoteSet``.
        **options: the fields of :class:`ReadSpec`.
    """
    spec = ReadSpec(**options)
    predictions, classes, labels = spec.predictions, spec.classes, spec.labels
    teachers, index_col, queries = spec.teachers, spec.index_col, spec.queries
    if (votes is None) == (predictions is None):
        raise OptionError("give exactly one of VOTES or --predictions FILE")
    columns = column_map(spec.columns)
    path = isinstance(votes, (str, os.PathLike))
    if (classes is not None and predictions is None and not path) or (
            columns.given and not path):
        raise not_a_long_table(None, classes=None if columns.given else classes,
                               columns=columns)
    if predictions is not None:
        checked_teachers(teachers)
        vote_set = load_predictions(predictions, classes=classes, labels=labels,
                                    index_col=index_col, queries=queries,
                                    layout=spec.predictions_layout, teachers=teachers)
    elif path:
        vote_set = load_votes(votes, teachers=teachers, labels=labels, index_col=index_col,
                              queries=queries, classes=classes, columns=columns)
    else:
        if isinstance(votes, VoteSet):
            vote_set = validated(votes, teachers)
        elif hasattr(votes, "tocsr"):  # a SciPy sparse matrix
            checked_teachers(teachers)
            vote_set = sparse_vote_set("the sparse votes", sparse_from_matrix(votes), teachers)
        else:  # an array, DataFrame or list of rows
            vote_set = votes_from_array(votes, teachers=teachers)
        if labels is not None:
            vote_set = attach_labels(vote_set, labels, queries=queries, index_col=index_col)
    if teachers is not None:
        vote_set = replace(vote_set, teachers=teachers)
    return vote_set
