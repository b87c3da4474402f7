"""Atomic writing of a command's outputs: all or none, never half a file nor a mix of old and
new. Streamed outputs are written on a background thread while their next pieces form."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial

from ..threads import in_order

WRITE_CHUNK = 1 << 20


def write_outputs(files: dict) -> None:
    """Write one command's outputs as a set, all or none: path -> bytes, an iterable of bytes
    (``per_query_stream_chunks``) or a function giving bytes, called once the iterables are
    written (a summary the table's pass completes).

    Regular destinations go to temporary files beside them, all renamed into place once
    written (every temporary removed on failure). An existing file keeps its permissions (a new
    one the umask's); a symbolic link's target is replaced. A special destination (``/dev/null``,
    a FIFO, ``/dev/stdout``) is written directly, never replaced or removed. Raises
    ``ValueError`` naming the file (``cannot write: ...``): a missing directory, a directory,
    two paths to one file, a file without write permission (even for root: the rename would
    replace it), any ``OSError``."""
    destinations = check_destinations((path, path) for path in files)
    contents = list(files.values())
    staged: list[str] = []  # temporaries not yet renamed into place
    current = ""
    try:
        staged.extend(_stage_together([
            (destination, data) for destination, data
            in zip(destinations, contents, strict=True) if not destination.special]))
        for destination, data in zip(destinations, contents, strict=True):
            current = destination.path
            if destination.special:
                _write_in_place(destination, data)
        temporaries = iter(list(staged))
        with _interrupts_held():  # an interrupt here would leave old and new files mixed
            for destination in destinations:
                current = destination.path
                if not destination.special:
                    temporary = next(temporaries)
                    os.replace(temporary, destination.target)
                    staged.remove(temporary)
    except OSError as error:
        raise ValueError(f"{current}: cannot write: {error.strerror or error}") from None
    finally:
        for temporary in staged:
            _remove(temporary)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the renames run, raised again once they are done
    (to the handlers in place before): all outputs are then the new ones. Python handles
    signals on the main thread only, so elsewhere nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {number: signal.signal(number, lambda number, _: caught.append(number))
              for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in before.items():  # None: a handler set outside Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        for number in caught:
            signal.raise_signal(number)


def utf8_text(text: str) -> str:
    """``text`` that encodes as UTF-8: a lone surrogate from a non-UTF-8 file name
    (``\\udcff``) is written as JSON writes it, instead of failing."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def write_atomically(path: str, data: bytes) -> None:
    """``write_outputs`` for one file: a temporary file beside it, then a rename."""
    write_outputs({path: data})


def write_error_text(error: BaseException, path: str) -> str:
    """Why writing ``path`` failed, in a few words (``No space left on device``)."""
    if isinstance(error, OSError):
        if error.strerror:
            return error.strerror
        code = error.errno if error.errno is not None else (error.args or (None,))[0]
        if code in errno.errorcode:  # OSError(errno.ENOSPC) has no strerror
            return os.strerror(code)
    text = " ".join(str(error).split())
    # the writer's own message is "PATH: cannot write: why"
    return text.removeprefix(f"{path}: ").removeprefix("cannot write: ") or type(error).__name__


def is_special(path: str) -> bool:
    """Whether ``path`` is written in place (a device, a FIFO, an open descriptor such as
    ``/dev/stdout``) rather than through a temporary file and a rename."""
    return _destination(str(path)).special


@dataclass(frozen=True)
class Destination:
    """Where one output goes: ``path`` as given, ``target`` the file written (links
    resolved), ``mode`` the replacement's permissions and ``identity`` (device, inode)
    (both None for a special file, written in place), ``descriptor`` the open descriptor
    ``path`` names (``/dev/stdout``: 1), written as it is (``>> log`` keeps appending)."""

    path: str
    target: str
    mode: int | None
    identity: object
    descriptor: int | None = None

    @property
    def special(self) -> bool:
        return self.mode is None


def check_destinations(outputs, inputs=()) -> list[Destination]:
    """Refuse, before any work, outputs that cannot be written as asked. ``outputs``,
    ``inputs``: ``(name, path)`` pairs (``name`` as messages show it, ``"-o x.json"``).
    ``ValueError`` (one line): a missing directory, a directory or unwritable file, two outputs
    or an output and an input that are the same file (paths resolved, or the same inode).
    Special files (``/dev/null``) may take several outputs."""
    destinations, seen = [], {}
    for name, path in outputs:
        destination = _destination(str(path))
        if destination.identity is not None:
            if destination.identity in seen:
                raise ValueError(f"{seen[destination.identity]} and {name} are the same "
                                 f"file ({destination.target}); give each output its own "
                                 "path")
            seen[destination.identity] = name
        destinations.append(destination)
    for name, path in inputs:
        identity = _file_identity(str(path))
        if identity is not None and identity in seen:
            raise ValueError(f"{seen[identity]} is the input {name}: writing it would "
                             "destroy the input; give the output another path")
    return destinations


def _file_identity(path: str):
    """``(device, inode)`` of an existing regular file, else None (stdin, devices, a
    path that does not exist: the reader says what is wrong with it)."""
    if path == "-" or _descriptor_named(path) is not None:
        return None
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _destination(path: str) -> Destination:
    descriptor = _descriptor_named(path)
    if descriptor is not None:
        return Destination(path, path, None, None, descriptor)
    if path == "":
        raise ValueError("an empty output path: give a file name")
    try:
        status = os.stat(path)  # follows links, also /dev/stdout's
    except FileNotFoundError:
        if path.endswith(("/", os.sep)):  # realpath would drop the slash and write a file
            raise ValueError(f"{path}: cannot write: no such directory, and an output is a "
                             "file (give a file name)") from None
        target = os.path.realpath(path)
        directory = os.path.dirname(target)
        if not os.path.isdir(directory):
            raise ValueError(f"{path}: cannot write: the directory {directory} does not "
                             "exist") from None
        return Destination(path, target, 0o666 & ~_umask(), target)  # as open() would
    except OSError as error:
        raise ValueError(f"{path}: cannot write: {error.strerror or error}") from None
    if stat.S_ISDIR(status.st_mode):
        raise ValueError(f"{path}: cannot write: it is a directory")
    if stat.S_ISREG(status.st_mode):
        if not _write_permitted(status):
            raise ValueError(f"{path}: cannot write: the file is read-only (mode "
                             f"{stat.S_IMODE(status.st_mode):04o}); it is left as it is "
                             "(chmod u+w it, or give another path)")
        return Destination(path, os.path.realpath(path), stat.S_IMODE(status.st_mode),
                           (status.st_dev, status.st_ino))
    return Destination(path, path, None, None)  # a device, FIFO or socket: written in place


def _write_permitted(status: os.stat_result) -> bool:
    """Whether the permission bits let this process write the existing file ``status``
    (the rename needs only the directory's, so a read-only file would be replaced). Bits,
    not ``os.access`` (which lets root write anything): root needs any write bit."""
    if not hasattr(os, "geteuid"):  # not POSIX: the read-only attribute is the owner's bit
        return bool(status.st_mode & stat.S_IWUSR)
    user = os.geteuid()
    if user == 0:
        return bool(status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    if status.st_uid == user:
        return bool(status.st_mode & stat.S_IWUSR)
    if status.st_gid == os.getegid() or status.st_gid in os.getgroups():
        return bool(status.st_mode & stat.S_IWGRP)
    return bool(status.st_mode & stat.S_IWOTH)


def _stage_together(outputs: list) -> list[str]:
    """Each ``(destination, data)`` in a new temporary file beside its destination; their
    paths. Streams are drawn a piece of each in turn, so streams teed from one pass hold
    at most a piece each."""
    temporaries: list[str] = []
    handles: list[int] = []
    try:
        for destination, _ in outputs:
            with _naming(destination.path):
                handle, temporary = tempfile.mkstemp(
                    dir=os.path.dirname(destination.target), prefix=".pate-", suffix=".tmp")
            temporaries.append(temporary)
            handles.append(handle)
        streams, formed_last = [], []
        for handle, (destination, data) in zip(handles, outputs, strict=True):
            if isinstance(data, (bytes, bytearray, memoryview)):
                with _naming(destination.path):
                    _write_bytes(handle, data)
            elif callable(data):
                formed_last.append((handle, destination.path, data))
            else:
                streams.append((handle, destination.path, iter(data)))
        for _ in on_a_thread(_write_piece, _in_turn(streams), name="pate-write"):
            pass
        for handle, path, form in formed_last:  # what the streams' passes complete
            with _naming(path):
                _write_bytes(handle, form())
        for handle in handles:
            os.close(handle)
        handles.clear()
        for temporary, (destination, _) in zip(temporaries, outputs, strict=True):
            os.chmod(temporary, destination.mode)  # mkstemp's 0600 -> the mode to keep
    except BaseException:
        for handle in handles:
            with contextlib.suppress(OSError):
                os.close(handle)
        for temporary in temporaries:
            _remove(temporary)
        raise
    return temporaries


def _in_turn(streams: list) -> Iterator[tuple[int, str, bytes]]:
    """``(handle, path, piece)``: a piece of each stream in turn, until every one is spent."""
    while streams:
        for entry in list(streams):
            handle, path, pieces = entry
            piece = next(pieces, None)
            if piece is None:
                streams.remove(entry)
            else:
                yield handle, path, piece


def _write_piece(item: tuple[int, str, bytes]) -> None:
    handle, path, piece = item
    with _naming(path):
        _write_bytes(handle, piece)


@contextlib.contextmanager
def _naming(path: str):
    """An ``OSError`` as the one-line ``ValueError`` naming ``path``."""
    try:
        yield
    except OSError as error:
        raise ValueError(f"{path}: cannot write: {error.strerror or error}") from None


def _descriptor_named(path: str) -> int | None:
    """N of ``-``, ``/dev/stdout`` (1), ``/dev/stderr`` (2), ``/dev/fd/N``, ``/proc/self/fd/N``."""
    if path == "-":
        return 1
    absolute = os.path.abspath(path)
    named = {"/dev/stdout": "1", "/dev/stderr": "2"}.get(absolute)
    for prefix in ("/dev/fd/", "/proc/self/fd/"):
        if absolute.startswith(prefix):
            named = absolute[len(prefix):]
    return int(named) if named is not None and named.isdigit() else None


def _write_in_place(destination: Destination, data: bytes) -> None:
    """Write to an existing special file (device, FIFO) or an open descriptor: opened or
    duplicated, never created, truncated, replaced or removed."""
    if destination.descriptor is None:
        handle = os.open(destination.target, os.O_WRONLY)
    else:
        for stream in (sys.stdout, sys.stderr):  # what was printed comes first
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.flush()
        handle = os.dup(destination.descriptor)
    try:
        _write_all(handle, data)
    finally:
        os.close(handle)


def _write_all(handle: int, data) -> None:
    """Every byte of ``data`` (bytes, a function giving them, or an iterable of bytes
    written as they come, by :func:`_write_behind`) to the file descriptor."""
    if callable(data):
        data = data()
    if isinstance(data, (bytes, bytearray, memoryview)):
        _write_bytes(handle, data)
    else:
        _write_behind(handle, data)


def _write_bytes(handle: int, data) -> None:
    """``data`` to the descriptor in chunks (a signal arriving during a large write
    interrupts it between two chunks)."""
    view = memoryview(data)
    while view:
        written = os.write(handle, view[:WRITE_CHUNK])
        view = view[written:]


def _write_behind(handle: int, pieces) -> None:
    """Each piece written on a background thread while the next is drawn. A write's error
    is raised here and stops drawing; a drawing error stops the writes not yet begun."""
    for _ in on_a_thread(partial(_write_bytes, handle), pieces, name="pate-write"):
        pass


def on_a_thread(function, items: Iterable, *, name: str) -> Iterator:
    """``map(function, items)``, each result formed on one background thread (``name``)
    while the next item is drawn, in order, at most two in flight (numpy, pyarrow and
    ``os.write`` release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) as pool:
        yield from in_order(partial(pool.submit, function), items, window=2)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def _umask() -> int:
    """The process's file-creation mask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
