"""``pate-sweep``'s run: points computed, rows streamed to ``OUT.partial``, stops by Ctrl-C or
SIGTERM, messages; apart from ``cli/sweep.py`` so that ``-h`` imports no numpy."""

from __future__ import annotations

import os
import sys
from concurrent.futures.process import BrokenProcessPool

import click

# pandas, for the table: imported with the run (never for -h), not when Ctrl-C arrives, so a
# stopped run writes its rows at once (0.5-1 s sooner).
import pandas  # noqa: F401

from ..inputs.shards import input_files
from ..interrupts import sigterm_switch
from ..outputs.writing import check_destinations, write_atomically, write_error_text
from ..sweep.api import SweepSpec, planned_points, sweep_settings
from ..sweep.executors import sweep_executor
from ..sweep.journal import RowJournal, journal_path, keep_rows, read_journal
from ..sweep.resume import match_rows, resume_text, resumed_rows
from ..sweep.run import (
    check_grid_size,
    check_resume,
    in_grid_order,
    rows_text,
    run_tasks,
    warning_lines,
)
from ..sweep.select import (
    best_command,
    best_lines,
    best_row,
    no_best_text,
    pareto_note,
    pareto_rows,
)
from ..sweep.table import check_destination, read_sweep_rows, table_bytes
from ..sweep.tuning import TUNING_COLUMNS, add_tuning_columns, tuning_lines
from .errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OVER_BUDGET,
    EXIT_TERMINATED,
    reported_warnings,
    warn,
)
from .progress import progress_bar, wanted

# pate-sweep's options that are the command's own business (sweep.api.COMMAND_ONLY), and
# its grid options (None when not given).
_COMMAND_ONLY = ("scheduler", "out", "fmt", "resume", "progress", "quiet", "debug")
_GRIDS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "svt_scale", "svt_cutoff",
          "eta", "queries")


def run_sweep_command(votes, **options) -> None:
    """The body of ``pate-sweep``: ``pate_cli.run_sweep``'s options (``sweep.api.SweepSpec``)
    and the command's own."""
    own = {name: options.pop(name) for name in _COMMAND_ONLY}
    out, fmt, resume, quiet = own["out"], own["fmt"], own["resume"], own["quiet"]
    grids = {name: value for name in _GRIDS if (value := options.pop(name)) is not None}
    spec = SweepSpec.of(votes, options.pop("mechanisms") or ("confident",),
                        students=options.pop("student") or None, **grids, **options)
    votes, mechanisms, repeats, tuning = spec.files, spec.mechanisms, spec.repeats, spec.tuning
    check_grid_size(mechanisms, spec.grids, files=len(votes), max_points=spec.max_points)
    check_resume(out=out, resume=resume, tuning=tuning)
    if out:
        check_destination(out)
        check_destinations([(f"--out {out}", out)], inputs=input_files(  # never an input
            (option, path) for option, paths in
            (("", votes), ("--labels", spec.labels or ()), ("--student", spec.students or ()))
            for path in paths))
    if "-" in votes:
        raise click.UsageError("pate-sweep reads vote files, not standard input "
                               "(workers open the files themselves)")
    settings, _ = sweep_settings(spec)  # pate-analyze's rules, for each mechanism
    with reported_warnings():  # notes about a vote file (averaged votes): one line each
        points = planned_points(spec, settings)
    sidecar = journal_path(out) if out else None
    kept, foreign = [], []
    damage: list[str] = []
    note = None  # without --resume: what becomes of the sidecar's rows of this grid
    if resume:
        kept, foreign = resumed_rows(points, read_sweep_rows(out) if os.path.exists(out)
                                     else [], read_journal(sidecar, damage))
    elif sidecar is not None and os.path.isfile(sidecar):
        mine, foreign = resumed_rows(points, [], read_journal(sidecar))
        if mine:
            note = (f"computing every point afresh: {sidecar} held {rows_text(len(mine))} of "
                    f"this grid's points, {len(match_rows(points, mine).reused)} of which "
                    "--resume would reuse")
        elif not foreign:
            note = f"starting {sidecar} afresh (it holds no complete row)"
    if foreign:  # another grid's unfinished run: kept in the sidecar, --resume or not
        damage.append(f"{sidecar} holds {rows_text(len(foreign))} of points this run "
                      f"does not plan (another grid's unfinished run): they stay there, "
                      f"not in {out}")
    plan = match_rows(points, kept)
    tasks = [point for point in points if point.index not in plan.reused]

    executor, workers_text, limit = sweep_executor(spec.workers, own["scheduler"], len(tasks))
    if not quiet:
        files = f"{len(votes)} file{'s' if len(votes) > 1 else ''}"
        click.echo(f"pate-sweep: {len(points)} point{'s' if len(points) != 1 else ''} x "
                   f"{repeats} repeat"
                   f"{'s' if repeats > 1 else ''} ({files}, "
                   f"{', '.join(mechanisms)}), {workers_text}", err=True)
    for text in damage:  # the sidecar's damage and another grid's rows: after the header
        warn(text)
    if resume and not quiet:
        click.echo(resume_text(out, plan, len(points), exists=os.path.exists(out),
                               sidecar=sidecar), err=True)
    journal = None
    if out:
        if note is not None:  # (also under -q, which drops the grid-size and summary lines)
            click.echo(f"pate-sweep: note: {note}", err=True)
        if foreign and not resume:  # the sidecar keeps only them, then this run's rows
            keep_rows(sidecar, foreign)
        journal = RowJournal(sidecar, append=resume or bool(foreign))
        if journal.error is not None and not any(sidecar in text for text in damage):
            # (a directory there, say; once: a sidecar --resume could not read is said)
            reason = journal.error.strerror or journal.error
            warn(f"cannot keep rows in {sidecar} as they finish ({reason}): a run killed "
                 f"before the end loses them; {out} is written at the end")
    with sigterm_switch(armed=False, once=True) as sigterm, \
            progress_bar(len(tasks), show=wanted(own["progress"]), label="pate-sweep",
                         unit="points") as bar:
        finished, failure = run_tasks(tasks, executor=executor, in_flight=limit,
                                      journal=journal, sigterm=sigterm, done=bar.update)
    for line in warning_lines(finished.values(), len(tasks)):
        click.echo(line, err=True)
    rows = in_grid_order(points, finished, plan)
    extra = ()
    if tuning is not None:  # over the whole grid, before --pareto keeps some rows
        extra = TUNING_COLUMNS  # empty figures when the run stopped early
        if failure is None:
            rows = add_tuning_columns(rows, tuning, orders=settings.orders, delta=spec.delta,
                                      conversion=spec.conversion)
    every = rows  # --best chooses among this grid's rows, --pareto or not
    if spec.pareto:
        rows = pareto_rows(rows)
    rows = rows + plan.others  # other grids' rows kept in --out: they stay, at the end
    if failure is not None:
        _stopped(failure, rows, out=out, journal=journal, fmt=fmt, extra=extra,
                 counts=(len(finished) + len(plan.reused), len(points)), resume=resume)
    if out:
        _write_out(out, rows, journal, fmt=fmt, extra=extra, foreign=foreign)
    if spec.best is not None:
        _print_best(every, spec.best, fmt, command=lambda row: best_command(
            row, spec, settings.orders), extra=extra)
        return
    if tuning is not None and rows and not quiet:
        for line in tuning_lines(rows):
            click.echo(line, err=True)
    if spec.pareto and tuning is None and not quiet and (text := pareto_note(every)):
        click.echo(text, err=True)
    if out:
        if not quiet:
            click.echo(f"pate-sweep: wrote {rows_text(len(rows))} to {out}", err=True)
        return
    sys.stdout.write(table_bytes(rows, fmt=fmt, extra=extra).decode())


# How a run was stopped by a signal -> exit status.
_STOPPED_BY = {"interrupted": EXIT_INTERRUPTED, "terminated": EXIT_TERMINATED}


def _stopped(failure, rows: list[dict], *, out: str | None, journal, fmt: str, extra: tuple,
             counts: tuple[int, int], resume: bool) -> None:
    """A run stopped by Ctrl-C, SIGTERM or a failing task: ``--out`` left as it was, finished
    rows in its sidecar for ``--resume`` (else on stdout), one line saying where;
    ``counts``: the rows ``--resume`` will find (finished and reused), and all."""
    kept, total = counts
    if journal is not None:
        journal.close()
    exists = out is not None and os.path.exists(out)
    state = "left as it was" if exists else "not written"
    if journal is not None and journal.intact:
        places = f"{out} and {journal.path}" if resume and exists else journal.path
        where = (f"{kept} of {total} rows in {places} ({out} {state}; rerun with --resume "
                 "to finish)")
    else:
        sys.stdout.write(table_bytes(rows, fmt=fmt, extra=extra).decode())
        where = f"{len(rows)} of {total} rows on stdout"
        if journal is not None:
            where += f" ({out} {state}: {journal.path} could not be written)"
    word = failure if failure in _STOPPED_BY else "stopped"
    click.echo(f"pate-sweep: {word}: kept {where}", err=True)
    if failure in _STOPPED_BY:
        raise click.exceptions.Exit(_STOPPED_BY[failure])
    if isinstance(failure, BrokenProcessPool):
        raise click.ClickException("a worker process died (killed, or out of memory); "
                                   "the rows it had not finished are not in the table")
    raise failure


def _write_out(out: str, rows: list[dict], journal, *, fmt: str, extra: tuple = (),
               foreign: list[dict] | None = None) -> None:
    """Write ``--out`` atomically and remove the sidecar (or leave only another grid's
    ``foreign`` rows in it); if ``out`` cannot be written, print the rows on stdout, say where
    they are in one line and exit 2."""
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
            where += (f" (and the {rows_text(journal.rows)} computed in this run to "
                      f"{journal.path}, which --resume reads)")
        click.echo(f"Error: cannot write {out}: {write_error_text(error, out)}; "
                   f"the {rows_text(len(rows))} went to {where}", err=True)
        raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
    if journal is not None and foreign:
        journal.keep_only(foreign)
    elif journal is not None:
        journal.remove()


def _print_best(rows, epsilon, fmt, *, command, extra: tuple = ()) -> None:
    """The best row within ``epsilon`` on stdout (with a ``command`` column), and its
    pate-analyze command line on stderr; exit 3 when no row is within ``epsilon``."""
    chosen = best_row(rows, epsilon)
    if chosen is None:
        click.echo(f"Error: {no_best_text(rows, epsilon)}", err=True)
        raise click.exceptions.Exit(EXIT_OVER_BUDGET)
    line = command(chosen)
    sys.stdout.write(table_bytes([dict(chosen, command=line)], fmt=fmt,
                                 extra=(*extra, "command")).decode())
    for text in best_lines(chosen, rows, epsilon, line, searched=bool(extra)):
        click.echo(text, err=True)
    if extra:
        for text in tuning_lines([chosen]):
            click.echo(text, err=True)
