"""``pate-plot``'s figures from its input files, and the figure file. Each ``plot_*`` reads
and checks its inputs (one-line errors, exit 2, before anything is written) and returns the
``Figure`` with its caption."""

from __future__ import annotations

import math
import os
from typing import NamedTuple

import numpy as np

from ..accounting.selection import selection_bins
from ..analysis import analyze_votes
from ..errors import InputError, OptionError
from ..inputs import VoteSet, load_groups, load_votes
from ..inputs.table_pieces import read_table
from ..inputs.tables import SWEEP, numeric_column, read_summary, require_table
from ..mechanisms.aggregators import mechanism_for
from ..orders import default_orders
from ..vote_rows import is_sparse
from . import captions, figure_data
from . import figures as plots
from .figure_style import literal_text
from .plot_tables import HISTORY_COLUMNS, VOTES, Drawing, drawn_table, our_table_kind, undrawable
from .risk_figure import risk_problem, tradeoff_curve_figure
from .writing import check_destinations, write_outputs

PARTITION_COLUMNS = ("query", "answered", "rdp_selection", "rdp_answer", "epsilon_cumulative")


def figure_format(output: str) -> str:
    """``png``, ``pdf`` or ``svg`` from ``output``'s extension; the destination checked first."""
    extension = os.path.splitext(output)[1].lower().lstrip(".")
    if extension not in plots.FORMATS:
        raise OptionError(f"-o {output}: the extension picks the format: use .png, "
                          ".pdf or .svg")
    try:
        check_destinations([(output, output)])  # before any work: the directory exists...
    except ValueError as error:
        raise InputError(str(error)) from None
    return extension


def save_figure(figure, output: str, fmt: str) -> None:
    """Write ``figure`` to ``output`` as ``fmt``, atomically."""
    write_outputs({output: plots.figure_bytes(figure, fmt)})


def plot_history(inputs, *, labels, summary_paths, x: str, budget, queries, style, delta):
    """``figures.history_figure``, one line per per-query table, streamed into the rows drawn."""
    summaries, frames = _runs(inputs, summary_paths, Drawing(
        HISTORY_COLUMNS, queries=queries, keep=("output",) if x == "output" else (),
        budgets=() if budget is None else (budget,), allow_empty=True))
    if x == "output":
        for path, frame in zip(inputs, frames, strict=True):
            if "output" not in frame.columns:
                raise OptionError(f"--x output: {path} has no output column (analyse "
                                  "votes with an output grouping)")
    names = _run_labels(labels, inputs, summaries)
    caption = (captions.runs_caption(names, frames, summaries)
               + figure_data.searched_cutoff_notes(names, summaries))
    return plots.history_figure(list(zip(names, frames, strict=True)),
                                delta=_figure_delta(delta, summaries, summary_paths), x=x,
                                budget=budget,
                                headlines=[figure_data.pld_headline(s) for s in summaries],
                                halts=[figure_data.halted_at(s) for s in summaries],
                                caption=caption, style=style)


def plot_partition(inputs, *, labels, summary_paths, queries, style, delta):
    """``figures.partition_figure`` of per-query tables (the whole tables' cumulative sums)."""
    summaries, frames = _runs(inputs, summary_paths, Drawing(
        PARTITION_COLUMNS, queries=queries, sums=("answered", "rdp_selection", "rdp_answer"),
        allow_empty=True))
    names = _run_labels(labels, inputs, summaries)
    caption = (captions.runs_caption(names, frames, summaries)
               + figure_data.searched_cutoff_notes(names, summaries))
    pure = any((summary or {}).get("epsilon_method") == "pure" for summary in summaries)
    caption += (" Selection/answer split in proportion to cumulative RDP at the final order"
                + (" (SVT-PATE's: its pure-DP charges)." if pure else "."))
    return plots.partition_figure(list(zip(names, frames, strict=True)),
                                  delta=_figure_delta(delta, summaries, summary_paths),
                                  caption=caption, style=style)


def plot_groups(input_path, *, groups_path, summary_path, x: str, baseline: bool, queries,
                style, delta):
    """``figures.groups_figure``, budgets from the groups CSV or the summary."""
    summary = read_summary(summary_path) if summary_path else None
    if summary is not None and not summary.get("groups"):
        raise InputError(f"{summary_path}: has no 'groups' list; expected the JSON "
                         "summary of an individualized run")
    budgets = {}
    if summary is not None:
        budgets = {str(row["group"]): float(row["budget"]) for row in summary["groups"]}
    if groups_path is not None:
        loaded = load_groups(groups_path)
        budgets = dict(zip(loaded.names, map(float, loaded.budgets), strict=True))
    frame = drawn_table(input_path, Drawing(HISTORY_COLUMNS, groups=True, queries=queries,
                                            budgets=tuple(sorted(set(budgets.values()))),
                                            allow_empty=True),
                        summary=summary, summary_path=summary_path)
    names = plots.group_columns(frame)
    if not names:
        raise InputError(f"{input_path}: no epsilon_cumulative_<group> columns; expected the "
                         "per-query table of an individualized run (pate-analyze "
                         "--individualized ... --per-query FILE)")
    unknown = [name for name in budgets if name not in names]
    if unknown:
        source = groups_path or summary_path
        raise InputError(f"{source}: group {unknown[0]!r} has no column "
                         f"epsilon_cumulative_{unknown[0]} in {input_path} (it has "
                         f"{', '.join(names)})")
    caption = captions.summary_caption(summary)
    budget_text = ", ".join(f"{name} {budget:g}" for name, budget in budgets.items())
    caption = "; ".join(part for part in (
        caption, f"{captions.table_queries(frame):,} queries{captions.drawn_from(frame)}",
        f"epsilon: {captions.figure_note(summary, 'figures')}",
        f"budgets: {budget_text}" if budgets else
        "no budgets given (use --groups or --summary)") if part)
    # the run's halts where its summary's budgets are the ones drawn
    halts = (plots.summary_halts(summary) if summary is not None and budgets == {
        str(row["group"]): float(row["budget"]) for row in summary["groups"]} else None)
    return plots.groups_figure(frame, budgets=budgets,
                               delta=_figure_delta(delta, [summary], [summary_path]), x=x,
                               baseline=baseline, caption=caption, halts=halts, style=style)


def plot_tradeoff(inputs, *, by: str, y: str, annotate: bool, logx: bool, style, delta):
    """``figures.tradeoff_figure`` of sweep tables, concatenated, at their one delta."""
    import pandas as pd

    needed = ["mechanism", "epsilon", y] + (["teachers"] if by == "teachers" else [])
    frames, recorded = [], {}
    for path in inputs:
        frame = read_table(path, expected=SWEEP)
        require_table(frame, path, kind="sweep", columns=needed)
        for column in ["epsilon", y, "epsilon_std", f"{y}_std", "teachers", "queries",
                       "repeats", *captions.SWEEP_PARAMETERS]:
            if column in frame.columns:
                frame[column] = numeric_column(frame, path, column, allow_empty=True)
        for column in ("epsilon", y, "epsilon_std", f"{y}_std", "teachers"):
            problem = undrawable(frame, path, column) if column in frame.columns else None
            if problem is not None:
                raise InputError(problem)
        if y == "label_accuracy" and not np.isfinite(frame["label_accuracy"]).any():
            raise InputError(f"{path}: label_accuracy is empty in every row; run pate-sweep "
                             "with --labels FILE, or plot --y answered")
        if not np.isfinite(frame["epsilon"]).any():
            raise InputError(f"{path}: epsilon is empty in every row; expected {SWEEP}")
        if {"epsilon_any_run", "accounting"} <= set(frame.columns):  # a selection step's
            bound = numeric_column(frame, path, "epsilon_any_run", allow_empty=True)
            publish = (frame["accounting"] == "data-independent").to_numpy() & np.isfinite(bound)
            frame.loc[publish, "epsilon"] = bound[publish]  # the publishable bound for any run
        if by == "teachers" and not np.isfinite(frame["teachers"]).all():
            raise InputError(f"{path}: column 'teachers' has empty cells; --by teachers "
                             "needs every row's teacher count")
        if "delta" in frame.columns:
            values = numeric_column(frame, path, "delta", allow_empty=True)
            for value in np.unique(values[np.isfinite(values)]):
                recorded.setdefault(float(value), f"{path} (its delta column)")
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    delta = _axis_delta(delta, recorded, "the sweep tables' rows")
    return plots.tradeoff_figure(table, delta=delta, by=by, y=y, annotate=annotate,
                                 logx=logx, caption=captions.sweep_caption(table)
                                 + figure_data.search_cost_note(table), style=style)


def plot_tradeoff_curve(inputs, *, labels, log: bool, style):
    """The f-DP trade-off curves of JSON summaries (math:risk).

    Args:
      inputs: paths of JSON summaries.
      labels: a legend label per input, or none (each run's mechanism, else file name).
      log, style: ``risk_figure.tradeoff_curve_figure``'s.

    Returns:
      The ``Figure``, with its caption.

    Raises:
      InputError: a file that is not a JSON summary, or has no attack risk.
      OptionError: a ``--label`` count other than the inputs'.
    """
    summaries = [read_summary(path) for path in inputs]
    for path, summary in zip(inputs, summaries, strict=True):
        _check_risk(path, summary)
    names = _run_labels(labels, inputs, summaries)
    return tradeoff_curve_figure(list(zip(names, summaries, strict=True)), log=log,
                                 caption=captions.risk_caption(names, summaries),
                                 style=style)


def _check_risk(path, summary: dict) -> None:
    """Refuse (one line, exit 2) a summary without a usable attack risk, or whose SVT cut-off
    ``--svt-cutoff auto`` chose on the votes."""
    where = "docs/explanation/risk.md"
    if figure_data.searched_cutoff(summary):
        raise InputError(f"{path}: its cut-off is from --svt-cutoff auto; "
                         f"{figure_data.SEARCHED_CUTOFF}")
    if "risk_data_independent" not in summary:
        raise InputError(f"{path}: has no 'risk_data_independent' key; expected the JSON "
                         "summary of a pate-analyze run with its attack risk (pate-analyze "
                         f"--format json -o FILE.json; {where})")
    if summary["risk_data_independent"] is None:
        why = ("an individualized run has one guarantee per privacy group, no single "
               "trade-off curve" if summary.get("individualized") or summary.get("groups")
               else "the run has no single privacy curve")
        raise InputError(f"{path}: has no attack risk (risk_data_independent is null): "
                         f"{why} ({where})")
    for key in ("risk_data_independent", "risk"):
        problem = None if summary.get(key) is None else risk_problem(summary[key])
        if problem:
            raise InputError(f"{path}: '{key}' is not an attack risk of pate-analyze "
                             f"({problem})")


def selection_votes(path: str, *, queries, teachers, index_col, classes=None, columns=None):
    """``(rows, M)``: the first ``queries`` rows of the vote file ``path`` (dense or sparse; a
    long table with ``classes`` and ``columns``) and its teacher count M."""
    try:
        vote_set = load_votes(path, teachers=teachers, index_col=index_col, classes=classes,
                              columns=columns)
    except InputError:
        other = our_table_kind(path)
        if other is None:
            raise
        raise InputError(f"{path}: this is {other}; expected {VOTES}") from None
    if queries is not None and queries > vote_set.queries:
        raise OptionError(f"--queries {queries} is larger than the {vote_set.queries} "
                          f"queries in {path}")
    rows = vote_set.votes[:queries] if queries else vote_set.votes
    return (rows if is_sparse(rows) else np.asarray(rows)), float(vote_set.teachers)


class SelectionFigure(NamedTuple):
    """pate-plot selection's ``(T, sigma1)`` pairs, answer std (None: 0.16 M), order of the RDP
    per bin (None: the expected analysis' of the first pair) and number of bins."""

    params: tuple
    sigma: float | None
    order: float | None
    bins: int


def plot_selection(rows, teachers: float, figure: SelectionFigure, *, name: str, style,
                   delta):
    """``figures.selection_figure`` over the vote ``rows`` of the file ``name``."""
    params, sigma, order, bins = figure
    sigma = sigma if sigma is not None else 0.16 * teachers
    delta = delta or 1e-5
    how = "given by --order"
    source = VoteSet(rows, teachers, None, None)  # M and whole counts, as pate-analyze's
    first, *_ = [mechanism_for("confident", source, {"threshold": threshold, "sigma": sigma,
                                                     "sigma_threshold": sigma_threshold})
                 for threshold, sigma_threshold in params]  # each pair checked
    if order is None:
        result = analyze_votes(rows, first, teachers=teachers, accounting="expected",
                               delta=delta, orders=default_orders())
        order = float(result.order)
        how = (f"chosen by the expected analysis of T = {first.threshold:g}, sigma1 = "
               f"{first.sigma_threshold:g} at delta = {plots.delta_text(delta)}")
    data = selection_bins(rows, teachers=teachers, params=params, sigma=sigma, order=order,
                          bins=bins)
    caption = (f"{literal_text(os.path.basename(name))}: {rows.shape[0]:,} queries, "
               f"{rows.shape[1]} classes, M = {teachers:g} teachers; sigma2 = {sigma:g}. "
               "Bars: queries per bin and expected number answered (sum of pr_answered). "
               "Dots: mean "
               f"data-dependent RDP of answering a query of the bin, at order {order:g} "
               f"({how}). Drawn from the private votes' plurality counts: not for "
               "publication.")
    return plots.selection_figure(data, params=params, sigma=sigma, order=order,
                                  caption=caption, style=style)


def _runs(inputs, summary_paths, drawing: Drawing) -> tuple[list, list]:
    """``(summaries, tables)``: one JSON summary per input (or none), and the rows drawn from
    each per-query table (``plot_tables.drawn_table``), checked to be its summary's run."""
    if summary_paths and len(summary_paths) != len(inputs):
        raise OptionError(f"give one --summary per input ({len(inputs)}), or none")
    summaries = ([read_summary(path) for path in summary_paths] if summary_paths
                 else [None] * len(inputs))
    frames = [drawn_table(path, drawing, summary=summary, summary_path=summary_path)
              for path, summary, summary_path in zip(inputs, summaries,
                                                     summary_paths or [None] * len(inputs),
                                                     strict=True)]
    return summaries, frames


def _run_labels(labels, inputs, summaries) -> list[str]:
    """The legend: ``labels`` as given (``--label``: math text that parses), else each run's
    mechanism, else its file name (drawn as it is: ``figure_style.literal_text``)."""
    if labels and len(labels) != len(inputs):
        raise OptionError(f"give one --label per input ({len(inputs)}), or none")
    if labels:
        return list(labels)
    names = [captions.MECHANISM_NAMES.get(s["mechanism"], str(s["mechanism"]))
             if s and s.get("mechanism") else literal_text(os.path.basename(path))
             for path, s in zip(inputs, summaries, strict=True)]
    if len(set(names)) < len(names):  # two runs of one mechanism: tell them apart by file
        names = [literal_text(os.path.basename(path)) for path in inputs]
    return names


def _figure_delta(option, summaries, paths) -> float:
    """:func:`_axis_delta` of the deltas these summaries' runs were computed at."""
    recorded: dict = {}
    for summary, path in zip(summaries, paths or [None] * len(summaries), strict=True):
        if summary and summary.get("delta") is not None:
            recorded.setdefault(float(summary["delta"]), f"the run of {path}")
    return _axis_delta(option, recorded, "the summaries")


def _axis_delta(option, recorded: dict, what: str) -> float:
    """The delta of an epsilon axis: the one its data record (``recorded``: each delta found,
    and where; several are refused), which ``option`` (--delta) must agree with; ``option``
    for data that record none, else 1e-5."""
    if len(recorded) > 1:
        raise InputError(f"{what} have different delta values "
                         f"({', '.join(f'{d:g}' for d in sorted(recorded))}): an epsilon "
                         "axis holds at one delta; plot them separately")
    if not recorded:
        return option if option is not None else 1e-5
    ((delta, source),) = recorded.items()
    if option is not None and not math.isclose(option, delta, rel_tol=1e-9):
        raise OptionError(f"--delta {option:g}: {source} was computed at delta {delta:g}, "
                          "the delta of its epsilon axis (leave out --delta, or give "
                          f"{delta:g})")
    return delta
