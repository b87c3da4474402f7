"""``pate-sweep``: the analysis over a grid of parameters, on all cores or a Dask cluster.

Over 400 lines: a third of it is the click declaration of some thirty options and their
help; the rest is the run (rows streamed to ``OUT.partial``, stops by Ctrl-C or SIGTERM,
an output that cannot be written) and its messages.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from concurrent.futures.process import BrokenProcessPool

import click

from ..mechanisms import MECHANISMS
from ..orders import parse_grid
from ..outputs.files import write_atomically
from ..sweep.columns import GRID_PARAMETERS, MECHANISM_PARAMETERS
from ..sweep.executors import (
    Terminated,
    dask_executor,
    local_pool,
    scheduler_address,
    sigterm_stops_the_run,
    stop,
)
from ..sweep.journal import RowJournal, journal_path, read_journal
from ..sweep.points import (
    WARNINGS_KEY,
    SweepSettings,
    grid_size,
    one_per_file,
    open_sources,
    plan_points,
    run_points,
)
from ..sweep.resume import ResumePlan, match_rows, merge_rows
from ..sweep.select import analyze_command, best_row, pareto_rows, score_column
from ..sweep.table import TABLE_FORMATS, check_destination, read_sweep_rows, table_bytes
from ..sweep.tuning import TUNING_COLUMNS, TUNING_SVT, add_tuning_columns
from .errors import EXIT_BAD_INPUT, EXIT_OVER_BUDGET, run_command
from .options import (
    CONTEXT_SETTINGS,
    POSITIVE,
    accounting_specs,
    completion_line,
    debug_option,
    group,
    tuning_spec,
    version_option,
)

EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15
MAX_POINTS = 100_000

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

\b
Grids: comma lists and start:stop:step (stop included when it lands on the grid), e.g.
  --sigma 20,40,80   --sigma 20:200:10   --threshold 100:300:50,400
Rows come out in grid order (files, then mechanisms, then sigma, threshold,
sigma_threshold, laplace_scale, svt_scale, svt_cutoff, queries; the last varies fastest),
identical for every --workers value and for --scheduler. A parameter a mechanism does not
use is left empty in its rows; one not given takes pate-analyze's default (fractions of M).

\b
With --out, each row is also appended to OUT.partial (JSON lines) as it finishes, so a
run that is killed or cannot write OUT loses nothing: --resume reads OUT.partial too.
OUT is written atomically in grid order at the end and OUT.partial then removed.

\b
Exit status: 0 ok, 2 bad input or options (or --out cannot be written: the rows then go
to stdout), 3 no row within --best, 130 interrupted by Ctrl-C and 143 by SIGTERM (the
finished rows are kept in --out), 1 unexpected.
""" + completion_line("pate-sweep") + "\n"


class Grid(click.ParamType):
    """A grid option: comma list and/or start:stop:step ranges."""

    name = "grid"

    def __init__(self, integer: bool = False):
        self.integer = integer

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return parse_grid(value, integer=self.integer)
        except ValueError as error:
            self.fail(str(error), param, ctx)


class SchedulerAddress(click.ParamType):
    """A Dask scheduler address, checked for its form before any connection."""

    name = "address"

    def convert(self, value, param, ctx):
        try:
            return scheduler_address(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


def _grid_option(name: str, *flags, help: str, integer: bool = False,  # noqa: A002
                 option=click.option):
    return option(*flags, name, type=Grid(integer=integer), help=help)


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
        _grid_option("queries", "-n", "--queries", integer=True, option=option,
                     help="Numbers of queries (the first N of each file) [default: all]."),
        option("-r", "--repeats", type=click.IntRange(min=1), default=1, show_default=True,
               help="Replays per point, with seeds seed, seed+1, ...; rows give mean and std."),
    ]


def _input_specs(option) -> list:
    return [
        option("--labels", multiple=True, type=click.Path(dir_okay=False),
               help="True labels for label accuracy: once for all files, or once per file "
                    "in order."),
        option("--student", multiple=True, type=click.Path(dir_okay=False),
               help="Interactive: the student's probabilities (once, or once per file)."),
        option("--confidence", type=click.FloatRange(0, 1), default=0.9, show_default=True,
               help="Interactive: the student's confidence gamma."),
    ]


def _accounting_specs(option) -> list:
    return [*accounting_specs(option),
            option("--budget", type=POSITIVE,
                   help="Budget run: halt before epsilon could exceed this."),
            tuning_spec(option)]


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
               help="Print only the row that answers the most queries (with --labels: the "
                    "best label accuracy) within epsilon EPS, and its pate-analyze command."),
        option("--pareto", is_flag=True,
               help="Keep only rows on the epsilon / accuracy (or answered) frontier."),
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
def command(votes, mechanisms, sigma, threshold, sigma_threshold, laplace_scale, svt_scale,
            svt_cutoff, queries, repeats, labels, student, confidence, accounting, delta,
            orders, order, conversion, seed, budget, workers, scheduler, out, fmt, resume,
            best, pareto, max_points, progress, quiet, debug, tuning=None):
    """Run pate-analyze over a grid of parameters, one row per combination and file.

    VOTES are vote files (.npy, .npz, .csv, .tsv); each is read once per worker
    (memory-mapped .npy), never copied into the tasks.
    """
    mechanisms = list(dict.fromkeys(mechanisms or ("confident",)))
    grids = {name: values for name, values in
             dict(sigma=sigma, threshold=threshold, sigma_threshold=sigma_threshold,
                  laplace_scale=laplace_scale, svt_scale=svt_scale, svt_cutoff=svt_cutoff,
                  queries=queries).items() if values is not None}
    size = grid_size(mechanisms, grids, files=len(votes))
    if size > max_points:
        raise click.UsageError(f"the grid has {size:,} points, more than --max-points "
                               f"{max_points:,} (narrow the grid or raise --max-points)")
    _check_grids_used(grids, mechanisms, quiet)
    if resume and not out:
        raise click.UsageError("--resume needs --out (the file to resume)")
    if tuning is not None and resume:
        raise click.UsageError("--tuning needs every point's RDP curve: it does not combine "
                               "with --resume (rows read back from a table have none)")
    if tuning is not None and "svt" in mechanisms:
        raise click.UsageError(TUNING_SVT)
    if out:
        check_destination(out)
    if "-" in votes:
        raise click.UsageError("pate-sweep reads vote files, not standard input "
                               "(workers open the files themselves)")
    if order is not None:
        orders = (order,)
    settings = SweepSettings(accounting=accounting, delta=delta, budget=budget,
                             repeats=repeats, seed=seed, conversion=conversion,
                             orders=None if orders is None else tuple(float(x) for x in orders),
                             confidence=confidence, rdp_curves=tuning is not None)
    if "interactive" in mechanisms and not student:
        raise click.UsageError("-m interactive needs --student")
    sources, shapes = open_sources(votes, labels, student)
    points = plan_points(sources, mechanisms, grids, settings=settings, shapes=shapes)
    sidecar = journal_path(out) if out else None
    kept = []
    if resume:
        kept = merge_rows(read_sweep_rows(out) if os.path.exists(out) else [],
                          read_journal(sidecar))
    plan = match_rows(points, kept)
    tasks = [point for point in points if point.index not in plan.reused]

    executor, workers_text, limit = _executor(workers, scheduler, len(tasks))
    if not quiet:
        files = f"{len(votes)} file{'s' if len(votes) > 1 else ''}"
        click.echo(f"pate-sweep: {len(points)} points x {repeats} repeat"
                   f"{'s' if repeats > 1 else ''} ({files}, "
                   f"{', '.join(mechanisms)}), {workers_text}", err=True)
        if resume:
            click.echo(_resume_line(out, plan, len(points), exists=os.path.exists(out),
                                    sidecar=sidecar), err=True)
    journal = None
    if out:
        if not resume and os.path.isfile(sidecar):
            click.echo(f"pate-sweep: note: starting {sidecar} afresh (the rows of an "
                       "unfinished run it held are reused only with --resume)", err=True)
        journal = RowJournal(sidecar, append=resume)
    with sigterm_stops_the_run() as sigterm:
        finished, failure = _run(tasks, executor, limit, progress, journal, sigterm)
    _report_warnings(finished.values(), len(tasks))
    rows = _in_grid_order(points, finished, plan)
    extra = ()
    if tuning is not None:  # over the whole grid, before --pareto keeps some rows
        extra = TUNING_COLUMNS  # empty figures when the run stopped early
        if failure is None:
            rows = add_tuning_columns(rows, tuning, orders=settings.orders, delta=delta,
                                      conversion=conversion)
    if pareto:
        rows = pareto_rows(rows)
    if out:
        _write_out(out, rows, journal, fmt=fmt, failure=failure, extra=extra)
    if failure is not None:
        total = len(points)
        where = f" in {out}" if out else " on stdout"
        if not out:
            sys.stdout.write(table_bytes(rows, fmt=fmt, extra=extra).decode())
        if failure in _STOPPED_BY:
            click.echo(f"pate-sweep: {failure}: kept {len(rows)} of {total} rows{where}"
                       + (" (rerun with --resume to finish)" if out else ""), err=True)
            raise click.exceptions.Exit(_STOPPED_BY[failure])
        click.echo(f"pate-sweep: stopped: kept {len(rows)} of {total} rows{where}"
                   + (" (rerun with --resume to finish)" if out else ""), err=True)
        if isinstance(failure, BrokenProcessPool):
            raise click.ClickException("a worker process died (killed, or out of memory); "
                                       "the rows it had not finished are not in the table")
        raise failure
    if best is not None:
        _print_best(rows, best, fmt,
                    dict(zip(votes, one_per_file(labels, votes, "--labels"), strict=True)),
                    dict(zip(votes, one_per_file(student, votes, "--student"), strict=True)),
                    orders, conversion, extra=extra)
        return
    if tuning is not None and rows and not quiet:
        _tuning_lines(rows)
    if out:
        if not quiet:
            click.echo(f"pate-sweep: wrote {len(rows)} rows to {out}", err=True)
        return
    sys.stdout.write(table_bytes(rows, fmt=fmt, extra=extra).decode())


# How a run was stopped by a signal -> exit status.
_STOPPED_BY = {"interrupted": EXIT_INTERRUPTED, "terminated": EXIT_TERMINATED}


def _run(tasks, executor, limit, progress, journal, sigterm) -> tuple[dict, object]:
    """Run the tasks; ``({point index: row}, None | "interrupted" | "terminated" | the
    exception)``. Each row goes to ``journal`` (when there is one) as it arrives.

    Ctrl-C, SIGTERM and failing tasks stop the run but keep the rows finished so far; the
    tasks still running are ended (their rows would be dropped).
    """
    finished: dict[int, dict] = {}
    terminal = sys.stderr.isatty()
    show = terminal if progress is None else progress
    failure = None
    try:
        with _progress(len(tasks), show=show, terminal=terminal) as bar:
            sigterm.arm()
            for position, row in run_points(tasks, executor=executor, in_flight=limit):
                finished[tasks[position].index] = row
                if journal is not None:
                    journal.append(row)
                bar.update(1)
            sigterm.disarm()
    except Terminated:
        failure = "terminated"
    except KeyboardInterrupt:
        failure = "interrupted"
    except Exception as error:  # noqa: BLE001 - kept rows are written, then re-raised
        failure = error
    finally:
        sigterm.disarm()
        if executor is not None:
            stop(executor, terminate=failure is not None)
    return finished, failure


def _write_out(out: str, rows: list[dict], journal, *, fmt: str, failure,
               extra: tuple = ()) -> None:
    """Write ``--out`` atomically and remove the sidecar; when ``out`` cannot be written,
    print the rows on stdout, say where they are in one line and exit 2."""
    data = table_bytes(rows, path=out, extra=extra)
    try:
        write_atomically(out, data)
    except (OSError, ValueError) as error:
        if journal is not None:
            journal.close()
        sys.stdout.write(table_bytes(rows, fmt=fmt, extra=extra).decode())
        sys.stdout.flush()
        where = "stdout"
        if journal is not None and journal.intact and journal.rows:
            where += (f" (and the {_rows(journal.rows)} computed in this run to "
                      f"{journal.path}, which --resume reads)")
        if isinstance(failure, Exception):
            click.echo(f"pate-sweep: the run stopped: {type(failure).__name__}: "
                       f"{' '.join(str(failure).split())}", err=True)
        click.echo(f"Error: cannot write {out}: {_write_error(error, out)}; "
                   f"the {_rows(len(rows))} went to {where}", err=True)
        raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
    if journal is not None:
        journal.remove()


def _write_error(error: BaseException, path: str) -> str:
    """Why a write failed, in a few words (``No space left on device``)."""
    if isinstance(error, OSError):
        if error.strerror:
            return error.strerror
        code = error.errno if error.errno is not None else (error.args or (None,))[0]
        if code in errno.errorcode:  # OSError(errno.ENOSPC) has no strerror
            return os.strerror(code)
    text = " ".join(str(error).split())
    # the writer's own message is "PATH: cannot write: why"
    return text.removeprefix(f"{path}: ").removeprefix("cannot write: ") or type(error).__name__


def _report_warnings(rows, computed: int) -> None:
    """Each kind of note once, as one ``Warning:`` line with how many points it concerns."""
    counts: dict[str, int] = {}
    for row in rows:
        for note in row.get(WARNINGS_KEY, ()):
            counts[note] = counts.get(note, 0) + 1
    for note, count in counts.items():
        click.echo(f"Warning: {note} ({count} of {computed} points)", err=True)


def _progress(total: int, *, show: bool, terminal: bool):
    """click's progress bar on a terminal; forced onto a file or pipe, a line per tenth."""
    if show and not terminal:
        return _LineProgress(total)
    return click.progressbar(length=total, file=sys.stderr, label="sweep", show_eta=True,
                             show_pos=True, hidden=not show)


class _LineProgress:
    """``points done/total (percent), elapsed, ETA`` lines for logs (CI jobs)."""

    def __init__(self, total: int):
        self.total, self.done, self.shown = total, 0, 0
        self.start = time.monotonic()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, count: int) -> None:
        self.done += count
        tenth = self.done * 10 // max(1, self.total)
        if tenth > self.shown:
            self.shown = tenth
            elapsed = time.monotonic() - self.start
            left = elapsed / self.done * (self.total - self.done)
            click.echo(f"pate-sweep: {self.done}/{self.total} points "
                       f"({100 * self.done // self.total}%), {elapsed:.0f} s elapsed, "
                       f"about {left:.0f} s left", err=True)


def _check_grids_used(grids: dict, mechanisms: list[str], quiet: bool) -> None:
    """A note for each grid option no chosen mechanism uses."""
    used = {name for mechanism in mechanisms for name in MECHANISM_PARAMETERS[mechanism]}
    for name in GRID_PARAMETERS:
        if name in grids and name not in used and not quiet:
            flag = "--" + name.replace("_", "-")
            click.echo(f"pate-sweep: note: {flag} is not used by {', '.join(mechanisms)}",
                       err=True)


def _resume_line(out: str, plan: ResumePlan, total: int, *, exists: bool,
                 sidecar: str) -> str:
    """How many rows --resume reuses and how many it computes, and why others are not."""
    reused = len(plan.reused)
    partial = os.path.exists(sidecar)
    if not exists and not partial:
        return f"pate-sweep: {out} does not exist yet; computing {_rows(total)}"
    source = " and ".join(([out] if exists else []) + ([sidecar] if partial else []))
    line = (f"pate-sweep: reused {reused} of {_rows(total)} from {source}; "
            f"computing {total - reused}")
    if plan.replaced:
        line += (f" (replacing {plan.replaced} row{'s' if plan.replaced > 1 else ''} made "
                 "with other options, other input files or another version)")
    return line


def _rows(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def _in_grid_order(points, finished: dict, plan: ResumePlan) -> list[dict]:
    """Finished and reused rows in grid order; kept rows of other places at the end."""
    rows = []
    for point in points:
        if point.index in finished:
            rows.append(finished[point.index])
        elif point.index in plan.reused:
            rows.append(plan.reused[point.index])
    return rows + plan.others


def _executor(workers, scheduler, tasks: int):
    """``(executor or None, description, tasks in flight)``."""
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise click.UsageError("--scheduler needs Dask: pip install 'pate_cli[dask]'") \
                from None
        executor, threads = dask_executor(scheduler, connect=Client, timeout="10s")
        return executor, f"Dask scheduler {scheduler} ({threads} threads)", 4 * threads
    if workers is None:
        workers = _cores()
    workers = max(1, min(workers, tasks))
    if workers == 1:
        return None, "1 worker (in process)", None
    executor = local_pool(workers)
    return executor, f"{workers} worker processes", 4 * workers


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def _print_best(rows, epsilon, fmt, label_of: dict, student_of: dict, orders,
                conversion, extra: tuple = ()) -> None:
    """The best row within ``epsilon`` on stdout (with a ``command`` column), and its
    pate-analyze command line on stderr; exit 3 when no row is within ``epsilon``."""
    chosen = best_row(rows, epsilon)
    if chosen is None:
        smallest = min((row["epsilon"] for row in rows), default=None)
        shown = "" if smallest is None else f" (the smallest is {smallest:.4g})"
        click.echo(f"Error: no configuration stays within epsilon {epsilon:g}{shown}",
                   err=True)
        raise click.exceptions.Exit(EXIT_OVER_BUDGET)
    orders_text = None if orders is None else ",".join(f"{x:g}" for x in orders)
    student = student_of.get(chosen["file"]) if chosen["mechanism"] == "interactive" else None
    line = analyze_command(chosen, labels=label_of.get(chosen["file"]), student=student,
                           orders=orders_text, conversion=conversion)
    sys.stdout.write(table_bytes([dict(chosen, command=line)], fmt=fmt,
                                 extra=(*extra, "command")).decode())
    column = score_column(rows)
    click.echo(f"pate-sweep: best within epsilon {epsilon:g} by {column}: "
               f"{chosen[column]:.6g} at epsilon {chosen['epsilon']:.4f}\n  {line}", err=True)
    if extra:
        _tuning_lines([chosen])


def _tuning_lines(rows) -> None:
    """Per vote file, the cost of the search and of every point (``--tuning``)."""
    for row in {row["file"]: row for row in rows}.values():
        if row.get("epsilon_tuned") is None:
            continue
        click.echo(f"pate-sweep: {row['file']}: choosing among the grid's points costs "
                   f"epsilon {row['epsilon_tuned']:.4f} as a random search "
                   f"(--tuning {row['tuning']}), {row['epsilon_all_points']:.4f} running "
                   "every point", err=True)


def main(args=None) -> None:
    """Console entry point (``pate-sweep``)."""
    sys.exit(run_command(command, args, prog_name="pate-sweep"))


if __name__ == "__main__":
    main()
