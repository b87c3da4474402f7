"""``--decisions FILE``: the decisions of a run made elsewhere (cli:decisions); every problem is
one ``InputError`` line naming the file. What ``--write-decisions`` writes, or two plain arrays:

- ``.csv``: a header ``query,outcome,label``, one row per processed query in processing order;
  ``label`` empty when none; ``#`` lines are comments, ``# mechanism: NAME`` records the
  mechanism that made the decisions.
- ``.jsonl``: one object ``{"query": i, "outcome": "...", "label": j or null}`` per line; an
  optional first line ``{"mechanism": "NAME"}`` (an object without ``query``).
- ``.npz``: arrays ``query`` (integers), ``outcome`` (strings), ``label`` (integers, -1 for
  none) and optionally a 0-d string array ``mechanism``.
- ``.npy``: a boolean or 0/1 array is an answered mask; an integer array holding -1 is released
  labels (-1: none); one entry per vote-file row, or per analysed query in processing order.
  (With 2 classes a non-boolean 0/1 array is read as a mask with a ``Warning:``: a binary
  task's labels, every query answered, need ``.csv``/``.npz``.)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import warnings
from dataclasses import replace

import numpy as np

from ..decisions import (
    CODED,
    MECHANISM_OUTCOMES,
    OUTCOME_ABSTAIN,
    OUTCOME_NAMES,
    OUTCOME_STUDENT,
    OUTCOME_TEACHER,
    Decisions,
    named_decisions,
)
from ..errors import InputError, PateWarning
from .npy_files import ARCHIVE_ERRORS, NPY_MAGIC, check_npz_members
from .query_indices import first_bad_rows
from .readers import read_matrix

DECISION_EXTENSIONS = (".csv", ".jsonl", ".npz", ".npy")


def load_decisions(path, *, classes: int | None = None) -> Decisions:
    """Read a decisions file, with the checks that need no run (``classes``: the votes')."""
    name = os.fspath(path)
    extension = os.path.splitext(name)[1].lower()
    if extension not in DECISION_EXTENSIONS:
        raise InputError(f"{name}: unknown extension for a decisions file (use "
                         f"{', '.join(DECISION_EXTENSIONS)})")
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise InputError(f"{name}: cannot read the decisions file ({error.strerror})") from None
    digest = hashlib.sha256(data).hexdigest()
    if not data:
        raise InputError(f"{name}: the decisions file is empty")
    if extension == ".npy":
        return _from_npy(name, digest, data, classes)
    if extension == ".npz":
        query, outcome, label, mechanism = _from_npz(name, data)
    elif extension == ".csv":
        query, outcome, label, mechanism = _from_csv(name, data)
    else:
        query, outcome, label, mechanism = _from_jsonl(name, data)
    try:
        return named_decisions(mechanism, query, outcome, label, path=name, sha256=digest)
    except ValueError as error:
        raise InputError(f"{name}: {error}") from None


def check_decisions(table: Decisions, *, mechanism: str, classes: int,
                    positions: np.ndarray, rows_total: int, partial: bool = False
                    ) -> Decisions:
    """Check ``table`` against the run (length, query indices, outcomes ``mechanism`` can
    produce, labels within ``classes`` and only on answered queries, recorded mechanism).

    ``positions``: the analysed file rows, in order, of ``rows_total``. ``partial``: the file
    may cover a prefix (a budget run halted). Returns the decisions in processing order with
    ``query``, ``mechanism`` and outcome codes (``decisions.CODED``) filled in."""
    name = table.path or "<decisions>"
    if table.mechanism is not None and table.mechanism.lower() != mechanism.lower():
        raise InputError(f"{name}: decisions made by -m {table.mechanism}, but the analysis "
                         f"is -m {mechanism}")
    count = positions.size
    answered, label, code, query = table.answered, table.label, table.code, table.query
    if query is None:  # a .npy: one per file row, or one per analysed query
        if label.size == rows_total and not (partial and label.size < count):
            answered, label = answered[positions], label[positions]
            code = None if code is None else code[positions]
        elif label.size != count and not (partial and label.size < count):
            raise InputError(f"{name}: {label.size} decisions, but the analysis has {count} "
                             f"queries (and the vote file {rows_total} rows)")
        query = positions[:label.size]
    else:
        outside, repeated = first_bad_rows(query, rows_total)
        if outside is not None:
            raise InputError(f"{name}: row {outside + 1}: query {int(query[outside])} is outside "
                             f"0..{rows_total - 1}")
        if repeated is not None:
            raise InputError(f"{name}: row {repeated + 1}: query {int(query[repeated])} is "
                             "listed twice")
        if query.size > count or (query.size < count and not partial):
            raise InputError(f"{name}: {query.size} decisions, but the analysis has {count} "
                             "queries")
        differ = np.flatnonzero(query != positions[:query.size])
        if differ.size:
            row = int(differ[0])
            raise InputError(f"{name}: row {row + 1}: query {int(query[row])}, but the "
                             f"analysis processes query {int(positions[row])} there")
    if np.any(label < -1):  # (-1: no label)
        row = int(np.flatnonzero(label < -1)[0])
        raise InputError(f"{name}: row {row + 1}: label {int(label[row])} is not a class "
                         "number (-1 for none)")
    if np.any(label >= classes):
        row = int(np.flatnonzero(label >= classes)[0])
        raise InputError(f"{name}: row {row + 1}: label {int(label[row])} is outside the "
                         f"classes 0..{classes - 1}")
    if code is None:  # a mask or released labels: answered or refused
        if mechanism == "svt":
            raise InputError(f"{name}: SVT decisions need outcomes (stable, unstable, "
                             "halted): write them with --write-decisions (.csv/.jsonl/.npz)")
        code = np.where(answered, OUTCOME_TEACHER, OUTCOME_ABSTAIN).astype(np.int8)
    checked = Decisions.of_codes(code, label, query=np.asarray(query, dtype=np.int64),
                                 mechanism=mechanism, path=table.path, sha256=table.sha256)
    allowed = [OUTCOME_NAMES.index(outcome) for outcome in MECHANISM_OUTCOMES[mechanism]]
    wrong = np.flatnonzero(~np.isin(code, allowed))
    if wrong.size:
        row = int(wrong[0])
        raise InputError(f"{name}: row {row + 1}: outcome {OUTCOME_NAMES[code[row]]!r} is not "
                         f"one -m {mechanism} can produce "
                         f"({', '.join(MECHANISM_OUTCOMES[mechanism])})")
    unlabelled = np.flatnonzero(~checked.labelled & (label >= 0))
    if unlabelled.size:
        row = int(unlabelled[0])
        raise InputError(f"{name}: row {row + 1}: a label on a query with outcome "
                         f"{OUTCOME_NAMES[code[row]]!r}")
    return checked if mechanism in CODED else replace(checked, code=None)


def _given_decisions(value: Decisions) -> Decisions:
    """A :class:`Decisions` built by hand (lists too), its labels and query indices read as a
    decisions array's (:func:`_labels`, :func:`_queries`), its fields of one length."""
    name = "<decisions>"
    label = _labels(name, value.label)
    answered = np.asarray(value.answered)
    code = None if value.code is None else np.asarray(value.code, dtype=np.int8)
    query = None if value.query is None else _queries(name, value.query)
    shapes = [array.shape for array in (answered, label, code, query) if array is not None]
    if any(len(shape) != 1 for shape in shapes) or len(set(shapes)) > 1:
        raise InputError(f"{name}: answered, label (and code, query) must be 1-D arrays of one "
                         f"length, got shapes {', '.join(map(str, shapes))}")
    return replace(value, answered=answered.astype(bool), label=label, code=code, query=query)


def read_decisions(value, *, mechanism: str, classes: int, positions: np.ndarray,
                   rows_total: int, partial: bool = False, student=None,
                   confidence: float = 0.0) -> Decisions:
    """``--decisions``: ``value`` (a path, :class:`Decisions`, array, list, Series or DataFrame
    of the file's columns) read and checked. With ``student`` (probabilities per file row), a
    ``student`` outcome needs confidence above ``confidence`` (gamma) and releases ``argmax p``."""
    if isinstance(value, Decisions):
        table = _given_decisions(value)
    elif isinstance(value, (np.ndarray, list, tuple)) or hasattr(value, "to_frame"):
        table = decisions_from_array(np.asarray(value) if hasattr(value, "to_frame")
                                     else value, classes=classes)  # a Series: its values
    elif hasattr(value, "to_csv"):  # a DataFrame of a decisions file's columns
        name = "the decisions table"
        query, outcome, label, made_by = _from_csv(name, value.to_csv(index=False).encode())
        try:
            table = named_decisions(made_by, query, outcome, label)
        except ValueError as error:
            raise InputError(f"{name}: {error}") from None
    else:
        table = load_decisions(value, classes=classes)
    checked = check_decisions(table, mechanism=mechanism, classes=classes,
                              positions=positions, rows_total=rows_total, partial=partial)
    if student is None:
        return checked
    rows = np.asarray(student)[checked.query]
    own = checked.code == OUTCOME_STUDENT
    best = np.argmax(rows, axis=1)
    wrong = np.flatnonzero(own & ((rows.max(axis=1) <= confidence)
                                  | ((checked.label >= 0) & (checked.label != best))))
    if wrong.size:
        row = int(wrong[0])
        raise InputError(f"{table.path or '<decisions>'}: row {row + 1}: outcome 'student' "
                         f"needs the student's own label ({int(best[row])}) with confidence "
                         f"above {confidence:g} (it has {float(rows[row].max()):g})")
    return replace(checked, label=np.where(own, best, checked.label))


# Labels and query indices beyond this are no class or row (and overflow int64).
_LARGEST = 2.0 ** 53


def _labels(name, values: np.ndarray | list, rows: np.ndarray | None = None) -> np.ndarray:
    """Integer labels, -1 for none; anything else below -1 or fractional is refused."""
    try:
        numbers = _as_float(values)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}: the labels must be class numbers (-1 for none)") from None
    bad = np.flatnonzero(~np.isfinite(numbers) | (numbers != np.round(numbers))
                         | (numbers < -1) | (numbers > _LARGEST))
    if bad.size:
        row = int(bad[0])
        raise InputError(f"{name}: row {row + 1}: label {_shown(values, row)} is not a class "
                         "number")
    return numbers.astype(np.int64)


def _queries(name, values) -> np.ndarray:
    try:
        array = _as_float(values)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}: the query column must hold row numbers") from None
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array))
                         | (np.abs(array) > _LARGEST))
    if bad.size:
        raise InputError(f"{name}: row {bad[0] + 1}: query {_shown(values, bad[0])} is not "
                         "a row number")
    return array.astype(np.int64)


def _shown(values, row) -> str:
    """Entry ``row`` of what was given, as written (a numpy scalar without its repr)."""
    value = np.asarray(values, dtype=object)[row]
    value = value.item() if isinstance(value, np.generic) else value
    return str(int(value)) if isinstance(value, float) and value.is_integer() else repr(value)


def _as_float(values) -> np.ndarray:
    """``values`` as float64, booleans as 0/1; other non-reals raise TypeError/ValueError."""
    array = np.asarray(values) if not isinstance(values, list) else np.asarray(
        values, dtype=object if any(isinstance(v, int) and abs(v) > _LARGEST for v in values)
        else None)
    if array.dtype.kind not in "biuf" and not (array.dtype.kind == "O" and all(
            isinstance(value, (int, float)) for value in array.ravel())):
        raise TypeError(f"not real numbers ({array.dtype})")
    return array.astype(np.float64)


def _from_npy(name, digest, data: bytes, classes: int | None = None) -> Decisions:
    if not data.startswith(NPY_MAGIC):
        raise InputError(f"{name}: not a .npy file (it does not start with the NPY magic "
                         "bytes \\x93NUMPY)")
    array, _ = read_matrix(name, data, key="decisions")  # header checked before loading
    return decisions_from_array(array, path=name, sha256=digest, classes=classes)


def decisions_from_array(array, *, path: str | None = None, sha256: str | None = None,
                         classes: int | None = None) -> Decisions:
    """A 0/1 answered mask or released labels (-1: none) as :class:`Decisions` without outcome
    codes. A non-boolean 0/1 array is read as a mask with a ``PateWarning`` (``classes``: the
    votes'): labels of a run answering every query with 0 or 1 would be charged fewer answers."""
    name = path or "<decisions>"
    try:
        array = np.asarray(array)
    except (ValueError, TypeError):  # ragged lists
        raise InputError(f"{name}: expected one decision per query (a 1-D array)") from None
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"{name}: expected one decision per query (a 1-D array), got shape "
                         f"{array.shape}")
    if array.dtype == bool or (array.dtype.kind in "iuf"
                               and np.all(np.isin(array, (0, 1)))):
        if array.dtype != bool:
            among = "" if classes is None else f" of {classes}"
            warnings.warn(f"{name}: its 0/1 {array.dtype} values are read as an answered "
                          f"mask ({int(np.count_nonzero(array))} of {array.size} queries "
                          "answered); they may be the released labels of a run that "
                          f"answered every query with classes 0 and 1{among} only: give "
                          "those as .csv or .npz (as --write-decisions writes them; in "
                          "Python, label()'s Decisions), and a mask as a boolean array (not "
                          "warned about)", PateWarning, stacklevel=2)
        return Decisions(np.asarray(array, dtype=bool), np.full(array.size, -1, dtype=np.int64),
                         path=path, sha256=sha256)
    if array.dtype.kind not in "iuf":
        raise InputError(f"{name}: expected a 0/1 answered mask or integer labels, got "
                         f"dtype {array.dtype}")
    label = _labels(name, array)
    return Decisions(label >= 0, label, path=path, sha256=sha256)


def _npz_name(name: str, stored: np.ndarray) -> str:
    """The ``mechanism`` member of a decisions ``.npz``: one text (str or bytes) value."""
    value = stored.reshape(-1)[0] if stored.size == 1 else None
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise InputError(f"{name}: its mechanism member must hold one name, got "
                         f"{stored.dtype} values of shape {stored.shape}")
    return value


def _from_npz(name, data: bytes):
    try:
        check_npz_members(name, data, numeric=False)  # every header, before any load
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            members = {key: archive[key] for key in archive.files}
    except InputError:
        raise
    except ARCHIVE_ERRORS as error:
        raise InputError(f"{name}: not a readable .npz archive "
                         f"({' '.join(str(error).split())})") from None
    missing = [key for key in ("query", "outcome", "label") if key not in members]
    if missing:
        raise InputError(f"{name}: the archive needs arrays query, outcome and label "
                         f"(missing {', '.join(missing)})")
    query, outcome, label = members["query"], members["outcome"], members["label"]
    if not (query.ndim == outcome.ndim == label.ndim == 1
            and query.size == outcome.size == label.size):
        raise InputError(f"{name}: query, outcome and label must be 1-D arrays of one length")
    mechanism = _npz_name(name, members["mechanism"]) if "mechanism" in members else None
    return (_queries(name, query), np.asarray(outcome, dtype=str),
            _labels(name, label), mechanism)


def _from_csv(name, data: bytes):
    text = _text(name, data)
    mechanism = None
    lines = []
    for line in text.splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            if key.strip() == "mechanism":
                mechanism = value.strip()
            continue
        if line.strip():
            lines.append(line)
    rows = list(csv.reader(lines))
    if not rows or [cell.strip() for cell in rows[0]] != ["query", "outcome", "label"]:
        raise InputError(f"{name}: expected the header query,outcome,label")
    query, outcome, label = [], [], []
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != 3:
            raise InputError(f"{name}: row {number}: expected 3 cells (query,outcome,label), "
                             f"got {len(row)}")
        query.append(row[0].strip())
        outcome.append(row[1].strip())
        cell = row[2].strip()
        label.append(cell if cell else "-1")
    try:
        label_values = np.asarray([float(cell) for cell in label])
        query_values = [float(cell) for cell in query]
    except ValueError:
        raise InputError(f"{name}: query and label must be numbers (label empty for "
                         "none)") from None
    return (_queries(name, query_values), np.asarray(outcome, dtype=str),
            _labels(name, label_values), mechanism)


def _from_jsonl(name, data: bytes):
    mechanism = None
    query, outcome, label = [], [], []
    for number, line in enumerate(_text(name, data).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"{name}: line {number} is not JSON") from None
        if not isinstance(record, dict):
            raise InputError(f"{name}: line {number}: expected an object")
        if "query" not in record:
            if number == 1 and "mechanism" in record:
                mechanism = str(record["mechanism"])
                continue
            raise InputError(f"{name}: line {number}: no 'query'")
        value = record.get("label")
        if not (isinstance(record["query"], int) and not isinstance(record["query"], bool)):
            raise InputError(f"{name}: line {number}: query {record['query']!r} is not a row "
                             "number")
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool)):
            raise InputError(f"{name}: line {number}: label {value!r} is not a class number")
        query.append(record["query"])
        outcome.append(str(record.get("outcome", "")))
        label.append(-1 if value is None else value)
    return (_queries(name, query), np.asarray(outcome, dtype=str),
            _labels(name, label), mechanism)


def _text(name, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name}: not UTF-8 text") from None
