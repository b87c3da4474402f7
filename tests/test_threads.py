"""pate_cli.threads.ordered_map: results in order whatever the workers, and a consumer that
stops part-way (break, close(), the iterator dropped and collected, an exception) neither
hangs nor leaves threads behind, also when a running task waits on what the consumer
would have done or when the collector closes the iterator on one of the pool's own
threads. A scenario that could hang runs in a subprocess with a timeout."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import threading
import time
from itertools import islice

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.threads import ordered_map, tasks_in_order
from tests import ROOT

# The consumer takes the first result (and the second, to break or raise in a loop), then
# stops by ``how``; task 2 waits on an event only the consumer sets, after it has stopped
# (a task blocked on a full queue the consumer would have emptied). Then every pool thread
# must end.
_STOPS = """
import gc, threading, time
from pate_cli.threads import ordered_map, tasks_in_order

release = threading.Event()
before = set(threading.enumerate())

def task(x):
    if x == 2:
        release.wait()
    return x * x

def consume(how):
    values = ordered_map(task, range(40), workers=2)
    assert next(values) == 0
    if how == "break":
        for _ in values:
            break
    elif how == "close":
        values.close()
    elif how == "collected":
        cycle = [values]
        cycle.append(cycle)
        del values, cycle
        gc.collect()
    elif how == "raise":
        for _ in values:
            raise KeyError("the consumer fails")

try:
    consume(HOW)
except KeyError:
    pass
print("stopped", flush=True)
release.set()
deadline = time.monotonic() + 20
while set(threading.enumerate()) - before and time.monotonic() < deadline:
    time.sleep(0.01)
print("threads left:", len(set(threading.enumerate()) - before), flush=True)
"""

# The iterator, dropped in a reference cycle, is collected by task 2 on a pool thread
# while task 3, on the other thread, waits for task 2 to go on (waiting for that thread
# there deadlocks; joining its own thread raises).
_COLLECTED_ON_ITS_THREAD = """
import gc, threading, time
from pate_cli.threads import ordered_map, tasks_in_order

dropped, collected = threading.Event(), threading.Event()
before = set(threading.enumerate())

def task(x):
    if x == 2:
        dropped.wait()
        gc.collect()
        collected.set()
    if x == 3:
        collected.wait()
    return x

values = ordered_map(task, range(40), workers=2)
cycle = [values]
cycle.append(cycle)
assert next(values) == 0
gc.disable()  # the collection happens on the pool thread
del values, cycle
dropped.set()
assert collected.wait(20), "task 2 did not get past its collection"
deadline = time.monotonic() + 20
while set(threading.enumerate()) - before and time.monotonic() < deadline:
    time.sleep(0.01)
print("threads left:", len(set(threading.enumerate()) - before), flush=True)
"""


def _run(script: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60, check=False)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"hung: {error.stdout!r} {error.stderr!r}")


@pytest.mark.parametrize("how", ["break", "close", "collected", "raise"])
def test_stopping_part_way_never_waits_on_a_blocked_task(how):
    done = _run(_STOPS.replace("HOW", repr(how)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["stopped", "threads left: 0"], done.stderr
    assert done.stderr == ""


def test_closed_by_the_collector_on_its_own_pool_thread():
    done = _run(_COLLECTED_ON_ITS_THREAD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["threads left: 0"]
    assert done.stderr == ""  # no "Exception ignored" (a pool joining its own thread)


def _pool_threads() -> set:
    return {thread for thread in threading.enumerate()
            if thread.name.startswith("ThreadPoolExecutor")}


def _threads_end(before: set) -> bool:
    """The pool's threads end (within milliseconds on quiet cores; the wait is bounded at
    20 s, thousands of times that, so that load cannot fail it)."""
    deadline = time.monotonic() + 20
    while _pool_threads() - before and time.monotonic() < deadline:
        time.sleep(0.005)
    return not _pool_threads() - before


@settings(max_examples=40, deadline=None)
@given(count=st.integers(0, 60), workers=st.integers(1, 4), taken=st.integers(0, 70),
       how=st.sampled_from(["close", "drop", "raise"]))
def test_results_in_order_and_stopping_cancels_the_rest(count, workers, taken, how):
    """The first ``taken`` results are ``function``'s, in order; stopping there (or one
    result later, raising in the loop) runs at most the tasks in flight (two per worker)
    beyond them, and the threads end."""
    before = _pool_threads()
    started = []

    def task(x):
        started.append(x)
        time.sleep(0.0005 * (x % 3))  # finish out of order
        return 3 * x + 1

    values = ordered_map(task, range(count), workers=workers)
    assert not started  # nothing runs before the first result is asked for
    got = list(islice(values, taken))
    assert got == [3 * x + 1 for x in range(min(taken, count))]
    if how == "close":
        values.close()
        assert next(values, None) is None
    elif how == "drop":
        del values
        gc.collect()
    else:
        try:
            for _ in values:
                raise ZeroDivisionError
        except ZeroDivisionError:
            pass
        del values
    assert _threads_end(before)
    assert len(started) <= min(count, taken + 1 + 2 * workers)
    assert sorted(started) == list(range(len(started)))  # submitted in order


def test_a_task_error_is_raised_and_the_threads_end():
    before = _pool_threads()

    def task(x):
        if x == 7:
            raise ValueError("task 7")
        return x

    values = ordered_map(task, range(30), workers=3)
    with pytest.raises(ValueError, match="task 7"):
        list(values)
    assert next(values, None) is None
    assert _threads_end(before)


def test_items_are_read_at_the_first_result():
    """``items`` (an iterator) is read at the first ``next``, as a generator would."""
    source = iter(range(5))
    values = ordered_map(lambda x: x + 1, source, workers=2)
    assert next(source) == 0  # not read yet
    assert list(values) == [2, 3, 4, 5]


@settings(max_examples=20, deadline=None)
@given(values=st.lists(st.integers(-50, 50), max_size=30), workers=st.integers(1, 4))
def test_tasks_run_in_order_on_threads_and_on_an_executor(values, workers):
    """``tasks_in_order``: each item's task made and run, results in the items' order,
    the same on threads as on a ``concurrent.futures`` executor."""
    from concurrent.futures import ThreadPoolExecutor
    from functools import partial

    def task(value):
        return partial(pow, value, 2)

    expected = [value * value for value in values]
    assert list(tasks_in_order(task, values, workers=workers)) == expected
    with ThreadPoolExecutor(workers) as executor:
        assert list(tasks_in_order(task, values, executor=executor)) == expected
