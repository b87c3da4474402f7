"""``pate-report``: a publishable privacy statement (HTML or Markdown) of a pate-analyze run
or ``--from summary.json [--per-query q.csv]``, written with its figures atomically as a set."""

from __future__ import annotations

import shlex

import click
from click.core import ParameterSource

from ..errors import OverBudget
from ..outputs.report_statement import (
    ANY_RUN_KEY,
    halt_from_votes,
    headline,
    lacks_any_run_bound,
    largest_group,
    privacy_unit,
)
from .errors import NO_BOUND_TO_GATE, check_max_epsilon, reported_warnings, run_command, warn
from .options import (
    CONTEXT_SETTINGS,
    analyze_accounting_specs,
    analyze_input_specs,
    budget_specs,
    completion_line,
    debug_option,
    group,
    individualized_specs,
    mechanism_specs,
    version_option,
    workers_option,
)

EPILOG = """\b
Examples:
  pate-report votes.npy -n 640 --accounting expected --smooth-sensitivity -o report.html
  pate-report votes.npy -m gnmax --sigma 40 --budget 2 --dataset-size 60000 -o report.md
  pate-analyze votes.npy -f json -o run.json --per-query q.csv
  pate-report --from run.json --per-query q.csv -o report.html

\b
The output's extension picks the format: .html (one standalone file, figures inline as
SVG) or .md (figures written beside it in REPORT_files/).
Exit status: 0 ok, 2 bad input or options, 3 the published epsilon above --max-epsilon
(the report is still written), 130 Ctrl-C, 143 SIGTERM, 1 unexpected.
""" + completion_line("pate-report") + "\n"


class _RecordingCommand(click.Command):
    """Keeps the arguments as given, for the report's reproduction block."""

    def parse_args(self, ctx, args):
        ctx.meta["pate_report.args"] = list(args)
        return super().parse_args(ctx, args)


def _report_specs(option) -> list:
    return [
        option("-o", "--output", required=True, type=click.Path(dir_okay=False),
               help="The report: .html (standalone) or .md (figures in REPORT_files/)."),
        option("--from", "from_summary", type=click.Path(dir_okay=False),
               help="Report on this JSON summary (pate-analyze -f json -o) instead of VOTES."),
        option("--per-query", type=click.Path(dir_okay=False),
               help="With --from: the run's per-query table, for the figures."),
        option("--dataset-size", type=click.IntRange(min=1), metavar="N",
               help="Training examples N: checks that delta < 1/N."),
        workers_option(option),
    ]


def _smooth_specs(option) -> list:
    return [option("--smooth-sensitivity", "smooth_sensitivity", is_flag=True,
                   help="Add and headline the sanitised data-dependent epsilon (GNSS).")]


@click.command(cls=_RecordingCommand, context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", required=False, metavar="[VOTES]")
@group("Report", _report_specs)
@group("Input", analyze_input_specs)
@group("Mechanism", mechanism_specs)
@group("Accounting", analyze_accounting_specs)
@group("Budget & CI", budget_specs)
@group("Individualized PATE", individualized_specs)
@group("Smooth sensitivity", _smooth_specs)
@debug_option
@version_option
@click.pass_context
def report(ctx, votes, **options):
    """Write a self-contained privacy statement for a PATE run.

    Runs the analysis of pate-analyze (the same options) on VOTES, or reads --from
    summary.json, and writes the guarantee (with a warning when the published epsilon is
    data-dependent and not sanitised), the privacy unit, the neighbouring relation, the
    DP definition and delta, the mechanism and every parameter, the accounting, budget
    and halt, per-group costs, figures, the reproduction recipe (command, version, input
    sha256) and a checklist after Ponomareva et al. 2023, "How to DP-fy ML".
    """
    # imported here: a Ctrl-C while the command starts is one line, not a traceback
    from ..analysis import api
    from ..outputs.report import SEARCHED_CUTOFF, render_report, report_format
    from ..outputs.report_files import (
        analysed_votes,
        check_report_destination,
        figure_table,
        read_run,
        write_report,
    )

    # the command's own options; the others are analyze()'s
    output, from_summary, per_query, dataset_size, max_epsilon, _ = (
        options.pop(key) for key in ("output", "from_summary", "per_query", "dataset_size",
                                     "max_epsilon", "debug"))
    fmt = report_format(output)
    check_report_destination(output, fmt)
    command = "pate-report " + shlex.join(ctx.meta.get("pate_report.args", []))
    given = None  # the run's own options, for the files its summary does not record
    if from_summary is not None:
        if votes is not None or options.get("predictions") is not None:
            raise click.UsageError("give VOTES (to analyse) or --from SUMMARY, not both")
        _refuse_analysis_options(ctx, options)
        summary, frame, rows = read_run(from_summary, per_query)
        if (summary.get("svt") or {}).get("cutoff_from_search"):
            raise click.UsageError(f"{from_summary}: its cut-off is from --svt-cutoff auto; "
                                   f"{SEARCHED_CUTOFF}")
        if lacks_any_run_bound(summary):
            raise click.UsageError(
                f"{from_summary}: written before summaries held the bound for any run (its "
                "data-independent epsilon composes only the replay's answers, a count the "
                "votes decide); analyse the votes again to report on them")
        epsilon = float(summary["epsilon"])
    else:
        if per_query is not None:
            raise click.UsageError("--per-query applies to --from SUMMARY (a report on "
                                   "VOTES uses the run's own table)")
        if options.get("svt_cutoff") == "auto":
            raise click.UsageError(f"--svt-cutoff auto: {SEARCHED_CUTOFF}")
        # the table streamed into the figures' rows before the summary: its pass forms the
        # smooth-sensitivity release (two reads, not three)
        with reported_warnings():
            result = api.analyze(votes, **options, per_query="stream")
            frame = figure_table(result)
            summary = result.to_dict()
        rows = analysed_votes(result)
        epsilon = result.epsilon
        given = {"votes": votes, **options}
    with reported_warnings():  # matplotlib's too (a layout it cannot apply), one line each
        text, figures = render_report(summary, frame, fmt=fmt, votes=rows, command=command,
                                      dataset_size=dataset_size, output=output,
                                      given=given)
    write_report(output, text, figures)
    if dataset_size and not privacy_unit(summary, dataset_size=dataset_size)["delta_ok"]:
        delta = float(summary["delta"])  # the checklist's flag, said on stderr too
        warn(f"delta {delta:g} is not below 1/N = {1.0 / dataset_size:g} for --dataset-size "
             f"{dataset_size}: such a delta allows releasing an example outright; choose "
             "delta < 1/N")
    published = headline(summary)["published"]  # the statement's epsilon gates a report
    largest = largest_group(summary.get("groups") or [], ANY_RUN_KEY)
    if published is None and largest is not None:  # each group's bound: the largest
        check_max_epsilon(float(largest[ANY_RUN_KEY]), max_epsilon,
                          what=f"published epsilon (group {largest['group']}'s)")
    elif published is None and max_epsilon is not None and halt_from_votes(summary):
        raise OverBudget(NO_BOUND_TO_GATE)  # vanishing: no figure here is a bound
    elif published is None:  # per-group figures (individualized): the run's epsilon
        check_max_epsilon(epsilon, max_epsilon)
    else:
        check_max_epsilon(float(published), max_epsilon, what="published epsilon")


def _refuse_analysis_options(ctx, options: dict) -> None:
    """``--from`` reports the summary as it was run: an analysis option given with it would
    be ignored (and printed in the reproduction command), so it is refused, named."""
    given = [param for param in ctx.command.params if param.name in options
             and ctx.get_parameter_source(param.name) not in (None, ParameterSource.DEFAULT)]
    if given:
        names = ", ".join("/".join(param.opts) for param in given)
        raise click.UsageError(f"--from reports the summary as it is: it takes no analysis "
                               f"options (given: {names}; to analyse, give VOTES instead)")


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(report, args, prog_name="pate-report"))
