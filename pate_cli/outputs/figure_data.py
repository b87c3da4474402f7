"""The numbers the ``pate-plot`` figures show, from per-query tables, apart from the drawing
so they can be tested on their own. Vectorised over queries."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


CUMULATIVE = "cumulative_"


def cumulative(frame: pd.DataFrame, column: str) -> np.ndarray:
    """The running sum of ``frame[column]`` over the whole table: ``cumulative_<column>``
    when present (:func:`running_sums` of a streamed table), else ``np.cumsum``."""
    if CUMULATIVE + column in frame.columns:
        return frame[CUMULATIVE + column].to_numpy(dtype=np.float64)
    return np.cumsum(frame[column].to_numpy(dtype=np.float64))


def running_sums(pieces, columns) -> Iterator[pd.DataFrame]:
    """A per-query table's pieces with ``cumulative_<column>`` for ``columns`` and
    ``position`` (from 0): the same floats as ``np.cumsum`` over the whole column, however
    the pieces are split."""
    carried: dict[str, float] = {}
    start = 0
    for piece in pieces:
        added = {}
        for column in columns:
            values = piece[column].to_numpy(dtype=np.float64)
            if column in carried:
                sums = np.cumsum(np.concatenate(([carried[column]], values)))[1:]
            else:
                sums = np.cumsum(values)
            if sums.size:
                carried[column] = float(sums[-1])
            added[CUMULATIVE + column] = sums
        added["position"] = np.arange(start, start + len(piece), dtype=np.float64)
        start += len(piece)
        yield piece.assign(**added)


def partition_split(frame: pd.DataFrame):
    """``(answered, total, selection, answer)`` arrays for the 2018 Figure 5 (right).

    x = the cumulative answered count; ``total`` = ``epsilon_cumulative``, split in
    proportion to the cumulative ``rdp_selection`` and ``rdp_answer`` (at the final order),
    so ``selection + answer == total`` exactly. An attribution, not a second accounting:
    epsilon is not additive, and the ``log(1/delta) / (order - 1)`` term is shared out in
    the same proportion. Sums are the whole table's (:func:`cumulative`).
    """
    answered = cumulative(frame, "answered")
    total = frame["epsilon_cumulative"].to_numpy(dtype=np.float64)
    selection = cumulative(frame, "rdp_selection")
    both = selection + cumulative(frame, "rdp_answer")
    share = np.divide(selection, both, out=np.zeros_like(both), where=both > 0)
    selection_part = total * share
    return answered, total, selection_part, total - selection_part


def has_selection(frame: pd.DataFrame) -> bool:
    """Whether a per-query table charges a selection step (Confident or Interactive): its
    cumulative ``rdp_selection`` (non-negative terms) rises above 0."""
    return bool(np.any(cumulative(frame, "rdp_selection") > 0))


def frontier_mask(epsilon, score) -> np.ndarray:
    """Which points are on the Pareto frontier of a tradeoff curve (``pate-plot tradeoff``).

    A point is off it when another has at most its epsilon and at least its score,
    strictly better in one (``pate-sweep --pareto``'s rule); equal points all stay.
    """
    epsilon = np.asarray(epsilon, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    kept = np.zeros(epsilon.shape[0], dtype=bool)
    if not kept.size:
        return kept
    order = np.lexsort((-score, epsilon))
    eps, best = epsilon[order], score[order]
    first = np.searchsorted(eps, eps, side="left")  # first point of each epsilon
    before = np.maximum.accumulate(best)
    smaller = np.where(first > 0, before[np.maximum(first - 1, 0)], -np.inf)
    kept[order] = ~((smaller >= best) | (best[first] > best))
    return kept


# The most rows a figure is drawn from (a longer table: every k-th row, figure_rows).
FIGURE_ROWS = 1 << 17


def figure_rows(frames, *, queries: int, budgets: tuple[float, ...] = (),
                limit: int | None = None) -> pd.DataFrame:
    """The rows of a per-query table that its figures draw, from the table's consecutive
    pieces (``result.iter_frames()``).

    At most ``limit`` (default ``FIGURE_ROWS``) rows are kept whole; a longer table keeps
    every ``k``-th row (``k = ceil(queries / limit)``, ``attrs["every"]``), the last row,
    each output's last and, per cumulative-epsilon column, the first above each of
    ``budgets`` (so marked halts are the table's own).
    """
    import pandas as pd

    every = max(1, -(-int(queries) // (FIGURE_ROWS if limit is None else limit)))
    kept: list[pd.DataFrame] = []
    crossed: set = set()
    start = 0
    held = None  # the last piece's last row when not kept: its output may go on
    for piece in frames:
        size = len(piece)
        if every == 1 or size == 0:
            kept.append(piece)
            start += size
            continue
        keep = (np.arange(start, start + size) % every) == 0
        if "output" in piece.columns:
            ids = piece["output"].to_numpy()
            keep[:-1] |= ids[1:] != ids[:-1]  # the last row of an output
            if held is not None and held["output"].iloc[0] != ids[0]:
                kept.append(held)  # the piece before ended an output
        for column in piece.columns:
            if str(column).startswith("epsilon_cumulative"):
                values = piece[column].to_numpy(dtype=np.float64)
                for budget in budgets:
                    if (column, budget) not in crossed and np.any(values > budget):
                        keep[int(np.argmax(values > budget))] = True
                        crossed.add((column, budget))
        held = None if keep[-1] else piece.iloc[-1:]
        kept.append(piece[keep])
        start += size
    if held is not None:  # the table's last row
        kept.append(held)
    if not kept:
        return pd.DataFrame()
    table = pd.concat(kept, ignore_index=True)
    table.attrs["every"] = every
    return table
