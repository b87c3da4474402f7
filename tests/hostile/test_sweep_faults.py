"""``pate-sweep`` when things go wrong: an output that cannot be written, a parent killed
outright or asked to stop, a scheduler address that is not one, a grid too large to run.

What a sweep computed must survive: rows stream to ``OUT.partial`` (JSON lines) as they
finish, ``--resume`` reads it, and a final write that fails prints the rows on stdout
with one line saying where they went (exit 2). SIGTERM stops a run like Ctrl-C (exit 143
rather than 130), and local workers die with their parent. Expected tables come from an
uninterrupted run of the same grid.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pate_cli.cli.sweep_run as sweep_command
from pate_cli.sweep.executors import scheduler_address
from pate_cli.sweep.journal import read_journal
from pate_cli.sweep.table import read_sweep_rows
from tests.synthetic import synthetic_votes

GRID = ["-m", "confident", "-m", "gnmax", "--sigma", "6:12:3", "-T", "25,35",
        "--repeats", "2", "-q"]
# 40 points of about 50 ms each: long enough to stop a run part way, short enough to
# finish in a few seconds.
LONG_GRID = ["-m", "confident", "--sigma", "1:40:1", "--repeats", "10", "-q"]
LONG_POINTS = 40


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The votes and labels, written once for the module (no test writes beside them)."""
    folder = tmp_path_factory.mktemp("votes")
    votes, truth = synthetic_votes()
    np.save(folder / "votes.npy", votes)
    np.save(folder / "labels.npy", truth)
    return folder / "votes.npy", folder / "labels.npy"


@pytest.fixture(scope="module")
def references() -> dict:
    """``reference``'s runs, kept for the module's later tests of the same grid."""
    return {}


def loud(grid: list[str]) -> list[str]:
    """``grid`` without ``-q`` (the --resume line is wanted)."""
    return [word for word in grid if word != "-q"]


def sidecar(out: Path) -> Path:
    return Path(f"{out}.partial")


def reference(cli, files, tmp_path, references, grid=GRID) -> tuple[bytes, str]:
    """An uninterrupted run's ``--out`` bytes (also in ``tmp_path/reference/full.csv``)
    and its CSV on stdout; run once per grid for the module (``references``)."""
    path, labels = files
    full = tmp_path / "reference" / "full.csv"
    full.parent.mkdir(exist_ok=True)
    if tuple(grid) not in references:
        assert cli.sweep(path, *grid, "--labels", labels, "-w", "1", "-o", full).code == 0
        shown = cli.sweep(path, *grid, "--labels", labels, "-w", "1")
        assert shown.code == 0
        references[tuple(grid)] = full.read_bytes(), shown.out
    full.write_bytes(references[tuple(grid)][0])
    return references[tuple(grid)]


def no_space(path, data):
    raise OSError(errno.ENOSPC)


# --- the output cannot be written ---------------------------------------------------------

def test_a_full_disk_keeps_the_rows_on_stdout_and_in_the_sidecar(cli, files, tmp_path,
                                                                   references, monkeypatch):
    path, labels = files
    expected, shown = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    monkeypatch.setattr(sweep_command, "write_atomically", no_space)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 2
    assert result.out == shown  # every row, on stdout
    assert result.err.splitlines() == [
        f"Error: cannot write {out}: No space left on device; the 9 rows went to stdout "
        f"(and the 9 rows computed in this run to {out}.partial, which --resume reads)"]
    assert not out.exists() and len(read_journal(str(sidecar(out)))) == 9
    monkeypatch.undo()
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0, result.err
    assert f"reused 9 of 9 rows from {out}.partial; computing 0" in result.err
    assert out.read_bytes() == expected
    assert not sidecar(out).exists()


def test_without_a_usable_sidecar_the_rows_still_reach_stdout(cli, files, tmp_path, references,
                                                               monkeypatch):
    path, labels = files
    _, shown = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.jsonl"
    sidecar(out).mkdir()  # cannot be opened as a file, even by root
    monkeypatch.setattr(sweep_command, "write_atomically", no_space)
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 2 and result.out == shown
    assert result.err.splitlines() == [  # (-q not given: the sidecar said at the start)
        f"Warning: cannot keep rows in {sidecar(out)} as they finish (Is a directory): a run "
        f"killed before the end loses them; {out} is written at the end",
        f"Error: cannot write {out}: No space left on device; the 9 rows went to stdout"]


def test_a_read_only_directory_keeps_the_rows_on_stdout(cli, files, tmp_path, references):
    path, labels = files
    _, shown = reference(cli, files, tmp_path, references)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("this user (root?) can write to a read-only directory")
        out = locked / "out.csv"
        result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    finally:
        locked.chmod(stat.S_IRWXU)
    assert result.code == 2 and result.out == shown
    assert result.err.splitlines() == [
        f"Error: cannot write {out}: Permission denied; the 9 rows went to stdout"]


def test_a_file_size_limit_keeps_the_rows_and_resume_finishes(cli, files, tmp_path, references):
    """A real limit (RLIMIT_FSIZE, which binds root too): the sidecar keeps the rows that
    fit, the table does not fit, stdout has every row, --resume completes the table."""
    resource = pytest.importorskip("resource")
    path, labels = files
    expected, shown = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    limit = len(expected) // 2

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run([cli.script("pate-sweep"), str(path), *GRID, "--labels",
                           str(labels), "-w", "1", "-o", str(out)], capture_output=True,
                          text=True, preexec_fn=limited, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stdout == shown
    assert done.stderr.splitlines() == [
        f"Error: cannot write {out}: File too large; the 9 rows went to stdout"]
    kept = read_journal(str(sidecar(out)))
    assert 0 < len(kept) < 9  # the rows that fitted, a line cut short skipped
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0, result.err
    assert f"reused {len(kept)} of 9 rows from {out}.partial" in result.err
    assert out.read_bytes() == expected and not sidecar(out).exists()


def test_a_sidecar_cut_short_by_a_kill_is_read_up_to_its_last_whole_row(cli, files,
                                                                         tmp_path, references):
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    whole = tmp_path / "whole.csv"
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", whole).code == 0
    monkey = pytest.MonkeyPatch()
    monkey.setattr(sweep_command, "write_atomically", no_space)
    try:
        assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 2
    finally:
        monkey.undo()
    lines = sidecar(out).read_bytes().splitlines(keepends=True)
    sidecar(out).write_bytes(b"".join(lines[:4]) + lines[4][:50])  # killed mid-line
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0 and "reused 4 of 9 rows" in result.err
    assert "Warning" not in result.err  # what a kill leaves is no damage
    assert out.read_bytes() == expected


def test_a_resumed_run_drops_the_cut_line_before_appending(cli, files, tmp_path, references,
                                                          monkeypatch):
    """Rows appended after a line cut short by a kill start on a line of their own, and
    the cut line is gone: the next --resume reads every row and warns of nothing."""
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    monkeypatch.setattr(sweep_command, "write_atomically", no_space)
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 2
    lines = sidecar(out).read_bytes().splitlines(keepends=True)
    sidecar(out).write_bytes(b"".join(lines[:4]) + lines[4][:50])  # killed mid-line
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out,
                     "--resume").code == 2
    assert sidecar(out).read_bytes().startswith(b"".join(lines[:4]) + b"{")
    monkeypatch.undo()
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0 and "reused 9 of 9 rows" in result.err, result.err
    assert "Warning" not in result.err and out.read_bytes() == expected


@pytest.mark.parametrize("damage, reason", [
    (b"\x00\xffnot rows\n{\"file\": \"old\"}\n",
     "cannot read {sidecar} (no line is a pate-sweep row); its rows are computed again"),
    (None, "cannot read {sidecar} (Is a directory); its rows are computed again"),
    ("rows", "{sidecar}: 2 lines are not a pate-sweep row and are skipped (the points "
             "they held are computed again)"),
])
def test_resume_warns_once_of_a_sidecar_it_cannot_read(cli, files, tmp_path, references,
                                                       monkeypatch, damage, reason):
    """The rows it held are computed again (the table is right), and one line says so."""
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    reused = 0
    if damage is None:
        sidecar(out).mkdir()
    elif damage == "rows":
        monkeypatch.setattr(sweep_command, "write_atomically", no_space)
        assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 2
        monkeypatch.undo()
        lines = sidecar(out).read_bytes().splitlines(keepends=True)
        sidecar(out).write_bytes(b"".join(lines[:3]) + b"garbage\n[1, 2]\n")
        reused = 3
    else:
        sidecar(out).write_bytes(damage)
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       "--resume")
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("Warning")]
    assert warnings == ["Warning: " + reason.format(sidecar=f"{out}.partial")]
    assert f"reused {reused} of 9 rows" in result.err
    assert out.read_bytes() == expected


@pytest.mark.parametrize("column, value", [("sigma", ""), ("queries", "x"),
                                           ("answered", [1]), ("file", ["a"])])
@pytest.mark.parametrize("resume", [True, False])
def test_a_row_with_an_edited_cell_is_skipped_not_fatal(cli, files, tmp_path, references,
                                                         monkeypatch, column, value, resume):
    """A sidecar row whose key cell is no number (``"sigma": ""``) once stopped every later
    run with ``Error: could not convert string to float``: it is a damaged line, skipped
    (with one warning under --resume), its point computed again."""
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references)
    out = tmp_path / "out.csv"
    monkeypatch.setattr(sweep_command, "write_atomically", no_space)
    assert cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out).code == 2
    monkeypatch.undo()
    rows = [json.loads(line) for line in sidecar(out).read_text().splitlines()]
    rows[0][column] = value
    sidecar(out).write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = cli.sweep(path, *loud(GRID), "--labels", labels, "-w", "1", "-o", out,
                       *(["--resume"] if resume else []))
    assert result.code == 0, result.err
    warnings = [line for line in result.err.splitlines() if line.startswith("Warning")]
    assert warnings == ([f"Warning: {out}.partial: 1 line is not a pate-sweep row and is "
                         "skipped (the point it held is computed again)"] if resume else [])
    if resume:
        assert "reused 8 of 9 rows" in result.err
    assert out.read_bytes() == expected and not sidecar(out).exists()


def test_a_run_without_resume_starts_the_sidecar_afresh_and_says_so(cli, files, tmp_path):
    path, labels = files
    out = tmp_path / "out.csv"
    sidecar(out).write_text('{"file": "old"}\n')
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "-o", out)
    assert result.code == 0 and f"starting {out}.partial afresh" in result.err
    assert not sidecar(out).exists() and len(read_sweep_rows(str(out))) == 9


# --- the parent is killed or stopped -------------------------------------------------------

def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (parent links of /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def started_sweep(cli, files, out: Path) -> tuple[subprocess.Popen, set[int]]:
    """The installed script on LONG_GRID with 2 workers, once 3 rows are in the sidecar;
    with its worker processes."""
    path, labels = files
    process = subprocess.Popen([cli.script("pate-sweep"), str(path), *LONG_GRID, "--labels",
                                str(labels), "-w", "2", "-o", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if sidecar(out).exists() and sidecar(out).read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.01)
    workers = descendants(process.pid)
    if process.poll() is not None:
        pytest.fail(f"the sweep ended before it could be stopped: {process.communicate()}")
    return process, workers


def wait_gone(pids: set[int], seconds: float = 10.0) -> set[int]:
    """The ``pids`` still alive after waiting up to ``seconds`` for them to end (they end
    within 0.25 s on quiet cores, ``WATCH_SECONDS``; 10 s is 40 times that)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    return {pid for pid in pids if alive(pid)}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_kill_9_leaves_the_finished_rows_for_resume_and_no_workers(cli, files, tmp_path,
                                                                   references):
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references, LONG_GRID)
    out = tmp_path / "out.csv"
    process, workers = started_sweep(cli, files, out)
    assert workers, "no worker processes found"
    process.kill()
    process.communicate(timeout=30)
    assert wait_gone(workers) == set(), "workers outlived their killed parent"
    assert not out.exists()
    kept = len(read_journal(str(sidecar(out))))
    assert 3 <= kept < LONG_POINTS
    result = cli.sweep(path, *loud(LONG_GRID), "--labels", labels, "-w", "2", "-o", out,
                       "--resume")
    assert result.code == 0, result.err
    assert (f"reused {kept} of {LONG_POINTS} rows from {out}.partial; "
            f"computing {LONG_POINTS - kept}") in result.err
    assert out.read_bytes() == expected and not sidecar(out).exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum, code, word", [(signal.SIGTERM, 143, "terminated"),
                                                (signal.SIGINT, 130, "interrupted")])
def test_a_stop_signal_keeps_the_rows_and_ends_the_workers(cli, files, tmp_path, references,
                                                           signum, code, word):
    path, labels = files
    expected, _ = reference(cli, files, tmp_path, references, LONG_GRID)
    out = tmp_path / "out.csv"
    process, workers = started_sweep(cli, files, out)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == code, err
    assert wait_gone(workers) == set(), "workers outlived the stopped run"
    rows = read_journal(str(sidecar(out)))  # in the order they finished
    assert err.splitlines()[-1] == (f"pate-sweep: {word}: kept {len(rows)} of {LONG_POINTS} "
                                    f"rows in {out}.partial ({out} not written; rerun with "
                                    "--resume to finish)")
    assert 3 <= len(rows) < LONG_POINTS
    assert "Traceback" not in err and not out.exists()
    full = read_sweep_rows(str(tmp_path / "reference" / "full.csv"))
    assert all(row in full for row in rows)
    result = cli.sweep(path, *loud(LONG_GRID), "--labels", labels, "-w", "2", "-o", out,
                       "--resume")
    assert result.code == 0 and out.read_bytes() == expected


# --- the Dask scheduler --------------------------------------------------------------------

@pytest.mark.parametrize("address", ["notaurl", "tcp://host", "tcp://host:99999",
                                     "http://host:8786", "tcp://:8786", "inproc://x",
                                     "tcp://host:8786 --x"])
def test_a_scheduler_address_of_the_wrong_form_is_refused_at_once(cli, files, address,
                                                                  monkeypatch):
    """Refused by the option's check, before any connection is tried (no wall clock)."""
    import pate_cli.sweep.executors as executors

    def no_connection(*args, **kwargs):
        raise AssertionError("a connection to the scheduler was tried")

    monkeypatch.setattr(executors, "scheduler_executor", no_connection)
    monkeypatch.setattr(executors, "_probe", no_connection)
    result = cli.sweep(files[0], "--scheduler", address, "-q")
    assert result.code == 2
    assert result.err.splitlines() == [
        f"Error: Invalid value for '--scheduler': {address!r} is not a Dask scheduler "
        "address (expected tcp://host:port (or tls://, ws://, wss://, ucx://), "
        "inproc://..., host:port) (see pate-sweep --help)"]


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tls://scheduler.example:8786",
                                     "ws://[::1]:8786", "host-1.local:8786",
                                     "inproc://192.0.2.2/1234/1"])
def test_scheduler_addresses_distributed_accepts_pass_the_check(address):
    assert scheduler_address(address) == address


def one_line_within(done: subprocess.CompletedProcess, message: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


def test_a_scheduler_that_fails_at_once_exits_at_once_without_a_traceback(cli, files):
    """A half-made Dask client used to hang 20 s at exit and print a destructor
    traceback; it is closed where the connection fails.

    No wall-clock bound: the hang came with the traceback, which the one-line check
    catches however busy the machine. The run takes about 1.5 s on quiet cores; the
    timeout (60 s) only stops a hang."""
    pytest.importorskip("distributed")
    done = subprocess.run([cli.script("pate-sweep"), str(files[0]), "-q", "--scheduler",
                           "inproc://192.0.2.2/1/1"], capture_output=True, text=True,
                          timeout=60, check=False)
    one_line_within(done, "cannot reach the Dask scheduler inproc://192.0.2.2/1/1")
    assert "Traceback" not in done.stderr


def test_a_server_that_is_not_a_scheduler_is_one_line(cli, files):
    """Something that answers with bytes Dask cannot read (a proxy, another service).

    The run takes about 1.5 s on quiet cores; the timeout (60 s, 40 times that) fails a
    wait without limit, and no other wall-clock bound is asserted."""
    pytest.importorskip("distributed")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer():
        server.settimeout(30)
        connections = []
        try:
            while True:
                connection, _ = server.accept()
                connection.sendall(b"\xff" * 64)
                connections.append(connection)
        except OSError:
            pass

    threading.Thread(target=answer, daemon=True).start()
    try:
        done = subprocess.run([cli.script("pate-sweep"), str(files[0]), "-q",
                               "--scheduler", f"tcp://127.0.0.1:{port}"],
                              capture_output=True, text=True, timeout=60, check=False)
    finally:
        server.close()
    one_line_within(done, f"cannot reach the Dask scheduler tcp://127.0.0.1:{port}")
    assert "Traceback" not in done.stderr


def test_an_unreachable_scheduler_fails_within_the_timeout(cli, files, dask_timeout):
    """A refused connection fails at once (well under a second on quiet cores): the bound,
    the test's Dask timeout (20 s) and 5 s more, is over 10 times that."""
    pytest.importorskip("distributed")
    started = time.monotonic()
    result = cli.sweep(files[0], "-q", "--scheduler", "tcp://127.0.0.1:9")
    assert result.code == 2
    assert len(result.err.splitlines()) == 1
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in result.err
    assert time.monotonic() - started < dask_timeout + 5


# --- a grid too large to run ---------------------------------------------------------------

def test_a_huge_grid_is_refused_before_any_work(cli, files, monkeypatch):
    def no_work(*args, **kwargs):
        raise AssertionError("a vote file was read")

    monkeypatch.setattr(sweep_command, "planned_points", no_work)
    started = time.monotonic()
    result = cli.sweep(files[0], "-m", "gnmax", "--sigma", "1:600000:1")
    assert result.code == 2
    assert result.err.splitlines() == [
        "Error: the grid has 600,000 points, more than --max-points 100,000 (narrow the "
        "grid or raise --max-points) (see pate-sweep --help)"]
    assert time.monotonic() - started < 30  # 0.2 s on quiet cores: over 100 times that


def test_max_points_counts_every_file_and_mechanism(cli, files):
    path, labels = files
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "--max-points", "8")
    assert result.code == 2 and "the grid has 9 points, more than --max-points 8" in result.err
    result = cli.sweep(path, *GRID, "--labels", labels, "-w", "1", "--max-points", "9")
    assert result.code == 0 and len(result.out.splitlines()) == 10


def test_the_sigterm_handler_is_only_the_runs(cli, files):
    before = signal.getsignal(signal.SIGTERM)
    assert cli.sweep(files[0], "-m", "gnmax", "--sigma", "5", "-w", "1", "-q").code == 0
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_dead_worker_keeps_the_finished_rows_and_says_so_in_one_line(cli, files, tmp_path,
                                                                        monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    import pate_cli.sweep.points as points_module

    real, calls = points_module.run_point, []

    def dies_on_the_third(point, *memory):
        calls.append(point.index)
        if len(calls) == 3:
            raise BrokenProcessPool("A process in the process pool was terminated abruptly")
        return real(point, *memory)

    monkeypatch.setattr(points_module, "run_point", dies_on_the_third)
    path, labels = files
    out = tmp_path / "out.csv"
    done = cli.sweep(path, "-m", "gnmax", "--sigma", "4,6,8,10", "-w", "1", "--no-progress",
                     "-o", out)
    assert done.code == 1
    errors = [line for line in done.err.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: a worker process died (killed, or out of memory); the rows it "
                      "had not finished are not in the table"]
    assert "Traceback" not in done.err and "kept 2 of 4 rows" in done.err
    assert len(read_journal(str(sidecar(out)))) == 2 and not out.exists()


@pytest.mark.parametrize("greeting", [None, b"", b"SSH-2.0-OpenSSH_9.6\r\n"])
def test_a_silent_or_foreign_server_is_one_line_within_the_timeout(cli, files, monkeypatch,
                                                                   greeting):
    """A web server (says nothing until asked), a server that hangs up, one that talks
    first in its own protocol: each is one line within the timeout, never a wait
    without limit or a read of an exabyte-long message.

    The message names the 1.5 s the command waited; the run takes 1-3 s on quiet cores
    and the process's timeout (60 s, 20 times that) fails a wait without limit: no other
    wall-clock bound is asserted."""
    pytest.importorskip("distributed")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    connections = []

    def answer():
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                if greeting is None:
                    connections.append(connection)  # open, silent
                else:
                    connection.sendall(greeting)
                    connection.close()

    threading.Thread(target=answer, daemon=True).start()
    script = ("import sys; import pate_cli.cli.analyze as a; a.SCHEDULER_TIMEOUT = '1.5s'; "
              "sys.argv = ['pate-analyze'] + sys.argv[1:]; sys.exit(a.main())")
    try:
        done = subprocess.run([sys.executable, "-c", script, str(files[0]), "--scheduler",
                               f"tcp://127.0.0.1:{port}"], capture_output=True, text=True,
                              timeout=60, check=False)  # a wait without limit fails here
    finally:
        server.close()
    said = {None: "sent no Dask handshake within 1.5 s", b"": "closed the connection"}
    one_line_within(done, f"cannot reach the Dask scheduler tcp://127.0.0.1:{port}: what "
                    "listens there " + said.get(greeting, "does not speak Dask's protocol"))
    assert "Traceback" not in done.stderr
