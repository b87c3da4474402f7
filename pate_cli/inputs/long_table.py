"""Long tables of sparse votes (cli:per-query "Sparse votes"): one row per non-zero count, its
columns ``query``, ``class``, ``count`` and an optional ``output``, in any order, or under
other names given by ``--columns query=NAME,class=NAME,count=NAME[,output=NAME]``
(:class:`ColumnMap`), read with ``--classes K`` (the vocabulary size).

A ``.csv``/``.tsv`` file is a long table when its header names the three columns
(:func:`is_long_table`); a ``.parquet`` file always is. :func:`read_long_table` returns the
columns checked for order (queries ascending, none skipped) and for ids that fit ``int64``,
each refusal one line naming the file and the line; :func:`not_a_long_table` is the line for
a file ``--classes`` or ``--columns`` cannot read as one, naming the columns it expected and
those it found.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, OptionError
from .checks import show_number

ROLES = ("query", "class", "count", "output")  # output: optional
TABLE_EXTENSIONS = (".csv", ".tsv", ".parquet")
ID_LIMIT = 2**63  # query, class and output ids are int64
_SHOWN_COLUMNS = 8  # a header's columns named in a message (a dense CSV may have thousands)


@dataclass(frozen=True)
class ColumnMap:
    """A long table's column names by role (``--columns``): ``given`` holds the ``(role,
    name)`` pairs named, every other role goes by its own name. Names are matched without
    case or surrounding spaces."""

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


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


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
    """The one line for ``--classes``/``--columns`` given with VOTES that are not a long
    table: for a ``.csv``/``.tsv`` file, the columns expected and those its header has."""
    option = "--classes K" if classes is not None else "--columns"
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    extension = os.path.splitext(name)[1].lower() if name else ""
    if name and extension in TABLE_EXTENSIONS and os.path.isfile(name):
        cells = header_cells(name) or []
        found = (f"its first line holds numbers ({_shown(cells)}), not column names"
                 if cells and all(_is_number(cell) for cell in cells)
                 else f"its header has {_shown(cells)}")
        return InputError(f"{name}: {option} reads a long table with columns "
                          f"{_expected(columns)}; {found}")
    if classes is not None:
        return OptionError("--classes only applies to --predictions and to long sparse "
                           "tables (query,class,count)")
    return OptionError("--columns only applies to long sparse tables (.csv, .tsv, .parquet "
                       "VOTES)")


def read_long_table(name: str, vocabulary: int, columns: ColumnMap):
    """``(rows, cols, counts, output per query or None)`` of the long table ``name``: rows
    sorted by query then class, checked for order (queries ascending, none skipped) and for
    ids that fit ``int64`` (classes within the vocabulary) before any cast."""
    extension = os.path.splitext(name)[1].lower()
    try:
        if extension == ".parquet":
            import pyarrow.parquet as pq
            frame = pq.read_table(name).to_pandas()
        else:
            import pandas as pd
            frame = pd.read_csv(name, sep="\t" if extension == ".tsv" else ",",
                                encoding="utf-8-sig")
    except ImportError:
        raise InputError(f"{name}: reading .parquet needs pyarrow (pip install "
                         "'pate_cli[parquet]')") from None
    except Exception as error:  # pandas' and pyarrow's parse errors are many types
        raise InputError(f"{name}: not a readable table ({str(error).splitlines()[0]})"
                         ) from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    missing = [c for c in columns.required if c not in frame.columns]
    if missing:
        raise InputError(f"{name}: a long table needs columns {_expected(columns)}; missing "
                         f"{','.join(missing)} (its columns: {_shown(frame.columns)})")
    if len(frame) == 0:
        raise InputError(f"{name}: has no queries (no rows)")
    values = {role: _numbers(name, frame, columns[role]) for role in ROLES
              if columns[role] in frame.columns}
    rows = _ids(name, frame, columns["query"], values["query"], ID_LIMIT, role="query")
    bad = np.flatnonzero(np.diff(rows) < 0)
    if bad.size:
        raise InputError(f"{name}: queries are not ascending: line {bad[0] + 3} has query "
                         f"{rows[bad[0] + 1]} after query {rows[bad[0]]}")
    skipped = np.flatnonzero(np.diff(rows) > 1)
    if rows[0] > 0 or skipped.size:  # before counting rows per query up to the last id
        query = 0 if rows[0] > 0 else int(rows[skipped[0]]) + 1
        raise InputError(f"{name}: query {query} has no rows (every query needs its "
                         "non-zero counts)")
    cols = _ids(name, frame, columns["class"], values["class"], vocabulary, role="class")
    order = np.lexsort((cols, rows))
    output = None
    if "output" in values:
        output = _output_per_query(name, rows, _ids(name, frame, columns["output"],
                                                    values["output"], ID_LIMIT, role="output"))
    return rows[order], cols[order], values["count"][order], output


def _numbers(name, frame, column) -> np.ndarray:
    """A column's numbers (integers beyond int64 as floats), or one line naming the first
    cell that is not a number."""
    import pandas as pd
    values = frame[column]
    if values.dtype.kind in "biuf":
        return values.to_numpy()
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(np.isnan(numeric) & values.notna().to_numpy())
    if bad.size:
        raise InputError(f"{name}: column {column} holds non-numbers (line {bad[0] + 2})")
    return numeric


def _ids(name, frame, column, values, limit, *, role: str) -> np.ndarray:
    """Whole numbers in ``0 .. limit - 1`` as int64 (checked before the cast, which would
    wrap a larger one); each refusal names the line and the cell as written."""
    def cell(line: int) -> str:
        value = frame[column].iloc[line]
        if not isinstance(value, (float, np.floating)):
            return str(value)  # an integer as written, however long
        return show_number(value) if abs(value) < 2**53 else repr(float(value))

    if values.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))
        if bad.size:
            raise InputError(f"{name}: line {bad[0] + 2}: {column} {cell(bad[0])} is not an "
                             "integer")
    bad = np.flatnonzero((values < 0) | (values >= limit))
    if bad.size:
        line, shown = bad[0] + 2, cell(bad[0])
        if role == "class":
            raise InputError(f"{name}: line {line}: class {shown} is outside the vocabulary "
                             f"0..{limit - 1}")
        if role == "query" and values[bad[0]] < 0:
            raise InputError(f"{name}: line {line} has query {shown}; queries start at 0")
        raise InputError(f"{name}: line {line}: {role} {shown} is not an id from 0 to "
                         "2^63 - 1")
    return values.astype(np.int64)


def _output_per_query(name, rows: np.ndarray, output: np.ndarray) -> np.ndarray:
    """One output per query from a table's column (every row of a query must agree)."""
    change = np.flatnonzero((np.diff(rows) == 0) & (np.diff(output) != 0))
    if change.size:
        line = change[0] + 3
        raise InputError(f"{name}: line {line}: query {rows[change[0]]} has two outputs "
                         f"({output[change[0]]} and {output[change[0] + 1]})")
    per_query = np.full(int(rows[-1]) + 1, -1, dtype=np.int64)
    per_query[rows] = output
    return per_query
