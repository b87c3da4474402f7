"""Where a sweep's tasks run (local worker processes, or a Dask cluster) and stopping either.

Local workers leave Ctrl-C and SIGTERM to the parent and die with it however it dies: by
``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux, everywhere by a thread watching the parent
(``WATCH_SECONDS``). A Dask address is checked before connecting; failures are one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from ..errors import InputError, OptionError
from ..threads import share_cores

WATCH_SECONDS = 0.25
_PR_SET_PDEATHSIG = 1

# Dask's address forms: scheme://host:port (host a name, IPv4 or bracketed IPv6),
# inproc://host/pid/n (a scheduler in this process), or host:port (tcp assumed).
_HOST_PORT = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5})/?"
_ADDRESS = re.compile(rf"(?:(?:tcp|tls|ws|wss|ucx)://)?{_HOST_PORT}"
                      r"|inproc://[A-Za-z0-9_.:-]+/[0-9]+/[0-9]+")
ADDRESS_FORMS = "tcp://host:port (or tls://, ws://, wss://, ucx://), inproc://..., host:port"


def scheduler_address(address: str) -> str:
    """``address`` if it has the form of a Dask scheduler address, else ``ValueError``."""
    text = address.strip()
    match = _ADDRESS.fullmatch(text)
    port = match and match.group("port")
    if match is None or (port is not None and not 0 < int(port) < 65536):
        raise ValueError(f"{address!r} is not a Dask scheduler address "
                         f"(expected {ADDRESS_FORMS})")
    return text


class LocalPool(ProcessPoolExecutor):
    """A process pool whose workers ignore Ctrl-C and die with this process; an exception
    leaving its ``with`` block ends the running tasks (``stop``)."""

    def __exit__(self, exc_type, *_):
        stop(self, terminate=exc_type is not None)
        return False


def local_pool(workers: int) -> LocalPool:
    """A ``LocalPool`` of ``workers`` processes."""
    return LocalPool(max_workers=workers, initializer=_start_worker, initargs=(workers,))


def _start_worker(workers: int) -> None:
    """Worker initializer: Ctrl-C and SIGTERM are the parent's (a worker forked under the
    parent's SIGTERM handler must not inherit it); exit with the parent; threads: its share of
    the cores among ``workers`` processes (more would contend; no figure depends on it)."""
    share_cores(workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True,
                     name="pate-sweep-parent-watch").start()


def _watch_parent(parent: int) -> None:
    """Exit this worker as soon as its parent process is no longer ``parent``."""
    stopped = threading.Event()
    while not stopped.wait(WATCH_SECONDS):
        if os.getppid() != parent:
            os._exit(1)


def dask_executor(address: str, *, connect, timeout="10s"):
    """``(executor, threads)`` on the Dask scheduler at ``address`` (``connect``: a
    ``distributed.Client``); ``InputError`` if none answers within ``timeout``. A half-made
    client is closed at once (its destructor would hang at exit)."""
    import distributed.client

    _probe(address, _seconds(timeout))
    try:
        client = connect(address, timeout=timeout, set_as_default=False)
    except Exception as error:  # noqa: BLE001 - any failure to connect is one line
        _close_half_made(error, distributed.client.Client)
        raise InputError(f"cannot reach the Dask scheduler {address}: {_reason(error)}") \
            from None
    try:
        threads = max(1, sum(client.nthreads().values()))
    except Exception as error:  # noqa: BLE001
        with contextlib.suppress(Exception):
            client.close(timeout=2)
        raise InputError(f"cannot use the Dask scheduler {address}: {_reason(error)}") \
            from None
    executor = client.get_executor()
    executor.pate_client = client
    return executor, threads



def scheduler_executor(address: str, *, timeout="10s"):
    """``dask_executor`` with distributed's ``Client``: ``(executor, threads)``;
    ``OptionError`` (one line) when Dask is not installed."""
    try:
        from distributed import Client
    except ImportError:
        raise OptionError("--scheduler needs Dask: pip install 'pate_cli[dask]'") from None
    return dask_executor(address, connect=Client, timeout=timeout)


@contextlib.contextmanager
def scheduler_pool(address: str, *, timeout="10s") -> Iterator:
    """The Dask scheduler's executor at ``address``, stopped (tasks ended) after the block."""
    executor, _ = scheduler_executor(address, timeout=timeout)
    try:
        yield executor
    finally:
        stop(executor, terminate=True)


def sweep_executor(workers: int | None, scheduler: str | None, tasks: int):
    """``(executor or None, description, tasks in flight)`` for ``tasks`` points: the Dask
    scheduler's, else ``workers`` local processes (default: the cores; at most one per task),
    or None (this process) for one task or none."""
    if tasks == 0:  # every row reused (--resume): no scheduler is contacted
        return None, "nothing to compute", None
    if scheduler:
        executor, threads = scheduler_executor(scheduler)
        return executor, f"Dask scheduler {scheduler} ({threads} threads)", 4 * threads
    if workers is None:
        workers = _cores()
    workers = max(1, min(workers, tasks))
    if workers == 1:
        return None, "1 worker (in process)", None
    return local_pool(workers), f"{workers} worker processes", 4 * workers


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1

# A Dask handshake's first 8 bytes give its length: a few hundred bytes, far below this.
_HANDSHAKE_BYTES = 1 << 24


def _probe(address: str, seconds: float) -> None:
    """Fail fast (``InputError``, one line) unless a Dask handshake (first 8 bytes: a length)
    arrives from a ``tcp://`` ``address`` within ``seconds``: another service would hang the
    client. Other schemes are left to the client."""
    import socket
    import struct

    match = re.fullmatch(r"(?:tcp://)?\[?([^\[\]/]+?)\]?:(\d+)/?", address.strip())
    if match is None:
        return
    host, port = match.group(1), int(match.group(2))
    try:
        with socket.create_connection((host, port), timeout=seconds) as probe:
            probe.settimeout(seconds)
            head = b""
            while len(head) < 8:
                piece = probe.recv(8 - len(head))
                if not piece:
                    break
                head += piece
    except TimeoutError:
        head = None
    except OSError as error:
        raise InputError(f"cannot reach the Dask scheduler {address}: {_reason(error)}") \
            from None
    if head is None or len(head) < 8 or not any(  # the sender's byte order
            0 < struct.unpack(order, head)[0] < _HANDSHAKE_BYTES for order in ("<Q", ">Q")):
        said = ("sent no Dask handshake within " + f"{seconds:g} s" if head is None
                else "closed the connection" if not head
                else "does not speak Dask's protocol")
        raise InputError(f"cannot reach the Dask scheduler {address}: what listens there "
                         f"{said} (is it a Dask scheduler's address?)")


def _seconds(timeout) -> float:
    """``"10s"``, ``"2 min"`` or a number of seconds, in seconds."""
    from dask.utils import parse_timedelta

    return float(parse_timedelta(timeout, default="seconds"))


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if isinstance(error, (OSError, TimeoutError)) and text:
        return text
    if "Worker.identity()" in text:  # a worker's address: it takes no client's handshake
        return "it answers as a Dask worker, not a scheduler (give the scheduler's address)"
    if "UCXConnector" in text:
        return "ucx:// needs Dask's UCX support, which is not installed"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _close_half_made(error: BaseException, client_class) -> None:
    """Close the client whose constructor raised ``error`` (found in its traceback)."""
    trace = error.__traceback__
    while trace is not None:
        candidate = trace.tb_frame.f_locals.get("self")
        if isinstance(candidate, client_class):
            with contextlib.suppress(Exception):
                candidate.close(timeout=1)
            with contextlib.suppress(Exception):
                candidate.status = "closed"
            return
        trace = trace.tb_next


def stop(executor, *, terminate: bool) -> None:
    """Shut ``executor`` down; with ``terminate``, end its running tasks first."""
    client = getattr(executor, "pate_client", None)
    if client is not None:
        # Closing while results are gathered fails their callbacks (CommClosedError), which
        # tornado would log as tracebacks: those results are unwanted.
        _quiet_abandoned(executor)
        executor.shutdown(wait=False)
        with contextlib.suppress(Exception):
            client.close(timeout=5)
        return
    if terminate:
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)


def abandon(executor, futures) -> None:
    """Give up ``futures`` (Ctrl-C, SIGTERM, a failed point): cancel them, except a
    ``LocalPool``'s, which ``stop`` cancels in the pool's manager thread
    (``shutdown(cancel_futures=True)``): cancelled here, a queued task whose workers are
    terminated first is marked failed by that thread, which Python 3.11 refuses for a cancelled
    future (``InvalidStateError``, printed as a thread's traceback)."""
    if isinstance(executor, LocalPool):
        return
    if futures:
        _quiet_abandoned(executor)
    for future in futures:
        future.cancel()


def _quiet_abandoned(executor) -> None:
    """Before a Dask client's tasks are abandoned (then the client closed), silence the loggers
    reporting them (tornado's callback errors, distributed's client) for the rest of the
    process, which is closing its one cluster connection. Nothing for other executors."""
    import logging

    if getattr(executor, "pate_client", None) is None:
        return
    for name in ("tornado.application", "distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
