"""``pate-analyze``: what a PATE run over saved votes costs in privacy."""

from __future__ import annotations

import contextlib
import functools

import click

from ..errors import OptionError, OverBudget
from ..outputs.summary import FORMATS, parameters_text, render
from .errors import (
    NO_BOUND_TO_GATE,
    check_max_epsilon,
    reported_warnings,
    run_command,
    warn_table_output,
)
from .options import (
    CONTEXT_SETTINGS,
    SchedulerAddress,
    analyze_accounting_specs,
    analyze_input_specs,
    budget_specs,
    completion_line,
    debug_option,
    group,
    mechanism_specs,
    show_parameters_specs,
    version_option,
    workers_option,
)
from .progress import query_progress

EPILOG = """\b
Examples: cat votes.csv | pate-analyze - -f json | jq .epsilon
          pate-analyze votes.npy -m svt --target-epsilon 8 --svt-cutoff auto
Exit status: 0 ok, 2 bad input or options, 3 epsilon above --max-epsilon, 130 Ctrl-C,
143 SIGTERM (no output file is left half-written), 1 unexpected.
""" + completion_line("pate-analyze") + "\n"

# How long --scheduler waits to connect.
SCHEDULER_TIMEOUT = "10s"
# --ss-history's queries between rows
SS_EVERY = 100
# The files a run writes (outputs.run_files), each an option.
OUTPUT_FILES = ("output", "per_query", "ss_history", "write_decisions", "write_rdp")


def _output_specs(option) -> list:
    return [
        option("-f", "--format", "fmt", type=click.Choice(list(FORMATS)), default="table",
               metavar="FMT", help="Summary on stdout: table (default), json, csv, markdown."),
        option("-o", "--output", type=click.Path(dir_okay=False),
               help="Write the summary to this file (atomically; - is stdout)."),
        option("--per-query", type=click.Path(dir_okay=False),
               help="Write the per-query table (.csv, .jsonl/.json, .parquet)."),
        option("--write-decisions", type=click.Path(dir_okay=False),
               help="Write the decisions and labels (.csv/.jsonl/.npz)."),
        option("--write-rdp", type=click.Path(dir_okay=False),
               help="Write the total RDP curve (CSV order,rdp) for other accountants."),
        option("--progress/--no-progress", default=None,
               help="Progress on stderr [default: on a terminal after 2 s, not in CI]."),
        workers_option(option),
        option("--scheduler", metavar="ADDRESS", type=SchedulerAddress(),
               help="Count chunks on a Dask cluster (tcp://host:8786); same result."),
    ]


def _smooth_specs(option) -> list:
    return [
        option("--smooth-sensitivity", "smooth_sensitivity", is_flag=True,
               help="Add the sanitised data-dependent epsilon (GNSS)."),
        option("--ss-history", type=click.Path(dir_okay=False),
               help="Smooth-sensitivity history: .csv, .json, .jsonl or .parquet."),
        option("--ss-every", type=click.IntRange(min=1), metavar="N",
               help="Queries between --ss-history rows [default: 100]."),
    ]


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", required=False, metavar="[VOTES]")
@group("Input", analyze_input_specs,
       "pate-analyze votes.csv --index-col 0 -n 640 --labels y_640.npy")
@group("Mechanism", mechanism_specs,
       "pate-analyze votes.npy -T 200 --sigma-threshold 150 --sigma 40")
@group("Accounting", analyze_accounting_specs,
       "pate-analyze v.npy -m gnmax --sigma 40 --accounting expected")
@group("Budget & CI", budget_specs,
       "pate-analyze v.npy --max-epsilon 3; [ $? -eq 3 ] && echo over")
@group("Outputs", _output_specs,
       "pate-analyze votes.npy --per-query q.csv -o summary.json -f json")
@group("Individualized PATE", show_parameters_specs,
       "pate-analyze v.npy --individualized upsampling --groups g.csv")
@group("Smooth sensitivity", _smooth_specs,
       "pate-analyze v.npy --accounting expected --smooth-sensitivity")
@debug_option
@version_option
def analyze(votes, **options):
    """Privacy cost of PATE labels from VOTES: .npy .npz .csv .tsv, sparse, shards, - (stdin).
    """
    from ..analysis import api  # here, not at the top: -h imports no numerics (fast start)
    from ..outputs.run_files import check_run_outputs, run_files
    from ..outputs.writing import write_outputs
    # the command's own options; the others are analyze()'s
    files = {key: options.pop(key) for key in OUTPUT_FILES}
    fmt, show_parameters, max_epsilon, ss_every, progress, scheduler, _ = (
        options.pop(key) for key in ("fmt", "show_parameters", "max_epsilon", "ss_every",
                                     "progress", "scheduler", "debug"))
    if ss_every is not None and files["ss_history"] is None:
        raise OptionError("--ss-every applies to --ss-history FILE (the queries between its "
                          "rows)")
    check_run_outputs(votes, options, **files)  # before any work
    if show_parameters:
        _show_parameters(votes, fmt, **options)
        return
    # totals only; a per-query table or decisions are written by a second pass, a chunk
    # at a time (bounded memory)
    mode = ("stream" if files["per_query"] is not None or files["write_decisions"] is not None
            else False)
    cluster = contextlib.nullcontext()
    if scheduler is not None:  # worker processes and Dask: only for a cluster
        from ..sweep.executors import scheduler_pool
        cluster = scheduler_pool(scheduler, timeout=SCHEDULER_TIMEOUT)
    with reported_warnings():
        with query_progress(progress, label="pate-analyze") as report, cluster as executor:
            # --ss-history without --smooth-sensitivity: refused by the option rules
            result = api.analyze(votes, **options, progress=report, per_query=mode,
                                 ss_every=(ss_every or SS_EVERY) if files["ss_history"]
                                 else None, executor=executor)
        # rendered after the table is written: a streamed run's smooth-sensitivity
        # release is formed by the table's pass (the votes read twice, not three times)
        summary = functools.cache(lambda: render(result.to_dict(), fmt))
        write_outputs(run_files(result, summary_text=summary, **files))
        text = summary()
    if files["output"] is None:
        click.echo(text, nl=False)
    warn_table_output(files["output"], fmt)
    # a data-independent run that composes only its answers: the bound for any run
    from ..analysis.added_figures import published_epsilon
    if (max_epsilon is not None and result.accounting == "data-independent"
            and result.groups is not None and result.epsilon_data_independent_worst is None
            and result.mechanism.selects):  # vanishing with a selection step: no bound
        raise OverBudget(NO_BOUND_TO_GATE)
    published = published_epsilon(result)
    any_run = "" if published == result.epsilon else " for any run"
    if result.tuning is not None:  # the search's figure
        check_max_epsilon(result.tuning.epsilon_tuned_data_independent if any_run else
                          result.tuning.epsilon_tuned, max_epsilon,
                          what="epsilon with tuning" + any_run)
    else:
        check_max_epsilon(published, max_epsilon, what="epsilon" + any_run)


def _show_parameters(votes, fmt, **options) -> None:
    """``--show-parameters``: each group's derived parameters (math:individualized), then exit."""
    from ..analysis import api
    from ..analysis.run_spec import RunSpec, check_options
    if options["individualized"] is None:
        raise click.UsageError("--groups and --show-parameters need --individualized")
    spec = RunSpec.of(**options)
    check_options(spec)
    plan = api.individualized_plan(spec, api.read_spec_votes(votes, spec, spec.queries))
    click.echo(parameters_text(plan.parameters, fmt), nl=False)


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(analyze, args, prog_name="pate-analyze"))
