"""``pate-plot KIND INPUT... -o OUT``: the papers' figures (``outputs.plot_files``), written
atomically; an input problem is one line and exit status 2 before anything is written."""

from __future__ import annotations

import click

from .errors import reported_warnings, run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    Order,
    completion_line,
    index_col_option,
    long_table_specs,
    stack,
    version_option,
)
from .plot_options import ParamSet, figure_options, labels_option, rows_option

EPILOG = """\b
Examples:
  pate-analyze votes.npy --per-query q.csv --format json -o q.json
  pate-plot history q.csv --summary q.json --budget 2 -o history.png
  pate-plot groups g.csv --summary g.json -o groups.pdf
  pate-plot tradeoff sweep.csv --by teachers -o tradeoff.svg
  pate-plot selection votes.npy --params 200,150 --params 300,200 --sigma 40 -o sel.png
  pate-plot partition lnmax.csv confident.csv --label LNMax --label Confident -o part.png
  pate-plot tradeoff-curve a.json b.json --label Confident --label GNMax -o curve.png

\b
Run 'pate-plot KIND --help' for the options of each kind.
Exit status: 0 ok, 2 bad input or options, 130 Ctrl-C, 143 SIGTERM, 1 unexpected.
""" + completion_line("pate-plot") + "\n"


@click.group(context_settings=CONTEXT_SETTINGS, epilog=EPILOG, no_args_is_help=False)
@version_option
def plot():
    """Draw the PATE papers' figures from pate-analyze and pate-sweep outputs.

    KIND is history, groups, tradeoff, selection, partition or tradeoff-curve. OUT's
    extension (.png, .pdf, .svg) picks the format; the file is written atomically.
    """


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy --per-query a.csv -f json -o a.json
  pate-analyze votes.npy -m gnmax --sigma 40 --per-query b.csv -f json -o b.json
  pate-plot history a.csv b.csv --summary a.json --summary b.json -o h.png
  pate-plot history a.csv --x answered --budget 2 --label "Confident" -o h.pdf
  pate-plot history tokens.csv --x output --budget 8 -o outputs.png
""")
@click.argument("inputs", nargs=-1, required=True, metavar="TABLE...")
@labels_option
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
@version_option
def history(inputs, **options):
    """Cumulative epsilon against queries, one line per per-query TABLE.

    TABLE is a per-query table of pate-analyze --per-query (.csv, .tsv, .json/.jsonl,
    .parquet).
    The stopping point is the first query whose cumulative epsilon exceeds --budget.
    Papernot et al. 2018, Figure 1 (middle).
    """
    from ..outputs.plot_files import plot_history
    _save(plot_history, inputs, options)


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
@version_option
def groups(input_path, **options):
    """Per-group cost histories of an individualized run, with budgets and exhaustion.

    TABLE is the per-query table of pate-analyze --individualized ... --per-query FILE
    (columns epsilon_cumulative_<group>). Budgets come from --groups or --summary; each
    is a dashed line in its group's colour, and the query at which the group halts the
    run is marked (the summary's, else the first after which its epsilon exceeds it).
    Individualized PATE, Figures 1, 5, 6.
    """
    from ..outputs.plot_files import plot_groups
    _save(plot_groups, input_path, options)


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
@figure_options(delta="delta of the epsilon axis, for tables that do not record one "
                      "[default: 1e-5]. A figure's delta is the one its data were computed "
                      "at: where the tables' delta column gives it, --delta must agree "
                      "with it.")
@version_option
def tradeoff(inputs, **options):
    """Label accuracy against epsilon from pate-sweep tables (several are concatenated).

    One curve per mechanism (--by mechanism, Papernot et al. 2018 Figure 4 left) or per
    teacher count (--by teachers, Figure 4 right). Each curve's line joins its Pareto
    frontier in epsilon order (the points no other point beats with at most the epsilon
    and at least the accuracy, or answered with --y answered); the other points are
    faint dots. Error bars from the *_std columns where non-zero. delta is the one the
    tables' delta column records (pate-sweep writes one; rows at different deltas are
    refused: plot them separately); --delta labels tables without one (else 1e-5).
    """
    from ..outputs.plot_files import plot_tradeoff
    _save(plot_tradeoff, inputs, options)


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-plot selection votes.npy --params 200,150 -o selection.png
  pate-plot selection votes.npy --params 200,150 --params 230,50 --sigma 40 --order 14 \\
      --bins 25 -o selection.pdf
  pate-plot selection tokens.csv --classes 32000 --columns query=position,class=token,count=n \\
      --params 50,20 -o selection.png
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
@stack(long_table_specs())
@figure_options(delta="delta of the expected analysis that chooses --order [default: 1e-5].")
@version_option
def selection(votes, **options):
    """Plurality histogram of all queries and of those Confident-GNMax answers.

    For VOTES (a vote file) and each --params T,sigma1: the expected number of queries
    answered per plurality bin (the sum of pr_answered), next to all queries; black dots
    on a log right axis: the mean data-dependent RDP of the answer step (GNMax, --sigma)
    of the bin's queries at one Rényi order (--order, by default the order chosen by
    the expected analysis of the first --params set at --delta). Papernot et al. 2018,
    Figure 5 (left).
    """
    from ..outputs.plot_files import SelectionFigure, plot_selection, selection_votes

    def draw(votes, *, params, sigma, order, bins, style, delta, **reading):
        rows, teachers = selection_votes(votes, **reading)
        return plot_selection(rows, teachers, SelectionFigure(params, sigma, order, bins),
                              name=votes, style=style, delta=delta)
    _save(draw, votes, options)


@plot.command(context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy -m lnmax -n 2000 --per-query lnmax.csv -f json -o lnmax.json
  pate-analyze votes.npy --per-query confident.csv -f json -o confident.json
  pate-plot partition lnmax.csv confident.csv --summary lnmax.json \\
      --summary confident.json -o partition.png
""")
@click.argument("inputs", nargs=-1, required=True, metavar="TABLE...")
@labels_option
@click.option("--summary", "summary_paths", multiple=True, type=click.Path(dir_okay=False),
              help="JSON summary per input, in order: delta and parameters for the caption.")
@rows_option
@figure_options
@version_option
def partition(inputs, **options):
    """Cumulative epsilon against answered queries; Confident's cost split in two.

    Each TABLE is a per-query table. A run that charges a selection step (non-zero
    rdp_selection: Confident- or Interactive-GNMax) is drawn as stacked areas, selection
    cost under answer cost; the others (LNMax, GNMax) as a line. The split shares each
    point's cumulative epsilon in proportion to the cumulative selection and answer RDP
    (both at the run's final order). Papernot et al. 2018, Figure 5 (right).
    """
    from ..outputs.plot_files import plot_partition
    _save(plot_partition, inputs, options)


def _save(draw, inputs, options: dict) -> None:
    """Write ``draw(inputs, **options)`` to ``-o``, its format checked first (``--debug`` is
    the command runner's)."""
    from ..outputs.plot_files import figure_format, save_figure
    output = options.pop("output")
    del options["debug"]
    fmt = figure_format(output)
    with reported_warnings():  # each a "Warning:" line (a note about averaged votes)
        save_figure(draw(inputs, **options), output, fmt)


@plot.command("tradeoff-curve", context_settings=CONTEXT_SETTINGS, epilog="""\b
Examples:
  pate-analyze votes.npy -f json -o confident.json
  pate-plot tradeoff-curve confident.json -o curve.png
  pate-analyze votes.npy -m gnmax --sigma 40 --accounting data-independent -f json -o g.json
  pate-plot tradeoff-curve confident.json g.json --label Confident --label GNMax \\
      --log -o curves.pdf
""")
@click.argument("inputs", nargs=-1, required=True, metavar="SUMMARY...")
@labels_option
@click.option("--log", "log", is_flag=True,
              help="Logarithmic type I error axis (1e-6 to 1): the small false-positive "
                   "rates a membership attack is judged at.")
@figure_options(delta=False)
@version_option
def tradeoff_curve(inputs, **options):
    """The f-DP trade-off curve a run's guarantee implies, from its JSON summary.

    SUMMARY is the JSON summary of pate-analyze (--format json -o FILE.json). Type II
    error (1 - the attacker's true-positive rate) against type I error (its
    false-positive rate): no membership test does better than the curve. Drawn: the
    publishable bound (risk_data_independent), a data-dependent run's own bound dashed
    (unsanitised: not for publication), the exact mu-GDP curve where the run is mu-GDP,
    the reported FPRs 0.001, 0.01, 0.1 marked, and the diagonal of no privacy loss.
    A summary without an attack risk (an individualized run's) is refused.
    Dong, Roth and Su 2022 (f-DP); docs/explanation/risk.md.
    """
    from ..outputs.plot_files import plot_tradeoff_curve
    _save(plot_tradeoff_curve, inputs, options)


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(plot, args, prog_name="pate-plot"))
