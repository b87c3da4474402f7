"""A privacy statement's figures, drawn by ``pate-plot``'s code: cost history (per query and
per output), Confident's selection histogram (votes at hand), per-group histories, the
publishable trade-off curve; each a ``Figure``, inlined in HTML by :func:`svg_markup`."""

from __future__ import annotations

import os
import re

import numpy as np

from ..accounting.selection import selection_bins
from ..rounding import ceil_text
from . import figures as plots
from .captions import (
    MECHANISM_NAMES,
    figure_note,
    risk_caption,
    summary_caption,
    svt_running_note,
)
from .figure_data import halted_at, pld_headline
from .report_statement import UNSANITISED, data_dependence
from .risk_figure import risk_problem, tradeoff_curve_figure, with_published_risk

FIGURE_TITLES = {"history": "Cumulative privacy cost",
                 "outputs": "Cumulative privacy cost after each output (generated sequence)",
                 "selection": "Which queries the noisy threshold lets through",
                 "groups": "Per-group privacy cost",
                 "risk": "Trade-off curve: what a membership attacker can reach"}


# Figures not to publish with the statement: the selection histogram always (it shows the
# votes' plurality counts); the cost histories of a data-dependent run.
PRIVATE_VOTES = "drawn from the private votes' plurality counts: not for publication"


def publication_note(key: str, summary: dict) -> str | None:
    """The note printed with figure ``key`` where it must not be published, else None."""
    if key == "selection":
        return PRIVATE_VOTES
    if key in ("history", "outputs", "groups") and data_dependence(summary)[0]:
        return UNSANITISED
    if key in ("history", "outputs", "groups"):  # the run's answers: not a bound
        note = figure_note(summary, "figures" if key == "groups" else "figure")
        return note.split("; ")[-1] if "not a bound" in note or "not bounds" in note else None
    return None


def history_plot(summary: dict, frame, *, style=None):
    """Cumulative epsilon per query, with the budget line when the run had one."""
    budget = (summary.get("budget") or {}).get("limit")
    label = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    empty = (" No query in the table: the run halted before its first." if frame.empty
             else "")
    last = None if frame.empty else float(frame["epsilon_cumulative"].iloc[-1])
    running = "" if last is None else svt_running_note(summary, last)
    if running:  # SVT-PATE before its cut-off: the curve is not the run's guarantee
        empty += f" The curve ends at {ceil_text(last, 4)}{running}."
    return plots.history_figure([(label, frame)], delta=summary["delta"], budget=budget,
                                headlines=[pld_headline(summary)],  # as pate-plot names it
                                halts=[halted_at(summary)],
                                caption=summary_caption(summary) + "." + empty
                                + epsilon_note(summary, last, running=bool(running))
                                + drawn_from(frame, summary),
                                style=style or plots.Style())


def epsilon_note(summary: dict, last: float | None, *, running: bool = False,
                 what: str = "figure") -> str:
    """What a cost history's epsilon is (``captions.figure_note``: unsanitised, or the run's
    answers and not a bound), with the curve's last figure (rounded up) unless said already.

    Args:
        summary: the JSON summary.
        last: the curve's last figure, or None for an empty table.
        running: whether the caption gave the last figure already (SVT-PATE's cut-off).
        what: what the curve's figures are called.

    Returns:
        The sentence, with a leading space.
    """
    final = "" if last is None or running else f"; final epsilon {ceil_text(last, 4)}"
    return f" Epsilon: {figure_note(summary, what)}{final}."


def outputs_plot(summary: dict, frame, *, style=None):
    """Cumulative epsilon after each output's last token, with the run's budget line if any."""
    budget = (summary.get("budget") or {}).get("limit")
    label = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    outputs = summary["outputs"]
    path = (summary.get("input") or {}).get("path")
    run = f"{os.path.basename(str(path))}: " if path else ""
    caption = (f"{run}{outputs['count']:,} outputs, {outputs['completed']:,} processed whole; "
               f"each point is the total after an output's last token. "
               f"{summary_caption(summary)}.{drawn_from(frame, summary)}"
               + epsilon_note(summary, None if frame.empty else
                              float(frame["epsilon_cumulative"].iloc[-1])))
    return plots.history_figure([(label, frame)], delta=summary["delta"], x="output",
                                budget=budget, caption=caption, style=style or plots.Style())


def selection_plot(summary: dict, votes, *, style=None):
    """Confident-GNMax's plurality histogram and answered counts (2018 Figure 5 left)."""
    params = summary["params"]
    pair = (float(params["threshold"]), float(params["sigma_threshold"]))
    teachers = float(summary["input"]["teachers"])
    order = float(summary["order"])
    votes = votes if hasattr(votes, "shape") else np.asarray(votes, dtype=np.float64)
    data = selection_bins(votes, teachers=teachers,  # read a chunk at a time
                          params=[pair], sigma=float(params["sigma"]), order=order)
    caption = (f"{len(votes):,} analysed queries, M = {teachers:g} teachers; bars: queries "
               "per plurality bin and the expected number answered; dots: mean answer-step "
               f"RDP at the run's order {order:g}. "
               f"{PRIVATE_VOTES[0].upper()}{PRIVATE_VOTES[1:]}.")
    return plots.selection_figure(data, params=[pair], sigma=float(params["sigma"]),
                                  order=order, caption=caption,
                                  style=style or plots.Style(width=8.5, height=4.6))


def groups_plot(summary: dict, frame, *, style=None):
    """Per-group cost histories with each group's budget (Individualized PATE Fig. 1)."""
    budgets = {str(row["group"]): float(row["budget"]) for row in summary.get("groups") or []
               if row.get("budget") is not None}
    names = set(plots.group_columns(frame))
    budgets = {name: value for name, value in budgets.items() if name in names}
    return plots.groups_figure(frame, budgets=budgets, delta=summary["delta"],
                               caption=summary_caption(summary) + "."
                               + epsilon_note(summary, None, what="figures")
                               + drawn_from(frame, summary),
                               halts=plots.summary_halts(summary), style=style or plots.Style())


def risk_plot(summary: dict, *, style=None):
    """The publishable trade-off curve (math:risk; a tuned run's search's) on a log alpha axis,
    without the data-dependent one (a statement is published); None without a usable risk."""
    summary = with_published_risk(summary)
    risk = summary.get("risk_data_independent")
    if risk is None or risk_problem(risk) is not None:
        return None
    label = MECHANISM_NAMES.get(summary["mechanism"], summary["mechanism"])
    return tradeoff_curve_figure([(label, summary)], log=True, dependent=False,
                                 caption=risk_caption([label], [summary], dependent=False),
                                 style=style or plots.Style(height=4.6))


def drawn_from(frame, summary: dict) -> str:
    """The caption's note for a figure drawn from every k-th query (``figure_rows``)."""
    every = frame.attrs.get("every", 1)
    if every <= 1:
        return ""
    return (f" Drawn from one query in every {every:,} of the {summary['queries']:,} (with "
            "each output's last and the first over each budget).")


def figure_budgets(summary: dict) -> tuple[float, ...]:
    """The budgets a report's figures mark (the run's, each group's): ``figure_rows`` keeps the
    first row over each."""
    return marked_budgets((summary.get("budget") or {}).get("limit"),
                          summary.get("groups") or ())


def marked_budgets(limit: float | None, groups) -> tuple[float, ...]:
    """:func:`figure_budgets` of the run's ``--budget`` and its ``groups`` rows."""
    found = [limit, *(row.get("budget") for row in groups)]
    return tuple(sorted({float(value) for value in found if value is not None}))


def report_figures(summary: dict, frame, *, votes=None) -> list[tuple[str, object]]:
    """``(id, Figure)`` for each figure the run has data for, in report order."""
    found = []
    if frame is not None and "epsilon_cumulative" in frame.columns:  # halted at 0: no line
        found.append(("history", history_plot(summary, frame)))
        if summary.get("outputs") and "output" in frame.columns and len(frame):
            found.append(("outputs", outputs_plot(summary, frame)))
    if votes is not None and summary["mechanism"] == "confident" and len(votes):
        found.append(("selection", selection_plot(summary, votes)))
    if frame is not None and summary.get("groups") and plots.group_columns(frame):
        found.append(("groups", groups_plot(summary, frame)))
    return found


def svg_markup(figure, prefix: str) -> str:
    """The figure as one ``<svg>`` element: prolog, doctype and comments removed, every id (and
    reference to one) prefixed with ``prefix-``, so figures inlined in one page keep ids unique."""
    text = plots.figure_bytes(figure, "svg").decode("utf-8")
    text = text[text.index("<svg"):]
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r'href="#', f'href="#{prefix}-', text)
    text = re.sub(r"url\(#", f"url(#{prefix}-", text)
    seen: dict[str, int] = {}

    def unique(match) -> str:  # a gid set on many artists (each bar) repeats
        name = match.group(1)
        seen[name] = seen.get(name, 0) + 1
        suffix = "" if seen[name] == 1 else f"-{seen[name]}"
        return f'id="{prefix}-{name}{suffix}"'

    return re.sub(r'\bid="([^"]*)"', unique, text)
