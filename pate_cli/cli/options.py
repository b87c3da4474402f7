"""Click options shared by the commands, defined once and stacked as decorators."""

from __future__ import annotations

import math

import click
from click_option_group import optgroup

from .._version import __version__
from .choices import CONVERSIONS, ETA_TEXT, MECHANISMS, Q_BOUNDS, SCREENINGS, VARIANTS
from .choices import ORDERS_AUTO as AUTO


class PositiveFloat(click.ParamType):
    """A finite number > 0."""

    name = "number>0"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(value)
            except ValueError:
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"must be a finite number, got {value}", param, ctx)
        if not number > 0:
            self.fail(f"must be positive, got {value}", param, ctx)
        return number


class Probability(click.ParamType):
    """A number strictly between 0 and 1 (delta)."""

    name = "(0,1)"

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number", param, ctx)
        if not 0.0 < number < 1.0:
            self.fail(f"must lie in (0, 1), got {value}", param, ctx)
        return number


class OrderGrid(click.ParamType):
    """``--orders``: a comma list or ``start:stop:step``."""

    name = "orders"

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        if value.strip().lower() == AUTO:  # pate-analyze's: extend while at an edge
            if ctx is not None and ctx.command.name not in ("analyze", "report"):
                self.fail(f"{AUTO} applies to pate-analyze and pate-report only", param, ctx)
            return AUTO
        from ..orders import parse_orders  # numpy: not for -h

        try:
            return parse_orders(value)
        except ValueError as error:
            self.fail(str(error).removeprefix("--orders: ").replace("--orders ", ""), param,
                      ctx)


class Order(click.ParamType):
    """``--order``: one Rényi order > 1."""

    name = "order"

    def convert(self, value, param, ctx):
        from ..orders import validate_orders  # numpy: not for -h

        try:
            return float(validate_orders([float(value)])[0])
        except ValueError as error:
            self.fail(str(error), param, ctx)


class TuningLaw(click.ParamType):
    """``--tuning``: ``poisson:MU``, ``geometric:MU``, ``logarithmic:MU``, ``negbin:MU,ETA``
    (math:tuning), as a ``TuningDistribution``."""

    name = "dist"

    def convert(self, value, param, ctx):
        from ..accounting.tuning import TuningDistribution  # numpy: not for -h
        from ..accounting.tuning import tuning_distribution as parsed_tuning

        if isinstance(value, TuningDistribution):
            return value
        try:
            return parsed_tuning(value)
        except ValueError as error:
            self.fail(str(error).replace("--tuning ", ""), param, ctx)


def tuning_spec(option=click.option):
    """``--tuning DIST``: a random search's cost (:class:`TuningLaw`; a bad law is named)."""
    return option("--tuning", type=TuningLaw(), metavar="DIST",
                  help="Add a random search's cost (poisson:MU, geometric:MU, ...).")


POSITIVE = PositiveFloat()


def sampling_specs(option=click.option) -> list:
    """``--sampling``, ``--vote-change``, ``--sampling-steps`` (math:sampling), checked by the
    API, whose refusals name the reason."""
    return [
        option("--sampling", metavar="SCHEME",
               help="Sampled voters: poisson:RATE or without-replacement:m/N."),
        option("--vote-change", type=click.Choice(["move", "add"]), default=None,
               metavar="HOW", help="Poisson: a unit moves (default) or adds one vote."),
        option("--sampling-steps", type=click.Choice(["shared", "independent"]), default=None,
               metavar="HOW", help="Confident: one subset feeds both steps (shared; default)."),
    ]


def input_specs(option=click.option) -> list:
    """The input files besides VOTES (``option``: click's or a group's)."""
    return [
        option("--predictions", type=click.Path(dir_okay=False),
               help="Teacher predictions (queries x teachers, -1: none), not votes."),
        option("--classes", type=click.IntRange(min=2), metavar="K",
               help="Classes (--predictions: default max id + 1; long tables)."),
        columns_option(option),
        option("--predictions-layout", type=click.Choice(["queries-first", "teachers-first"]),
               default="queries-first", metavar="WHICH",
               help="--predictions stored queries-first (default) or teachers-first."),
        option("--labels", type=click.Path(dir_okay=False),
               help="True labels (.npy/.csv): one per query or per analysed one (-n)."),
        option("--teachers", type=POSITIVE,
               help="Teachers M if rows sum below it (partial votes; none above M)."),
        option("--queries", "-n", type=click.IntRange(min=1), metavar="N",
               help="Analyse the first N queries (whole outputs)."),
        index_col_option(option),
    ]


class ColumnNames(click.ParamType):
    """``--columns``: a long table's column names by role, ``query=NAME,class=NAME,
    count=NAME[,output=NAME]`` (a ``ColumnMap``; roles not named keep their own names)."""

    name = "map"

    def convert(self, value, param, ctx):
        from ..inputs.long_table import column_map  # numpy: not for -h

        try:
            return column_map(value)
        except ValueError as error:
            self.fail(str(error).replace("--columns ", ""), param, ctx)


def columns_option(option=click.option):
    """``--columns MAP``: a long table's column names (with ``--classes K``)."""
    return option("--columns", type=ColumnNames(), metavar="MAP",
                  help="Long table's columns, e.g. query=position,class=token,count=n.")


def long_table_specs(option=click.option) -> list:
    """``--classes K`` and ``--columns MAP`` where VOTES are the only votes read."""
    return [option("--classes", type=click.IntRange(min=2), metavar="K",
                   help="A long table's vocabulary size (query,class,count rows)."),
            columns_option(option)]


def workers_option(option=click.option):
    """``-w/--workers N``: threads of one analysis; no number changes."""
    return option("-w", "--workers", type=click.IntRange(min=1), metavar="N",
                  help="Threads counting chunks [default: the cores]; same result.")


def index_col_option(option=click.option):
    """``--index-col N``: drop column N (a pandas index) of CSV/TSV votes and of a
    multi-column CSV/TSV ``--labels``."""
    return option("--index-col", type=click.IntRange(min=0), metavar="N",
                  help="Drop column N of CSV/TSV votes and labels (an index).")


def accounting_specs(option=click.option, *, auto: bool = False) -> list:
    """How costs are charged and converted (``option``: click's or a group's; ``auto``: offer
    ``--orders auto``)."""
    return [
        option("--accounting", type=click.Choice(["replay", "expected", "data-independent"]),
               default="replay", metavar="MODE",
               help="replay (seeded run; default), expected (2018), data-independent."),
        option("--delta", type=Probability(), default=1e-5, show_default=True,
               help="Target delta."),
        option("--orders", type=OrderGrid(),
               help=f"Rényi orders: a,b,c, start:stop:step{', auto' if auto else ''} "
                    "[default: grid of 298]."),
        option("--order", type=Order(), help="Use this single order (instead of --orders)."),
        option("--conversion", type=click.Choice(list(CONVERSIONS)), default="classic",
               metavar="NAME",
               help="RDP to (eps, delta): classic (Mironov; default), improved (CKS)."),
        option("--seed", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
               help="Seed of the replay's noise."),
    ]


def stack(decorators):
    """Apply ``decorators`` so that they read top to bottom as written."""
    def decorate(command):
        for decorator in reversed(decorators):
            command = decorator(command)
        return command
    return decorate


def group(title: str, specs, example: str | None = None) -> callable:
    """An option group titled ``title`` in ``-h``: ``specs(optgroup.option)`` its options;
    ``example`` (a command line) is printed on the title's line."""
    return stack([optgroup.group(title, help=example), *specs(optgroup.option)])


def version_option(command):
    """``--version``: pate_cli's version."""
    return click.version_option(__version__, "--version", message="%(prog)s %(version)s",
                                help="Print the version and exit.")(command)


def completion_line(prog: str) -> str:
    """One epilog line on click's shell completion for ``prog``."""
    variable = "_" + prog.upper().replace("-", "_") + "_COMPLETE"
    return f'Completion: eval "$({variable}=bash_source {prog})" (or zsh_source)'


def debug_option(command):
    return click.option("--debug", is_flag=True, hidden=False,
                        help="Show tracebacks of unexpected errors.")(command)


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class SchedulerAddress(click.ParamType):
    """A Dask scheduler address, checked for its form before any connection."""

    name = "address"

    def convert(self, value, param, ctx):
        from ..sweep.executors import scheduler_address  # only when the option is given

        try:
            return scheduler_address(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


def screening_spec(option):
    """``--screening``: the threshold step's data-independent curve (math:screening)."""
    return option("--screening", type=click.Choice(list(SCREENINGS)), default="exact",
                  metavar="CURVE",
                  help="Threshold step: exact (one bit; default) or gaussian (papers').")


class IntegerOrAuto(click.ParamType):
    """A positive integer, or ``auto`` (``--svt-cutoff``, pate-audit's ``--margin``)."""

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


INTEGER_OR_AUTO = IntegerOrAuto()


def table_or_json_specs(option) -> list:
    """``-f table|json`` and ``-o FILE`` (pate-calibrate, pate-audit)."""
    return [
        option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table",
               show_default=True, help="Output format."),
        option("-o", "--output", type=click.Path(dir_okay=False),
               help="Write to this file (atomically; - is stdout)."),
    ]


def noise_specs(option) -> list:
    """The noise parameters of the aggregators (pate-analyze, pate-report, pate-audit)."""
    return [
        option("--sigma", type=POSITIVE, help="Answer Gaussian std sigma2 [default: 0.16 M]."),
        option("-T", "--threshold", type=float, help="Selection threshold T [default: 0.8 M]."),
        option("--sigma-threshold", type=POSITIVE,
               help="Selection Gaussian std sigma1 [default: 0.6 M]."),
        option("--laplace-scale", type=POSITIVE,
               help="LNMax Laplace scale lambda [default: 0.08 M]."),
        option("--eta", type=POSITIVE,
               help=f"{ETA_TEXT}; eps0 = 2 eta [default: sqrt(2)/(0.16 M)]."),
    ]


def mechanism_specs(option) -> list:
    """pate-analyze's (and pate-report's) mechanism and its parameters."""
    return [
        option("-m", "--mechanism", type=click.Choice(list(MECHANISMS), case_sensitive=False),
               metavar="NAME",
               help="lnmax, gnmax, confident (default), interactive, svt, exponential, "
                    "confident-exponential."),
        *noise_specs(option),
        option("--student", type=click.Path(dir_okay=False),
               help="Interactive: student probabilities (.npy/.csv/.npz 'student')."),
        option("--confidence", type=click.FloatRange(0, 1), metavar="GAMMA",
               help="Interactive: the student's confidence [default: 0.9]."),
        option("--svt-scale", type=POSITIVE,
               help="SVT: Laplace scale [default: 0.01 M, unless --target-epsilon]."),
        option("--svt-cutoff", type=INTEGER_OR_AUTO, metavar="C",
               help="SVT: unstable queries before halting, or auto [default: 100]."),
        option("--svt-threshold", type=float,
               help="SVT: threshold w [default: smallest with delta2 <= delta/2]."),
        option("--target-epsilon", type=POSITIVE,
               help="SVT: solve for the scale that gives this epsilon."),
        screening_spec(option),
        *sampling_specs(option),
    ]


def analyze_input_specs(option) -> list:
    """``input_specs`` and the inputs of pate-analyze and pate-report alone."""
    return [*input_specs(option),
            option("--outputs", type=click.Path(dir_okay=False),
                   help="Each row's output (generated sequence) id, .npy or .csv."),
            option("--query-indices", type=click.Path(dir_okay=False),
                   help="Analyse only these rows, in this order (.npy, or one per line)."),
            option("--rounds", type=click.Path(dir_okay=False),
                   help="Rounds composed into one total (CSV or JSON list)."),
            option("--multilabel", metavar="VARIANT",
                   help="Votes (queries, labels, 2) per label: binary, tau:TAU, powerset.")]


def analyze_accounting_specs(option) -> list:
    """``accounting_specs`` with pate-analyze's (and pate-report's) additions."""
    return [*accounting_specs(option, auto=True),
            option("--add-rdp", type=click.Path(dir_okay=False),
                   help="Add an RDP curve: CSV order,rdp, or a DpEvent .json."),
            tuning_spec(option),
            option("--q-bound", type=click.Choice(list(Q_BOUNDS)), default="union",
                   show_default=True, help="Union (Prop. 7) or integral bound on q.")]


def budget_specs(option) -> list:
    """The budget, its halt, the CI gate and accounted decisions."""
    return [
        option("--budget", type=POSITIVE,
               help="Halt before the query that could take epsilon above this."),
        option("--halt-at", type=click.Choice(["query", "output"], case_sensitive=False),
               default="query", metavar="UNIT",
               help="Halt before a query (default) or the output that could exceed it."),
        option("--max-epsilon", type=POSITIVE,
               help="Exit 3 if the headline epsilon (replay: data-dependent) is over."),
        option("--decisions", "decisions", type=click.Path(dir_okay=False),
               help="Account this run's decisions instead of drawing noise."),
    ]


def individualized_specs(option) -> list:
    """Individualized PATE: per-group budgets (math:individualized)."""
    return [
        option("--individualized", type=click.Choice(list(VARIANTS)), metavar="VARIANT",
               help="upsampling, weighting or vanishing (per-group budgets, --groups)."),
        option("--groups", type=click.Path(dir_okay=False),
               help="CSV group,budget[,upsampling|weight|participation][,share]."),
        option("--teacher-groups", type=click.Path(dir_okay=False),
               help="CSV teacher,group: each teacher's privacy group."),
        option("--precision", type=click.IntRange(min=0, max=9), metavar="P",
               help="Upsampling: round budget ratios to 10^-p [default: 2]."),
        option("--weights", "weights", type=click.Choice(["budget", "group-size"]),
               metavar="RULE",
               help="Weighting: budget (App. C; default) or group-size (Alg. 2)."),
        option("--power", type=POSITIVE,
               help="Vanishing: participation (eps_g/eps_max)^power [default: 2]."),
    ]


def show_parameters_specs(option) -> list:
    """pate-analyze's individualized options, with ``--show-parameters``."""
    return [*individualized_specs(option),
            option("--show-parameters", is_flag=True,
                   help="Print each group's derived parameters and exit.")]
