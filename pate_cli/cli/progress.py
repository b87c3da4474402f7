"""Progress on stderr for long commands (``pate-sweep``'s points, ``pate-analyze``'s queries):
on a terminal click's bar, once the work has lasted ``DELAY`` seconds; forced onto a file or
pipe (``--progress``), a plain line per tenth of the work; by default never on a pipe nor
under ``CI=true``."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

import click

DELAY = 2.0  # seconds of work before a bar appears on a terminal


def wanted(progress: bool | None) -> bool:
    """``--progress/--no-progress``: forced either way, else only on a terminal outside CI."""
    if progress is not None:
        return progress
    return sys.stderr.isatty() and os.environ.get("CI", "").lower() not in ("true", "1")


def progress_bar(total: int, *, show: bool, label: str, unit: str, delay: float = 0.0,
                 start: float | None = None):
    """A context manager with ``update(count)``: a bar on a terminal, lines elsewhere,
    nothing when not ``show``. ``delay``: seconds before a terminal bar first appears;
    ``start``: when the work began (``time.monotonic()``) [default: now]."""
    if not show:
        return _Hidden()
    if not sys.stderr.isatty():
        return LineProgress(total, label=label, unit=unit, start=start)
    return _DelayedBar(total, label=label, unit=unit, delay=delay, start=start)


class _Hidden:
    """No progress shown; the context manager every progress is."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, count: int) -> None:
        pass


class _DelayedBar:
    """click's progress bar (done/total, rate, time left), opened once ``delay`` seconds
    have passed (it then counts from the work already done)."""

    def __init__(self, total: int, *, label: str, unit: str, delay: float,
                 start: float | None = None):
        self.total, self.label, self.unit, self.delay = total, label, unit, delay
        self.start = time.monotonic() if start is None else start
        self.done = 0
        self.bar = None

    def __enter__(self):
        if self.delay <= 0:
            self._open()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False

    def _open(self) -> None:
        self.bar = click.progressbar(length=self.total, file=sys.stderr, label=self.label,
                                     show_eta=True, show_pos=True,
                                     item_show_func=self._rate_text)
        self.bar.__enter__()
        if self.done:
            self.bar.update(self.done, self._rate())

    def _rate(self) -> float:
        return self.done / max(1e-9, time.monotonic() - self.start)

    def _rate_text(self, rate: float | None) -> str | None:
        return None if rate is None else f"{rate:,.0f} {self.unit}/s"

    def update(self, count: int) -> None:
        self.done += count
        if self.bar is None and time.monotonic() - self.start >= self.delay:
            self._open()
        elif self.bar is not None:
            self.bar.update(count, self._rate())


class LineProgress(_Hidden):
    """``label: done/total unit (percent), elapsed, time left`` lines for logs (CI jobs)."""

    def __init__(self, total: int, *, label: str, unit: str, start: float | None = None):
        self.total, self.label, self.unit = total, label, unit
        self.done, self.shown = 0, 0
        self.start = time.monotonic() if start is None else start

    def update(self, count: int) -> None:
        self.done += count
        tenth = self.done * 10 // max(1, self.total)
        if tenth > self.shown:
            self.shown = tenth
            elapsed = time.monotonic() - self.start
            left = elapsed / self.done * (self.total - self.done)
            rate = self.done / elapsed if elapsed > 0 else float("inf")
            click.echo(f"{self.label}: {self.done}/{self.total} {self.unit} "
                       f"({100 * self.done // max(1, self.total)}%), {elapsed:.0f} s elapsed, "
                       f"{rate:,.0f} {self.unit}/s, about {left:.0f} s left", err=True)


@contextlib.contextmanager
def query_progress(progress: bool | None, *, label: str) -> Iterator[Callable[[int, int], None]]:
    """A ``progress(done, total)`` callback for ``analyze`` (queries done so far of total):
    the bar opens at the first call (when the total is known), on a terminal only once the
    run has lasted ``DELAY`` seconds unless forced (``--progress``); nothing when not
    ``wanted(progress)``."""
    show = wanted(progress)
    start = time.monotonic()
    state: dict = {"bar": None, "done": 0}

    def report(done: int, total: int) -> None:
        if not show:
            return
        if state["bar"] is None:
            bar = progress_bar(total, show=True, label=label, unit="queries",
                               delay=0.0 if progress else
                               max(0.0, DELAY - (time.monotonic() - start)),
                               start=start)
            state["bar"] = bar.__enter__()
        state["bar"].update(done - state["done"])
        state["done"] = done

    try:
        yield report
    finally:
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)
