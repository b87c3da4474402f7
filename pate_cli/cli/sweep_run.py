"""``pate-sweep``'s run: the grid planned, its points computed on all cores or a Dask
cluster, rows streamed to ``OUT.partial``, stops by Ctrl-C or SIGTERM, and the messages.

Kept apart from the click declaration in ``cli/sweep.py``, so that ``pate-sweep -h``
imports none of this (nor numpy).
"""

from __future__ import annotations

import errno
import os
import sys
from concurrent.futures.process import BrokenProcessPool

import click

# Writing the table needs pandas: imported with the run (never for -h), not when Ctrl-C
# arrives, so that a stopped run writes its rows at once (0.5-1 s sooner).
import pandas  # noqa: F401

from ..inputs.shards import input_files
from ..interrupts import Terminated, sigterm_switch
from ..outputs.writing import check_destinations, write_atomically
from ..rounding import ceil_significant, ceil_text
from ..sweep.columns import GRID_PARAMETERS, MECHANISM_PARAMETERS
from ..sweep.executors import (
    dask_executor,
    local_pool,
    stop,
)
from ..sweep.journal import RowJournal, journal_path, read_journal
from ..sweep.points import (
    WARNINGS_KEY,
    SweepSettings,
    check_sweep_options,
    grid_size,
    one_per_file,
    open_sources,
    plan_points,
    run_points,
)
from ..sweep.resume import ResumePlan, match_rows, merge_rows
from ..sweep.select import analyze_command, best_row, pareto_rows, score_column
from ..sweep.table import check_destination, read_sweep_rows, table_bytes
from ..sweep.tuning import TUNING_COLUMNS, add_tuning_columns
from .errors import EXIT_BAD_INPUT, EXIT_OVER_BUDGET, reported_warnings
from .progress import progress_bar, wanted

EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15


def run_sweep_command(votes, mechanisms, sigma, threshold, sigma_threshold, laplace_scale,
                      svt_scale, svt_cutoff, eta, queries, repeats, labels, student, confidence,
                      accounting, delta, orders, order, conversion, seed, budget, workers,
                      scheduler, out, fmt, resume, best, pareto, max_points, progress, quiet,
                      debug, index_col=None, tuning=None, screening="exact", sampling=None,
                      vote_change=None):
    """The body of ``pate-sweep`` (``cli/sweep.py``'s ``command``): the same parameters."""
    mechanisms = list(dict.fromkeys(mechanisms or ("confident",)))
    grids = {name: values for name, values in
             dict(sigma=sigma, threshold=threshold, sigma_threshold=sigma_threshold,
                  laplace_scale=laplace_scale, svt_scale=svt_scale, svt_cutoff=svt_cutoff,
                  eta=eta, queries=queries).items() if values is not None}
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
    if out:
        check_destination(out)
        check_destinations([(f"--out {out}", out)], inputs=input_files(  # never an input
            (option, path) for option, paths in
            (("", votes), ("--labels", labels), ("--student", student)) for path in paths))
    if "-" in votes:
        raise click.UsageError("pate-sweep reads vote files, not standard input "
                               "(workers open the files themselves)")
    if order is not None:
        orders = (order,)
    parsed = check_sweep_options(  # pate-analyze's rules, for each mechanism of the grid
        mechanisms, accounting=accounting, budget=budget, tuning=tuning, sampling=sampling,
        vote_change=vote_change, student_given=bool(student))
    sampling, vote_change = (None, None) if parsed is None else (parsed.text(),
                                                                 parsed.vote_change)
    settings = SweepSettings(accounting=accounting, delta=delta, budget=budget,
                             repeats=repeats, seed=seed, conversion=conversion,
                             orders=None if orders is None else tuple(float(x) for x in orders),
                              confidence=confidence, screening=screening,
                              rdp_curves=tuning is not None,
                              sampling=sampling, vote_change=vote_change)
    with reported_warnings():  # notes about a vote file (averaged votes): one line each
        sources, shapes = open_sources(votes, labels, student, index_col=index_col)
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
    with sigterm_switch(armed=False, once=True) as sigterm:
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
                    orders, conversion, index_col, extra=extra)
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
    failure = None
    try:
        with progress_bar(len(tasks), show=wanted(progress), label="pate-sweep",
                          unit="points") as bar:
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
                conversion, index_col=None, extra: tuple = ()) -> None:
    """The best row within ``epsilon`` on stdout (with a ``command`` column), and its
    pate-analyze command line on stderr; exit 3 when no row is within ``epsilon``."""
    chosen = best_row(rows, epsilon)
    if chosen is None:
        smallest = min((row["epsilon"] for row in rows), default=None)
        shown = "" if smallest is None else f" (the smallest is {ceil_significant(smallest, 4)})"
        click.echo(f"Error: no configuration stays within epsilon {epsilon:g}{shown}",
                   err=True)
        raise click.exceptions.Exit(EXIT_OVER_BUDGET)
    orders_text = None if orders is None else ",".join(f"{x:g}" for x in orders)
    student = student_of.get(chosen["file"]) if chosen["mechanism"] == "interactive" else None
    line = analyze_command(chosen, labels=label_of.get(chosen["file"]), student=student,
                           orders=orders_text, conversion=conversion, index_col=index_col)
    sys.stdout.write(table_bytes([dict(chosen, command=line)], fmt=fmt,
                                 extra=(*extra, "command")).decode())
    column = score_column(rows)
    if chosen.get("accounting") != "data-independent":
        click.echo(f"Warning: --best ranked the rows by their {chosen.get('accounting')} "
                   "epsilon, which depends on the private votes: choosing by it leaks beyond "
                   "any figure here (README, Choosing parameters costs privacy); choose under "
                   "--accounting data-independent", err=True)
    click.echo(f"pate-sweep: best within epsilon {epsilon:g} by {column}: "
               f"{chosen[column]:.6g} at epsilon {ceil_text(chosen['epsilon'])}\n  {line}",
               err=True)
    if extra:
        _tuning_lines([chosen])


def _tuning_lines(rows) -> None:
    """Per vote file, the cost of the search and of every point (``--tuning``)."""
    for row in {row["file"]: row for row in rows}.values():
        if row.get("epsilon_tuned") is None:
            continue
        click.echo(f"pate-sweep: {row['file']}: choosing among the grid's points costs "
                   f"epsilon {ceil_text(row['epsilon_tuned'])} as a random search "
                   f"(--tuning {row['tuning']}), {ceil_text(row['epsilon_all_points'])} running "
                   "every point", err=True)
