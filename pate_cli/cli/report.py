"""``pate-report``: a privacy statement you can publish (HTML or Markdown).

A thin layer: run the analysis with pate-analyze's own option groups (the same names,
defaults and rules, through ``api.analyze``) or read ``--from summary.json [--per-query
q.csv]``; build the statement (``outputs.report``); write it and its figure files
atomically as one set (``outputs.writing.write_outputs``).
"""

from __future__ import annotations

import os
import shlex
import shutil

import click

from ..analysis import api
from ..errors import InputError
from ..inputs import load_votes
from ..inputs.tables import PER_QUERY, read_summary, read_table, require_table
from ..outputs.figure_data import figure_rows
from ..outputs.report import files_folder, render_report, report_format
from ..outputs.report_figures import figure_budgets
from ..outputs.run_match import check_same_run
from ..outputs.writing import check_destinations, write_outputs
from ..rounding import ceil_text
from .analyze import (
    _accounting_specs,
    _budget_specs,
    _individualized_specs,
    _input_specs,
    _mechanism_specs,
)
from .errors import OverBudget, reported_warnings, run_command
from .options import CONTEXT_SETTINGS, completion_line, debug_option, group, version_option

EPILOG = """\b
Examples:
  pate-report votes.npy -n 640 --accounting expected --smooth-sensitivity -o report.html
  pate-report votes.npy -m gnmax --sigma 40 --budget 2 --dataset-size 60000 -o report.md
  pate-analyze votes.npy -f json -o run.json --per-query q.csv
  pate-report --from run.json --per-query q.csv -o report.html

\b
The output's extension picks the format: .html (one standalone file, figures inline as
SVG) or .md (figures written beside it in REPORT_files/).
Exit status: 0 ok, 2 bad input or options, 3 epsilon above --max-epsilon (the report is
still written), 130 Ctrl-C, 143 SIGTERM, 1 unexpected.
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
    ]


def _smooth_specs(option) -> list:
    return [option("--smooth-sensitivity", "smooth_sensitivity", is_flag=True,
                   help="Add and headline the sanitised data-dependent epsilon (GNSS).")]


@click.command(cls=_RecordingCommand, context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", required=False, metavar="[VOTES]")
@group("Report", _report_specs)
@group("Input", _input_specs)
@group("Mechanism", _mechanism_specs)
@group("Accounting", _accounting_specs)
@group("Budget & CI", _budget_specs)
@group("Individualized PATE", _individualized_specs)
@group("Smooth sensitivity", _smooth_specs)
@debug_option
@version_option
@click.pass_context
def report(ctx, votes, output, from_summary, per_query, dataset_size, max_epsilon,
           show_parameters, debug, **options):
    """Write a self-contained privacy statement for a PATE run.

    Runs the analysis of pate-analyze (the same options) on VOTES, or reads --from
    summary.json, and writes the guarantee (with a warning when the published epsilon is
    data-dependent and not sanitised), the privacy unit, the neighbouring relation, the
    DP definition and delta, the mechanism and every parameter, the accounting, budget
    and halt, per-group costs, figures, the reproduction recipe (command, version, input
    sha256) and a checklist after Ponomareva et al. 2023, "How to DP-fy ML".
    """
    fmt = report_format(output)
    if show_parameters:
        raise click.UsageError("--show-parameters is a pate-analyze option")
    folder = files_folder(output)
    check_destinations([("-o " + output, output)])
    if fmt == "markdown" and os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"{folder}: exists and is not a directory (the Markdown report's "
                         "figures go there)")
    command = "pate-report " + shlex.join(ctx.meta.get("pate_report.args", []))
    if from_summary is not None:
        if votes is not None or options.get("predictions") is not None:
            raise click.UsageError("give VOTES (to analyse) or --from SUMMARY, not both")
        summary, frame, rows = _read_run(from_summary, per_query)
        epsilon = float(summary["epsilon"])
    else:
        if per_query is not None:
            raise click.UsageError("--per-query applies to --from SUMMARY (a report on "
                                   "VOTES uses the run's own table)")
        # the table streamed, a chunk at a time, into the rows the figures draw; with
        # --query-indices the selection figure reads the rows the run kept
        streamed = options.get("query_indices") is None
        with reported_warnings():
            result = api.analyze(votes, **options, per_query="stream" if streamed else True)
        summary = result.to_dict()
        frame = figure_rows(result.iter_frames(), queries=result.queries,
                            budgets=figure_budgets(summary))
        rows = _analysed_votes(result)
        epsilon = result.epsilon
    text, figures = render_report(summary, frame, fmt=fmt, votes=rows, command=command,
                                  dataset_size=dataset_size, output=output)
    made = bool(figures) and not os.path.isdir(folder)
    if figures:
        os.makedirs(folder, exist_ok=True)
    try:
        write_outputs({output: text.encode("utf-8"), **figures})
    except BaseException:
        if made:  # nothing half-written: not even the figures' folder
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if max_epsilon is not None and epsilon > max_epsilon:
        raise OverBudget(f"epsilon {ceil_text(epsilon)} exceeds --max-epsilon {max_epsilon:g}")


def _analysed_votes(result):
    """The analysed vote rows in analysed order (Confident's selection figure)."""
    if result.source is None or result.rounds is not None or result.groups is not None:
        return None
    votes = result.source.votes
    if result.query_index is not None:
        return votes[result.query_index]
    return votes[:result.queries]


def _read_run(summary_path: str, per_query: str | None):
    """``--from``: the summary, its per-query table, and the votes when the summary's
    input file is still there with the same sha256 (for the selection figure)."""
    summary = read_summary(summary_path)
    for key in ("input", "mechanism", "queries", "accounting"):
        if key not in summary:
            raise InputError(f"{summary_path}: has no {key!r} key; expected a JSON summary "
                             "of pate-analyze (--format json -o FILE.json)")
    frame = None
    if per_query is not None:
        frame = read_table(per_query, expected=PER_QUERY)
        require_table(frame, per_query, kind="per-query",
                      columns=("query", "answered", "epsilon_cumulative"))
        check_same_run(summary, frame, summary_path=summary_path, table_path=per_query)
    rows = None
    source = summary.get("input") or {}
    path = source.get("path")
    if (summary.get("mechanism") == "confident" and path and os.path.isfile(path)
            and not summary.get("groups")):
        vote_set = load_votes(path)
        if vote_set.sha256 == source.get("sha256"):
            index = (frame["query"].to_numpy() if frame is not None
                     else slice(0, summary["queries"]))
            rows = vote_set.votes[index]
    return summary, frame, rows


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(report, args, prog_name="pate-report"))
