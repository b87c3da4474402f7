"""``pate-sweep`` between plan and table: checks before any work, tasks run (finished rows kept
when stopped), rows in grid order, notes counted."""

from __future__ import annotations

from ..errors import OptionError
from ..interrupts import Terminated
from .executors import stop
from .points import WARNINGS_KEY, grid_size, run_points
from .resume import ResumePlan


def check_grid_size(mechanisms: list[str], grids: dict, *, files: int,
                    max_points: int) -> None:
    """``OptionError``, before any work, for more than ``max_points`` points, an empty axis or
    no file."""
    if not files:
        raise OptionError("give at least one vote file")
    for name, values in grids.items():
        if not len(values):
            raise OptionError(f"--{name.replace('_', '-')}: the grid has no values")
    size = grid_size(mechanisms, grids, files=files)
    if size > max_points:
        raise OptionError(f"the grid has {size:,} points, more than --max-points "
                          f"{max_points:,} (narrow the grid or raise --max-points)")


def check_resume(*, out: str | None, resume: bool, tuning) -> None:
    """``OptionError``: ``--resume`` without ``--out``, or with ``--tuning`` (a table read back
    lacks every point's RDP curve)."""
    if resume and not out:
        raise OptionError("--resume needs --out (the file to resume)")
    if tuning is not None and resume:
        raise OptionError("--tuning needs every point's RDP curve: it does not combine "
                          "with --resume (rows read back from a table have none)")


def run_tasks(tasks, *, executor, in_flight: int | None, journal, sigterm,
              done=None) -> tuple[dict, object]:
    """Run ``tasks``: ``({point index: row}, None | "interrupted" | "terminated" | the
    exception)``; each row goes to ``journal`` (if any), then ``done(1)``. Ctrl-C, SIGTERM
    (``sigterm`` armed meanwhile) and a failing task stop the run, keeping rows."""
    finished: dict[int, dict] = {}
    failure: object = None
    try:
        sigterm.arm()
        for position, row in run_points(tasks, executor=executor, in_flight=in_flight):
            finished[tasks[position].index] = row
            if journal is not None:
                journal.append(row)
            if done is not None:
                done(1)
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


def in_grid_order(points, finished: dict, plan: ResumePlan) -> list[dict]:
    """This grid's finished and reused rows in grid order (``plan.others`` are not this run's:
    the caller writes them after)."""
    rows = []
    for point in points:
        if point.index in finished:
            rows.append(finished[point.index])
        elif point.index in plan.reused:
            rows.append(plan.reused[point.index])
    return rows


def warning_lines(rows, computed: int) -> list[str]:
    """One ``Warning:`` line per kind of note the rows carry, with how many of the ``computed``
    points it concerns."""
    counts: dict[str, int] = {}
    for row in rows:
        for note in row.get(WARNINGS_KEY, ()):
            counts[note] = counts.get(note, 0) + 1
    return [f"Warning: {note} ({count} of {computed} points)" for note, count in counts.items()]


def rows_text(count: int) -> str:
    """``1 row``, ``2 rows``."""
    return f"{count} row{'s' if count != 1 else ''}"
