"""Reading and validating vote, prediction and label files.

The only module that reads user files. Every problem is an ``InputError`` whose message
is one line naming the file, the place (query = 0-based row of the vote matrix, class =
0-based column; text files also give the 1-based line and column) and what is wrong.
``.npy`` files are memory-mapped and never unpickled; validation scans them in chunks, so
memory stays bounded whatever the file size.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import zipfile
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

VOTE_EXTENSIONS = (".npy", ".npz", ".csv", ".tsv")
_SCAN_ROWS = 1 << 16


class InputError(ValueError):
    """A user mistake in an input file or option: reported in one line, exit status 2."""


@dataclass(frozen=True)
class VoteSet:
    """A validated vote histogram and where it came from.

    ``votes`` is ``(queries, classes)``, possibly a read-only memory map; ``teachers`` is
    M (the common row total, or ``--teachers``, or the number of prediction columns).
    """

    votes: np.ndarray
    teachers: float
    path: str
    sha256: str
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None  # (queries, teachers) class ids, -1 = no vote

    @property
    def queries(self) -> int:
        return int(self.votes.shape[0])

    @property
    def classes(self) -> int:
        return int(self.votes.shape[1])


def load_votes(path, *, teachers: float | None = None, labels=None) -> VoteSet:
    """Read and validate a vote histogram (``.npy``, ``.npz``, ``.csv``, ``.tsv`` or ``-``).

    Checks: 2-D numeric, at least 2 classes and 1 query, finite, non-negative, and (unless
    ``teachers`` is given, for weighted or shifted votes) every row summing to the same M.
    ``labels`` is an optional path or array of true labels; a ``.npz`` may carry its own
    ``labels`` array, used when ``labels`` is not given.
    """
    name, raw, digest = _open(path)
    array, packed_labels = _read_matrix(name, raw, key="votes")
    votes = _check_votes(name, array, teachers_given=teachers is not None)
    if teachers is None:
        teachers = _row_total(votes, 0)
    elif not (np.isfinite(teachers) and teachers > 0):
        raise InputError(f"--teachers must be positive, got {teachers:g}")
    teachers = int(teachers) if float(teachers).is_integer() else float(teachers)
    vote_set = VoteSet(votes=votes, teachers=teachers, path=name, sha256=digest)
    if labels is not None:
        vote_set = attach_labels(vote_set, labels)
    elif packed_labels is not None:
        vote_set = attach_labels(vote_set, packed_labels, name=f"{name} (array 'labels')")
    return vote_set


def load_predictions(path, *, classes: int | None = None, labels=None) -> VoteSet:
    """Turn a ``(queries, teachers)`` matrix of predicted class ids into a histogram.

    ``-1`` means the teacher did not vote. ``classes`` defaults to the largest id + 1.
    The histogram is built with one ``bincount`` per chunk (row * K + class offsets).
    """
    name, raw, digest = _open(path)
    array, packed_labels = _read_matrix(name, raw, key="predictions")
    _check_shape(name, array)
    if array.dtype.kind == "f":
        bad = _first(~np.isfinite(array) | (array != np.round(array)))
        if bad is not None:
            raise InputError(f"{name}: query {bad[0]}, teacher {bad[1]}: "
                             f"{_show(array[bad])} is not a class id")
    top = int(array.max()) if array.size else -1
    low = int(array.min()) if array.size else -1
    if low < -1:
        row, col = _first(array < -1)
        raise InputError(f"{name}: query {row}, teacher {col}: class id {int(array[row, col])} "
                         "is below -1 (-1 marks a teacher that did not vote)")
    if classes is None:
        classes = max(top + 1, 2)
    if classes < 2:
        raise InputError(f"--classes must be at least 2, got {classes}")
    if top >= classes:
        row, col = _first(array >= classes)
        raise InputError(f"{name}: query {row}, teacher {col}: class id {int(array[row, col])} "
                         f"is outside 0..{classes - 1}")
    histogram = np.empty((array.shape[0], classes), dtype=np.int32)
    for start in range(0, array.shape[0], _SCAN_ROWS):
        chunk = np.asarray(array[start : start + _SCAN_ROWS], dtype=np.int64)
        rows = np.broadcast_to(np.arange(chunk.shape[0])[:, None], chunk.shape)
        voted = chunk >= 0
        flat = rows[voted] * classes + chunk[voted]
        counts = np.bincount(flat, minlength=chunk.shape[0] * classes)
        histogram[start : start + chunk.shape[0]] = counts.reshape(-1, classes)
    vote_set = VoteSet(votes=histogram, teachers=int(array.shape[1]), path=name, sha256=digest,
                       predictions=array)
    if labels is not None:
        vote_set = attach_labels(vote_set, labels)
    elif packed_labels is not None:
        vote_set = attach_labels(vote_set, packed_labels, name=f"{name} (array 'labels')")
    return vote_set


def attach_labels(vote_set: VoteSet, labels, *, name: str = "labels") -> VoteSet:
    """Validate true labels (a path or an array) against ``vote_set`` and attach them.

    ``name`` is how messages refer to an array given directly.
    """
    if isinstance(labels, (str, os.PathLike)):
        name, raw, _ = _open(labels)
        array, _ = _read_matrix(name, raw, key="labels", allow_1d=True)
    else:
        array = np.asarray(labels)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise InputError(f"{name}: expected one label per query (a single column), "
                         f"got shape {array.shape}")
    if array.shape[0] != vote_set.queries:
        raise InputError(f"{name}: has {array.shape[0]} labels but {vote_set.path} has "
                         f"{vote_set.queries} queries")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{name}: labels must be integer class ids")
    values = np.asarray(array)
    bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
    if bad.size:
        raise InputError(f"{name}: label {_show(values[bad[0]])} at query {bad[0]} is not "
                         "an integer class id")
    bad = np.flatnonzero((values < 0) | (values >= vote_set.classes))
    if bad.size:
        raise InputError(f"{name}: label {_show(values[bad[0]])} at query {bad[0]} is outside "
                         f"0..{vote_set.classes - 1}")
    return replace(vote_set, labels=values.astype(np.int64))


# --- reading -----------------------------------------------------------------------------

def check_file(path, *, expected: str | None = None) -> str:
    """The path as a string, after a one-line error for a missing path or a directory
    (``expected`` names the input wanted there)."""
    name = os.fspath(path)
    hint = f" (expected {expected})" if expected else ""
    if not os.path.exists(name):
        raise InputError(f"{name}: no such file{hint}")
    if os.path.isdir(name):
        raise InputError(f"{name}: is a directory, not a file{hint}")
    return name


def _open(path):
    """Return ``(display name, source, sha256)``; source is a path, or bytes for stdin."""
    if str(path) == "-":
        data = sys.stdin.buffer.read()
        if not data:
            raise InputError("<stdin>: no input (the standard input is empty)")
        return "<stdin>", data, hashlib.sha256(data).hexdigest()
    name = check_file(path)
    extension = os.path.splitext(name)[1].lower()
    if extension not in VOTE_EXTENSIONS:
        shown = f"'{extension}'" if extension else "none"
        raise InputError(f"{name}: unknown extension {shown} "
                         "(expected .npy, .npz, .csv, .tsv, or - for standard input)")
    if os.path.getsize(name) == 0:
        raise InputError(f"{name}: the file is empty")
    digest = hashlib.sha256()
    with open(name, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return name, name, digest.hexdigest()


def _read_matrix(name, source, *, key, allow_1d=False):
    """Read a numeric array (and, from ``.npz``, the optional ``labels``)."""
    if isinstance(source, bytes):
        if source.startswith(b"\x93NUMPY"):
            return _read_npy(name, io.BytesIO(source)), None
        if source.startswith(b"PK"):
            return _read_npz(name, io.BytesIO(source), key)
        return _read_text(name, source.decode("utf-8", errors="replace"), None), None
    extension = os.path.splitext(source)[1].lower()
    if extension == ".npy":
        return _read_npy(name, source), None
    if extension == ".npz":
        return _read_npz(name, source, key)
    with open(source, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    return _read_text(name, text, "\t" if extension == ".tsv" else ","), None


def _read_npy(name, source):
    try:
        if isinstance(source, str):
            array = np.load(source, mmap_mode="r", allow_pickle=False)
        else:
            array = np.load(source, allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise _load_error(name, error, ".npy") from None
    _check_dtype(name, array.dtype)
    return array


def _read_npz(name, source, key):
    try:
        with np.load(source, allow_pickle=False) as archive:
            keys = list(archive.keys())
            if key not in keys:
                if len(keys) == 1 and key != "labels":
                    key = keys[0]
                else:
                    raise InputError(f"{name}: has no array named '{key}' "
                                     f"(it holds: {', '.join(keys) or 'nothing'})")
            array = archive[key]
            labels = archive["labels"] if "labels" in keys and key != "labels" else None
    except InputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise _load_error(name, error, ".npz") from None
    _check_dtype(name, array.dtype)
    if labels is not None:
        _check_dtype(name, labels.dtype)
    return array, labels


def _load_error(name, error, kind) -> InputError:
    """numpy's refusal of an object array, or any other load failure, in one line."""
    text = str(error).lower()
    if isinstance(error, ValueError) and ("pickle" in text or "object" in text):
        return _pickled(name)
    return InputError(f"{name}: not a valid {kind} file ({error})")


def _read_text(name, text, separator):
    """Parse CSV/TSV text: an optional header row of names, then numbers only."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError(f"{name}: the file is empty")
    if separator is None:
        separator = "\t" if "\t" in lines[0] and "," not in lines[0] else ","
    header_cells = [cell.strip() for cell in lines[0].split(separator)]
    has_header = all(not _is_number(cell) for cell in header_cells)
    if has_header and len(lines) == 1:
        raise InputError(f"{name}: has a header but no rows")
    options = dict(sep=separator, header=None, skiprows=1 if has_header else 0,
                   skipinitialspace=True, keep_default_na=False, engine="c",
                   skip_blank_lines=True)
    try:
        values = pd.read_csv(io.StringIO(text), dtype=np.float64, **options).to_numpy()
        if not np.isnan(values).any():
            return values
    except ValueError:
        pass  # some cell is not a number: parse as text below to say which one
    # The slow path, taken only to explain a problem: which line, which column.
    numbered = [(number, line) for number, line in enumerate(lines, start=1)
                if line.strip()][1 if has_header else 0:]
    widths = [line.count(separator) + 1 for _, line in numbered]
    expected = len(header_cells) if has_header else widths[0]
    for (number, _), width in zip(numbered, widths, strict=True):
        if width != expected:
            raise InputError(f"{name}: rows have different numbers of columns (line {number} "
                             f"has {width}, expected {expected})")
    frame = pd.read_csv(io.StringIO(text), dtype=str, **options)
    cells = frame.to_numpy(dtype=object)
    values = pd.DataFrame(cells).apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    for row, col in zip(*np.nonzero(np.isnan(values)), strict=True):
        cell = str(cells[row, col]).strip()
        if cell.lower() in ("nan", "+nan", "-nan"):
            continue  # a number, but not finite: reported by the vote checks
        shown = "empty" if cell == "" else f"{cell!r} is not a number"
        raise InputError(f"{name}: line {numbered[row][0]}, column {col + 1}: {shown}")
    return values


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# --- validation ---------------------------------------------------------------------------

def _pickled(name):
    return InputError(f"{name}: holds a pickled object array; refusing to load it "
                      "(only plain numeric arrays are read)")


def _check_dtype(name, dtype):
    if dtype.hasobject:
        raise _pickled(name)
    if dtype.kind not in "biuf":
        raise InputError(f"{name}: holds {dtype} values; expected numbers")


def _check_shape(name, array):
    if array.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array (rows = queries), got "
                         f"{array.ndim}-D with shape {array.shape}")
    if array.shape[0] == 0:
        raise InputError(f"{name}: has no queries (0 rows)")


def _check_votes(name, array, *, teachers_given):
    _check_shape(name, array)
    if array.shape[1] < 2:
        raise InputError(f"{name}: needs at least 2 classes (columns), got {array.shape[1]}")
    reference = None
    for start in range(0, array.shape[0], _SCAN_ROWS):
        chunk = np.asarray(array[start : start + _SCAN_ROWS], dtype=np.float64)
        _check_finite_non_negative(name, chunk, start, "votes are counts")
        if teachers_given:
            continue
        totals = chunk.sum(axis=1)
        if reference is None:
            reference = totals[0]
        off = np.flatnonzero(np.abs(totals - reference) > 1e-9 * max(1.0, abs(reference)))
        if off.size:
            row = start + int(off[0])
            raise InputError(f"{name}: query {row} has {totals[off[0]]:g} votes but query 0 "
                             f"has {reference:g} (every row must sum to the number of "
                             "teachers; give --teachers M for weighted or partial votes)")
    return array


def _check_finite_non_negative(name, chunk, offset, why):
    """One-line errors for the first non-finite or negative entry of a chunk of rows."""
    bad = _first(~np.isfinite(chunk))
    if bad is not None:
        raise InputError(f"{name}: query {offset + bad[0]}, class {bad[1]} is not finite "
                         f"({_show(chunk[bad])})")
    bad = _first(chunk < 0)
    if bad is not None:
        raise InputError(f"{name}: query {offset + bad[0]}, class {bad[1]} is negative "
                         f"({_show(chunk[bad])}); {why}")


def _row_total(votes, row):
    return float(np.asarray(votes[row], dtype=np.float64).sum())


def _show(value) -> str:
    """A number as a person writes it: 3, 1.5, nan, inf (never ``np.float64(...)``)."""
    value = float(value)
    if np.isfinite(value) and value.is_integer():
        return str(int(value))
    return repr(value)


def _first(mask):
    """Index tuple of the first True entry of a 2-D mask, or None."""
    flat = np.flatnonzero(mask)
    if flat.size == 0:
        return None
    return np.unravel_index(flat[0], mask.shape)


# --- other inputs: student probabilities, query indices, external RDP, rounds ---------------

def load_student(path, *, queries: int, classes: int) -> np.ndarray:
    """Student probabilities for Interactive-GNMax: ``(queries, classes)``, rows
    non-negative and summing to 1 within 1e-6 (``.npy``, ``.csv``, ``.npz`` key
    ``student``)."""
    name, raw, _ = _open(path)
    array, _ = _read_matrix(name, raw, key="student")
    _check_shape(name, array)
    if array.shape != (queries, classes):
        raise InputError(f"{name}: has shape {array.shape[0]} x {array.shape[1]} but the votes "
                         f"are {queries} queries x {classes} classes")
    values = np.asarray(array, dtype=np.float64)
    _check_finite_non_negative(name, values, 0, "student rows are probabilities")
    totals = values.sum(axis=1)
    off = np.flatnonzero(np.abs(totals - 1.0) > 1e-6)
    if off.size:
        raise InputError(f"{name}: query {off[0]} sums to {totals[off[0]]:.9g}, not 1 "
                         "(student rows must be probability vectors)")
    return values


def load_query_indices(path) -> np.ndarray:
    """Row numbers to analyse, in order (``.npy`` or a one-column ``.csv``/``.txt``)."""
    name = os.fspath(path)
    if name.lower().endswith(".txt"):
        name, text = _open_text(path)
        array = _read_text(name, text, ",")
    else:
        name, raw, _ = _open(path)
        array, _ = _read_matrix(name, raw, key="indices", allow_1d=True)
    array = np.asarray(array)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 or array.size == 0:
        raise InputError(f"{name}: expected one row number per line, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array) | (array != np.round(array)) | (array < 0))
    if bad.size:
        raise InputError(f"{name}: entry {bad[0]} ({_show(array[bad[0]])}) is not a row number")
    return array.astype(np.int64)


def load_rdp_curve(path, *, orders: np.ndarray) -> tuple[np.ndarray, str, str | None]:
    """An external RDP curve (CSV ``order,rdp``) at ``orders``.

    Orders absent from the file take the value at the next larger order given (RDP is
    non-decreasing in the order, so this is an upper bound); orders above the largest
    given one get ``inf`` (never chosen). Returns ``(curve, sha256, note or None)``.
    """
    name, raw, digest = _open(path)
    array, _ = _read_matrix(name, raw, key="rdp")
    _check_shape(name, array)
    if array.shape[1] != 2:
        raise InputError(f"{name}: expected two columns (order, rdp), got {array.shape[1]}")
    given_orders, given = np.asarray(array[:, 0], float), np.asarray(array[:, 1], float)
    bad = np.flatnonzero(~np.isfinite(given_orders) | (given_orders <= 1))
    if bad.size:
        raise InputError(f"{name}: row {bad[0]}: order {_show(given_orders[bad[0]])} must be a "
                         "number greater than 1")
    bad = np.flatnonzero(np.isnan(given) | (given < 0))
    if bad.size:
        raise InputError(f"{name}: row {bad[0]}: rdp {_show(given[bad[0]])} must be >= 0")
    order_sort = np.argsort(given_orders, kind="stable")
    given_orders, given = given_orders[order_sort], given[order_sort]
    slot = np.searchsorted(given_orders, orders, side="left")
    curve = np.full(orders.shape, np.inf)
    inside = slot < given_orders.size
    curve[inside] = given[slot[inside]]
    exact = inside & np.isclose(given_orders[np.minimum(slot, given_orders.size - 1)], orders,
                                rtol=1e-12, atol=0)
    note = None
    if not exact.all():
        above = int(np.count_nonzero(~inside))
        note = (f"{name}: {int(np.count_nonzero(~exact))} of {orders.size} orders are not in "
                "the file; each takes the value at the next larger order given")
        if above:
            note += f" ({above} above the largest given order are left out: rdp = inf)"
    return curve, digest, note


ROUND_KEYS = ("rows", "mechanism", "threshold", "sigma_threshold", "sigma", "laplace_scale",
              "confidence", "student", "svt_scale", "svt_cutoff", "svt_threshold")


def load_rounds(path) -> list[dict]:
    """A multi-round description (CSV with a header, or a JSON list of objects).

    Each round has ``rows`` (``start:stop``, 0-based, stop excluded; or, in JSON, a list of
    row numbers), ``mechanism`` and optional parameters (``threshold``,
    ``sigma_threshold``, ``sigma``, ``laplace_scale``, ``confidence``, ``student`` (a path,
    relative to the rounds file), ``svt_scale``, ``svt_cutoff``, ``svt_threshold``).
    """
    name, text = _open_text(path)
    if name.lower().endswith(".json"):
        import json

        try:
            rounds = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(f"{name}: not valid JSON ({error.msg}, line {error.lineno})") \
                from None
        if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
            raise InputError(f"{name}: expected a JSON list of objects, one per round")
    else:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False,
                            skipinitialspace=True)
        rounds = [{key: value for key, value in row.items() if str(value).strip() != ""}
                  for row in frame.to_dict("records")]
    if not rounds:
        raise InputError(f"{name}: describes no rounds")
    base = os.path.dirname(os.path.abspath(name))
    return [_check_round(name, number, spec, base) for number, spec in enumerate(rounds)]


def _check_round(name, number, spec, base) -> dict:
    unknown = sorted(set(spec) - set(ROUND_KEYS))
    if unknown:
        raise InputError(f"{name}: round {number}: unknown field {unknown[0]!r} "
                         f"(known: {', '.join(ROUND_KEYS)})")
    for key in ("rows", "mechanism"):
        if key not in spec:
            raise InputError(f"{name}: round {number}: missing '{key}'")
    clean = {"mechanism": str(spec["mechanism"]).strip()}
    rows = spec["rows"]
    if isinstance(rows, list):
        clean["rows"] = np.asarray(rows, dtype=np.int64)
    else:
        parts = str(rows).split(":")
        try:
            start, stop = (int(p) for p in parts)
        except ValueError:
            raise InputError(f"{name}: round {number}: rows {rows!r} must be start:stop") \
                from None
        if not 0 <= start < stop:
            raise InputError(f"{name}: round {number}: rows {rows!r} is an empty range")
        clean["rows"] = np.arange(start, stop)
    for key in ("threshold", "sigma_threshold", "sigma", "laplace_scale", "confidence",
                "svt_scale", "svt_threshold"):
        if key in spec:
            try:
                clean[key] = float(spec[key])
            except (TypeError, ValueError):
                raise InputError(f"{name}: round {number}: {key} {spec[key]!r} is not a "
                                 "number") from None
    if "svt_cutoff" in spec:
        try:
            clean["svt_cutoff"] = int(spec["svt_cutoff"])
        except (TypeError, ValueError):
            raise InputError(f"{name}: round {number}: svt_cutoff {spec['svt_cutoff']!r} is "
                             "not an integer") from None
    if "student" in spec:
        clean["student"] = os.path.join(base, str(spec["student"]))
    return clean


# --- privacy groups (Individualized PATE) -----------------------------------------------

GROUP_COLUMNS = ("group", "budget", "upsampling", "weight", "participation", "share")


@dataclass(frozen=True)
class PrivacyGroups:
    """Privacy groups from ``--groups``: names, budgets and optional given parameters.

    ``upsampling``/``weight``/``participation``/``share`` are arrays with NaN where the
    file leaves a value to the rules of MATH.md section 9 (or None without the column).
    """

    names: tuple
    budgets: np.ndarray
    upsampling: np.ndarray | None = None
    weight: np.ndarray | None = None
    participation: np.ndarray | None = None
    share: np.ndarray | None = None


def load_groups(path) -> PrivacyGroups:
    """Read ``group,budget[,upsampling][,weight][,participation][,share]`` (CSV, header)."""
    name, raw = _open_text(path)
    try:
        frame = pd.read_csv(io.StringIO(raw), dtype=str, keep_default_na=False,
                            skipinitialspace=True)
    except pd.errors.ParserError as error:
        raise InputError(f"{name}: not a valid CSV ({str(error).strip()})") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    unknown = [c for c in frame.columns if c not in GROUP_COLUMNS]
    if unknown:
        raise InputError(f"{name}: unknown column {unknown[0]!r} (expected "
                         f"{', '.join(GROUP_COLUMNS)})")
    for needed in ("group", "budget"):
        if needed not in frame.columns:
            raise InputError(f"{name}: needs a '{needed}' column")
    if frame.empty:
        raise InputError(f"{name}: lists no groups")
    names = tuple(str(g).strip() for g in frame["group"])
    if any(not g for g in names):
        raise InputError(f"{name}: line {names.index('') + 2}: a group without a name")
    if len(set(names)) != len(names):
        repeated = next(g for g in names if names.count(g) > 1)
        raise InputError(f"{name}: group {repeated!r} is listed twice")
    columns = {}
    for column in GROUP_COLUMNS[1:]:
        if column not in frame.columns:
            columns[column] = None
            continue
        values = np.full(len(names), np.nan)
        for row, cell in enumerate(frame[column]):
            cell = str(cell).strip()
            if cell == "":
                if column == "budget":
                    raise InputError(f"{name}: group {names[row]!r} has no budget")
                continue
            try:
                values[row] = float(cell)
            except ValueError:
                raise InputError(f"{name}: group {names[row]!r}: {column} {cell!r} is not a "
                                 "number") from None
        columns[column] = values
    budgets = columns.pop("budget")
    bad = np.flatnonzero(~np.isfinite(budgets) | (budgets <= 0))
    if bad.size:
        raise InputError(f"{name}: group {names[bad[0]]!r}: budget {_show(budgets[bad[0]])} "
                         "must be positive")
    checks = {"upsampling": (lambda v: v >= 1 and float(v).is_integer(),
                             "a whole number >= 1"),
              "weight": (lambda v: v > 0, "positive"),
              "participation": (lambda v: 0 < v <= 1, "in (0, 1]"),
              "share": (lambda v: 0 < v <= 1, "in (0, 1]")}
    for column, (valid, wanted) in checks.items():
        values = columns[column]
        if values is None:
            continue
        for row, value in enumerate(values):
            if np.isfinite(value) and not valid(value):
                raise InputError(f"{name}: group {names[row]!r}: {column} {_show(value)} must "
                                 f"be {wanted}")
    return PrivacyGroups(names=names, budgets=budgets, **columns)


def load_teacher_groups(path, *, groups: PrivacyGroups, teachers: int) -> np.ndarray:
    """Read ``teacher,group`` (CSV, header): the group index of every teacher 0..M-1."""
    name, raw = _open_text(path)
    frame = pd.read_csv(io.StringIO(raw), dtype=str, keep_default_na=False,
                        skipinitialspace=True)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    if list(frame.columns[:2]) != ["teacher", "group"]:
        raise InputError(f"{name}: expected the columns teacher,group")
    index = {group: number for number, group in enumerate(groups.names)}
    assigned = np.full(teachers, -1, dtype=np.int64)
    for row, (teacher, group) in enumerate(zip(frame["teacher"], frame["group"],
                                               strict=True)):
        try:
            t = int(str(teacher).strip())
        except ValueError:
            raise InputError(f"{name}: line {row + 2}: teacher {teacher!r} is not a number") \
                from None
        if not 0 <= t < teachers:
            raise InputError(f"{name}: line {row + 2}: teacher {t} is outside 0..{teachers - 1}"
                             f" (the predictions have {teachers} teachers)")
        g = str(group).strip()
        if g not in index:
            raise InputError(f"{name}: line {row + 2}: unknown group {g!r} (the groups file "
                             f"lists {', '.join(groups.names)})")
        if assigned[t] >= 0:
            raise InputError(f"{name}: line {row + 2}: teacher {t} is listed twice")
        assigned[t] = index[g]
    missing = np.flatnonzero(assigned < 0)
    if missing.size:
        raise InputError(f"{name}: teacher {missing[0]} has no group ({missing.size} of "
                         f"{teachers} teachers are missing)")
    unused = [g for number, g in enumerate(groups.names) if not np.any(assigned == number)]
    if unused:
        raise InputError(f"{name}: no teacher belongs to group {unused[0]!r}, which the "
                         "groups file lists")
    return assigned


def _open_text(path) -> tuple[str, str]:
    """``(name, text)`` of a small text file, with the usual one-line errors."""
    name = check_file(path)
    with open(name, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    if not text.strip():
        raise InputError(f"{name}: the file is empty")
    return name, text
