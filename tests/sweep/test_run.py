"""A sweep's run below the command line (``sweep.run``, ``sweep.executors``): the request's
refusals, the tasks run with their rows kept when one fails or Ctrl-C arrives, rows back in
grid order, the notes counted once per kind; and the text of a failed write."""

from __future__ import annotations

import errno
import sys
from types import SimpleNamespace

import pytest

import pate_cli.sweep.points as points_module
from pate_cli.errors import OptionError
from pate_cli.outputs.writing import write_error_text
from pate_cli.sweep.executors import scheduler_executor, sweep_executor
from pate_cli.sweep.resume import ResumePlan
from pate_cli.sweep.run import (
    check_grid_size,
    check_resume,
    in_grid_order,
    rows_text,
    run_tasks,
    warning_lines,
)


class Switch:
    """A stand-in for ``interrupts.SigtermSwitch`` that records its arming."""

    def __init__(self):
        self.events = []

    def arm(self):
        self.events.append("arm")

    def disarm(self):
        self.events.append("disarm")


class Journal:
    def __init__(self):
        self.rows = []

    def append(self, row):
        self.rows.append(row)


def _tasks(count):
    return [SimpleNamespace(index=10 + i, value=i) for i in range(count)]


@pytest.mark.parametrize("stop, expected", [(ValueError("bad point"), "error"),
                                            (KeyboardInterrupt(), "interrupted")])
def test_rows_finished_before_a_stop_are_kept(monkeypatch, stop, expected):
    def run_point(point, memory=None):
        if point.value == 2:
            raise stop
        return {"value": point.value}

    monkeypatch.setattr(points_module, "run_point", run_point)
    switch, journal, done = Switch(), Journal(), []
    finished, failure = run_tasks(_tasks(4), executor=None, in_flight=None,
                                  journal=journal, sigterm=switch, done=done.append)
    assert finished == {10: {"value": 0}, 11: {"value": 1}}
    assert journal.rows == [{"value": 0}, {"value": 1}] and done == [1, 1]
    assert (failure is stop) if expected == "error" else failure == expected
    assert switch.events[0] == "arm" and switch.events[-1] == "disarm"


def test_all_rows_without_a_stop(monkeypatch):
    monkeypatch.setattr(points_module, "run_point",
                        lambda point, memory=None: {"value": point.value})
    finished, failure = run_tasks(_tasks(3), executor=None, in_flight=None, journal=None,
                                  sigterm=Switch())
    assert failure is None and list(finished) == [10, 11, 12]


def test_rows_in_grid_order_without_kept_rows_of_other_places():
    """This grid's rows only: --best and --pareto rank them, the kept rows of other places
    are written after them (cli/sweep_run.py)."""
    points = [SimpleNamespace(index=i) for i in range(4)]
    plan = ResumePlan(reused={1: {"r": 1}}, replaced=0, others=[{"other": True}])
    rows = in_grid_order(points, {3: {"f": 3}, 0: {"f": 0}}, plan)
    assert rows == [{"f": 0}, {"r": 1}, {"f": 3}]  # point 2: not run


def test_each_kind_of_note_is_one_line_with_its_count():
    rows = [{"warnings": ["a", "b"]}, {"warnings": ["a"]}, {}]
    assert warning_lines(rows, 5) == ["Warning: a (2 of 5 points)",
                                      "Warning: b (1 of 5 points)"]
    assert rows_text(1) == "1 row" and rows_text(0) == "0 rows" and rows_text(2) == "2 rows"


def test_the_request_is_refused_before_any_work():
    check_grid_size(["gnmax"], {"sigma": (1.0, 2.0)}, files=2, max_points=4)
    with pytest.raises(OptionError, match="the grid has 6 points, more than --max-points 5"):
        check_grid_size(["gnmax"], {"sigma": (1.0, 2.0, 3.0)}, files=2, max_points=5)
    with pytest.raises(OptionError, match="--resume needs --out"):
        check_resume(out=None, resume=True, tuning=None)
    with pytest.raises(OptionError, match="--tuning needs every point's RDP curve"):
        check_resume(out="a.csv", resume=True, tuning="poisson:3")
    check_resume(out="a.csv", resume=True, tuning=None)


def test_the_executor_of_the_workers_asked_for(monkeypatch):
    assert sweep_executor(4, None, 1) == (None, "1 worker (in process)", None)
    assert sweep_executor(1, None, 9) == (None, "1 worker (in process)", None)
    assert sweep_executor(2, None, 0) == (None, "nothing to compute", None)  # all reused
    assert sweep_executor(2, "tcp://127.0.0.1:9", 0)[1] == "nothing to compute"  # not asked
    made = []
    monkeypatch.setattr("pate_cli.sweep.executors.local_pool", lambda n: made.append(n) or n)
    assert sweep_executor(8, None, 3) == (3, "3 worker processes", 12)
    assert made == [3]


def test_a_scheduler_without_dask_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    with pytest.raises(OptionError, match=r"^--scheduler needs Dask: pip install"):
        scheduler_executor("tcp://127.0.0.1:8786")


def test_why_a_scheduler_address_failed_in_the_users_words():
    """A worker's address, or ucx:// without its support, named as such (they read as
    distributed's own TypeErrors; review R14)."""
    from pate_cli.sweep.executors import _reason

    assert _reason(TypeError("Worker.identity() got an unexpected keyword argument "
                             "'n_workers'")).startswith("it answers as a Dask worker")
    assert _reason(TypeError("Can't instantiate abstract class UCXConnector with abstract "
                             "method connect")).startswith("ucx:// needs Dask's UCX support")
    assert _reason(ConnectionRefusedError("refused")) == "refused"


def test_why_a_write_failed_in_a_few_words():
    assert write_error_text(OSError(errno.ENOSPC, "No space left on device"), "t.csv") == \
        "No space left on device"
    assert write_error_text(OSError(errno.ENOSPC), "t.csv") == "No space left on device"
    assert write_error_text(ValueError("t.csv: cannot write: Read-only file system"),
                            "t.csv") == "Read-only file system"
    assert write_error_text(ValueError(""), "t.csv") == "ValueError"


def test_a_dask_clients_loggers_are_quiet_before_its_tasks_are_cancelled():
    """Abandoned Dask futures report through tornado's and distributed's loggers as they are
    cancelled; those loggers are silenced before the first cancel (a Ctrl-C's traceback was
    printed once in a loaded run: the cancels came before stop() silenced them)."""
    import logging
    from concurrent.futures import Future

    names = ("tornado.application", "distributed.client", "distributed.comm")
    levels = {name: logging.getLogger(name).level for name in names}
    seen = []

    class Recording(Future):
        def cancel(self):
            seen.append(logging.getLogger("tornado.application").getEffectiveLevel())
            return super().cancel()

    class Client:
        _max_workers = 2
        pate_client = object()  # what sweep_executor marks a Dask client with
        submitted = 0

        def submit(self, function, point):
            future = Recording()
            self.submitted += 1
            if self.submitted == 1:
                future.set_exception(RuntimeError("a point failed"))
            return future

    try:
        with pytest.raises(RuntimeError, match="a point failed"):
            list(points_module.run_points([object()] * 3, executor=Client()))
        assert seen and all(level > logging.CRITICAL for level in seen)
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def _recorded_thread_errors(monkeypatch) -> list:
    """Exceptions raised in threads from here on (``threading.excepthook``)."""
    import threading

    seen: list = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_type))
    return seen


def test_a_local_pools_abandoned_tasks_are_cancelled_by_its_stop_not_before(monkeypatch):
    """Futures cancelled before a pool's workers are terminated made Python 3.11's pool
    raise InvalidStateError in its manager thread (a traceback on a loaded pate-sweep's
    SIGTERM): ``abandon`` leaves a local pool's to ``stop``, which ends every one of them."""
    import time
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool

    from pate_cli.sweep.executors import abandon, local_pool, stop

    seen = _recorded_thread_errors(monkeypatch)
    pool = local_pool(1)
    futures = [pool.submit(time.sleep, 30) for _ in range(5)]
    wait(futures[:1], timeout=0.5)  # the first is running, the last three are queued here
    abandon(pool, futures)
    assert not any(future.cancelled() for future in futures)
    for process in list(pool._processes.values()):  # the race, made certain: workers die
        process.terminate()                          # before the pool is shut down
        process.join()
    stop(pool, terminate=True)
    assert seen == []
    assert all(future.cancelled() or isinstance(future.exception(), BrokenProcessPool)
               for future in futures)


def test_a_local_pool_left_by_an_exception_ends_its_running_tasks(monkeypatch):
    """``pate_cli.sweep.api.sweep``'s pool: a failed point ends the others' tasks rather
    than waiting for them (ProcessPoolExecutor's own exit waits)."""
    import time
    from concurrent.futures.process import BrokenProcessPool

    from pate_cli.sweep.executors import local_pool

    seen = _recorded_thread_errors(monkeypatch)
    with pytest.raises(RuntimeError, match="a point failed"), local_pool(1) as pool:
        running = pool.submit(time.sleep, 30)
        raise RuntimeError("a point failed")
    assert seen == [] and isinstance(running.exception(timeout=0), BrokenProcessPool)


def test_other_executors_abandoned_futures_are_cancelled():
    """A caller's executor is not stopped here: its abandoned futures are cancelled."""
    from concurrent.futures import Future

    from pate_cli.sweep.executors import abandon

    futures = [Future(), Future()]
    abandon(object(), futures)
    assert all(future.cancelled() for future in futures)


def test_a_local_pools_workers_share_the_cores_rather_than_each_take_them_all(monkeypatch):
    """Two workers each running a thread per core would contend on the cores; a worker's
    default threads are its share (no figure depends on the count)."""
    import os

    from pate_cli import threads
    from pate_cli.sweep.executors import local_pool

    monkeypatch.setattr(os, "sched_getaffinity", lambda _: set(range(8)), raising=False)
    assert threads.default_workers() == 8
    threads.share_cores(3)
    try:
        assert threads.default_workers() == 2
        threads.share_cores(20)
        assert threads.default_workers() == 1
    finally:
        threads.share_cores(1)
    with local_pool(2) as pool:
        shares = {pool.submit(threads.default_workers).result() for _ in range(4)}
    assert shares == {max(1, threads.default_workers() // 2)}
