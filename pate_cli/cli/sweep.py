"""``pate-sweep``: the analysis over a grid of parameters, on all cores or a Dask cluster.
The click declaration only: the run (``cli/sweep_run.py``) is imported when a sweep runs, so
``-h`` imports no numerics."""

from __future__ import annotations

import sys

import click

from .choices import ETA_TEXT, MAX_POINTS, MECHANISMS, TABLE_FORMATS
from .errors import run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    SchedulerAddress,
    accounting_specs,
    completion_line,
    debug_option,
    group,
    index_col_option,
    long_table_specs,
    sampling_specs,
    screening_spec,
    tuning_spec,
    version_option,
)

EPILOG = """\b
Examples:
  pate-sweep votes.npy -m gnmax --sigma 20:200:10 --labels y.npy
  pate-sweep votes.npy -m confident --sigma 40,60 -T 150:250:50 --sigma-threshold 100,150 \\
      --repeats 5 --labels y.npy --out sweep.csv
  pate-sweep votes.npy -m lnmax -m gnmax --laplace-scale 10:50:10 --sigma 20:100:20 \\
      --labels y.npy --pareto
  pate-sweep votes.npy --sigma 20:200:10 -T 100:250:50 --labels y.npy --best 2.0
  pate-sweep votes.npy --sigma 20:200:10 --accounting data-independent --tuning poisson:20
  pate-sweep a.npy b.npy --labels a_y.npy --labels b_y.npy --sigma 40 --queries 500:2000:500
  pate-sweep votes.npy --sigma 10:300:1 --out big.parquet --scheduler tcp://host:8786
  pate-sweep votes.npy --sigma 10:300:1 --out big.csv --resume   # finish an interrupted run
  pate-sweep tokens.csv --classes 32000 --columns query=position,class=token,count=n \\
      -m gnmax --sigma 20,40 --accounting data-independent

\b
Grids: comma lists and start:stop:step (stop included when it lands on the grid), e.g.
  --sigma 20,40,80   --sigma 20:200:10   --threshold 100:300:50,400
Rows come out in grid order (files, then mechanisms, then sigma, threshold,
sigma_threshold, laplace_scale, svt_scale, svt_cutoff, eta, queries; the last varies fastest;
confident-exponential nests eta, threshold, sigma_threshold),
identical for every --workers value and for --scheduler. A parameter a mechanism does not
use is left empty in its rows; one not given takes pate-analyze's default (fractions of M);
one no mechanism of the grid uses is refused (exit 2).

\b
With --out, each row is also appended to OUT.partial (JSON lines) as it finishes, so a
run that is killed or cannot write OUT loses nothing: --resume reads OUT.partial too.
OUT is written atomically in grid order at the end and OUT.partial then removed; a run
that stops early (a failing point, Ctrl-C, SIGTERM) leaves OUT as it was.

\b
Exit status: 0 ok, 2 bad input or options (or --out cannot be written: the rows then go
to stdout), 3 no row within --best, 130 interrupted by Ctrl-C and 143 by SIGTERM (the
finished rows are kept in OUT.partial for --resume), 1 unexpected.
""" + completion_line("pate-sweep") + "\n"


class Grid(click.ParamType):
    """A grid option: comma list and/or start:stop:step ranges."""

    name = "grid"

    def __init__(self, integer: bool = False, minimum: int | None = None):
        self.integer = integer
        self.minimum = minimum

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from ..orders import parse_grid  # numpy: not for -h

        try:
            values = parse_grid(value, integer=self.integer)
        except ValueError as error:
            self.fail(str(error), param, ctx)
        low = [number for number in values if self.minimum is not None
               and number < self.minimum]
        if low:  # before any work, as pate-analyze's range check
            self.fail(f"{low[0]} is below {self.minimum}", param, ctx)
        return values


def _grid_option(name: str, *flags, help: str, integer: bool = False,  # noqa: A002
                 minimum: int | None = None, option=click.option):
    return option(*flags, name, type=Grid(integer=integer, minimum=minimum), help=help)


def _grid_specs(option) -> list:
    return [
        option("-m", "--mechanism", "mechanisms",
               type=click.Choice(list(MECHANISMS), case_sensitive=False),
               multiple=True, help="Aggregator (repeatable) [default: confident]."),
        _grid_option("sigma", "--sigma", option=option,
                     help="Answer-step Gaussian stds sigma2 [default: 0.16 M]."),
        _grid_option("threshold", "-T", "--threshold", option=option,
                     help="Selection thresholds T [default: 0.8 M]."),
        _grid_option("sigma_threshold", "--sigma-threshold", option=option,
                     help="Selection Gaussian stds sigma1 [default: 0.6 M]."),
        _grid_option("laplace_scale", "--laplace-scale", option=option,
                     help="LNMax Laplace scales lambda [default: 0.08 M]."),
        _grid_option("svt_scale", "--svt-scale", option=option,
                     help="SVT Laplace scales [default: 0.01 M]."),
        _grid_option("svt_cutoff", "--svt-cutoff", integer=True, option=option,
                     help="SVT cut-offs c [default: 100]."),
        _grid_option("eta", "--eta", option=option,
                     help=f"Exponential mechanism's {ETA_TEXT} [default: sqrt(2) / (0.16 M)]."),
        _grid_option("queries", "-n", "--queries", integer=True, minimum=1, option=option,
                     help="Numbers of queries (the first N of each file) [default: all]."),
        option("-r", "--repeats", type=click.IntRange(min=1), default=1, show_default=True,
               help="Replays per point, with seeds seed, seed+1, ...; rows give mean and std."),
    ]


def _input_specs(option) -> list:
    return [
        option("--labels", multiple=True, type=click.Path(dir_okay=False),
               help="True labels for label accuracy: once for all files, or once per file "
                    "in order; one per query, or per analysed one with a single -n."),
        option("--student", multiple=True, type=click.Path(dir_okay=False),
               help="Interactive: the student's probabilities (once, or once per file)."),
        option("--confidence", type=click.FloatRange(0, 1),
               help="Interactive: the student's confidence gamma [default: 0.9]."),
        index_col_option(option),
        *long_table_specs(option),
    ]


def _accounting_specs(option) -> list:
    return [*accounting_specs(option),
            option("--budget", type=POSITIVE,
                   help="Budget run: halt before epsilon could exceed this."),
            tuning_spec(option), screening_spec(option), *sampling_specs(option)]


def _run_specs(option) -> list:
    return [
        option("-w", "--workers", type=click.IntRange(min=1),
               help="Local worker processes [default: all cores]; 1 runs in this process."),
        option("--scheduler", metavar="ADDRESS", type=SchedulerAddress(),
               help="Run on a Dask distributed cluster (e.g. tcp://host:8786; needs "
                    "pip install 'pate_cli[dask]' and the vote files at the same paths on "
                    "the workers)."),
        option("--max-points", type=click.IntRange(min=1), default=MAX_POINTS,
               show_default=True, help="Refuse a larger grid (points of every file and "
                                       "mechanism) before any work."),
        option("--progress/--no-progress", default=None,
               help="Progress bar on stderr [default: when stderr is a terminal]."),
        option("-q", "--quiet", is_flag=True, help="No grid-size and summary lines on stderr."),
    ]


def _output_specs(option) -> list:
    return [
        option("-o", "--out", type=click.Path(dir_okay=False),
               help="Write the rows to .csv, .json/.jsonl (JSON lines) or .parquet "
                    "(atomically) instead of stdout; rows are kept in OUT.partial as they "
                    "finish until OUT is written."),
        option("-f", "--format", "fmt", type=click.Choice(list(TABLE_FORMATS)), default="csv",
               show_default=True, help="Format of the rows on stdout."),
        option("--resume", is_flag=True,
               help="Keep the rows already in --out (and OUT.partial) that match a point "
                    "on everything that made their numbers (parameters, options, input "
                    "files' sha256, version) "
                    "and compute the rest; rows of --out at the same point with other "
                    "options or inputs are replaced, rows of other points kept."),
        option("--best", type=POSITIVE, metavar="EPS",
               help="Print only the row that answers the most queries within epsilon EPS "
                    "(ties: the better label accuracy), and its pate-analyze command."),
        option("--pareto", is_flag=True,
               help="Keep only rows on the epsilon / accuracy (or answered) frontier "
                    "(under data-independent accounting, the bound for any run where a "
                    "row has one)."),
    ]


@click.command(context_settings=CONTEXT_SETTINGS, epilog=EPILOG)
@click.argument("votes", nargs=-1, required=True, metavar="VOTES...")
@group("Grid", _grid_specs)
@group("Input", _input_specs)
@group("Accounting", _accounting_specs)
@group("Run", _run_specs)
@group("Outputs and selection", _output_specs)
@debug_option
@version_option
def command(votes, **options):
    """Run pate-analyze over a grid of parameters, one row per combination and file.

    VOTES are vote files (.npy, .npz, .csv, .tsv); each is read once per worker
    (memory-mapped .npy), never copied into the tasks.
    """
    from .sweep_run import run_sweep_command  # the sweep machinery: not for -h

    run_sweep_command(votes, **options)


def main(args=None) -> None:
    """Console entry point (``pate-sweep``)."""
    sys.exit(run_command(command, args, prog_name="pate-sweep"))


if __name__ == "__main__":
    main()
