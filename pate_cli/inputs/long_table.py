"""Long tables of sparse votes (cli:per-query "Sparse votes"): one row per non-zero count,
columns ``query``, ``class``, ``count`` and an optional ``output`` in any order (renamed by
``--columns``), read with ``--classes K`` (the vocabulary size). A ``.csv``/``.tsv`` file is
one when its header names the three columns; ``.parquet`` always.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, OptionError
from .checks import show_number
from .readers import check_file, is_number

if TYPE_CHECKING:
    import pandas as pd

ROLES = ("query", "class", "count", "output")  # output: optional
TABLE_EXTENSIONS = (".csv", ".tsv", ".parquet")
ID_LIMIT = 2**63  # query, class and output ids are int64
_SHOWN_COLUMNS = 8  # a header's columns named in a message (a dense CSV may have thousands)
BATCH_ROWS = 1 << 18  # rows of a long table read at once


@dataclass(frozen=True)
class ColumnMap:
    """A long table's column names by role (``--columns``): ``given`` holds the ``(role,
    name)`` pairs named; other roles go by their own name. Matched without case or spaces."""

    given: tuple[tuple[str, str], ...] = ()

    def __getitem__(self, role: str) -> str:
        return dict(self.given).get(role, role)

    @property
    def required(self) -> tuple[str, ...]:
        """The names a table must have: query, class and count's, and output's if named."""
        roles = ROLES if "output" in dict(self.given) else ROLES[:3]
        return tuple(self[role] for role in roles)

    def __str__(self) -> str:
        """As ``--columns`` takes it (``query=position,class=token,count=n``)."""
        return ",".join(f"{role}={name}" for role, name in self.given)


def column_map(value) -> ColumnMap:
    """``--columns`` (None, ``"query=NAME,class=NAME,..."``, a mapping of roles to names, or
    a ``ColumnMap``) checked: known roles, each once, non-empty names, no name twice."""
    if isinstance(value, ColumnMap):
        return value
    if value is None:
        return ColumnMap()
    if isinstance(value, Mapping):
        pairs = [(str(role), str(name)) for role, name in value.items()]
    else:
        pairs = [item.partition("=")[::2] for item in str(value).split(",")]
    shown = value if isinstance(value, str) else ",".join(f"{r}={n}" for r, n in pairs)
    given: dict[str, str] = {}
    for role, name in pairs:
        role, name = role.strip().lower(), name.strip().lower()
        if role not in ROLES or not name:
            raise OptionError(f"--columns takes ROLE=NAME pairs, ROLE one of "
                              f"{', '.join(ROLES)} (e.g. query=position,class=token,"
                              f"count=n), got {shown!r}")
        if role in given:
            raise OptionError(f"--columns names the {role} column twice ({shown!r})")
        given[role] = name
    names = list(given.values())
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise OptionError(f"--columns gives column {twice[0]!r} two roles ({shown!r})")
    return ColumnMap(tuple((role, given[role]) for role in ROLES if role in given))


def header_cells(path) -> list[str] | None:
    """The column names on the first line of a ``.csv``/``.tsv`` file (lower case, quotes,
    spaces and a byte-order mark dropped), or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except OSError:
        return None
    first = first.lstrip("\ufeff").rstrip("\r\n")
    return [cell.strip().strip('"').strip().lower()
            for cell in first.replace("\t", ",").split(",")]


def is_long_table(cells, columns: ColumnMap) -> bool:
    """Whether a header (its cells) names every column ``columns`` requires."""
    return cells is not None and set(columns.required) <= set(cells)


def _shown(cells) -> str:
    names = [cell or "''" for cell in cells]
    if len(names) > _SHOWN_COLUMNS:
        return ",".join(names[:_SHOWN_COLUMNS]) + f",... ({len(names)} columns)"
    return ",".join(names)


def _expected(columns: ColumnMap) -> str:
    if columns.given:
        return f"{','.join(columns.required)} (--columns {columns})"
    return ("query,class,count (in any order, with an optional output; name others with "
            "--columns query=NAME,class=NAME,count=NAME)")


def not_a_long_table(path, *, classes: int | None, columns: ColumnMap) -> InputError:
    """The one line for ``--classes``/``--columns`` with VOTES not a long table (a
    ``.csv``/``.tsv`` file's: the columns expected and those its header has)."""
    option = "--classes K" if classes is not None else "--columns"
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    extension = os.path.splitext(name)[1].lower() if name else ""
    if name and name != "-":
        check_file(name)  # a missing file is said first: not what the option says
    if name and extension in TABLE_EXTENSIONS and os.path.isfile(name):
        cells = header_cells(name) or []
        found = (f"its first line holds numbers ({_shown(cells)}), not column names"
                 if cells and all(is_number(cell) for cell in cells)
                 else f"its header has {_shown(cells)}")
        return InputError(f"{name}: {option} reads a long table with columns "
                          f"{_expected(columns)}; {found}")
    stdin = (" read from a file (standard input holds dense CSV or NPY votes)" if name == "-"
             else "")
    if classes is not None:
        return OptionError("--classes only applies to --predictions and to long sparse "
                           f"tables (query,class,count){stdin}")
    return OptionError("--columns only applies to long sparse tables (.csv, .tsv, .parquet "
                       f"VOTES){stdin}")


def read_long_table(name: str, vocabulary: int, columns: ColumnMap):
    """``(indptr, cols, counts, output per query or None)``: the CSR arrays of the long table
    ``name``, each query's rows sorted by class. Read ``BATCH_ROWS`` rows at a time (memory: the
    arrays and one batch), checked for order (queries ascending, none skipped), ids within
    int64 and the vocabulary before any cast, and duplicates; refusals name the first bad line."""
    table = _Batches(name, vocabulary, columns, rows=_row_bound(name))
    for frame in _frames(name, columns):
        table.add(frame)
    return table.result()


def _frames(name: str, columns: ColumnMap) -> Iterator[pd.DataFrame]:
    """The table's rows as frames of at most ``BATCH_ROWS`` rows (column names in lower
    case without surrounding spaces); a header without rows gives one empty frame."""
    extension = os.path.splitext(name)[1].lower()
    try:
        if extension == ".parquet":
            import pyarrow.parquet as pq
            source = pq.ParquetFile(name, pre_buffer=False)  # (table_pieces._parquet)
            _check_columns(name, source.schema_arrow.names, columns)
            frames = (batch.to_pandas() for batch in source.iter_batches(BATCH_ROWS))
        else:
            import pandas as pd
            frames = pd.read_csv(name, sep="\t" if extension == ".tsv" else ",",
                                 encoding="utf-8-sig", chunksize=BATCH_ROWS)
        for frame in frames:  # parse errors arise batch by batch
            frame.columns = [str(c).strip().lower() for c in frame.columns]
            _check_columns(name, frame.columns, columns)
            yield frame
    except ImportError:
        raise InputError(f"{name}: reading .parquet needs pyarrow (pip install "
                         "'pate_cli[parquet]')") from None
    except InputError:
        raise
    except Exception as error:  # pandas' and pyarrow's parse errors are many types
        raise InputError(f"{name}: not a readable table ({str(error).splitlines()[0]})"
                         ) from None


def _row_bound(name: str) -> int:
    """A Parquet file's row count from its footer; 0 for a text table (its arrays grow as it
    is read) or an unreadable one (``_frames`` says why)."""
    if not name.lower().endswith(".parquet"):
        return 0
    try:
        import pyarrow.parquet as pq
        return int(pq.ParquetFile(name).metadata.num_rows)
    except Exception:  # pyarrow's errors are many types
        return 0


def _check_columns(name: str, found, columns: ColumnMap) -> None:
    found = [str(c).strip().lower() for c in found]
    missing = [c for c in columns.required if c not in found]
    if missing:
        raise InputError(f"{name}: a long table needs columns {_expected(columns)}; missing "
                         f"{','.join(missing)} (its columns: {_shown(found)})")


class _Batches:
    """A long table's CSR arrays formed batch by batch. The last query of a batch may go on
    in the next, so its rows wait (``pending``): every batch sorted is whole queries."""

    def __init__(self, name: str, vocabulary: int, columns: ColumnMap, *, rows: int):
        self.name, self.vocabulary, self.columns = name, vocabulary, columns
        self.read = 0  # rows read (the next row is on line read + 2)
        self.pending: list[np.ndarray] | None = None  # the last query's rows so far
        self.parts: list[tuple[np.ndarray, ...]] = []  # per batch: stored, output
        # classes and counts sorted so far, sized to a Parquet file's rows, else doubled
        self.cols = np.empty(rows, dtype=np.int32 if vocabulary < 2**31 else np.int64)
        self.counts: np.ndarray | None = None
        self.filled = 0

    def add(self, frame: pd.DataFrame) -> None:
        name, columns, line = self.name, self.columns, self.read + 2
        values = {role: _numbers(name, frame, columns[role], line) for role in ROLES
                  if columns[role] in frame.columns}
        if not len(frame):
            return
        rows = _ids(name, frame, columns["query"], values["query"], ID_LIMIT, role="query",
                    line=line)
        last = -1 if self.pending is None else int(self.pending[0][-1])
        steps = np.diff(rows, prepend=last)
        bad = np.flatnonzero(steps < 0)
        if bad.size:
            before = last if bad[0] == 0 else rows[bad[0] - 1]
            raise InputError(f"{name}: queries are not ascending: line {line + bad[0]} has "
                             f"query {rows[bad[0]]} after query {before}")
        skipped = np.flatnonzero(steps > 1)
        if skipped.size:  # before counting rows per query up to the last id
            query = last + 1 if skipped[0] == 0 else int(rows[skipped[0] - 1]) + 1
            raise InputError(f"{name}: query {query} has no rows (every query needs its "
                             "non-zero counts)")
        cols = _ids(name, frame, columns["class"], values["class"], self.vocabulary,
                    role="class", line=line)
        batch = [rows, cols, values["count"]]
        if "output" in values:
            output = _ids(name, frame, columns["output"], values["output"], ID_LIMIT,
                          role="output", line=line)
            _check_outputs(name, rows, output, line, self.pending)
            batch.append(output)
        self.read += len(frame)
        if self.pending is not None:
            batch = [np.concatenate((held, new)) for held, new in zip(self.pending, batch,
                                                                      strict=True)]
        cut = int(np.searchsorted(batch[0], batch[0][-1]))  # the last query's first row
        self.pending = [column[cut:] for column in batch]
        if cut:
            self._sorted([column[:cut] for column in batch])

    def _sorted(self, batch: list[np.ndarray]) -> None:
        """Whole queries' rows sorted by query, then class; duplicates refused."""
        rows, cols, counts = batch[:3]
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
        same = np.flatnonzero((np.diff(rows) == 0) & (np.diff(cols) == 0))
        if same.size:
            raise InputError(f"{self.name}: query {rows[same[0]]}, class {cols[same[0]]} "
                             "appears twice (duplicate entry)")
        first = np.flatnonzero(np.diff(rows, prepend=-1))  # each query's first row
        self.parts.append((np.diff(first, append=rows.size),
                           *([] if len(batch) < 4 else [batch[3][first]])))
        self._put(cols, counts[order])

    def _put(self, cols: np.ndarray, counts: np.ndarray) -> None:
        end = self.filled + cols.size
        kind = counts.dtype if self.counts is None else np.promote_types(self.counts.dtype,
                                                                          counts.dtype)
        if self.counts is None or end > self.cols.size or kind != self.counts.dtype:
            size = max(end, self.cols.size if end <= self.cols.size else 2 * self.cols.size)
            self.cols = _grown(self.cols, size, self.filled, self.cols.dtype)
            self.counts = _grown(self.counts, size, self.filled, kind)
        self.cols[self.filled:end] = cols
        self.counts[self.filled:end] = counts
        self.filled = end

    def result(self):
        if self.pending is None:
            raise InputError(f"{self.name}: has no queries (no rows)")
        self._sorted(self.pending)
        assert self.counts is not None
        stored, *output = (np.concatenate(part) for part in zip(*self.parts, strict=True))
        indptr = np.concatenate(([0], np.cumsum(stored)))
        return (indptr, self.cols[:self.filled], self.counts[:self.filled],
                output[0] if output else None)


def _grown(array: np.ndarray | None, size: int, filled: int, dtype) -> np.ndarray:
    """A new array of ``size`` entries starting with ``array``'s first ``filled``."""
    out = np.empty(size, dtype=dtype)
    if array is not None:
        out[:filled] = array[:filled]
    return out


def _numbers(name, frame, column, line: int) -> np.ndarray:
    """A column's numbers (integers beyond int64 as floats), or one line naming the first cell
    that is not a number."""
    import pandas as pd
    values = frame[column]
    if values.dtype.kind in "biuf":
        return values.to_numpy()
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(np.isnan(numeric) & values.notna().to_numpy())
    if bad.size:
        raise InputError(f"{name}: column {column} holds non-numbers (line {line + bad[0]})")
    return numeric


def _ids(name, frame, column, values, limit, *, role: str, line: int) -> np.ndarray:
    """Whole numbers in ``0 .. limit - 1`` as int64, checked before the cast (which would
    wrap); a refusal names the line (``line``: the frame's first) and the cell as written."""
    def cell(row: int) -> str:
        value = frame[column].iloc[row]
        if not isinstance(value, (float, np.floating)):
            return str(value)  # an integer as written, however long
        return show_number(value) if abs(value) < 2**53 else repr(float(value))

    if values.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
        if bad.size:
            raise InputError(f"{name}: line {line + bad[0]}: {column} {cell(bad[0])} is not "
                             "an integer")
    bad = np.flatnonzero((values < 0) | (values >= limit))
    if bad.size:
        at, shown = line + bad[0], cell(bad[0])
        if role == "class":
            raise InputError(f"{name}: line {at}: class {shown} is outside the vocabulary "
                             f"0..{limit - 1}")
        if role == "query" and values[bad[0]] < 0:
            raise InputError(f"{name}: line {at} has query {shown}; queries start at 0")
        raise InputError(f"{name}: line {at}: {role} {shown} is not an id from 0 to "
                         "2^63 - 1")
    return values.astype(np.int64)


def _check_outputs(name, rows: np.ndarray, output: np.ndarray, line: int,
                   pending: list[np.ndarray] | None) -> None:
    """Every row of a query names the same output (``pending``: the rows of the query the
    previous batch ended with)."""
    if pending is not None:
        rows = np.concatenate((pending[0][-1:], rows))
        output = np.concatenate((pending[3][-1:], output))
        line -= 1
    change = np.flatnonzero((np.diff(rows) == 0) & (np.diff(output) != 0))
    if change.size:
        raise InputError(f"{name}: line {line + change[0] + 1}: query {rows[change[0]]} has "
                         f"two outputs ({output[change[0]]} and {output[change[0] + 1]})")
