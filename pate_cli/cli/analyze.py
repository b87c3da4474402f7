"""``pate-analyze``: what a PATE run over saved votes costs in privacy."""

from __future__ import annotations

import contextlib

import click

from ..outputs.summary import FORMATS, parameters_text, render
from ..rounding import ceil_text
from .choices import MECHANISMS, Q_BOUNDS, VARIANTS
from .errors import OverBudget, reported_warnings, run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    SchedulerAddress,
    accounting_specs,
    completion_line,
    debug_option,
    group,
    input_specs,
    sampling_specs,
    screening_spec,
    tuning_spec,
    version_option,
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


class _SvtCutoff(click.ParamType):
    """``--svt-cutoff``: a positive integer, or ``auto``."""

    name = "INTEGER|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, int) or (isinstance(value, str) and value.lower() == "auto"):
            return value if isinstance(value, int) else "auto"
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = 0
        if number < 1 or str(value).strip() != str(number):
            self.fail(f"{value!r} is not a positive integer or 'auto'.", param, ctx)
        return number


SVT_CUTOFF = _SvtCutoff()


def _mechanism_specs(option) -> list:
    return [
        option("-m", "--mechanism", type=click.Choice(list(MECHANISMS), case_sensitive=False),
               default="confident", metavar="NAME",
               help="lnmax, gnmax, confident (default), interactive, svt, exponential, "
                    "confident-exponential."),
        option("--sigma", type=POSITIVE, help="Answer Gaussian std sigma2 [default: 0.16 M]."),
        option("-T", "--threshold", type=float, help="Selection threshold T [default: 0.8 M]."),
        option("--sigma-threshold", type=POSITIVE,
               help="Selection Gaussian std sigma1 [default: 0.6 M]."),
        option("--laplace-scale", type=POSITIVE,
               help="LNMax Laplace scale lambda [default: 0.08 M]."),
        option("--eta", type=POSITIVE,
               help="Exponential: eta, eps0 = 2 eta [default: sqrt(2) / (0.16 M)]."),
        option("--student", type=click.Path(dir_okay=False),
               help="Interactive: student probabilities (.npy/.csv/.npz 'student')."),
        option("--confidence", type=click.FloatRange(0, 1), default=0.9, show_default=True,
               metavar="GAMMA", help="Interactive: the student's confidence."),
        option("--svt-scale", type=POSITIVE,
               help="SVT: Laplace scale [default: 0.01 M, unless --target-epsilon]."),
        option("--svt-cutoff", type=SVT_CUTOFF, default="100", show_default=True,
               metavar="C", help="SVT: unstable queries before halting, or auto."),
        option("--svt-threshold", type=float,
               help="SVT: threshold w [default: smallest with delta2 <= delta/2]."),
        option("--target-epsilon", type=POSITIVE,
               help="SVT: solve for the scale that gives this epsilon."),
        screening_spec(option),
        *sampling_specs(option),
    ]



def _input_specs(option) -> list:
    return [*input_specs(option),
            option("--query-indices", type=click.Path(dir_okay=False),
                   help="Analyse only these rows, in this order (.npy, or one per line)."),
            option("--rounds", type=click.Path(dir_okay=False),
                   help="Rounds composed into one total (CSV or JSON list)."),
            option("--multilabel", metavar="VARIANT",
                   help="Votes (queries, labels, 2) per label: binary, tau:TAU, powerset.")]


def _accounting_specs(option) -> list:
    return [*accounting_specs(option),
            option("--add-rdp", type=click.Path(dir_okay=False),
                   help="Add an RDP curve: CSV order,rdp, or a DpEvent .json."),
            tuning_spec(option),
            option("--q-bound", type=click.Choice(list(Q_BOUNDS)), default="union",
                   show_default=True, help="Union (Prop. 7) or integral bound on q.")]


def _budget_specs(option) -> list:
    return [
        option("--budget", type=POSITIVE,
               help="Halt before the query that could take epsilon above this."),
        option("--halt-at", type=click.Choice(["query", "output"], case_sensitive=False),
               default="query", metavar="UNIT",
               help="Halt before a query (default) or the output that could exceed it."),
        option("--max-epsilon", type=POSITIVE,
               help="Exit with status 3 if the final epsilon exceeds this."),
        option("--decisions", "decisions", type=click.Path(dir_okay=False),
               help="Account this run's decisions instead of drawing noise."),
    ]


def _output_specs(option) -> list:
    return [
        option("-f", "--format", "fmt", type=click.Choice(list(FORMATS)), default="table",
               metavar="FMT", help="Summary on stdout: table (default), json, csv, markdown."),
        option("-o", "--output", type=click.Path(dir_okay=False),
               help="Write the summary to this file (atomically) instead of stdout."),
        option("--per-query", type=click.Path(dir_okay=False),
               help="Write the per-query table (.csv, .jsonl/.json, .parquet)."),
        option("--write-decisions", type=click.Path(dir_okay=False),
               help="Write the decisions and labels (.csv/.jsonl/.npz)."),
        option("--write-rdp", type=click.Path(dir_okay=False),
               help="Write the total RDP curve (CSV order,rdp) for other accountants."),
        option("--progress/--no-progress", default=None,
               help="Progress on stderr [default: on a terminal after 2 s, not in CI]."),
        option("-w", "--workers", type=click.IntRange(min=1), metavar="N",
               help="Threads counting chunks [default: the cores]; same result."),
        option("--scheduler", metavar="ADDRESS", type=SchedulerAddress(),
               help="Count chunks on a Dask cluster (tcp://host:8786); same result."),
    ]


def _individualized_specs(option) -> list:
    return [
        option("--individualized", type=click.Choice(list(VARIANTS)), metavar="VARIANT",
               help="upsampling, weighting or vanishing (per-group budgets, --groups)."),
        option("--groups", type=click.Path(dir_okay=False),
               help="CSV group,budget[,upsampling|weight|participation][,share]."),
        option("--teacher-groups", type=click.Path(dir_okay=False),
               help="CSV teacher,group: each teacher's privacy group."),
        option("--precision", type=click.IntRange(min=0, max=9), default=2, show_default=True,
               metavar="P",
               help="Upsampling: round budget ratios to 10^-p."),
        option("--weights", "weights", type=click.Choice(["budget", "group-size"]),
               default="budget", metavar="RULE",
               help="Weighting: budget (App. C; default) or group-size (Alg. 2)."),
        option("--power", type=POSITIVE, default=2.0, show_default=True,
               help="Vanishing: participation (eps_g/eps_max)^power."),
        option("--show-parameters", is_flag=True,
               help="Print each group's derived parameters and exit."),
    ]


def _smooth_specs(option) -> list:
    return [
        option("--smooth-sensitivity", "smooth_sensitivity", is_flag=True,
               help="Add the sanitised data-dependent epsilon (GNSS)."),
        option("--ss-history", type=click.Path(dir_okay=False),
               help="Write before/after/std every --ss-every queries (.csv, .jsonl)."),
        option("--ss-every", type=click.IntRange(min=1), default=100, show_default=True,
               metavar="N",
               help="Queries between --ss-history rows."),
    ]


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", required=False, metavar="[VOTES]")
@group("Input", _input_specs,
       "pate-analyze votes.csv --index-col 0 -n 640 --labels y_640.npy")
@group("Mechanism", _mechanism_specs,
       "pate-analyze votes.npy -T 200 --sigma-threshold 150 --sigma 40")
@group("Accounting", _accounting_specs,
       "pate-analyze v.npy -m gnmax --sigma 40 --accounting expected")
@group("Budget & CI", _budget_specs,
       "pate-analyze v.npy --max-epsilon 3; [ $? -eq 3 ] && echo over")
@group("Outputs", _output_specs,
       "pate-analyze votes.npy --per-query q.csv -o summary.json -f json")
@group("Individualized PATE", _individualized_specs,
       "pate-analyze v.npy --individualized upsampling --groups g.csv")
@group("Smooth sensitivity", _smooth_specs,
       "pate-analyze v.npy --accounting expected --smooth-sensitivity")
@debug_option
@version_option
def analyze(votes, fmt, output, per_query, debug, show_parameters, max_epsilon, ss_history,
            ss_every, progress, write_decisions=None, write_rdp=None, scheduler=None,
            **options):
    """Privacy cost of PATE labels from VOTES: .npy .npz .csv .tsv, sparse, shards, - (stdin).
    """
    from ..analysis import api  # here, not at the top: -h imports no numerics (fast start)
    from ..outputs.run_files import check_run_outputs, run_files
    from ..outputs.writing import write_outputs
    outputs = dict(output=output, per_query=per_query, ss_history=ss_history,
                   write_decisions=write_decisions, write_rdp=write_rdp)
    check_run_outputs(votes, options, **outputs)  # before any work
    if show_parameters:
        _show_parameters(votes, fmt, **options)
        return
    # totals only; a per-query table or decisions are written by a second pass, a chunk
    # at a time (bounded memory)
    mode = "stream" if per_query is not None or write_decisions is not None else False
    cluster = contextlib.nullcontext()
    if scheduler is not None:  # worker processes and Dask: only for a cluster
        from ..sweep.executors import scheduler_pool
        cluster = scheduler_pool(scheduler, timeout=SCHEDULER_TIMEOUT)
    with reported_warnings(), query_progress(progress, label="pate-analyze") as report, \
            cluster as executor:
        # --ss-history without --smooth-sensitivity: refused by the option rules
        result = api.analyze(votes, **options, ss_every=ss_every if ss_history else None,
                             progress=report, per_query=mode, executor=executor)
    text = render(result.to_dict(), fmt)
    write_outputs(run_files(result, summary_text=text, **outputs))
    if output is None:
        click.echo(text, nl=False)
    if max_epsilon is not None and result.tuning is not None:  # the search's figure
        if result.tuning.epsilon_tuned > max_epsilon:
            raise OverBudget(f"epsilon with tuning {ceil_text(result.tuning.epsilon_tuned)} "
                             f"exceeds --max-epsilon {max_epsilon:g}")
    elif max_epsilon is not None and result.epsilon > max_epsilon:
        raise OverBudget(f"epsilon {ceil_text(result.epsilon)} exceeds --max-epsilon "
                         f"{max_epsilon:g}")


def _show_parameters(votes, fmt, **options) -> None:
    """``--show-parameters``: each group's derived parameters (MATH.md s.9), then exit."""
    from ..analysis import api
    from ..analysis.run_spec import RunSpec, check_options
    if options["individualized"] is None:
        raise click.UsageError("--groups and --show-parameters need --individualized")
    spec = RunSpec.of(**options)
    check_options(spec)
    vote_set = api.read_votes(votes, predictions=spec.predictions, classes=spec.classes,
                              labels=spec.labels, teachers=spec.teachers,
                              index_col=spec.index_col, queries=spec.queries)
    plan = api.individualized_plan(spec.individualized, vote_set, groups=spec.groups,
                                   teacher_groups=spec.teacher_groups,
                                   precision=spec.precision, weights=spec.weights,
                                   power=spec.power)
    click.echo(parameters_text(plan.parameters, fmt), nl=False)


def main(args=None) -> int:
    """Console-script entry point."""
    raise SystemExit(run_command(analyze, args, prog_name="pate-analyze"))
