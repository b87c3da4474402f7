"""The numbers ``pate-plot`` figures show, from per-query tables (vectorised, tested apart
from the drawing); and what a summary or sweep table adds to a legend or caption: a PLD
headline beside a budget crossing, an SVT cut-off chosen on the votes, a --tuning cost."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..rounding import ceil_text, limit_text
from .figure_style import literal_text
from .report_statement import data_dependence

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
    """A per-query table's pieces with ``cumulative_<column>`` for ``columns`` and ``position``
    (from 0): the same floats as ``np.cumsum`` over the whole column, however it is split."""
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

    x = the cumulative answered count; ``total`` = ``epsilon_cumulative``, split in proportion
    to the cumulative ``rdp_selection`` and ``rdp_answer`` (at the final order), so
    ``selection + answer == total`` exactly. An attribution, not a second accounting: epsilon
    is not additive; the ``log(1/delta) / (order - 1)`` term is shared in the same proportion.
    Sums are the whole table's (:func:`cumulative`)."""
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
    """Which points are on a tradeoff curve's Pareto frontier: a point is off it when another
    has at most its epsilon and at least its score, strictly better in one (``pate-sweep
    --pareto``'s rule); equal points all stay."""
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
    """The rows a per-query table's figures draw, from its consecutive pieces
    (``result.iter_frames()``). At most ``limit`` (default ``FIGURE_ROWS``) rows are kept
    whole; a longer table keeps every ``k``-th row (``k = ceil(queries / limit)``,
    ``attrs["every"]``), the last row, each output's last and, per cumulative-epsilon column,
    the first above each of ``budgets`` (so marked halts are the table's own)."""
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


# --- legends and captions from summaries and sweep tables ----------------------------------

class Headline(NamedTuple):
    """A run whose summary's headline is the PLD accountant's, beside its table's RDP line:
    ``epsilon``, that PLD figure where it is the run's published bound, else None."""

    epsilon: float | None


def budget_crossing(label: str, where: str, budget: float, headline: Headline | None
                    ) -> tuple[str, bool]:
    """``(legend text, within)`` of a run whose drawn figure first exceeds ``budget`` at
    ``where`` (``query 277``); with a PLD ``headline`` the RDP figure is named as what crosses,
    and the PLD epsilon (rounded up) where it stays within (``within``: the published figure
    is not over the budget)."""
    if headline is None:
        return f"{label} (over budget {where})", False
    text = f"{label} (RDP figure over budget {where}"
    within = headline.epsilon is not None and headline.epsilon <= budget
    if within:
        text += f"; published PLD epsilon {_up_to(headline.epsilon, budget)} within it"
    return text + ")", within


def _up_to(value: float, budget: float) -> str:
    """``value`` (at most ``budget``) rounded up to 4 decimals, or as many more as keep it from
    printing above ``budget`` as the budget line prints it (``rounding.limit_text``)."""
    shown = float(limit_text(budget))
    for digits in (4, 6, 8, 10, 12):
        text = ceil_text(value, digits)
        if float(text) <= shown:
            return text
    return repr(value)


def halted_at(summary: dict | None) -> int | None:
    """The first query a run's budget did not process (``budget.halted_at``), or None."""
    return ((summary or {}).get("budget") or {}).get("halted_at")


def pld_headline(summary: dict | None) -> Headline | None:
    """A :class:`Headline` for a summary whose epsilon is the PLD accountant's: that epsilon
    where it is the published bound, else None in it (a --tuning run publishes its search's; a
    data-independent run with a selection step composes only the answers the votes chose; a
    data-dependent run's is unsanitised); None for any other summary."""
    if not summary or summary.get("epsilon_method") != "pld" or summary.get("epsilon") is None:
        return None
    epsilon = float(summary["epsilon"])
    worst = summary.get("epsilon_data_independent_worst")
    published = not (summary.get("tuning") or data_dependence(summary)[0]
                     or (summary.get("accounting") == "data-independent"
                         and isinstance(worst, int | float) and worst > epsilon))
    return Headline(epsilon if published else None)


# --svt-cutoff auto: the cut-offs tried replay one noise draw, so the run's epsilon (a cut-off
# fixed in advance) does not cover the choice (math:svt)
SEARCHED_CUTOFF = ("a trade-off curve draws a guarantee, and the automatic choice on these "
                   "votes is not covered by it; give the cut-off explicitly")
CHOSEN_CUTOFF_NOTE = ("not a guarantee: the cut-off was chosen on these votes (--svt-cutoff "
                      "auto), a choice this epsilon does not cover")


def searched_cutoff(summary: dict | None) -> bool:
    """Whether ``summary``'s SVT cut-off was chosen on the votes (``svt.cutoff_from_search``)."""
    svt = (summary or {}).get("svt")
    return isinstance(svt, dict) and bool(svt.get("cutoff_from_search"))


def searched_cutoff_notes(names, summaries) -> str:
    """Caption sentences for runs whose SVT cut-off was chosen on the votes (not guarantees)."""
    return "".join(f" {name}: {CHOSEN_CUTOFF_NOTE}." for name, summary
                   in zip(names, summaries, strict=True) if searched_cutoff(summary))


def search_cost_note(table) -> str:
    """For ``pate-sweep --tuning`` rows (``epsilon_all_points``, ``epsilon_tuned``, ``tuning``):
    each point's epsilon is one run's; picking a point costs the search, per vote file, rounded
    up (math:tuning: every point of a fixed grid costs the sum of their curves,
    ``epsilon_all_points``; a random search over it, ``epsilon_tuned``); ``''`` without."""
    if "epsilon_all_points" not in table.columns:
        return ""
    costs: dict = {}  # per vote file: the same on each of its rows
    for _, row in table.iterrows():
        all_points = _finite_or_none(row.get("epsilon_all_points"))
        if all_points is not None:
            costs.setdefault(str(row.get("file", "")), (
                all_points, _finite_or_none(row.get("epsilon_tuned")), row.get("tuning"),
                row.get("accounting", "data-independent") != "data-independent"))
    parts = []
    for file, (all_points, tuned, law, dependent) in costs.items():
        text = f"epsilon_all_points {ceil_text(all_points)} (every point run)"
        if tuned is not None:
            text += f", epsilon_tuned {ceil_text(tuned)} as a random search (--tuning {law})"
        if dependent:  # the rows' replay or expected curves
            text += " (data-dependent, unsanitised)"
        parts.append(f"{literal_text(file)}: {text}" if len(costs) > 1 else text)
    if not parts:
        return ""
    return ("; each point's epsilon is one run's: choosing among these points costs the "
            "search, " + "; ".join(parts))


def _finite_or_none(value) -> float | None:
    """``value`` as a finite float, else None (an empty cell, text)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
