"""Tables -> matplotlib ``Figure`` objects for ``pate-plot`` (object API, no pyplot state).

One function per paper figure (Papernot et al. 2018; Boenisch et al., Individualized PATE);
numbers from ``figure_data``, look and reproducible bytes from ``figure_style``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..rounding import limit_text
from .captions import MECHANISM_NAMES
from .figure_data import (
    Headline,
    budget_crossing,
    cumulative,
    frontier_mask,
    has_selection,
    partition_split,
)
from .figure_style import (
    FORMATS,
    GREY,
    LEGEND_LOCATIONS,
    PALETTE,
    Style,
    delta_text,
    epsilon_label,
    figure_bytes,
    finish_figure,
    literal_text,
    new_figure,
    plain_log_labels,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..accounting.selection import SelectionBins


def stopping_index(cumulative, budget: float) -> int | None:
    """The first query whose cumulative epsilon exceeds ``budget`` (math:costs), or None."""
    over = np.flatnonzero(np.asarray(cumulative, dtype=np.float64) > budget)
    return int(over[0]) if over.size else None


def summary_halts(summary: dict) -> dict:
    """An individualized run's halts from its JSON summary, for :func:`groups_figure`: each
    group's ``exhausted_at``, ``""`` the uniform run's stop."""
    halts = {str(row["group"]): row.get("exhausted_at") for row in summary.get("groups") or []}
    if summary.get("baseline"):
        halts[""] = summary["baseline"].get("stopped_at")
    return halts


def _halt_row(frame: pd.DataFrame, cumulative: np.ndarray, budget: float,
              halts: dict | None, name: str) -> int | None:
    """The table row where group ``name`` (``""``: the uniform run) halts: the query ``halts``
    names (None if after the table's last row or never), else :func:`stopping_index`."""
    if halts is None or name not in halts:
        return stopping_index(cumulative, budget)
    if halts[name] is None:
        return None
    rows = np.flatnonzero(frame["query"].to_numpy() >= halts[name])
    return int(rows[0]) if rows.size else None


# --- history (2018 Figure 1 middle) ---------------------------------------------------------

def history_x(frame: pd.DataFrame, x: str) -> tuple[np.ndarray, str]:
    """X values and axis label: the ``query`` column (the row's position when queries were not
    asked in increasing order), the running count of answers, or outputs processed."""
    if x == "output":
        return np.arange(1, len(frame) + 1, dtype=np.float64), "outputs (generated sequences)"
    if x == "answered":
        return (cumulative(frame, "answered"),
                "queries answered (cumulative count; expected count in expected mode)")
    query = frame["query"].to_numpy(dtype=np.float64)
    increasing = frame.attrs.get("query_increasing")  # of the whole table, when streamed
    if increasing is None:
        increasing = query.size <= 1 or bool(np.all(np.diff(query) > 0))
    if not increasing:  # --query-indices order
        position = (frame["position"].to_numpy(dtype=np.float64) if "position" in frame.columns
                    else np.arange(query.size, dtype=np.float64))
        return position, "query position (order asked)"
    return query, "query index"


def history_figure(series, *, delta: float, x: str = "query", budget: float | None = None,
                   headlines=None, halts=None, caption: str = "", style: Style = Style()
                   ) -> Figure:
    """Cumulative epsilon of one or more runs (Papernot et al. 2018, Figure 1 middle).

    ``series``: ``(label, per-query DataFrame)`` pairs, one ``epsilon_cumulative`` line each.
    ``budget`` adds a dashed line and marks each run's stopping point (math:costs);
    ``headlines`` (a ``Headline`` or None per series) names the RDP figure as what crosses, the
    mark hollow where the PLD figure stays within (:func:`budget_crossing`); ``halts`` (the
    summary's ``budget.halted_at`` or None per series) marks the last query of a run its own
    budget halted, where its line stays within ``budget``. ``x``: ``query``, ``answered`` or
    ``output``."""
    figure, axes = new_figure(style)
    x_label = "query index"
    headlines = list(headlines) if headlines is not None else [None] * len(series)
    halts = list(halts) if halts is not None else [None] * len(series)
    for number, ((label, frame), headline, halted) in enumerate(
            zip(series, headlines, halts, strict=True)):
        if x == "output":  # the total after each output's last token
            frame = frame.groupby("output", sort=False).tail(1)
        xs, x_label = history_x(frame, x)
        ys = frame["epsilon_cumulative"].to_numpy(dtype=np.float64)
        colour = PALETTE[number % len(PALETTE)]
        text, within = label, False
        stop = None if budget is None else stopping_index(ys, budget)
        if stop is not None:
            where = (f"after output {stop + 1}" if x == "output"
                     else f"at query {int(frame['query'].iloc[stop])}")
            text, within = budget_crossing(label, where, budget, headline)
        elif budget is not None and halted is not None and ys.size:  # stopped within it
            stop, text = ys.size - 1, f"{label} (halted by its budget before query {halted})"
        axes.plot(xs, ys, color=colour, linewidth=1.6, label=text, gid=f"history-{number}")
        if stop is not None:
            axes.plot([xs[stop]], [ys[stop]], marker="o", markersize=7, color=colour,
                      markeredgecolor="black", linestyle="none", zorder=4,
                      markerfacecolor="none" if within else colour, gid=f"stop-{number}")
    if budget is not None:
        axes.axhline(budget, color="black", linestyle="--", linewidth=1.1,
                     label=f"budget $\\varepsilon$ = {limit_text(budget)}", gid="budget")
    if all(frame.empty for _, frame in series):  # runs halted before their first query
        axes.set_xlim(0, 1)
        if not style.logy:  # a log axis has no 0
            axes.set_ylim(0, 1 if budget is None else 1.1 * budget)
    axes.set_xlabel(x_label)
    axes.set_ylabel(epsilon_label(delta))
    finish_figure(figure, axes, style, title="Cumulative privacy cost", caption=caption)
    return figure


# --- groups (Individualized PATE, Figures 1, 5, 6) -----------------------------------------

GROUP_PREFIX = "epsilon_cumulative_"


def group_columns(frame: pd.DataFrame) -> list[str]:
    """Group names with an ``epsilon_cumulative_<group>`` column, in column order."""
    return [c[len(GROUP_PREFIX):] for c in frame.columns if str(c).startswith(GROUP_PREFIX)]


def groups_figure(frame: pd.DataFrame, *, budgets: dict, delta: float, x: str = "query",
                  baseline: bool = True, caption: str = "", halts: dict | None = None,
                  style: Style = Style()) -> Figure:
    """Per-group cost histories (Boenisch et al., Individualized PATE, Figures 1, 5, 6).

    One line per ``epsilon_cumulative_<group>`` column, its budget dashed in its colour and its
    exhaustion marked: the 0-based query ``halts`` names (``""``: the uniform run; under replay
    a group halts before a query that would take it over, math:costs), else
    :func:`stopping_index`; a dotted line at the earliest. ``baseline``: the uniform run in grey
    up to the smallest budget (the paper's "pate" line)."""
    figure, axes = new_figure(style)
    xs, x_label = history_x(frame, x)
    stops = []
    for number, name in enumerate(group_columns(frame)):
        ys = frame[GROUP_PREFIX + name].to_numpy(dtype=np.float64)
        colour = PALETTE[number % len(PALETTE)]
        budget = budgets.get(name)
        shown = literal_text(name)  # a group name from a CSV, drawn as it is
        text = shown if budget is None else f"{shown} (budget {limit_text(budget)})"
        stop = None if budget is None else _halt_row(frame, ys, budget, halts, name)
        if stop is not None:
            text += (f": exhausted at query {int(frame['query'].iloc[stop])}" if halts
                     else f": above its budget from query {int(frame['query'].iloc[stop])}")
            stops.append(stop)
        axes.plot(xs, ys, color=colour, linewidth=1.7, label=text, gid=f"group-{name}")
        if budget is not None:
            axes.axhline(budget, color=colour, linestyle="--", linewidth=1.1,
                         gid=f"budget-{name}")
        if stop is not None:
            axes.plot([xs[stop]], [ys[stop]], marker="o", markersize=7, color=colour,
                      markeredgecolor="black", linestyle="none", zorder=4,
                      gid=f"exhausted-{name}")
    if baseline and "epsilon_cumulative" in frame.columns:
        ys = frame["epsilon_cumulative"].to_numpy(dtype=np.float64)
        text = "uniform PATE (sensitivity 1 for all)"
        smallest = min(budgets.values()) if budgets else None
        stop = None if smallest is None else _halt_row(frame, ys, smallest, halts, "")
        if stop is not None:
            text += f": stops before query {int(frame['query'].iloc[stop])}"
        axes.plot(xs, ys, color=GREY, linewidth=1.3, linestyle="-.", label=text,
                  gid="baseline")
        if stop is not None:
            axes.plot([xs[stop]], [ys[stop]], marker="s", markersize=6, color=GREY,
                      markeredgecolor="black", linestyle="none", zorder=4,
                      gid="baseline-stop")
    if stops:
        first = min(stops)
        query = int(frame["query"].iloc[first])
        axes.axvline(xs[first], color="black", linestyle=":", linewidth=1.0,
                     label=(f"labelling stops before query {query}" if halts else
                            f"a budget first exceeded at query {query} (the run halts there "
                            "or before: give its summary)"), gid="stop")
    axes.set_xlabel(x_label)
    axes.set_ylabel(epsilon_label(delta))
    finish_figure(figure, axes, style, title="Per-group privacy cost (individualized PATE)",
            caption=caption)
    return figure


# --- tradeoff (2018 Figure 4) ----------------------------------------------------------------

def tradeoff_curves(frame: pd.DataFrame, *, by: str = "mechanism",
                    y: str = "label_accuracy") -> list[tuple[str, pd.DataFrame]]:
    """Split a sweep table into curves (label, rows sorted by epsilon). ``by``: ``mechanism``
    (and vote file, when several) or ``teachers`` (and mechanism, when several). Rows without
    an epsilon or ``y`` are left out."""
    rows = frame[np.isfinite(frame["epsilon"]) & np.isfinite(frame[y])]
    several_files = "file" in rows.columns and rows["file"].nunique() > 1
    several_mechanisms = rows["mechanism"].nunique() > 1
    # one curve per accounting: a replay's figure and a bound are not one trade-off
    accountings = ["accounting"] if "accounting" in rows.columns and rows[
        "accounting"].nunique() > 1 else []
    keys = ["mechanism"] + (["file"] if several_files else []) + accountings
    if by == "teachers":
        keys = ["teachers"] + (["mechanism"] if several_mechanisms else []) + accountings
    curves = []
    for key, part in rows.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        fields = dict(zip(keys, key, strict=True))
        name = MECHANISM_NAMES.get(str(fields.get("mechanism")), str(fields.get("mechanism")))
        if by == "teachers":
            label = f"M = {fields['teachers']:g} teachers"
            if several_mechanisms:
                label = f"{name}, {label}"
        else:
            label = (name if not several_files
                     else f"{name} ({literal_text(str(fields['file']))})")
        if accountings:
            label += f", {fields['accounting']}"
        curves.append((label, part.sort_values("epsilon", kind="stable")))
    return curves


PARAMETER_SYMBOLS = {"sigma": "$\\sigma$", "threshold": "$T$", "sigma_threshold": "$\\sigma_1$",
                     "laplace_scale": "$\\lambda$", "eta": "$\\eta$"}


def point_labels(part: pd.DataFrame) -> list[str]:
    """Per point, the noise parameters that vary along its curve (``σ=40``), or ``''``."""
    import pandas as pd
    varying = [column for column in PARAMETER_SYMBOLS if column in part.columns
               and pd.to_numeric(part[column], errors="coerce").nunique() > 1]
    values = [pd.to_numeric(part[column], errors="coerce").to_numpy(dtype=np.float64)
              for column in varying]
    return [", ".join(f"{PARAMETER_SYMBOLS[c]}={v[i]:g}" for c, v in zip(varying, values,
                                                                       strict=True)
                      if np.isfinite(v[i])) for i in range(len(part))]


def tradeoff_figure(frame: pd.DataFrame, *, delta: float, by: str = "mechanism",
                    y: str = "label_accuracy", annotate: bool = True, logx: bool = False,
                    caption: str = "", style: Style = Style()) -> Figure:
    """Utility against privacy from a sweep (Papernot et al. 2018, Figure 4).

    x = ``epsilon``, y = ``label_accuracy`` (or ``answered``), one curve per mechanism or
    teacher count (left, right). A curve's line is its Pareto frontier
    (``figure_data.frontier_mask``), error bars from non-zero ``epsilon_std`` and ``<y>_std``;
    other points are faint dots (gid ``dominated-<n>``). ``annotate`` labels frontier points
    with their varying noise parameters (a data-dependent epsilon need not fall as noise
    grows: the grid in order would zig-zag)."""
    figure, axes = new_figure(style)
    for number, (label, part) in enumerate(tradeoff_curves(frame, by=by, y=y)):
        colour = PALETTE[number % len(PALETTE)]
        on_frontier = frontier_mask(part["epsilon"], part[y])
        others = part[~on_frontier]
        if len(others):
            axes.plot(others["epsilon"].to_numpy(dtype=np.float64),
                      others[y].to_numpy(dtype=np.float64), color=colour, alpha=0.35,
                      marker="os^Dv<>"[number % 7], markersize=3.5, linestyle="none",
                      gid=f"dominated-{number}")
        best = part[on_frontier]  # sorted by epsilon, as the curve
        xerr = _error(best, "epsilon_std")
        yerr = _error(best, f"{y}_std")
        xs = best["epsilon"].to_numpy(dtype=np.float64)
        ys = best[y].to_numpy(dtype=np.float64)
        axes.errorbar(xs, ys, xerr=xerr, yerr=yerr, color=colour,
                      marker="os^Dv<>"[number % 7], markersize=5, linewidth=1.5,
                      capsize=2.5, elinewidth=0.9, label=label, gid=f"curve-{number}")
        if annotate:
            texts = [text for text, keep in zip(point_labels(part), on_frontier, strict=True)
                     if keep]
            for x_value, y_value, text in zip(xs, ys, texts, strict=True):
                axes.annotate(text, (x_value, y_value), xytext=(4, -9),
                              textcoords="offset points", fontsize=6.5, color=colour)
    if logx:
        axes.set_xscale("log")
        plain_log_labels(axes.xaxis)
    axes.set_xlabel(epsilon_label(delta, what="total"))
    axes.set_ylabel("label accuracy (of labels output)" if y == "label_accuracy"
                    else "queries answered")
    finish_figure(figure, axes, style, title="Utility against privacy cost", caption=caption)
    return figure


def _error(part: pd.DataFrame, column: str):
    if column not in part.columns:
        return None
    values = part[column].to_numpy(dtype=np.float64)
    values = np.where(np.isfinite(values), values, 0.0)
    return values if np.any(values > 0) else None


# --- selection (2018 Figure 5 left) ---------------------------------------------------------

def selection_figure(data: SelectionBins, *, params, sigma: float, order: float,
                     caption: str = "", style: Style = Style()) -> Figure:
    """Plurality histogram, answered counts and answer cost (2018 Figure 5 left).

    ``data``: ``accounting.selection.selection_bins``'s. Bars per bin: all queries (grey) and
    the expected count answered by each ``(T, sigma1)``; black dots on a log right axis: the
    mean answer-step RDP at ``order`` of the bin's queries."""
    figure, axes = new_figure(style)
    series = [("all queries", "all", "#BBBBBB", data.queries)]
    series += [(f"answered, $T$ = {t:g}, $\\sigma_1$ = {s1:g}", f"answered_{n}",
                PALETTE[n % len(PALETTE)], data.answered[n])
               for n, (t, s1) in enumerate(params)]
    width = float(data.right[0] - data.left[0])
    bar = 0.9 * width / len(series)
    for number, (label, name, colour, heights) in enumerate(series):
        offset = (number - (len(series) - 1) / 2) * bar
        total = heights.sum()
        axes.bar(data.center + offset, heights, width=bar, color=colour,
                 edgecolor="white", linewidth=0.3,
                 label=f"{label} ({total:,.0f}{'' if name == 'all' else ' expected'})",
                 gid=f"bars-{name}")
    axes.set_xlabel("plurality vote count (votes for the top class)")
    axes.set_ylabel("queries per bin")
    right = axes.twinx()
    shown = np.isfinite(data.cost) & (data.cost > 0)
    right.plot(data.center[shown], data.cost[shown], marker="o", markersize=4.5,
               color="black", linestyle="none", gid="cost",
               label=f"mean cost of answering one query (RDP at order {order:g})")
    right.set_yscale("log")
    right.set_ylabel(f"cost of answering one query (RDP, order {order:g})")
    right.spines["top"].set_visible(False)
    finish_figure(figure, axes, style, title="Which queries the noisy threshold lets through",
            caption=caption, extra_axes=right, legend_loc="outside")
    return figure


# --- partition (2018 Figure 5 right) --------------------------------------------------------

def partition_figure(series, *, delta: float, caption: str = "",
                     style: Style = Style()) -> Figure:
    """Cumulative epsilon against answered queries (Papernot et al. 2018, Figure 5 right).

    ``series``: ``(label, per-query DataFrame)`` pairs. A run with a selection step (non-zero
    ``rdp_selection``) is two stacked areas, selection cost (dark) under answer cost (light),
    split by :func:`partition_split`; other runs are a line."""
    figure, axes = new_figure(style)
    for number, (label, frame) in enumerate(series):
        colour = PALETTE[number % len(PALETTE)]
        answered, total, selection, _ = partition_split(frame)
        if has_selection(frame):
            axes.fill_between(answered, 0.0, selection, color=colour, alpha=0.85,
                              linewidth=0, label=f"{label}: selecting queries",
                              gid=f"selection-{number}")
            axes.fill_between(answered, selection, total, color=colour, alpha=0.3,
                              linewidth=0, label=f"{label}: answering them",
                              gid=f"answer-{number}")
        axes.plot(answered, total, color=colour, linewidth=1.6,
                  label=f"{label}: total" if has_selection(frame) else label,
                  gid=f"total-{number}")
    empty = all(frame.empty for _, frame in series)  # halted before the first query
    axes.set_xlim(0, 1 if empty else None)
    axes.set_ylim(None if style.logy else 0, 1 if empty and not style.logy else None)
    axes.set_xlabel("queries answered (cumulative count; expected count in expected mode)")
    axes.set_ylabel(epsilon_label(delta))
    finish_figure(figure, axes, style, title="Cost of selecting vs answering queries",
            caption=caption, legend_loc="upper left")
    return figure


__all__ = [
    "FORMATS", "LEGEND_LOCATIONS", "Headline", "Style", "delta_text", "epsilon_label",
    "figure_bytes", "groups_figure", "history_figure", "partition_figure", "selection_figure",
    "summary_halts", "tradeoff_figure",
]
