"""Per-query tables (``pate-plot``, ``pate-report --from``) streamed into the rows drawn.

Each piece of ``FIGURE_ROWS`` rows is counted into ``RunTotals`` (the whole table, beyond
``-n`` too), cut to ``-n`` rows, checked cell by cell, given whole-table running sums and
thinned by ``figure_data.figure_rows``: memory holds one piece and about ``FIGURE_ROWS``
drawn rows (plus one per output); a shorter table is drawn whole, with the same floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..inputs.table_pieces import TablePieces
from ..inputs.tables import PER_QUERY, SWEEP, bad_cell, require_table, table_kind
from . import figure_data
from .figure_data import figure_rows, running_sums
from .figures import GROUP_PREFIX
from .run_match import RunTotals, check_same_run

if TYPE_CHECKING:
    import pandas as pd

# The largest finite value an axis takes (matplotlib overflows near 1.8e308; inf is off it).
DRAWABLE = 1e300

# A cost history's columns; a drawn table has at least query and answered.
HISTORY_COLUMNS = ("query", "answered", "epsilon_cumulative")


@dataclass(frozen=True)
class Drawing:
    """What a figure draws: ``columns`` that must be numbers in every drawn row (with
    ``groups`` the ``epsilon_cumulative_<group>`` ones too); ``keep``, kept when present;
    ``sums``, given running sums; the first ``queries`` rows (``-n``); the ``budgets`` marked;
    ``allow_empty``: a table without rows gives an empty frame when its run's ``summary`` is
    given (a run halted before its first query, held to it by ``check_same_run``), else is
    refused."""

    columns: tuple
    sums: tuple = ("answered",)
    keep: tuple = ()
    groups: bool = False
    queries: int | None = None
    budgets: tuple = ()
    allow_empty: bool = False


def drawn_table(path: str, drawing: Drawing, *, summary: dict | None = None,
                summary_path: str | None = None, index: list | None = None) -> pd.DataFrame:
    """The rows of the per-query table ``path`` that a figure draws.

    Args:
        drawing: which rows and columns (each row also gets its ``position``).
        summary: the run's JSON summary (at ``summary_path``) the table is checked against.
        index: a list to append each piece's whole ``query`` column to.

    Returns:
        The frame; its ``attrs``: the rows drawn from (``queries``), their answered sum,
        whether their ``query`` column increases (``query_increasing``), ``every``.
    """
    columns, queries = drawing.columns, drawing.queries
    table = TablePieces(path, expected=PER_QUERY)
    pieces = table.pieces(figure_data.FIGURE_ROWS)  # a table drawn whole is one piece
    try:
        first = next(pieces, None)
        if first is None or (first.empty and not (drawing.allow_empty and summary)):
            raise InputError(f"{path}: the table has no rows (expected {PER_QUERY}"
                             + ("; a run halted before its first query is drawn with its "
                                "--summary)" if drawing.allow_empty else ")"))
        require_table(first, path, kind="per-query", columns=columns)
        checked = list(columns)
        if drawing.groups:
            checked += [c for c in first.columns if str(c).startswith(GROUP_PREFIX)]
        kept = [c for c in first.columns if c in (*checked, *drawing.keep)]
        claimed = None if summary is None else summary.get("queries")
        rows = int(claimed) if claimed is not None else table.count_rows(at_most=queries)
        if queries is not None:
            rows = min(rows, queries)
        stream = _Stream(path, checked, kept, queries,
                         RunTotals(summary) if summary is not None else None,
                         limit=rows if claimed is not None else None, index=index)
        frame = figure_rows(running_sums(stream.drawn(chain([first], pieces)), drawing.sums),
                            queries=rows, budgets=tuple(drawing.budgets))
    finally:
        pieces.close()
    if stream.totals is not None:
        check_same_run(summary or {}, stream.totals, summary_path=str(summary_path),
                       table_path=path)
    for column in checked:
        if column in stream.bad:
            raise InputError(stream.bad[column])
    frame.attrs.update(queries=stream.drawn_rows, answered=stream.answered,
                       query_increasing=stream.increasing)
    return frame


class _Stream:
    """The per-piece work of :func:`drawn_table`, and what it gathers."""

    def __init__(self, path: str, checked, kept, queries: int | None,
                 totals: RunTotals | None, *, limit: int | None, index: list | None):
        self.path, self.checked, self.kept = path, checked, kept
        self.queries, self.totals, self.limit = queries, totals, limit
        self.index = index
        self.bad: dict[str, str] = {}  # each column's first bad cell
        self.drawn_rows = 0
        self.answered: float | None = None
        self.increasing = True
        self.last_query = -np.inf

    def drawn(self, pieces):
        """The drawn pieces (first ``queries`` rows, kept columns), while every cell so far
        is a number and the table is not longer than ``limit`` (else no figure is drawn)."""
        start, empty = 0, None
        for piece in pieces:
            if empty is None:  # a table of no row is drawn as its columns, without a row
                empty = piece.iloc[:0]
            if self.totals is not None:
                self.totals.add(piece)
            if self.index is not None:
                self.index.append(piece["query"].to_numpy())
            head = piece if self.queries is None else piece.iloc[:max(0, self.queries - start)]
            for column in self.checked:
                if len(head) and column not in self.bad:
                    problem = (bad_cell(head, self.path, column, first_row=start)
                               or infinite_epsilon(head, self.path, column, start)
                               or undrawable(head, self.path, column, start))
                    if problem is not None:
                        self.bad[column] = problem
            start += len(piece)
            if len(head) and not self.bad and (
                    self.limit is None or self.drawn_rows + len(head) <= self.limit):
                yield self._counted(head[self.kept])
            if (self.totals is None and self.index is None and self.queries is not None
                    and start >= self.queries):
                break
        if not self.drawn_rows and not self.bad and empty is not None:
            yield empty[self.kept]

    def _counted(self, head: pd.DataFrame) -> pd.DataFrame:
        self.drawn_rows += len(head)
        answered = float(head["answered"].to_numpy(dtype=np.float64).sum())
        self.answered = answered if self.answered is None else self.answered + answered
        query = head["query"].to_numpy(dtype=np.float64)
        self.increasing = self.increasing and bool(
            query[0] > self.last_query and np.all(np.diff(query) > 0))
        self.last_query = query[-1]
        return head


def infinite_epsilon(head: pd.DataFrame, path: str, column: str, start: int = 0
                     ) -> str | None:
    """The error line of an ``epsilon_cumulative`` column's first infinite value (cells
    ``bad_cell`` checked): pate-analyze keeps every figure finite, so ``inf`` is an edited or
    damaged table, refused as ``nan`` is (the line would have a gap)."""
    if not str(column).startswith("epsilon_cumulative"):
        return None
    values = head[column].to_numpy(dtype=np.float64)
    infinite = np.flatnonzero(np.isinf(values))
    if not infinite.size:
        return None
    return (f"{path}: row {start + int(infinite[0])}: column '{column}' has "
            f"{values[infinite[0]]:g}, not a finite epsilon")


def undrawable(head: pd.DataFrame, path: str, column: str, start: int = 0) -> str | None:
    """The error line of ``head[column]``'s first finite value above ``DRAWABLE`` (its
    cells numbers, ``bad_cell`` checked)."""
    values = np.abs(head[column].to_numpy(dtype=np.float64))
    large = np.flatnonzero(np.isfinite(values) & (values > DRAWABLE))
    if not large.size:
        return None
    return (f"{path}: row {start + int(large[0])}: column '{column}' has "
            f"{head[column].iloc[large[0]]:g}, too large to draw (a figure's axis takes "
            f"values up to {DRAWABLE:g}, and inf)")


VOTES = "a vote file (the VOTES pate-analyze reads: .npy, .npz, .csv or .tsv of counts)"


def our_table_kind(path: str) -> str | None:
    """``tables.PER_QUERY`` or ``tables.SWEEP`` where ``path``'s first rows are one of our
    tables, not votes; None otherwise, or for standard input (read once)."""
    if str(path) == "-":
        return None
    try:
        pieces = TablePieces(path, expected=VOTES).pieces(16)
        try:
            first = next(pieces, None)
        finally:
            pieces.close()
    except (InputError, ValueError, OSError):
        return None
    kind = None if first is None else table_kind(first)
    return {"per-query": PER_QUERY, "sweep": SWEEP}.get(kind or "")
