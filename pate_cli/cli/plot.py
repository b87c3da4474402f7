"""``pate-plot KIND INPUT... -o OUT``: the papers' figures from our commands' outputs.

A thin layer: read the inputs (``inputs.tables``, ``inputs.votes``), build a ``Figure``
(``outputs.figures``), write it atomically (``outputs.writing.write_outputs``). Every input
problem is one line on stderr and exit status 2, before anything is written.
"""

from __future__ import annotations

import os

import click

from ..errors import InputError
from .errors import reported_warnings, run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    Order,
    completion_line,
    index_col_option,
    version_option,
)
from .plot_options import (
    ParamSet,
    figure_delta,
    figure_format,
    figure_options,
    per_query_table,
    read_summaries,
    rows_option,
    run_labels,
    save_figure,
)

EPILOG = """\b
Examples:
  pate-analyze votes.npy --per-query q.csv --format json -o q.json
  pate-plot history q.csv --summary q.json --budget 2 -o history.png
  pate-plot groups g.csv --summary g.json -o groups.pdf
  pate-plot tradeoff sweep.csv --by teachers -o tradeoff.svg
  pate-plot selection votes.npy --params 200,150 --params 300,200 --sigma 40 -o sel.png
  pate-plot partition lnmax.csv confident.csv --label LNMax --label Confident -o part.png

\b
Run 'pate-plot KIND --help' for the options of each kind.
Exit status: 0 ok, 2 bad input or options, 130 Ctrl-C, 143 SIGTERM, 1 unexpected.
""" + completion_line("pate-plot") + "\n"


@click.group(context_settings=CONTEXT_SETTINGS, epilog=EPILOG, no_args_is_help=False)
@version_option
def plot():
    """Draw the PATE papers' figures from pate-analyze and pate-sweep outputs.

    KIND is history, groups, tradeoff, selection or partition. OUT's extension (.png,
    .pdf, .svg) picks the format; the file is written atomically.
    """


HISTORY_COLUMNS = ("query", "answered", "epsilon_cumulative")


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy --per-query a.csv -f json -o a.json
  pate-analyze votes.npy -m gnmax --sigma 40 --per-query b.csv -f json -o b.json
  pate-plot history a.csv b.csv --summary a.json --summary b.json -o h.png
  pate-plot history a.csv --x answered --budget 2 --label "Confident" -o h.pdf
  pate-plot history tokens.csv --x output --budget 8 -o outputs.png
""")
@click.argument("inputs", nargs=-1, required=True, metavar="TABLE...")
@click.option("--label", "labels", multiple=True,
              help="Legend label per input, in order [default: mechanism or file name].")
@click.option("--summary", "summary_paths", multiple=True, type=click.Path(dir_okay=False),
              help="JSON summary per input, in order (pate-analyze --format json -o): "
                   "delta and parameters for the caption.")
@click.option("--x", "x", type=click.Choice(["query", "answered", "output"]), default="query",
              show_default=True,
              help="x axis: query index, cumulative answered count, or outputs processed.")
@click.option("--budget", type=POSITIVE,
              help="Draw a budget line and mark where each run first exceeds it.")
@rows_option
@figure_options
def history(inputs, labels, summary_paths, x, budget, queries, output, style, delta, debug):
    """Cumulative epsilon against queries, one line per per-query TABLE.

    TABLE is a per-query table of pate-analyze --per-query (.csv, .jsonl, .parquet).
    The stopping point is the first query whose cumulative epsilon exceeds --budget.
    Papernot et al. 2018, Figure 1 (middle).
    """
    from ..outputs import captions
    from ..outputs import figures as plots
    fmt = figure_format(output)
    summaries = read_summaries(summary_paths, inputs)
    frames = [per_query_table(path, HISTORY_COLUMNS, queries, summary=summary,
                              summary_path=summary_path)
              for path, summary, summary_path in zip(inputs, summaries,
                                                     summary_paths or [None] * len(inputs),
                                                     strict=True)]
    if x == "output":
        for path, frame in zip(inputs, frames, strict=True):
            if "output" not in frame.columns:
                raise click.UsageError(f"--x output: {path} has no output column (analyse "
                                       "votes with an output grouping)")
    names = run_labels(labels, inputs, summaries)
    caption = captions.runs_caption(names, frames, summaries)
    figure = plots.history_figure(list(zip(names, frames, strict=True)),
                                  delta=figure_delta(delta, summaries), x=x, budget=budget,
                                  caption=caption,
                                  style=style)
    save_figure(figure, output, fmt)


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy --individualized upsampling --groups groups.csv \\
      --per-query g.csv --format json -o g.json
  pate-plot groups g.csv --summary g.json -o groups.png
  pate-plot groups g.csv --groups groups.csv --no-baseline -o groups.pdf
""")
@click.argument("input_path", metavar="TABLE")
@click.option("--groups", "groups_path", type=click.Path(dir_okay=False),
              help="Budgets from the groups CSV (group,budget,...).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False),
              help="Budgets, delta and parameters from the run's JSON summary.")
@click.option("--x", "x", type=click.Choice(["query", "answered"]), default="query",
              show_default=True, help="x axis: query index, or cumulative answered count.")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="Draw the uniform run (column epsilon_cumulative) in grey.")
@rows_option
@figure_options
def groups(input_path, groups_path, summary_path, x, baseline, queries, output, style, delta,
           debug):
    """Per-group cost histories of an individualized run, with budgets and exhaustion.

    TABLE is the per-query table of pate-analyze --individualized ... --per-query FILE
    (columns epsilon_cumulative_<group>). Budgets come from --groups or --summary; each
    is a dashed line in its group's colour, and the first query after which the group's
    cumulative epsilon exceeds it is marked. Individualized PATE, Figures 1, 5, 6.
    """
    from ..inputs import load_groups
    from ..inputs.tables import numeric_column, read_summary
    from ..outputs import captions
    from ..outputs import figures as plots
    fmt = figure_format(output)
    summary = read_summary(summary_path) if summary_path else None
    if summary is not None and not summary.get("groups"):
        raise InputError(f"{summary_path}: has no 'groups' list; expected the JSON "
                         "summary of an individualized run")
    frame = per_query_table(input_path, HISTORY_COLUMNS, queries, summary=summary,
                            summary_path=summary_path)
    names = plots.group_columns(frame)
    if not names:
        raise InputError(f"{input_path}: no epsilon_cumulative_<group> columns; expected the "
                         "per-query table of an individualized run (pate-analyze "
                         "--individualized ... --per-query FILE)")
    for name in names:
        numeric_column(frame, input_path, plots.GROUP_PREFIX + name)
    budgets = {}
    if summary is not None:
        budgets = {str(row["group"]): float(row["budget"]) for row in summary["groups"]}
    if groups_path is not None:
        loaded = load_groups(groups_path)
        budgets = dict(zip(loaded.names, map(float, loaded.budgets), strict=True))
    unknown = [name for name in budgets if name not in names]
    if unknown:
        source = groups_path or summary_path
        raise InputError(f"{source}: group {unknown[0]!r} has no column "
                         f"epsilon_cumulative_{unknown[0]} in {input_path} (it has "
                         f"{', '.join(names)})")
    caption = captions.summary_caption(summary)
    budget_text = ", ".join(f"{name} {budget:g}" for name, budget in budgets.items())
    caption = "; ".join(part for part in (
        caption, f"{len(frame):,} queries", f"budgets: {budget_text}" if budgets else
        "no budgets given (use --groups or --summary)") if part)
    figure = plots.groups_figure(frame, budgets=budgets, delta=figure_delta(delta, [summary]), x=x,
                                 baseline=baseline, caption=caption,
                                 style=style)
    save_figure(figure, output, fmt)


SWEEP_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "eta")


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-sweep votes.npy -m lnmax -m gnmax --sigma 10:60:10 --laplace-scale 10:60:10 \\
      --labels y.npy --queries 4000 --out sweep.csv
  pate-plot tradeoff sweep.csv -o tradeoff.png
  pate-plot tradeoff m50.csv m100.csv m250.csv --by teachers -o teachers.pdf
  pate-plot tradeoff sweep.csv --y answered -o answered.svg
""")
@click.argument("inputs", nargs=-1, required=True, metavar="SWEEP...")
@click.option("--by", type=click.Choice(["mechanism", "teachers"]), default="mechanism",
              show_default=True, help="One curve per mechanism or per teacher count.")
@click.option("--y", "y", type=click.Choice(["label_accuracy", "answered"]),
              default="label_accuracy", show_default=True, help="Quantity on the y axis.")
@click.option("--annotate/--no-annotate", default=True, show_default=True,
              help="Write each frontier point's noise parameters next to it.")
@click.option("--logx", is_flag=True, help="Logarithmic epsilon axis.")
@figure_options
def tradeoff(inputs, by, y, annotate, logx, output, style, delta, debug):
    """Label accuracy against epsilon from pate-sweep tables (several are concatenated).

    One curve per mechanism (--by mechanism, Papernot et al. 2018 Figure 4 left) or per
    teacher count (--by teachers, Figure 4 right). Each curve's line joins its Pareto
    frontier in epsilon order (the points no other point beats with at most the epsilon
    and at least the accuracy, or answered with --y answered); the other points are
    faint dots. Error bars from the *_std columns where non-zero. delta comes from
    --delta, else from the tables' delta column (pate-sweep writes one; all rows must
    agree), else 1e-5.
    """
    import numpy as np
    import pandas as pd

    from ..inputs.tables import SWEEP, numeric_column, read_table, require_table
    from ..outputs import figures as plots

    fmt = figure_format(output)
    needed = ["mechanism", "epsilon", y] + (["teachers"] if by == "teachers" else [])
    frames = []
    for path in inputs:
        frame = read_table(path, expected=SWEEP)
        require_table(frame, path, kind="sweep", columns=needed)
        for column in ["epsilon", y, "epsilon_std", f"{y}_std", "teachers", "queries",
                       "repeats", *SWEEP_PARAMETERS]:
            if column in frame.columns:
                frame[column] = numeric_column(frame, path, column, allow_empty=True)
        if y == "label_accuracy" and not np.isfinite(frame["label_accuracy"]).any():
            raise InputError(f"{path}: label_accuracy is empty in every row; run pate-sweep "
                             "with --labels FILE, or plot --y answered")
        if not np.isfinite(frame["epsilon"]).any():
            raise InputError(f"{path}: epsilon is empty in every row; expected {SWEEP}")
        if by == "teachers" and not np.isfinite(frame["teachers"]).all():
            raise InputError(f"{path}: column 'teachers' has empty cells; --by teachers "
                             "needs every row's teacher count")
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    if delta is None and "delta" in table.columns:
        values = numeric_column(table, inputs[0], "delta", allow_empty=True)
        found = {float(d) for d in values[np.isfinite(values)]}
        if len(found) > 1:
            raise InputError("the sweep tables mix several delta values "
                             f"({', '.join(f'{d:g}' for d in sorted(found))}); plot one, "
                             "or give --delta")
        delta = found.pop() if found else None
    figure = plots.tradeoff_figure(table, delta=delta or 1e-5, by=by, y=y, annotate=annotate,
                                   logx=logx,
                                   caption=_sweep_caption(table),
                                   style=style)
    save_figure(figure, output, fmt)


def _sweep_caption(table) -> str:
    import numpy as np
    parts = [f"{len(table)} sweep rows"]
    for column in ("queries", "teachers", "repeats", *SWEEP_PARAMETERS):
        if column not in table.columns:
            continue
        values = np.unique(table[column].to_numpy(dtype=np.float64))
        values = values[np.isfinite(values)]
        if values.size == 1:
            parts.append(f"{column} {values[0]:g}")
        elif values.size > 1:
            parts.append(f"{column} {values.min():g}-{values.max():g}")
    return ", ".join(parts)


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-plot selection votes.npy --params 200,150 -o selection.png
  pate-plot selection votes.npy --params 200,150 --params 230,50 --sigma 40 --order 14 \\
      --bins 25 -o selection.pdf
""")
@click.argument("votes", metavar="VOTES")
@click.option("--params", "params", multiple=True, required=True, type=ParamSet(),
              help="Confident-GNMax selection parameters T,sigma1 (repeatable).")
@click.option("--sigma", type=POSITIVE, help="Answer-step sigma2 [default: 0.16 M].")
@click.option("--order", type=Order(),
              help="Rényi order of the per-query cost [default: the order the expected "
                   "analysis of the first --params set chooses].")
@click.option("--bins", type=click.IntRange(2, 500), default=20, show_default=True,
              help="Number of plurality-count bins.")
@click.option("-n", "--queries", type=click.IntRange(min=1), help="Use the first N queries.")
@click.option("--teachers", type=POSITIVE,
              help="Number of teachers M when rows do not sum to it.")
@index_col_option()
@figure_options
def selection(votes, params, sigma, order, bins, queries, teachers, index_col, output, style,
              delta, debug):
    """Plurality histogram of all queries and of those Confident-GNMax answers.

    For VOTES (a vote file) and each --params T,sigma1: the expected number of queries
    answered per plurality bin (the sum of pr_answered), next to all queries; black dots
    on a log right axis: the mean data-dependent RDP of the answer step (GNMax, --sigma)
    of the bin's queries at one Rényi order (--order, by default the order chosen by
    the expected analysis of the first --params set at --delta). Papernot et al. 2018,
    Figure 5 (left).
    """
    import numpy as np

    from ..analysis import analyze_votes
    from ..analysis.selection import selection_bins
    from ..inputs import load_votes
    from ..mechanisms import ConfidentGNMax
    from ..orders import default_orders
    from ..outputs import figures as plots
    from ..sparse_rows import is_sparse
    fmt = figure_format(output)
    with reported_warnings():  # a note about the votes (averaged votes): one line
        vote_set = load_votes(votes, teachers=teachers, index_col=index_col)
    available = vote_set.queries
    if queries is not None and queries > available:
        raise click.UsageError(f"--queries {queries} is larger than the {available} queries "
                               f"in {votes}")
    rows = vote_set.votes[:queries] if queries else vote_set.votes
    rows = rows if is_sparse(rows) else np.asarray(rows)
    m = float(vote_set.teachers)
    sigma = sigma if sigma is not None else 0.16 * m
    delta = delta or 1e-5
    how = "given by --order"
    if order is None:
        threshold, sigma_threshold = params[0]
        result = analyze_votes(rows, ConfidentGNMax(threshold=threshold,
                                                    sigma_threshold=sigma_threshold,
                                                    sigma=sigma),
                               teachers=m, accounting="expected", delta=delta,
                               orders=default_orders())
        order = float(result.order)
        how = (f"chosen by the expected analysis of T = {threshold:g}, sigma1 = "
               f"{sigma_threshold:g} at delta = {plots.delta_text(delta)}")
    data = selection_bins(rows, teachers=m, params=params, sigma=sigma, order=order,
                          bins=bins)
    caption = (f"{os.path.basename(votes)}: {rows.shape[0]:,} queries, {rows.shape[1]} "
               f"classes, M = {m:g} teachers; sigma2 = {sigma:g}. Bars: queries per bin and "
               "expected number answered (sum of pr_answered). Dots: mean data-dependent "
               f"RDP of answering a query of the bin, at order {order:g} ({how}).")
    figure = plots.selection_figure(data, params=params, sigma=sigma, order=order,
                                    caption=caption,
                                    style=style)
    save_figure(figure, output, fmt)


PARTITION_COLUMNS = ("query", "answered", "rdp_selection", "rdp_answer", "epsilon_cumulative")


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy -m lnmax -n 2000 --per-query lnmax.csv -f json -o lnmax.json
  pate-analyze votes.npy --per-query confident.csv -f json -o confident.json
  pate-plot partition lnmax.csv confident.csv --summary lnmax.json \\
      --summary confident.json -o partition.png
""")
@click.argument("inputs", nargs=-1, required=True, metavar="TABLE...")
@click.option("--label", "labels", multiple=True,
              help="Legend label per input, in order [default: mechanism or file name].")
@click.option("--summary", "summary_paths", multiple=True, type=click.Path(dir_okay=False),
              help="JSON summary per input, in order: delta and parameters for the caption.")
@rows_option
@figure_options
def partition(inputs, labels, summary_paths, queries, output, style, delta, debug):
    """Cumulative epsilon against answered queries; Confident's cost split in two.

    Each TABLE is a per-query table. A run that charges a selection step (non-zero
    rdp_selection: Confident- or Interactive-GNMax) is drawn as stacked areas, selection
    cost under answer cost; the others (LNMax, GNMax) as a line. The split shares each
    point's cumulative epsilon in proportion to the cumulative selection and answer RDP
    (both at the run's final order). Papernot et al. 2018, Figure 5 (right).
    """
    from ..outputs import captions
    from ..outputs import figures as plots
    fmt = figure_format(output)
    summaries = read_summaries(summary_paths, inputs)
    frames = [per_query_table(path, PARTITION_COLUMNS, queries, summary=summary,
                              summary_path=summary_path)
              for path, summary, summary_path in zip(inputs, summaries,
                                                     summary_paths or [None] * len(inputs),
                                                     strict=True)]
    names = run_labels(labels, inputs, summaries)
    caption = captions.runs_caption(names, frames, summaries)
    caption += (" Selection/answer split in proportion to cumulative RDP at the final order.")
    figure = plots.partition_figure(list(zip(names, frames, strict=True)),
                                    delta=figure_delta(delta, summaries), caption=caption,
                                    style=style)
    save_figure(figure, output, fmt)


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(plot, args, prog_name="pate-plot"))
